//go:build linux

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/journal"
)

// netSince returns the journal's net changes since pos as "kind path"
// lines, sorted.
func netSince(t *testing.T, j *journal.Journal, pos uint64) []string {
	t.Helper()
	chs, ok := j.Net(pos)
	if !ok {
		t.Fatalf("Net(%d): not known (journal start/end %v)", pos, fmtPositions(j))
	}
	var out []string
	for _, c := range chs {
		out = append(out, c.Kind.String()+" "+c.Path)
	}
	slices.Sort(out)
	return out
}

func fmtPositions(j *journal.Journal) []uint64 {
	s, e := j.Positions()
	return []uint64{s, e}
}

func mark(j *journal.Journal) uint64 {
	_, end := j.Positions()
	return end
}

func expectNet(t *testing.T, j *journal.Journal, pos uint64, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := netSince(t, j, pos); !slices.Equal(got, want) {
		t.Errorf("changes since %d:\n got %q\nwant %q", pos, got, want)
	}
}

// The journal gets created, modified and deleted files, a rename as a
// delete and a create, and a directory rename as every file under it.
func TestJournalKinds(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for _, rel := range []string{"a.txt", "b.txt", "d/x/one.txt", "d/x/two.txt", "d/three.txt", ".gitignore"} {
		writeFile(t, root, rel, "content of "+rel+"\n")
	}
	writeFile(t, root, ".gitignore", "*.log\n")
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	j := journal.New(0)
	w, _ := startDB(t, root, Options{Journal: j})

	p := mark(j)
	writeFile(t, root, "new.txt", "new\n")
	writeFile(t, root, "a.txt", "changed content\n")
	must(t, os.Remove(filepath.Join(root, "b.txt")))
	syncNow(t, w)
	expectNet(t, j, p, "created new.txt", "modified a.txt", "deleted b.txt")

	p = mark(j)
	must(t, os.Rename(filepath.Join(root, "new.txt"), filepath.Join(root, "renamed.txt")))
	syncNow(t, w)
	expectNet(t, j, p, "deleted new.txt", "created renamed.txt")

	p = mark(j)
	must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
	syncNow(t, w)
	expectNet(t, j, p, "deleted d/x/one.txt", "deleted d/x/two.txt", "deleted d/three.txt",
		"created e/x/one.txt", "created e/x/two.txt", "created e/three.txt")

	// Created and deleted since the mark: nothing net.
	p = mark(j)
	writeFile(t, root, "tmp.txt", "tmp\n")
	syncNow(t, w)
	must(t, os.Remove(filepath.Join(root, "tmp.txt")))
	syncNow(t, w)
	expectNet(t, j, p)

	// An ignored file is journaled, marked ignored.
	p = mark(j)
	writeFile(t, root, "build.log", "log\n")
	syncNow(t, w)
	chs, _ := j.Net(p)
	if len(chs) != 1 || chs[0].Path != "build.log" || chs[0].Kind != journal.Created || !chs[0].Ignored || chs[0].Mtime == 0 {
		t.Errorf("ignored file: got %+v, want one created, ignored build.log with its mtime", chs)
	}
	p = mark(j)
	must(t, os.Remove(filepath.Join(root, "build.log")))
	syncNow(t, w)
	chs, _ = j.Net(p)
	if len(chs) != 1 || chs[0].Path != "build.log" || chs[0].Kind != journal.Deleted || !chs[0].Ignored {
		t.Errorf("ignored file removed: got %+v, want one deleted, ignored build.log", chs)
	}

	// A file made ignored by a rule change drops out of the table: deleted
	// as far as the default view goes.
	p = mark(j)
	writeFile(t, root, ".gitignore", "*.log\nrenamed.txt\n")
	syncNow(t, w)
	expectNet(t, j, p, "deleted renamed.txt", "modified .gitignore")
}

// An overflow truncates the journal: every earlier position is unknown.
func TestJournalOverflowTruncates(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a.txt", "a\n")
	j := journal.New(0)
	w, _ := start(t, root, Options{Journal: j})
	writeFile(t, root, "b.txt", "b\n")
	syncNow(t, w)
	p := mark(j)
	if _, ok := j.Net(p - 1); !ok {
		t.Fatal("the position before the last change is not known")
	}
	w.fault(fsnotify.ErrEventOverflow)
	syncNow(t, w)
	if _, ok := j.Net(p); ok {
		t.Errorf("a position from before the overflow is still answered")
	}
	q := mark(j)
	writeFile(t, root, "c.txt", "c\n")
	syncNow(t, w)
	expectNet(t, j, q, "created c.txt")
	if s, _ := j.Positions(); s <= p {
		t.Errorf("start %d not past the pre-overflow position %d", s, p)
	}
}

