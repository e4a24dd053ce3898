package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/watch"
)

// Read-your-writes through the daemon with the real watcher: a file
// written (or renamed, or deleted) just before a query is always seen by
// it, and the answer is the index's (no fallback).
func TestReadYourWritesWithWatcher(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{}) // default Freshener: the watcher
	root := writeTree(t, map[string]string{"a/seed.txt": "seed\n"})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	for i := range 200 {
		tok := fmt.Sprintf("tok%dx", i)
		rel := fmt.Sprintf("d%d/f%d.txt", i%7, i)
		switch i % 3 {
		case 0:
			writeFile(t, root, rel, "x "+tok+"\n")
		case 1:
			writeFile(t, root, rel+".tmp", "x "+tok+"\n")
			if err := os.Rename(filepath.Join(root, rel+".tmp"), filepath.Join(root, rel)); err != nil {
				t.Fatal(err)
			}
		case 2:
			writeFile(t, root, rel, "x "+tok+"\n")
		}
		g := td.query("grep", root, fmt.Sprintf(`{"pattern":%q}`, tok))
		if g.data.Used || len(g.data.Matches) != 1 {
			t.Fatalf("round %d: grep %s right after the write: %s", i, tok, g.js)
		}
		p := td.query("glob", root, fmt.Sprintf(`{"pattern":%q}`, rel))
		if p.data.Used || len(p.data.Paths) != 1 || p.data.Paths[0] != rel {
			t.Fatalf("round %d: glob %s right after the write: %s", i, rel, p.js)
		}
		if i%3 == 2 {
			if err := os.Remove(filepath.Join(root, rel)); err != nil {
				t.Fatal(err)
			}
			if g := td.query("grep", root, fmt.Sprintf(`{"pattern":%q}`, tok)); len(g.data.Matches) != 0 {
				t.Fatalf("round %d: grep %s right after the delete: %s", i, tok, g.js)
			}
			if p := td.query("glob", root, fmt.Sprintf(`{"pattern":%q}`, rel)); len(p.data.Paths) != 0 {
				t.Fatalf("round %d: glob %s right after the delete: %s", i, rel, p.js)
			}
		}
	}
}

// A barrier that times out sends the query to the walk and says so; sync
// false skips the barrier and answers from the index as it stands.
func TestSyncTimeoutAndSyncFalse(t *testing.T) {
	t.Parallel()
	newFresh := func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
		return stuckFreshener{}, nil
	}
	td := startDaemon(t, Config{NewFreshener: newFresh})
	root := writeTree(t, map[string]string{"a.txt": "needle\n"})
	td.index(root, true)
	a := td.query(tool.MethodGrep, root, `{"pattern":"needle"}`)
	if !a.data.Used || a.data.Reason != envelope.ReasonIndexStale || a.Status != envelope.StatusPartial || len(a.data.Matches) != 1 {
		t.Errorf("barrier timed out: want the walk with index_stale: %s", a.js)
	}
	a = td.query(tool.MethodGrep, root, `{"pattern":"needle","sync":false}`)
	if a.data.Used || a.Status != envelope.StatusSuccess || len(a.data.Matches) != 1 {
		t.Errorf("sync false: want the index's answer: %s", a.js)
	}
	a = td.query(tool.MethodGlob, root, `{"pattern":"*.txt","sync":false}`)
	if a.data.Used || len(a.data.Paths) != 1 {
		t.Errorf("glob sync false: %s", a.js)
	}
}

// stuckFreshener's barrier never passes (until the query's timeout).
type stuckFreshener struct{}

func (stuckFreshener) Sync(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
func (stuckFreshener) Stale(string) envelope.FallbackReason { return "" }
func (stuckFreshener) Live() []string                       { return nil }
func (stuckFreshener) Ready() <-chan struct{}               { return closedChan }
func (stuckFreshener) Done() <-chan struct{}                { return nil }
func (stuckFreshener) Close() error                         { return nil }

// watchLimitAt returns a Config.NewFreshener whose watcher meets the
// inotify watch limit (ENOSPC) when it adds a watch on a path named name.
func watchLimitAt(name string) func(context.Context, string, *index.Index, *slog.Logger) (Freshener, error) {
	return func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
		w, err := watch.Start(ctx, root, ix, watch.Options{Logger: log, AddWatch: func(p string, add func(string) error) error {
			if filepath.Base(p) == name {
				return syscall.ENOSPC
			}
			return add(p)
		}})
		if err != nil {
			return nil, err
		}
		return watched{w, nil}, nil
	}
}

