//go:build linux

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/journal"
)

// appendTo appends s to the file at path (a link anywhere).
func appendTo(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	must(t, f.Close())
}

// link makes the hard link newname of oldname.
func link(t testing.TB, oldname, newname string) {
	t.Helper()
	must(t, os.Link(oldname, newname))
}

// outsideDir returns a new directory outside any root.
func outsideDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	return d
}

// filePaths returns the root-relative paths of the files watched on their
// own (the notifier's table), sorted.
func filePaths(w *Watcher) []string {
	var out []string
	for _, p := range w.fsw.FilePaths() {
		r, _ := w.relOf(p)
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// A file with a second link outside the root, written through that link
// (which no watched directory sees): each write is in the index once Sync
// returns, whether the link existed when the watcher started (found by
// its first walk) or was made through the root, and whatever the time
// between writes.
func TestHardLinkWrittenOutside(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "f.txt", "old\n")
	writeFile(t, root, "sub/g.txt", "old\n")
	link(t, filepath.Join(root, "f.txt"), filepath.Join(out, "hl"))
	w, ix := startDB(t, root, Options{})
	if st := w.State(); st.Files != 1 || !slices.Equal(filePaths(w), []string{"f.txt"}) {
		t.Fatalf("after Start: Files=%d paths %q, want 1 and [f.txt]", st.Files, filePaths(w))
	}
	// A link made afterwards from outside into the root: its path is an
	// event, and it is watched before it is read.
	link(t, filepath.Join(root, "sub/g.txt"), filepath.Join(out, "hl2"))
	must(t, os.Remove(filepath.Join(root, "sub/g.txt")))
	link(t, filepath.Join(out, "hl2"), filepath.Join(root, "sub/g.txt"))
	syncNow(t, w)
	if st := w.State(); st.Files != 2 || !slices.Equal(filePaths(w), []string{"f.txt", "sub/g.txt"}) {
		t.Fatalf("after ln into the root: Files=%d paths %q", st.Files, filePaths(w))
	}
	for i := range 50 {
		for _, c := range []struct{ via, rel string }{{"hl", "f.txt"}, {"hl2", "sub/g.txt"}} {
			tok := fmt.Sprintf("outside%dtok%s", i, filepath.Base(c.via))
			appendTo(t, filepath.Join(out, c.via), tok+"\n")
			syncNow(t, w)
			if got := candidates(t, ix, tok); !slices.Equal(got, []string{c.rel}) {
				t.Fatalf("round %d: %s written through %s: candidates %q, want [%s]", i, tok, c.via, got, c.rel)
			}
		}
	}
}

// Two links inside the root: a write through either reaches both, also
// when the second link is made after the first was indexed with one
// link (found in the table by its inode), and when a directory holding
// links is moved in (found by the index's walk of it).
func TestHardLinksInsideRoot(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "a.txt", "alpha\n")
	j := journal.New(0)
	w, ix := startDB(t, root, Options{Journal: j})
	if st := w.State(); st.Files != 0 {
		t.Fatalf("Files = %d before any link", st.Files)
	}
	p := mark(j)
	link(t, filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt"))
	appendTo(t, filepath.Join(root, "b.txt"), "viab\n")
	syncNow(t, w)
	if got := candidates(t, ix, "viab"); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("written through b.txt: candidates %q, want [a.txt b.txt]", got)
	}
	expectNet(t, j, p, "created b.txt", "modified a.txt")
	p = mark(j)
	appendTo(t, filepath.Join(root, "a.txt"), "viaa\n")
	syncNow(t, w)
	if got := candidates(t, ix, "viaa"); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("written through a.txt: candidates %q, want [a.txt b.txt]", got)
	}
	expectNet(t, j, p, "modified a.txt", "modified b.txt")
	// A directory linked outside, then moved in whole: the index's walk
	// of it finds the links.
	writeFile(t, out, "store/x.txt", "xray\n")
	must(t, os.Mkdir(filepath.Join(out, "stage"), 0o755))
	link(t, filepath.Join(out, "store/x.txt"), filepath.Join(out, "stage/x.txt"))
	p = mark(j)
	must(t, os.Rename(filepath.Join(out, "stage"), filepath.Join(root, "pkg")))
	syncNow(t, w)
	expectNet(t, j, p, "created pkg/x.txt")
	if got := filePaths(w); !slices.Equal(got, []string{"a.txt", "b.txt", "pkg/x.txt"}) {
		t.Fatalf("after the move: watched %q", got)
	}
	if st := w.State(); st.Files != 2 {
		t.Fatalf("Files = %d, want 2 (a.txt and b.txt share one)", st.Files)
	}
	p = mark(j)
	appendTo(t, filepath.Join(out, "store/x.txt"), "viastore\n")
	syncNow(t, w)
	if got := candidates(t, ix, "viastore"); !slices.Equal(got, []string{"pkg/x.txt"}) {
		t.Fatalf("written through the store: candidates %q, want [pkg/x.txt]", got)
	}
	expectNet(t, j, p, "modified pkg/x.txt")
}

