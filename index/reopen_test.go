package index

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// txID returns the ID of the DB's last committed transaction.
func txID(t *testing.T, ix *Index) (id int) {
	t.Helper()
	if err := ix.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// A restart's catch-up of a tree that did not change writes nothing (no
// transaction, so no fsync); one that finds a change, or a new ignored
// entry, commits it, and a reopen sees it.
func TestReconcileUnchangedWritesNothing(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		".ignore":     "*.log\n",
		"a/x.go":      "package a\n",
		"a/b/y.txt":   "why\n",
		"old.log":     "ignored\n",
		".h/hidden.c": "int h;\n",
	})
	// The index's clock a minute ahead: no file is racy (its stat is
	// trusted), as on a restart long after the last write.
	ahead := knobsWith(func(k *knobs) { k.now = clockAt(time.Now().Add(time.Minute)) })
	db := filepath.Join(t.TempDir(), "ix.db")
	ix := mustBuildWith(t, root, ahead)
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	reopen := func() *Index {
		t.Helper()
		ix, err := open(db, root, ahead)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	ix = reopen()
	before, ignBefore := txID(t, ix), slices.Clone(ix.ignored)
	if n, err := ix.Reconcile(context.Background()); n != 0 || err != nil {
		t.Fatalf("Reconcile of an unchanged tree: %d changes, %v", n, err)
	}
	if after := txID(t, ix); after != before {
		t.Fatalf("Reconcile of an unchanged tree committed: tx %d -> %d", before, after)
	}
	if !slices.Equal(ix.ignored, ignBefore) || len(ignBefore) != 2 {
		t.Fatalf("ignored records %v, want %v (old.log, .h)", ix.ignored, ignBefore)
	}
	// A new ignored file alone is a change to the "ignored" records.
	writeFile(t, root, "new.log", "also ignored\n")
	if n, err := ix.Reconcile(context.Background()); n != 0 || err != nil {
		t.Fatalf("Reconcile after an ignored file: %d changes, %v", n, err)
	}
	if after := txID(t, ix); after != before+1 {
		t.Fatalf("a new ignored entry was not committed: tx %d -> %d", before, after)
	}
	// A changed file is re-read and committed.
	writeFile(t, root, "a/b/y.txt", "why not\n")
	if n, err := ix.Reconcile(context.Background()); n != 1 || err != nil {
		t.Fatalf("Reconcile after a write: %d changes, %v", n, err)
	}
	if after := txID(t, ix); after != before+2 {
		t.Fatalf("a change was not committed: tx %d -> %d", before, after)
	}
	ix.Close()
	ix = reopen()
	if got := ix.ignored; len(got) != 3 || got[2].Path != "old.log" || got[1].Path != "new.log" {
		t.Errorf("reopened: ignored %v, want .h, new.log, old.log", got)
	}
	id, ok := ix.lookup("a/b/y.txt")
	if !ok || ix.files[id].Size != int64(len("why not\n")) {
		t.Errorf("reopened: a/b/y.txt is %+v, want its new size", ix.files[id])
	}
}