// A directory renamed while a batch naming a path under it is being
// applied: Index.Apply drops the directory's whole subtree in that batch
// (its broken ancestor), and the journal records every file of it.
func TestJournalRenameUnderBatch(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "d/x/old.txt", "old\n")
	writeFile(t, root, "d/y.txt", "y\n")
	j := journal.New(0)
	inBatch, renamed, moved := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, onceMove sync.Once
	opts := Options{
		Journal: j,
		onBatch: func(paths map[string]fsnotify.Op) {
			if _, ok := paths["d/x/new.txt"]; ok {
				once.Do(func() {
					close(inBatch)
					<-renamed // the rename happens while this batch is applied
				})
			}
		},
		onEvent: func(ev fsnotify.Event) bool {
			if ev.Name == filepath.Join(root, "d") && ev.Has(fsnotify.Rename) {
				onceMove.Do(func() { <-moved }) // its events come after that batch
			}
			return true
		},
	}
	w, _ := start(t, root, opts)
	p := mark(j)
	writeFile(t, root, "d/x/new.txt", "new\n")
	wait(t, inBatch, "the batch naming d/x/new.txt")
	must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
	close(renamed)
	close(moved)
	syncNow(t, w)
	expectNet(t, j, p, "deleted d/x/old.txt", "deleted d/y.txt", "created e/x/new.txt", "created e/x/old.txt", "created e/y.txt")
}

// A batch's journal scope follows its change: a file rewritten among many
// is its own scope, not its directory (a burst's before and after
// snapshots then cost what it changed, not the table); a file gone with
// its directory widens to that directory, and the journal records the
// directory's files as deleted.
func TestJournalScopesFollowTheChange(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for i := range 50 {
		writeFile(t, root, fmt.Sprintf("d/f%02d.txt", i), "x\n")
	}
	writeFile(t, root, "e/g.txt", "g\n")
	writeFile(t, root, "e/h.txt", "h\n")
	j := journal.New(0)
	var mu sync.Mutex
	var scopes []string
	opts := Options{Journal: j, onScopes: func(s []string) {
		mu.Lock()
		scopes = append(scopes, s...)
		mu.Unlock()
	}}
	w, _ := start(t, root, opts)
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := scopes
		scopes = nil
		return s
	}
	seen()
	writeFile(t, root, "d/f07.txt", "rewritten\n")
	syncNow(t, w)
	got := seen()
	if !slices.Contains(got, "d/f07.txt") || slices.Contains(got, "d") || slices.Contains(got, "") {
		t.Errorf("scopes of the batch rewriting d/f07.txt: %q, want d/f07.txt and not its directory", got)
	}
	p := mark(j)
	must(t, os.RemoveAll(filepath.Join(root, "e")))
	syncNow(t, w)
	if got := seen(); !slices.Contains(got, "e") {
		t.Errorf("scopes of the batches removing e/: %q, want e among them", got)
	}
	expectNet(t, j, p, "deleted e/g.txt", "deleted e/h.txt")
}

// A directory renamed after a batch naming a file under it was scoped and
// before the index applies it: the file's scope is the file alone (it
// was there), the index drops the directory's whole subtree, and the
// journal records those files as deleted from the index's own report,
// without starting again.
func TestJournalRenameAfterScoping(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "d/x/old.txt", "old\n")
	writeFile(t, root, "d/y.txt", "y\n")
	j := journal.New(0)
	var once sync.Once
	opts := Options{
		Journal: j,
		onScopes: func(scopes []string) {
			if slices.Contains(scopes, "d/x/new.txt") {
				once.Do(func() {
					if slices.Contains(scopes, "d") || slices.Contains(scopes, "d/x") {
						t.Errorf("scopes %q: the file was there, yet its directories were added", scopes)
					}
					must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
				})
			}
		},
	}
	w, _ := start(t, root, opts)
	p := mark(j)
	writeFile(t, root, "d/x/new.txt", "new\n")
	syncNow(t, w) // the batch naming d/x/new.txt, and the rename in it, come before this sync's cookie
	syncNow(t, w) // the rename's events before this one's
	expectNet(t, j, p, "deleted d/x/old.txt", "deleted d/y.txt", "created e/x/new.txt", "created e/x/old.txt", "created e/y.txt")
}
