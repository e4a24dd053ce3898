package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/testtree"
)

// A directory the index may not list is recorded (Skipped.Denied), not
// dropped in silence, and a file it may not read stays in the table,
// unknown (a candidate every Grep reads, and reports); the record
// survives a save and reopen, and follows the directory's mode through
// Apply (what the watcher calls on the change of mode) and Reconcile.
func TestDeniedPathsRecorded(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := writeTree(t, map[string]string{
		"a/locked/x.go": "needle\n",
		"a/secret.go":   "needle\n",
		"c.go":          "needle\n",
	})
	chmod := func(rel string, mode os.FileMode) { testtree.Chmod(t, root, rel, mode) }
	chmod("a/locked", 0)
	chmod("a/secret.go", 0)
	denied := []Skipped{{Path: "a/locked", IsDir: true, Denied: true}}
	check := func(what string, ix *Index, wantPaths []string, wantSkipped []Skipped) {
		t.Helper()
		checkTable(t, what, ix, wantPaths, wantSkipped)
		if ix.Visibility().Ignored("a/locked/x.go") {
			t.Errorf("%s: a/locked/x.go counted as ignored", what)
		}
		if f := flagsOf(ix, "a/secret.go"); f&Unknown == 0 {
			t.Errorf("%s: a/secret.go flags %v, want Unknown", what, f)
		}
	}

	ix := mustBuild(t, root)
	check("build", ix, []string{"a/secret.go", "c.go"}, denied)
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	check("reopen", ix, []string{"a/secret.go", "c.go"}, denied)

	ctx := context.Background()
	chmod("a/locked", 0o755)
	if err := ix.Apply(ctx, []string{"a/locked"}); err != nil {
		t.Fatal(err)
	}
	check("readable", ix, []string{"a/locked/x.go", "a/secret.go", "c.go"}, nil)
	chmod("a/locked", 0)
	if err := ix.Apply(ctx, []string{"a/locked"}); err != nil {
		t.Fatal(err)
	}
	check("unreadable again", ix, []string{"a/secret.go", "c.go"}, denied)
	if _, err := ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	check("reconcile", ix, []string{"a/secret.go", "c.go"}, denied)
	if err := ix.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// A hidden directory that may not be listed is one record, both hidden
// and denied (a build that includes hidden names meets it twice): it
// saves, reopens and checks clean, and a reconcile keeps it as it is.
func TestHiddenDeniedDirectoryOneRecord(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := writeTree(t, map[string]string{".secret/x.go": "needle\n", "c.go": "needle\n"})
	testtree.Chmod(t, root, ".secret", 0)
	want := []Skipped{{Path: ".secret", IsDir: true, Hidden: true, Denied: true}}
	ix := mustBuild(t, root)
	checkTable(t, "build", ix, []string{"c.go"}, want)
	if err := ix.Check(); err != nil {
		t.Fatalf("Check after build: %v", err)
	}
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for i := range 2 {
		ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, nil)
		if err != nil || rebuilt {
			t.Fatalf("open %d: rebuilt %v, %v", i, rebuilt, err)
		}
		if _, err := ix.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkTable(t, fmt.Sprintf("open %d", i), ix, []string{"c.go"}, want)
		if err := ix.Check(); err != nil {
			t.Errorf("open %d: Check: %v", i, err)
		}
		ix.Close()
	}
}

// A directory that may be listed but not searched (mode 0644) shows its
// files by name: the build keeps them, unknown, and so does an update
// naming one (the watcher's, on a write by the directory's owner).
func TestListableUnsearchableDirectory(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := writeTree(t, map[string]string{"ro/z.go": "needle\n", "ro/sub/w.go": "needle\n", "c.go": "needle\n"})
	testtree.Chmod(t, root, "ro", 0o644)
	ix := mustBuild(t, root)
	wantPaths := []string{"c.go", "ro/z.go"}
	wantRecords := []Skipped{{Path: "ro/sub", IsDir: true, Denied: true}}
	checkTable(t, "build", ix, wantPaths, wantRecords)
	if err := ix.Apply(context.Background(), []string{"ro/z.go", "ro/sub/w.go"}); err != nil {
		t.Fatal(err)
	}
	checkTable(t, "apply", ix, wantPaths, wantRecords)
}

// checkTable compares ix's paths and its records of what a walk skips
// with the wanted ones.
func checkTable(t *testing.T, what string, ix *Index, wantPaths []string, wantRecords []Skipped) {
	t.Helper()
	if got := paths(ix); !slices.Equal(got, wantPaths) {
		t.Errorf("%s: table %q, want %q", what, got, wantPaths)
	}
	var got []Skipped
	ix.Visibility().Skipped("", func(s Skipped, _ bool) { got = append(got, s) })
	if !slices.Equal(got, wantRecords) {
		t.Errorf("%s: records %+v, want %+v", what, got, wantRecords)
	}
}

// A file that may not be read is trusted on its stat, unlike another
// unknown file: a reconcile of an unchanged tree (a restart's) reads
// nothing and writes nothing; a change of its mode (its ctime) has it
// read again.
func TestDeniedFileTrustedOnItsStat(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := writeTree(t, map[string]string{"secret.go": "needle\n", "c.go": "needle\n"})
	testtree.Chmod(t, root, "secret.go", 0)
	// The index's clock a minute ahead: no file is racy, as on a restart
	// long after the last write.
	ahead := knobsWith(func(k *knobs) { k.now = clockAt(time.Now().Add(time.Minute)) })
	ix := mustBuildWith(t, root, ahead)
	if f := flagsOf(ix, "secret.go"); f != Unknown|Denied {
		t.Fatalf("secret.go flags %v, want Unknown|Denied", f)
	}
	ctx := context.Background()
	if n, err := ix.Reconcile(ctx); n != 0 || err != nil {
		t.Fatalf("Reconcile of an unchanged tree: %d changes, %v", n, err)
	}
	testtree.Chmod(t, root, "secret.go", 0o644)
	if n, err := ix.Reconcile(ctx); n != 1 || err != nil {
		t.Fatalf("Reconcile after chmod: %d changes, %v; want 1", n, err)
	}
	if f := flagsOf(ix, "secret.go"); f != 0 {
		t.Errorf("secret.go, readable, flags %v, want none", f)
	}
	if err := ix.Check(); err != nil {
		t.Error(err)
	}
}