// A file's own watch goes with its last path the index holds, and with
// its second link: deleted, renamed (the watch follows the new path),
// unlinked outside, replaced. No watch is left behind.
func TestHardLinkWatchesGo(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "f.txt", "one\n")
	writeFile(t, root, "g.txt", "two\n")
	writeFile(t, root, "h.txt", "three\n")
	for _, n := range []string{"f.txt", "g.txt", "h.txt"} {
		link(t, filepath.Join(root, n), filepath.Join(out, n))
	}
	w, _ := startDB(t, root, Options{})
	check := func(step string, want ...string) {
		t.Helper()
		syncNow(t, w)
		if got := filePaths(w); !slices.Equal(got, want) {
			t.Fatalf("%s: watched %q, want %q", step, got, want)
		}
		if st := w.State(); st.Files != len(want) {
			t.Fatalf("%s: Files = %d, want %d", step, st.Files, len(want))
		}
	}
	check("start", "f.txt", "g.txt", "h.txt")
	must(t, os.Rename(filepath.Join(root, "f.txt"), filepath.Join(root, "f2.txt")))
	check("renamed", "f2.txt", "g.txt", "h.txt")
	must(t, os.Remove(filepath.Join(root, "f2.txt")))
	check("deleted (the outside link keeps the file)", "g.txt", "h.txt")
	must(t, os.Remove(filepath.Join(out, "g.txt")))
	check("its outside link removed: one link left", "h.txt")
	writeFile(t, root, "h.txt.new", "replacement\n")
	must(t, os.Rename(filepath.Join(root, "h.txt.new"), filepath.Join(root, "h.txt")))
	check("replaced by a file with one link")
	// A link from outside to a file with one link makes no event: it is
	// found once something names the file, here a write through its path.
	link(t, filepath.Join(root, "g.txt"), filepath.Join(out, "g2.txt"))
	check("linked from outside, unseen")
	appendTo(t, filepath.Join(root, "g.txt"), "more\n")
	check("written through the root", "g.txt")
	must(t, os.Rename(filepath.Join(root, "g.txt"), filepath.Join(out, "moved-out")))
	check("moved out of the root")
}

