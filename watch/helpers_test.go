package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// deadline bounds every wait in these tests; nothing waits on a timer.
const deadline = 20 * time.Second

// tempRoot returns a new empty root (its real path).
func tempRoot(t testing.TB) string {
	t.Helper()
	return testtree.Write(t, nil)
}

var writeFile = testtree.File

func mkdirs(t testing.TB, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// testLogger logs through t, and keeps the messages for tests that check
// warnings. Close waits for every goroutine, so nothing logs after the
// test.
type testLogger struct {
	t    testing.TB
	mu   sync.Mutex
	msgs []string
}

func (l *testLogger) Enabled(context.Context, slog.Level) bool { return true }
func (l *testLogger) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	l.t.Log(b.String())
	return nil
}
func (l *testLogger) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *testLogger) WithGroup(string) slog.Handler      { return l }

func (l *testLogger) logged(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.msgs, func(m string) bool { return strings.Contains(m, sub) })
}

// start builds the index of root, starts a watcher on it, waits until it
// is ready, and registers Close and the consistency check (the index
// equals a fresh build) to run after the test.
func start(t testing.TB, root string, opts Options) (*Watcher, *index.Index) {
	t.Helper()
	return startIndex(t, root, opts, false)
}

// startDB is start with the index saved to a bbolt file, so that every
// update is also a transaction; after the test the file is reopened and
// compared with a fresh build too.
func startDB(t testing.TB, root string, opts Options) (*Watcher, *index.Index) {
	t.Helper()
	return startIndex(t, root, opts, true)
}

func startIndex(t testing.TB, root string, opts Options, persist bool) (*Watcher, *index.Index) {
	t.Helper()
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "ix.db")
	if persist {
		if err := ix.Save(db); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(&testLogger{t: t})
	}
	w, err := Start(context.Background(), root, ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		check := !t.Failed() && !w.State().RootGone
		if check {
			checkFresh(t, w, ix)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := ix.Close(); err != nil {
			t.Errorf("closing the index: %v", err)
		}
		if !persist || !check {
			return
		}
		reopened, err := index.Open(db, root)
		if err != nil {
			t.Fatalf("reopening the index: %v", err)
		}
		defer reopened.Close()
		fresh, err := index.Build(context.Background(), root, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := table(reopened), table(fresh); !slices.Equal(got, want) {
			t.Errorf("reopened index differs from a fresh build:\n got %v\nwant %v", got, want)
		}
		if got, want := ignored(reopened), ignored(fresh); !slices.Equal(got, want) {
			t.Errorf("reopened ignored records differ from a fresh build:\n got %v\nwant %v", got, want)
		}
	})
	select {
	case <-w.Ready():
	case <-time.After(deadline):
		t.Fatal("watcher not ready")
	}
	return w, ix
}

func syncNow(t testing.TB, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := w.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

// checkFresh syncs and compares ix with a fresh build of its root: the
// table (every field), the record of ignored entries, and the index's own
// consistency check.
func checkFresh(t testing.TB, w *Watcher, ix *index.Index) {
	t.Helper()
	syncNow(t, w)
	if st := w.State(); st.Suspect {
		t.Errorf("still suspect after Sync: %+v", st)
	}
	if err := ix.Check(); err != nil {
		t.Errorf("consistency check: %v", err)
	}
	fresh, err := index.Build(context.Background(), ix.Root(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := table(ix), table(fresh); !slices.Equal(got, want) {
		t.Errorf("index differs from a fresh build:\n got %v\nwant %v", got, want)
	}
	if got, want := ignored(ix), ignored(fresh); !slices.Equal(got, want) {
		t.Errorf("ignored records differ from a fresh build:\n got %v\nwant %v", got, want)
	}
}

// table returns the index's table as a fresh build would record it: the
// Racy flag says when a file was read (within index.RacyWindow of its
// change), not what it holds, so it is left out.
func table(ix *index.Index) []index.File {
	var out []index.File
	ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
		g := *f
		g.Flags &^= index.Racy
		out = append(out, g)
		return true
	})
	return out
}

// ignored returns every record of what a walk would skip (ignored entries,
// hidden directories), to compare with a fresh build.
func ignored(ix *index.Index) []index.Skipped {
	var out []index.Skipped
	ix.Visibility().Skipped("", func(s index.Skipped, _ bool) { out = append(out, s) })
	return out
}

// paths lists the indexed paths under dir.
func paths(ix *index.Index, dir string) []string {
	var out []string
	ix.Candidates(index.CandidateOptions{Dir: dir}, func(f *index.File) bool { out = append(out, f.Path); return true })
	return out
}

func has(ix *index.Index, rel string) bool { return holds(ix, rel) }

// candidates returns the sorted paths the index proposes for a regexp.
func candidates(t testing.TB, ix *index.Index, pattern string) []string {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ix.Candidates(index.CandidateOptions{Content: csindex.RegexpQuery(re)}, func(f *index.File) bool {
		out = append(out, f.Path)
		return true
	})
	slices.Sort(out)
	return out
}

func isCandidate(t testing.TB, ix *index.Index, pattern, rel string) bool {
	_, ok := slices.BinarySearch(candidates(t, ix, pattern), rel)
	return ok
}

// wait waits for ch with the test deadline.
func wait(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func slogNew(h slog.Handler) *slog.Logger { return slog.New(h) }

// settledGoroutines returns the number of goroutines once it is at most
// want (with want 0, at once), yielding until the deadline: a goroutine
// that has signalled its WaitGroup is counted until it has returned.
func settledGoroutines(want int) int {
	end := time.Now().Add(deadline)
	for {
		n := runtime.NumGoroutine()
		if want == 0 || n <= want || time.Now().After(end) {
			return n
		}
		runtime.Gosched()
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}
