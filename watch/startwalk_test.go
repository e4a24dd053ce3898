//go:build linux

package watch

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
)

// startWalkTree writes a tree with nested, hidden and ignored directories
// and returns its root and the directories the index holds (and so the
// watcher watches), root-relative, "" for the root, sorted.
func startWalkTree(t *testing.T) (root string, dirs []string) {
	root = tempRoot(t)
	for _, rel := range []string{
		".ignore", "a/x.txt", "a/b/y.txt", "a/b/c/z.txt", ".h/w.txt", ".h/i/v.txt",
		"out/o.txt", "out/sub/p.txt", "cold/q.txt", "cold/deep/r.txt", "d/e/f/g/s.txt",
	} {
		content := "content of " + rel + "\n"
		if rel == ".ignore" {
			content = "out/\n"
		}
		writeFile(t, root, rel, content)
	}
	mkdirs(t, root, "empty")
	return root, []string{"", ".h", ".h/i", "a", "a/b", "a/b/c", "cold", "cold/deep", "d", "d/e", "d/e/f", "d/e/f/g", "empty"}
}

// recordWatches is an AddWatch seam that counts the watches added per
// root-relative directory and refuses (ENOSPC) those refuse names.
func recordWatches(root string, refuse func(rel string) bool) (func(string, func(string) error) error, func() map[string]int) {
	var mu sync.Mutex
	added := make(map[string]int)
	seam := func(path string, add func(string) error) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, root), "/")
		if refuse != nil && refuse(rel) {
			return fmt.Errorf("inotify_add_watch %s: %w", path, syscall.ENOSPC)
		}
		mu.Lock()
		added[rel]++
		mu.Unlock()
		return add(path)
	}
	return seam, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(added)
	}
}

// Start watches the root alone; the initial reconcile's walk watches every
// other directory the index holds (hidden ones included, ignored ones
// never), each exactly once: one walk of the tree, not one to watch it and
// another to reconcile. Every directory is then watched: a write in the
// deepest is seen.
func TestStartWatchesInTheReconcileWalk(t *testing.T) {
	t.Parallel()
	root, dirs := startWalkTree(t)
	seam, added := recordWatches(root, nil)
	w, ix := startDB(t, root, Options{AddWatch: seam, walkWatches: true})
	want := make(map[string]int)
	for _, d := range dirs {
		want[d] = 1
	}
	if got := added(); !maps.Equal(got, want) {
		t.Fatalf("watches added %v, want each of %q once", got, dirs)
	}
	if st := w.State(); st.Dirs != len(dirs) || len(st.Unwatched) != 0 {
		t.Fatalf("Dirs = %d, Unwatched = %q; want %d and none", st.Dirs, st.Unwatched, len(dirs))
	}
	for _, d := range dirs {
		rel := filepath.ToSlash(filepath.Join(d, "late.txt"))
		writeFile(t, root, rel, "late\n")
		syncNow(t, w)
		if !has(ix, rel) {
			t.Fatalf("%s was missed: %q is not watched", rel, d)
		}
	}
}

// A watch refused during the initial walk (the inotify limit) falls back
// to watching the tree as before, in walk order: exactly the refused
// subtree is unwatched and says so, everything else is watched, and the
// index is caught up (the unwatched subtree's files included).
func TestStartWatchLimitInTheReconcileWalk(t *testing.T) {
	t.Parallel()
	root, dirs := startWalkTree(t)
	seam, added := recordWatches(root, func(rel string) bool { return rel == "cold" })
	log := &testLogger{t: t}
	w, ix := startDB(t, root, Options{AddWatch: seam, walkWatches: true, Logger: slogNew(log)})
	st := w.State()
	if want := []string{"cold"}; !slices.Equal(st.Unwatched, want) {
		t.Fatalf("Unwatched = %q, want %q", st.Unwatched, want)
	}
	got := slices.Sorted(maps.Keys(added()))
	want := slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return within(d, "cold") })
	if !slices.Equal(got, want) || st.Dirs != len(want) {
		t.Fatalf("watched %q (Dirs %d), want %q", got, st.Dirs, want)
	}
	if !log.logged("watch limit reached") {
		t.Errorf("no watch limit warning: %q", log.msgs)
	}
	for _, f := range []string{"cold/q.txt", "cold/deep/r.txt", "a/b/c/z.txt"} {
		if !has(ix, f) {
			t.Errorf("%s not in the index", f)
		}
	}
	writeFile(t, root, "a/b/c/late.txt", "late\n")
	syncNow(t, w)
	if !has(ix, "a/b/c/late.txt") {
		t.Fatal("a write in a watched directory was missed")
	}
}

