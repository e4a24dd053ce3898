package index_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// setTimes sets the atime and mtime of root/rel.
func setTimes(t testing.TB, root, rel string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), mt, mt); err != nil {
		t.Fatal(err)
	}
}

// A change that keeps size and mtime (cp -p, rsync -a, touch -r) made
// while nothing watched is seen after a restart, and by an update of the
// directory holding it: the stat comparison includes ctime and inode.
// The index's clock runs an hour ahead, so that no file is racy (re-read
// whatever its stat): the stat comparison alone must see the changes.
func TestSameSizeSameMtimeChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ahead := index.ClockOptions(time.Now().Add(time.Hour))
	root := testtree.Write(t, map[string]string{
		"a.txt":   "alpha OLDWORD\n",
		"b.txt":   "beta\n",
		"d/c.txt": "gamma OLDWORD\n",
		"e/f.txt": "delta OLDWORD\n",
	})
	old := time.Now().Add(-time.Hour).Truncate(time.Second) // not racy
	for _, p := range []string{"a.txt", "b.txt", "d/c.txt", "e/f.txt"} {
		setTimes(t, root, p, old)
	}
	db := filepath.Join(t.TempDir(), "ix.db")
	ix, rebuilt, err := index.OpenOrBuild(ctx, db, root, ahead)
	if err != nil || !rebuilt {
		t.Fatalf("first OpenOrBuild: rebuilt=%v err=%v", rebuilt, err)
	}
	sameAnswers(t, "built", root, ix, []string{"OLDWORD"}, [][]string{{"a.txt:1:alpha OLDWORD", "d/c.txt:1:gamma OLDWORD", "e/f.txt:1:delta OLDWORD"}}, nil)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// touch -r: rewritten in place, same size, mtime put back.
	testtree.File(t, root, "a.txt", "alpha NEWWORD\n")
	setTimes(t, root, "a.txt", old)
	// cp -p: a new file (another inode) with the old mtime renamed over it.
	testtree.File(t, root, "d/c.txt.new", "gamma NEWWORD\n")
	setTimes(t, root, "d/c.txt.new", old)
	if err := os.Rename(filepath.Join(root, "d/c.txt.new"), filepath.Join(root, "d/c.txt")); err != nil {
		t.Fatal(err)
	}
	ix, rebuilt, err = index.OpenOrBuild(ctx, db, root, ahead)
	if err != nil || rebuilt {
		t.Fatalf("reopen: rebuilt=%v err=%v", rebuilt, err)
	}
	defer ix.Close()
	sameAnswers(t, "after restart", root, ix, []string{"NEWWORD", "OLDWORD"},
		[][]string{{"a.txt:1:alpha NEWWORD", "d/c.txt:1:gamma NEWWORD"}, {"e/f.txt:1:delta OLDWORD"}}, nil)

	// The same while the index runs, seen through an update of the
	// directory (a watcher's event for it).
	testtree.File(t, root, "e/f.txt", "delta NEWWORD\n")
	setTimes(t, root, "e/f.txt", old)
	if err := ix.Apply(ctx, []string{"e"}); err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, "after Apply", root, ix, []string{"NEWWORD", "OLDWORD"},
		[][]string{{"a.txt:1:alpha NEWWORD", "d/c.txt:1:gamma NEWWORD", "e/f.txt:1:delta NEWWORD"}, {}}, nil)
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
}
