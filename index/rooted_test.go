package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A directory replaced by a symlink to an outside directory holding files of
// the same names: whatever order the events naming the directory and the files
// under it reach Apply in, the index ends with nothing under the link and no
// outside content (docs/product.md, "The root is the boundary").
func TestApplyDirectoryReplacedBySymlink(t *testing.T) {
	t.Parallel()
	orders := [][][]string{
		{{"d/secret.txt"}},
		{{"d/secret.txt", "d/sub/deep.txt"}},
		{{"d"}},
		{{"d/secret.txt", "d"}},
		{{"d"}, {"d/secret.txt"}},
		{{"d/secret.txt"}, {"d"}},
		{{"d/sub"}, {"d/secret.txt"}},
		{{""}},
	}
	for _, batches := range orders {
		out := writeTree(t, map[string]string{"secret.txt": "OUTSIDE-SECRET\n", "sub/deep.txt": "OUTSIDE-SECRET\n"})
		root := writeTree(t, map[string]string{"d/secret.txt": "inside\n", "d/sub/deep.txt": "inside\n", "top.txt": "top\n"})
		ix := mustBuild(t, root)
		d := filepath.Join(root, "d")
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, d); err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if err := ix.Apply(context.Background(), b); err != nil {
				t.Fatalf("%v: Apply(%q): %v", batches, b, err)
			}
		}
		got := paths(ix)
		if i := slices.IndexFunc(got, func(p string) bool { return strings.HasPrefix(p, "d/") }); i >= 0 {
			t.Errorf("%v: the index holds %q under the link: %q", batches, got[i], got)
		}
		if c := candidates(t, ix, "OUTSIDE"); slices.ContainsFunc(c, func(p string) bool { return strings.HasPrefix(p, "d/") }) {
			t.Errorf("%v: candidates for OUTSIDE under the link: %q", batches, c)
		}
		checkIndex(t, ix)
	}
}
