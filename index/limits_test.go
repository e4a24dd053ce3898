package index_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// A file over either indexing limit (size, distinct trigrams) has unknown
// trigrams and is a candidate for every Grep: found through the index
// after a build, after updates and after a reopen. The limits are lowered
// so that the fixtures stay small.
func TestFilesOverTheLimitsAreFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	soup := "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"
	for _, c := range []struct {
		name            string
		size, trigrams  int
		over, overText  string
		over2, over2Txt string
	}{
		{"size", 100, index.MaxFileTrigrams,
			"big.txt", strings.Repeat("filler ", 20) + "needle\n",
			"big2.txt", strings.Repeat("padding ", 20) + "needle fresh\n"},
		{"trigrams", index.MaxFileSize, 40,
			"many.txt", soup + " needle\n",
			"many2.txt", "fresh needle " + soup + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			limits := index.LimitsOptions(c.size, c.trigrams)
			root := testtree.Write(t, map[string]string{
				"small.txt": "a small needle\n",
				"other.txt": "nothing\n",
				c.over:      c.overText,
			})
			old := time.Now().Add(-time.Hour) // one mtime for all: Grep's order is by path
			touchAll := func() {
				for _, p := range []string{"small.txt", "other.txt", c.over, "new/" + c.over2} {
					setTimesIfExists(t, root, p, old)
				}
			}
			touchAll()
			firstLine := func(s string) string { return strings.TrimSuffix(s, "\n") }
			db := filepath.Join(t.TempDir(), "ix.db")
			ix := mustOpen(t, ctx, db, root, limits, true)
			if got := ix.UnknownPaths(); !slices.Equal(got, []string{c.over}) {
				t.Fatalf("unknown after the build: %q", got)
			}
			sameAnswers(t, "built", root, ix, []string{"needle", "fresh"}, [][]string{
				{c.over + ":1:" + firstLine(c.overText), "small.txt:1:a small needle"}, {},
			}, nil)

			// Updates: the file changed (still over the limit), a new one
			// over it in a new directory.
			changed := strings.Replace(c.overText, "needle", "needle changed", 1)
			testtree.File(t, root, c.over, changed)
			testtree.File(t, root, "new/"+c.over2, c.over2Txt)
			touchAll()
			if err := ix.Apply(ctx, []string{c.over, "new"}); err != nil {
				t.Fatal(err)
			}
			want := [][]string{
				{c.over + ":1:" + firstLine(changed), "new/" + c.over2 + ":1:" + firstLine(c.over2Txt), "small.txt:1:a small needle"},
				{"new/" + c.over2 + ":1:" + firstLine(c.over2Txt)},
			}
			if got := ix.UnknownPaths(); !slices.Equal(got, []string{c.over, "new/" + c.over2}) {
				t.Fatalf("unknown after the updates: %q", got)
			}
			sameAnswers(t, "after Apply", root, ix, []string{"needle", "fresh"}, want, nil)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}

			ix = mustOpen(t, ctx, db, root, limits, false)
			if got := ix.UnknownPaths(); !slices.Equal(got, []string{c.over, "new/" + c.over2}) {
				t.Fatalf("unknown after the reopen: %q", got)
			}
			sameAnswers(t, "after reopen", root, ix, []string{"needle", "fresh"}, want, nil)
		})
	}
}

// setTimesIfExists is setTimes for a path that may not exist yet.
func setTimesIfExists(t testing.TB, root, rel string, mt time.Time) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, rel)); err == nil {
		setTimes(t, root, rel, mt)
	}
}