// At the inotify watch limit only the unwatched subtree is degraded: it is
// walked and merged (fallback watch_limit), the rest keeps the index and
// reads its writes.
func TestWatchLimitDegradesOneSubtree(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{NewFreshener: watchLimitAt("cold")})
	root := writeTree(t, map[string]string{"warm/a.txt": "seed\n", "cold/b.txt": "seed\n"})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	for i := range 20 {
		tok := fmt.Sprintf("lim%dx", i)
		writeFile(t, root, fmt.Sprintf("warm/w%d.txt", i), tok+" warm\n")
		writeFile(t, root, fmt.Sprintf("cold/c%d.txt", i), tok+" cold\n")
		a := td.query(tool.MethodGrep, root, fmt.Sprintf(`{"pattern":%q}`, tok))
		if !a.data.Used || a.data.Reason != envelope.ReasonWatchLimit || len(a.data.Matches) != 2 {
			t.Fatalf("round %d: root grep: %s", i, a.js)
		}
		a = td.query(tool.MethodGrep, root, fmt.Sprintf(`{"pattern":%q,"path":"warm"}`, tok))
		if a.data.Used || len(a.data.Matches) != 1 {
			t.Fatalf("round %d: warm grep must use the index alone: %s", i, a.js)
		}
		a = td.query(tool.MethodGlob, root, fmt.Sprintf(`{"pattern":"cold/c%d.txt"}`, i))
		if a.data.Reason != envelope.ReasonWatchLimit || len(a.data.Paths) != 1 {
			t.Fatalf("round %d: cold glob: %s", i, a.js)
		}
	}
}

