package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Linked reports every regular file an Apply or a Reconcile finds with
// more than one link, those it names and those its walks list, as lstat
// found it; not files with one link, nor ignored files, nor links to
// files (symlinks), which a watcher of the tree's directories sees.
func TestLinkedReports(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{".ignore": "*.log\n", "a.txt": "a\n", "one.txt": "1\n", "d/b.txt": "b\n", "d/c.txt": "c\n", "x.log": "x\n"})
	out := t.TempDir()
	for i, rel := range []string{"a.txt", "d/b.txt", "x.log"} {
		if err := os.Link(filepath.Join(root, rel), filepath.Join(out, string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "sym")); err != nil {
		t.Fatal(err)
	}
	ix := mustBuild(t, root)
	var got []string
	linked := func(f File) {
		if st, err := os.Lstat(filepath.Join(root, f.Path)); err != nil || f.Size != st.Size() || f.Ino == 0 {
			t.Errorf("%s reported as %+v, lstat %v", f.Path, f, err)
		}
		got = append(got, f.Path)
	}
	check := func(what string, want ...string) {
		t.Helper()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Linked reported %q, want %q", what, got, want)
		}
		got = nil
	}
	if err := ix.ApplyWith(context.Background(), []string{"a.txt", "one.txt", "x.log", "sym", "d"}, ApplyOptions{Linked: linked}); err != nil {
		t.Fatal(err)
	}
	check("apply", "a.txt", "d/b.txt")
	if _, err := ix.ReconcileWith(context.Background(), ReconcileOptions{Linked: linked}); err != nil {
		t.Fatal(err)
	}
	check("reconcile", "a.txt", "d/b.txt")
	checkIndex(t, ix)
}
