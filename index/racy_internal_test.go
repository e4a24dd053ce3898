package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// forgeStat makes the table's record of rel carry the file's current stat,
// as if the index had read the old contents within the same timestamp tick
// as the change: the one case the stat comparison cannot see.
func forgeStat(t testing.TB, ix *Index, rel string) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(ix.root, rel), &st); err != nil {
		t.Fatal(err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	f := &ix.files[ix.idOf(rel)]
	g := fileFromStat(rel, &st)
	f.Size, f.ModTime, f.Ctime, f.Ino, f.Dev = g.Size, g.ModTime, g.Ctime, g.Ino, g.Dev
}

func flagsOf(ix *Index, rel string) Flags {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.files[ix.idOf(rel)].Flags
}

// racyFixture saves an index of a tree whose f.txt ("content ONE") has
// mtime mt, built at build and saved at save (the index's clock), then
// changes f.txt to "content TWO" (same size, same mtime), reopens the DB
// (the clock's the real one) and forges the record's stat to the new
// one.
func racyFixture(t *testing.T, mt, build, save time.Time) *Index {
	t.Helper()
	root := writeTree(t, map[string]string{"f.txt": "content ONE\n", "g.txt": "other\n"})
	for _, p := range []string{"f.txt", "g.txt"} {
		if err := os.Chtimes(filepath.Join(root, p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ix := mustBuildWith(t, root, knobsWith(func(k *knobs) { k.now = clockAt(build) }))
	ix.k.now = clockAt(save)
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	writeFile(t, root, "f.txt", "content TWO\n")
	if err := os.Chtimes(filepath.Join(root, "f.txt"), mt, mt); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if ix.written != save.UnixNano() {
		t.Fatalf("written = %d, want the save's time %d", ix.written, save.UnixNano())
	}
	forgeStat(t, ix, "f.txt")
	return ix
}

// The fixtures' files have an mtime an hour ago and a ctime of now (they
// were just written): an index built or updated at late, an hour ahead,
// finds neither racy.
var late = time.Now().Add(time.Hour)

// A file whose mtime is not older than the index's last write (meta
// "written") is re-read on revalidation even though its stat matches.
func TestRacyAgainstWriteTime(t *testing.T) {
	t.Parallel()
	mt := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, c := range []struct {
		name  string
		save  time.Time
		found []string
	}{
		{"mtime equal to the write", mt, []string{"f.txt"}},
		{"mtime after the write", mt.Add(-time.Minute), []string{"f.txt"}},
		// The control: an older mtime is trusted on its (forged) stat, so
		// the old contents stay indexed. This is what the two cases above
		// would do without the rule.
		{"mtime older than the write", mt.Add(time.Second), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := racyFixture(t, mt, late, c.save)
			if f := flagsOf(ix, "f.txt"); f != 0 {
				t.Fatalf("flags %#x: the build must not have found f.txt racy", f)
			}
			n, err := ix.Reconcile(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := candidates(t, ix, "TWO"); !slices.Equal(got, c.found) {
				t.Fatalf("candidates for TWO after reopen: %q (files re-read: %d), want %q", got, n, c.found)
			}
			checkIndex(t, ix)
		})
	}
}

// A file read within RacyWindow of its mtime is flagged Racy, the flag is
// saved, and revalidation re-reads it whatever its stat and the index's
// write time say; once read long enough after its mtime it is trusted.
func TestRacyFlagPersists(t *testing.T) {
	t.Parallel()
	mt := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Built a second after the mtime, saved later: only the flag can tell.
	ix := racyFixture(t, mt, mt.Add(time.Second), late)
	if f := flagsOf(ix, "f.txt"); f != Racy {
		t.Fatalf("f.txt flags %#x, want Racy", f)
	}
	ix.k.now = clockAt(late)
	n, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := candidates(t, ix, "TWO"); !slices.Equal(got, []string{"f.txt"}) {
		t.Fatalf("candidates for TWO: %q (files re-read: %d)", got, n)
	}
	// Re-read long after its mtime and ctime: no longer racy, and the next
	// revalidation reads nothing.
	if f := flagsOf(ix, "f.txt"); f != 0 {
		t.Fatalf("f.txt flags %#x after the re-read, want 0", f)
	}
	if n, err := ix.Reconcile(context.Background()); n != 0 || err != nil {
		t.Fatalf("second Reconcile: %d files, %v", n, err)
	}
	checkIndex(t, ix)
}

// idOf returns the id of the live file at p (0 if none).
func (ix *Index) idOf(p string) uint32 {
	id, _ := ix.lookup(p)
	return id
}
