//go:build linux

package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/journal"
)

// limitWatches returns an AddWatch seam that refuses (ENOSPC) every
// watch past limit (which raise changes) and counts every attempt.
func limitWatches(limit int) (seam func(string, func(string) error) error, raise func(int), attempts func() int) {
	var mu sync.Mutex
	added, tried := 0, 0
	seam = func(path string, add func(string) error) error {
		mu.Lock()
		defer mu.Unlock()
		tried++
		if added >= limit {
			return fmt.Errorf("inotify_add_watch %s: %w", path, syscall.ENOSPC)
		}
		added++
		return add(path)
	}
	raise = func(n int) {
		mu.Lock()
		limit = n
		mu.Unlock()
	}
	attempts = func() int {
		mu.Lock()
		defer mu.Unlock()
		return tried
	}
	return seam, raise, attempts
}

// The count of watches a batch removed is the batch's own: a later batch
// that removes none does not try the unwatched subtrees again (it would
// at every batch once any had removed a watch).
func TestRemovedWatchesPerBatch(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for _, rel := range []string{"a/x/f.txt", "b/x/f.txt", "b/g.txt"} {
		writeFile(t, root, rel, "content "+rel+"\n")
	}
	seam, _, attempts := limitWatches(4) // root, a, a/x, b | b/x fails
	w, _ := start(t, root, Options{MaxWatches: 1 << 20, AddWatch: seam})
	if got := w.State().Unwatched; !slices.Equal(got, []string{"b/x"}) {
		t.Fatalf("Unwatched = %q, want b/x", got)
	}
	// a's watches go: b/x is tried again, and still refused.
	before := attempts()
	must(t, os.RemoveAll(filepath.Join(root, "a")))
	syncNow(t, w)
	if attempts() == before {
		t.Fatal("removing watched directories did not retry the unwatched b/x")
	}
	if got := w.State().Unwatched; !slices.Equal(got, []string{"b/x"}) {
		t.Fatalf("Unwatched = %q, want b/x still", got)
	}
	// A batch that removes no watch tries nothing.
	before = attempts()
	writeFile(t, root, "b/g.txt", "rewritten\n")
	syncNow(t, w)
	if n := attempts() - before; n != 0 {
		t.Errorf("a batch that removed no watch made %d watch attempts, want none", n)
	}
}

// The files the index dropped while a journaled change ran are that
// change's, and are let go when it ends: none are held after a batch.
func TestDroppedLetGoAfterEachBatch(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for _, rel := range []string{"a.txt", "d/b.txt", "d/c.txt"} {
		writeFile(t, root, rel, "content "+rel+"\n")
	}
	j := journal.New(0)
	w, _ := start(t, root, Options{Journal: j})
	p := mark(j)
	must(t, os.Remove(filepath.Join(root, "a.txt")))
	must(t, os.RemoveAll(filepath.Join(root, "d")))
	syncNow(t, w)
	expectNet(t, j, p, "deleted a.txt", "deleted d/b.txt", "deleted d/c.txt")
	// Sync returned after the batches ended (their cookie was released,
	// or the processor found nothing more to take): what they left is
	// read here without a race.
	if n := len(w.dropped); n != 0 {
		t.Errorf("after the batches, %d dropped files are still held: %v", n, w.dropped)
	}
}

// gate holds the processor in the first batch naming gate.txt until
// release is called (Options.onBatch), so that changes made meanwhile
// reach the processor together, in the batches after it.
type gate struct {
	taken, released chan struct{}
	once            sync.Once
}

func newGate() *gate {
	return &gate{taken: make(chan struct{}), released: make(chan struct{})}
}

func (g *gate) onBatch(paths map[string]fsnotify.Op) {
	if _, ok := paths["gate.txt"]; ok {
		g.once.Do(func() {
			close(g.taken)
			<-g.released
		})
	}
}

// hold writes gate.txt and waits until the processor is held in its
// batch.
func (g *gate) hold(t *testing.T, root string) {
	t.Helper()
	writeFile(t, root, "gate.txt", "gate\n")
	wait(t, g.taken, "the batch naming gate.txt")
}