// A file whose own watch cannot be added (the watch limit) is not kept
// current: its directory is published as unwatched (queries there walk,
// watch_limit), the rest is not; once watches are freed it is watched
// and read again.
func TestHardLinkWatchLimit(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "cold/f.txt", "old\n")
	writeFile(t, root, "warm/g.txt", "old\n")
	writeFile(t, root, "spare/x/y.txt", "y\n")
	link(t, filepath.Join(root, "cold/f.txt"), filepath.Join(out, "hl"))
	var mu sync.Mutex
	refuse := true
	log := &testLogger{t: t}
	w, ix := startDB(t, root, Options{Logger: slogNew(log), AddWatch: func(p string, add func(string) error) error {
		mu.Lock()
		defer mu.Unlock()
		if refuse && filepath.Base(p) == "f.txt" {
			return fmt.Errorf("inotify_add_watch %s: %w", p, syscall.ENOSPC)
		}
		return add(p)
	}})
	st := w.State()
	if !slices.Equal(st.Unwatched, []string{"cold"}) || st.Files != 0 {
		t.Fatalf("Unwatched = %q, Files = %d, want [cold] and 0", st.Unwatched, st.Files)
	}
	for dir, want := range map[string]envelope.FallbackReason{".": "watch_limit", "cold": "watch_limit", "warm": "", "spare/x": ""} {
		if got := st.Stale(dir); got != want {
			t.Errorf("Stale(%q) = %q, want %q", dir, got, want)
		}
	}
	if !log.logged("a file with more than one link is not watched") {
		t.Errorf("no warning: %q", log.msgs)
	}
	appendTo(t, filepath.Join(out, "hl"), "unseen\n")
	mu.Lock()
	refuse = false
	mu.Unlock()
	must(t, os.RemoveAll(filepath.Join(root, "spare/x"))) // frees a watch
	syncNow(t, w)
	st = w.State()
	if len(st.Unwatched) != 0 || st.Files != 1 {
		t.Fatalf("after freeing watches: Unwatched = %q, Files = %d", st.Unwatched, st.Files)
	}
	if !isCandidate(t, ix, "unseen", "cold/f.txt") {
		t.Fatal("the file watched again was not read again")
	}
	appendTo(t, filepath.Join(out, "hl"), "seennow\n")
	syncNow(t, w)
	if !isCandidate(t, ix, "seennow", "cold/f.txt") {
		t.Fatal("the file is not watched after the retry")
	}
}

// A restart (a new watcher on the saved index) watches the files with
// more than one link again, those linked while nobody watched included.
func TestHardLinkWatchesRestored(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "f.txt", "old\n")
	writeFile(t, root, "g.txt", "old\n")
	link(t, filepath.Join(root, "f.txt"), filepath.Join(out, "hl"))
	ix, err := index.Build(t.Context(), root, nil)
	must(t, err)
	defer ix.Close()
	startW := func() *Watcher {
		t.Helper()
		w, err := Start(t.Context(), root, ix, Options{Logger: slogNew(&testLogger{t: t})})
		must(t, err)
		wait(t, w.Ready(), "ready")
		return w
	}
	w := startW()
	if got := filePaths(w); !slices.Equal(got, []string{"f.txt"}) {
		t.Fatalf("first watcher: %q", got)
	}
	must(t, w.Close())
	link(t, filepath.Join(root, "g.txt"), filepath.Join(out, "hl2"))
	w = startW()
	defer w.Close()
	if got := filePaths(w); !slices.Equal(got, []string{"f.txt", "g.txt"}) {
		t.Fatalf("after the restart: watched %q", got)
	}
	appendTo(t, filepath.Join(out, "hl2"), "aftertherestart\n")
	syncNow(t, w)
	if !isCandidate(t, ix, "aftertherestart", "g.txt") {
		t.Fatal("a write through the link made while no watcher ran was missed")
	}
	checkFresh(t, w, ix)
}

// A directory replaced whole, whose file of the same name is another,
// single-link file: once that file gets a second link inside the root, a
// write through the new link is seen at the old path too (the path's
// watch was the old file's, which must not pass for the new one's).
func TestHardLinkAfterDirectoryReplaced(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := outsideDir(t)
	writeFile(t, root, "d/f.txt", "old\n")
	link(t, filepath.Join(root, "d/f.txt"), filepath.Join(out, "h1"))
	w, ix := startDB(t, root, Options{})
	must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(out, "old")))
	writeFile(t, out, "stage/f.txt", "new\n")
	must(t, os.Rename(filepath.Join(out, "stage"), filepath.Join(root, "d")))
	syncNow(t, w)
	link(t, filepath.Join(root, "d/f.txt"), filepath.Join(root, "g.txt"))
	appendTo(t, filepath.Join(root, "g.txt"), "fresh\n")
	syncNow(t, w)
	if got := candidates(t, ix, "fresh"); !slices.Equal(got, []string{"d/f.txt", "g.txt"}) {
		t.Errorf("candidates for a write through g.txt: %q, want [d/f.txt g.txt]", got)
	}
	checkFresh(t, w, ix)
}
