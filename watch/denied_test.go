package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// A directory the daemon may not list is recorded as such, and follows
// its mode: made readable, its files are indexed and watched (a file
// made in it then is found); made unreadable again, they leave the index
// and the record returns. A file made readable is read. Each step
// equals a fresh build.
func TestDeniedDirectoryFollowsItsMode(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := tempRoot(t)
	testtree.File(t, root, "a/locked/x.go", "package a\n")
	testtree.File(t, root, "a/open/y.go", "package a\n")
	testtree.File(t, root, "a/secret.go", "package a\n")
	chmod := func(rel string, mode os.FileMode) { testtree.Chmod(t, root, rel, mode) }
	// A file with two links that may not be read: no watch of its own is
	// needed (every Grep reads it), and none is taken as missing.
	testtree.File(t, root, "b/linked.go", "package b\n")
	must(t, os.MkdirAll(filepath.Join(root, "c"), 0o755))
	must(t, os.Link(filepath.Join(root, "b/linked.go"), filepath.Join(root, "c/linked.go")))
	chmod("b/linked.go", 0)
	chmod("a/locked", 0)
	chmod("a/secret.go", 0)
	w, ix := start(t, root, Options{})
	denied := []index.Skipped{{Path: "a/locked", IsDir: true, Denied: true}}
	step := func(what string, wantPaths []string, wantIgnored []index.Skipped) {
		t.Helper()
		checkFresh(t, w, ix)
		if got := paths(ix, ""); !slices.Equal(got, wantPaths) {
			t.Errorf("%s: paths %q, want %q", what, got, wantPaths)
		}
		if got := ignored(ix); !slices.Equal(got, wantIgnored) {
			t.Errorf("%s: records %+v, want %+v", what, got, wantIgnored)
		}
	}
	step("start", []string{"a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, denied)
	if st := w.State(); len(st.Unwatched) > 0 {
		t.Errorf("unwatched: %q", st.Unwatched)
	}
	chmod("a/locked", 0o755)
	step("readable", []string{"a/locked/x.go", "a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, nil)
	testtree.File(t, root, "a/locked/z.go", "package a\n")
	step("new file in it", []string{"a/locked/x.go", "a/locked/z.go", "a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, nil)
	chmod("a/locked", 0)
	step("unreadable again", []string{"a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, denied)
	// Searched and written but not listed: a file made in it is not
	// indexed, as a build that cannot list it would not.
	chmod("a/locked", 0o311)
	testtree.File(t, root, "a/locked/drop.go", "package a\n")
	testtree.File(t, root, "a/locked/sub/node_modules/m.js", "m\n")
	testtree.File(t, root, "a/locked/.hid/h.go", "package a\n")
	step("write-only", []string{"a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, denied)
	if st := w.State(); len(st.Unwatched) > 0 {
		t.Errorf("unwatched: %q", st.Unwatched)
	}
	if !isCandidate(t, ix, "xyzzy", "a/secret.go") {
		t.Errorf("a/secret.go, unreadable, is not a candidate for every query")
	}
	chmod("a/secret.go", 0o644)
	step("file readable", []string{"a/open/y.go", "a/secret.go", "b/linked.go", "c/linked.go"}, denied)
	if isCandidate(t, ix, "xyzzy", "a/secret.go") {
		t.Errorf("a/secret.go, read, is a candidate for what it does not hold")
	}
}