func (g *gate) release() { close(g.released) }

// A batch's paths count as pending while it is applied, not after: once a
// Sync has returned and nothing changed since, nothing is pending.
func TestPendingClearedAfterEachBatch(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	mkdirs(t, root, ".git") // cookies are made there
	writeFile(t, root, "a.txt", "a\n")
	g := newGate()
	cookieRecorded := make(chan struct{})
	var once sync.Once
	opts := Options{
		onBatch: g.onBatch,
		onEvent: func(ev fsnotify.Event) bool {
			// The drain hands events over in order: when a cookie's
			// removal comes, its creation has been recorded.
			if ignore.IsCookie(filepath.Base(ev.Name)) && ev.Has(fsnotify.Remove) {
				once.Do(func() { close(cookieRecorded) })
			}
			return true
		},
	}
	w, _ := start(t, root, opts)
	g.hold(t, root)
	// While the processor is held: a change, then a Sync's cookie, both
	// taken in the next batch, which the Sync waits for.
	writeFile(t, root, "y.txt", "y\n")
	synced := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		synced <- w.Sync(ctx)
	}()
	wait(t, cookieRecorded, "the Sync's cookie")
	g.release()
	select {
	case err := <-synced:
		must(t, err)
	case <-time.After(deadline):
		t.Fatal("Sync did not return")
	}
	if n := w.State().Pending; n != 0 {
		t.Errorf("after the batches, %d paths pending, want none", n)
	}
}

// A file rewritten in place with its size and modification time kept
// (a rewrite within one mtime tick, or one that sets the time back) is
// journaled as modified: the table's stat does not change, the write
// event names it.
func TestJournalRewriteKeepingStat(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a.txt", "before\n")
	j := journal.New(0)
	g := newGate()
	w, ix := start(t, root, Options{Journal: j, onBatch: g.onBatch})
	fi, err := os.Stat(filepath.Join(root, "a.txt"))
	must(t, err)
	g.hold(t, root)
	// Held: every batch after this one sees a.txt as it ends, its size
	// and time as they were.
	p := mark(j)
	writeFile(t, root, "a.txt", "after!\n")
	must(t, os.Chtimes(filepath.Join(root, "a.txt"), fi.ModTime(), fi.ModTime()))
	g.release()
	syncNow(t, w)
	if fi2, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("a.txt's stat changed: %v, %v", fi2, err)
	}
	expectNet(t, j, p, "modified a.txt", "created gate.txt")
	if got := candidates(t, ix, "after!"); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("the index's candidates for the new content: %q", got)
	}
}

// A rewrite that keeps the stat is modified only when a write or create
// event names it; a change of mtime, size or inode is one whatever the
// events.
func TestTableDiffNamedRewrite(t *testing.T) {
	t.Parallel()
	e := entryState{path: "a.txt", mtime: 100, size: 7, ino: 3}
	for _, tc := range []struct {
		after entryState
		op    fsnotify.Op
		want  bool
	}{
		{e, fsnotify.Write, true},
		{e, fsnotify.Create, true},
		{e, fsnotify.Write | fsnotify.Chmod, true},
		{e, fsnotify.Chmod, false},
		{e, 0, false},
		{entryState{path: "a.txt", mtime: 101, size: 7, ino: 3}, 0, true},
		{entryState{path: "a.txt", mtime: 100, size: 8, ino: 3}, 0, true},
		{entryState{path: "a.txt", mtime: 100, size: 7, ino: 4}, 0, true},
	} {
		named := map[string]fsnotify.Op{}
		if tc.op != 0 {
			named["a.txt"] = tc.op
		}
		got := tableDiff([]entryState{e}, []entryState{tc.after}, named)
		want := []journal.Change(nil)
		if tc.want {
			want = []journal.Change{{Path: "a.txt", Kind: journal.Modified, Mtime: tc.after.mtime}}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v named %v: %+v, want %+v", tc.after, tc.op, got, want)
		}
	}
}