// A root deleted and made again, or swapped for another directory, is
// served afresh: after a while the index answers again (no fallback) and
// holds the new tree, and status says ready.
func TestReplacedRootIsRebuilt(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	for _, how := range []string{"recreated", "swapped"} {
		root := writeTree(t, map[string]string{"old.txt": "oldtoken\n"})
		if rs := td.index(root, true); rs.State != rpc.StateReady {
			t.Fatalf("%s: index --wait: %+v", how, rs)
		}
		switch how {
		case "recreated":
			must(t, os.RemoveAll(root))
			must(t, os.Mkdir(root, 0o755))
		case "swapped":
			must(t, os.Rename(root, root+".old"))
			must(t, os.Mkdir(root, 0o755))
		}
		writeFile(t, root, "new.txt", "newtoken\n")
		var last answer
		ok := settle(func() bool {
			last = td.query("grep", root, `{"pattern":"newtoken|oldtoken"}`)
			return !last.data.Used
		})
		if !ok {
			t.Fatalf("%s: the index never answered again: %s", how, last.js)
		}
		if len(last.data.Matches) != 1 || !strings.Contains(string(last.data.Matches[0]), "new.txt") {
			t.Fatalf("%s: the rebuilt index answers %s", how, last.js)
		}
		if rs := td.status(root); len(rs.Roots) != 1 || rs.Roots[0].State != rpc.StateReady || rs.Roots[0].Files != 1 {
			t.Fatalf("%s: status after the rebuild: %+v", how, rs.Roots)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// grepMatch is one Grep match as data.matches holds it.
type grepMatch struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// matchesOf decodes an answer's matches.
func matchesOf(t testing.TB, a answer) []grepMatch {
	t.Helper()
	var out []grepMatch
	for _, m := range a.data.Matches {
		var g grepMatch
		if err := json.Unmarshal(m, &g); err != nil {
			t.Fatalf("%v: %s", err, m)
		}
		out = append(out, g)
	}
	return out
}

// A file with a second link outside the root, written through that link:
// no directory the watcher watches hears of it, only the file's own
// watch, and the next query's barrier covers it, so the index answers at
// once (success, no fallback) with exactly the line written. A restart
// (the saved index reopened) watches the file again, and watches one
// linked from outside while the daemon was down.
func TestHardLinkWrittenOutsideRoot(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	td := startDaemon(t, Config{StateDir: state})
	root := writeTree(t, map[string]string{"f.txt": "old\n", "sub/g.txt": "old\n"})
	out := t.TempDir()
	must(t, os.Link(filepath.Join(root, "f.txt"), filepath.Join(out, "hl")))
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	appendLine := func(name, line string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(out, name), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.WriteString(line + "\n")
		must(t, err)
		must(t, f.Close())
	}
	grep := func(step, tok string, want ...grepMatch) {
		t.Helper()
		a := td.query(tool.MethodGrep, root, fmt.Sprintf(`{"pattern":%q}`, tok))
		if a.Status != envelope.StatusSuccess || a.data.Used {
			t.Fatalf("%s: grep %s: want the index's answer: %s", step, tok, a.js)
		}
		if got := matchesOf(t, a); !slices.Equal(got, want) {
			t.Fatalf("%s: grep %s: matches %+v, want %+v", step, tok, got, want)
		}
	}
	for i := range 30 {
		tok := fmt.Sprintf("outside%dx", i)
		appendLine("hl", tok)
		grep(fmt.Sprintf("round %d", i), tok, grepMatch{"f.txt", i + 2, tok})
	}
	must(t, td.stop())
	must(t, os.Link(filepath.Join(root, "sub/g.txt"), filepath.Join(out, "hl2")))
	td = startDaemon(t, Config{StateDir: state})
	if rs := td.index(root, true); rs.State != rpc.StateReady || !rs.Reopened {
		t.Fatalf("index --wait after the restart: %+v", rs)
	}
	appendLine("hl", "afterrestart1")
	grep("after the restart", "afterrestart1", grepMatch{"f.txt", 32, "afterrestart1"})
	appendLine("hl2", "afterrestart2")
	grep("linked while down", "afterrestart2", grepMatch{"sub/g.txt", 2, "afterrestart2"})
}

// index --wait answers with the writes made before the call in the
// index: a Freshener is ready after its catch-up, perhaps with events of
// files made before the call still queued, so the call passes the sync
// barrier after the attempt it waited for. Here the file is written once
// the build's walk is over, and only the barrier (a reconcile) adds it.
func TestIndexWaitPassesTheBarrier(t *testing.T) {
	t.Parallel()
	newFresh := func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
		if err := os.WriteFile(filepath.Join(root, "late.txt"), []byte("late\n"), 0o644); err != nil {
			return nil, err
		}
		return &syncFreshener{ix: ix}, nil
	}
	td := startDaemon(t, Config{NewFreshener: newFresh})
	root := writeTree(t, map[string]string{"a.txt": "a\n"})
	if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Files != 2 {
		t.Fatalf("index --wait: %+v, want ready with a.txt and late.txt", rs)
	}
}

// A root deleted and made again while served is never answered from the
// index of the directory that was there, nor from an index of nothing:
// index --wait returns once the new directory's index is ready, holding
// its files; status says ready only of that index; a query meanwhile
// answers from it or walks (index_building, index_stale), and finds
// exactly the new file.
func TestRecreatedRootNeverReadyStale(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	for i := range 40 {
		root := writeTree(t, map[string]string{"old.txt": "oldtoken\n", "d/x.txt": "oldtoken\n"})
		if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Files != 2 {
			t.Fatalf("round %d: index --wait: %+v", i, rs)
		}
		must(t, os.RemoveAll(root))
		must(t, os.Mkdir(root, 0o755))
		writeFile(t, root, "new.txt", "newtoken\n")
		switch i % 3 {
		case 0:
			if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Files != 1 {
				t.Fatalf("round %d: index --wait after the root was made again: %+v", i, rs)
			}
		case 1:
			// Status passes no sync barrier: a new directory's index may
			// be ready before new.txt's event is applied (0 files; CI
			// once saw that). The old directory's index, 2 files, is
			// never said ready once another directory is at the path.
			st := td.status(root)
			if len(st.Roots) != 1 || st.Roots[0].State == rpc.StateReady && st.Roots[0].Files > 1 {
				t.Fatalf("round %d: status after the root was made again: %+v", i, st.Roots)
			}
		case 2:
			a := td.query(tool.MethodGrep, root, `{"pattern":"newtoken|oldtoken"}`)
			want := []grepMatch{{"new.txt", 1, "newtoken"}}
			if got := matchesOf(t, a); !slices.Equal(got, want) {
				t.Fatalf("round %d: grep after the root was made again: %s", i, a.js)
			}
			if a.data.Used && a.data.Reason != envelope.ReasonIndexBuilding && a.data.Reason != envelope.ReasonIndexStale {
				t.Fatalf("round %d: grep walked for %q: %s", i, a.data.Reason, a.js)
			}
		}
		if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Files != 1 {
			t.Fatalf("round %d: index --wait at the end: %+v", i, rs)
		}
	}
}

// A file with a second link outside the root whose own watch cannot be
// added (the inotify watch limit) is never answered stale: queries that
// reach its directory walk it and say so (watch_limit, partial), and
// find a write made through the outside link; the rest of the tree is
// answered by the index.
func TestHardLinkPastTheWatchLimit(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{NewFreshener: watchLimitAt("f.txt")})
	root := writeTree(t, map[string]string{"cold/f.txt": "old\n", "warm/g.txt": "old\n"})
	out := t.TempDir()
	must(t, os.Link(filepath.Join(root, "cold/f.txt"), filepath.Join(out, "hl")))
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	f, err := os.OpenFile(filepath.Join(out, "hl"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("throughlink\n")
	must(t, err)
	must(t, f.Close())
	a := td.query(tool.MethodGrep, root, `{"pattern":"throughlink"}`)
	if !a.data.Used || a.data.Reason != envelope.ReasonWatchLimit || a.Status != envelope.StatusPartial ||
		!slices.Equal(matchesOf(t, a), []grepMatch{{"cold/f.txt", 2, "throughlink"}}) {
		t.Fatalf("grep of the root: %s", a.js)
	}
	writeFile(t, root, "warm/h.txt", "warmtoken\n")
	a = td.query(tool.MethodGrep, root, `{"pattern":"warmtoken","path":"warm"}`)
	if a.data.Used || a.Status != envelope.StatusSuccess || !slices.Equal(matchesOf(t, a), []grepMatch{{"warm/h.txt", 1, "warmtoken"}}) {
		t.Fatalf("grep of warm: want the index's answer: %s", a.js)
	}
}