// Writes made while the initial walk runs (right after Start returns,
// before Ready) are in the index once Sync returns, whichever comes
// first in each directory, the listing or the write: each directory is
// watched before it is listed. New directories made then are watched too.
func TestWritesDuringTheInitialWalk(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	var dirs []string
	for i := range 40 {
		d := fmt.Sprintf("p%d/q%d/r%d", i%5, i%8, i)
		dirs = append(dirs, d)
		writeFile(t, root, d+"/seed.txt", "seed\n")
	}
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	w, err := Start(context.Background(), root, ix, Options{Logger: slogNew(&testLogger{t: t})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var want []string
	for _, d := range dirs {
		writeFile(t, root, d+"/during.txt", "during\n")
		writeFile(t, root, d+"/new/made.txt", "made\n")
		want = append(want, d+"/during.txt", d+"/new/made.txt")
	}
	syncNow(t, w)
	select {
	case <-w.Ready():
	case <-time.After(deadline):
		t.Fatal("not ready after Sync")
	}
	for _, f := range want {
		if !has(ix, f) {
			t.Fatalf("%s, written during the initial walk, is not in the index", f)
		}
	}
	// Every directory is watched, the new ones included.
	for _, d := range dirs {
		rel := d + "/new/later.txt"
		writeFile(t, root, rel, "later\n")
		syncNow(t, w)
		if !has(ix, rel) {
			t.Fatalf("%s/new is not watched", d)
		}
	}
	if got, want := w.State().Dirs, 1+5+countDistinct(dirs, 2)+2*len(dirs); got != want {
		t.Errorf("Dirs = %d, want %d", got, want)
	}
	checkFresh(t, w, ix)
}

// countDistinct counts the distinct prefixes of n components among paths.
func countDistinct(paths []string, n int) int {
	seen := make(map[string]bool)
	for _, p := range paths {
		seen[strings.Join(strings.Split(p, "/")[:n], "/")] = true
	}
	return len(seen)
}

// Start returns before the directories below the root are watched: their
// watches are the initial reconcile's, in the background (a seam holding
// one of them does not hold Start), and the watcher is Ready only once
// they are all added.
func TestStartLeavesTheWatchesToTheWalk(t *testing.T) {
	t.Parallel()
	root, dirs := startWalkTree(t)
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	defer open()
	seam := func(path string, add func(string) error) error {
		if path == filepath.Join(root, "a", "b") {
			<-gate
		}
		return add(path)
	}
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	started := make(chan *Watcher, 1)
	go func() {
		w, err := Start(context.Background(), root, ix, Options{AddWatch: seam, walkWatches: true, Logger: slogNew(&testLogger{t: t})})
		if err != nil {
			t.Error(err)
		}
		started <- w
	}()
	var w *Watcher
	select {
	case w = <-started:
	case <-time.After(deadline):
		open()
		t.Fatal("Start waited for the watches below the root")
	}
	if w == nil {
		return
	}
	defer w.Close()
	select {
	case <-w.Ready():
		t.Fatal("ready while a watch was still being added")
	default:
	}
	open()
	select {
	case <-w.Ready():
	case <-time.After(deadline):
		t.Fatal("not ready")
	}
	if got := w.State().Dirs; got != len(dirs) {
		t.Errorf("Dirs = %d, want %d", got, len(dirs))
	}
}
