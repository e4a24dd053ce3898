package index_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// setMtime sets root/rel's times with utimensat: os.Chtimes converts
// through UnixNano, which wraps for years after 2262 (2300 would land in
// 1715).
func setMtime(t testing.TB, root, rel string, mt time.Time) {
	t.Helper()
	ts := unix.Timespec{Sec: mt.Unix(), Nsec: int64(mt.Nanosecond())}
	if err := unix.UtimesNano(filepath.Join(root, rel), []unix.Timespec{ts, ts}); err != nil {
		t.Fatal(err)
	}
}

// mtimeOf returns the table's mtime of rel.
func mtimeOf(ix *index.Index, rel string) int64 {
	var m int64
	ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
		if f.Path == rel {
			m = f.ModTime
		}
		return true
	})
	return m
}

// Files dated after 2262 (past the int64 nanosecond range) sort as the
// newest and files dated 1900 as the oldest, in the walk and the index
// alike: after a build, an update and a reopen. Grep lists newest first;
// Glob with sort "recent" puts the future among the recent, newest first.
func TestFarFutureAndPastMtimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := testtree.Write(t, map[string]string{
		"a-2300.txt": "needle from 2300\n",
		"b-1900.txt": "needle from 1900\n",
		"c-now.txt":  "needle from now\n",
		"d-2400.txt": "needle from 2400\n",
	})
	y2300 := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	setMtime(t, root, "a-2300.txt", y2300)
	setMtime(t, root, "b-1900.txt", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))
	setMtime(t, root, "d-2400.txt", time.Date(2400, 6, 1, 0, 0, 0, 0, time.UTC))
	// Past 2262 the order among far-future files is by path (their times
	// compare equal once clamped).
	wantGrep := []string{"a-2300.txt:1:needle from 2300", "d-2400.txt:1:needle from 2400", "c-now.txt:1:needle from now", "b-1900.txt:1:needle from 1900"}
	wantRecent := []string{"a-2300.txt", "d-2400.txt", "c-now.txt", "b-1900.txt"}
	check := func(stage string, ix *index.Index) {
		t.Helper()
		sameAnswers(t, stage, root, ix, []string{"needle"}, [][]string{wantGrep}, []string{"*.txt"})
		walk, idx := tools(t, root, ix)
		for _, tl := range []*query.Tools{walk, idx} {
			e := run(t, tl, tool.Glob, `{"pattern":"*.txt","sort":"recent"}`)
			if got := e.Data.(*envelope.GlobData).Paths; !slices.Equal(got, wantRecent) {
				t.Fatalf("%s: Glob sort recent: %q, want %q", stage, got, wantRecent)
			}
		}
		if m := mtimeOf(ix, "a-2300.txt"); m != math.MaxInt64 {
			t.Fatalf("%s: 2300 recorded as %d, want MaxInt64", stage, m)
		}
		if m := mtimeOf(ix, "b-1900.txt"); m >= 0 {
			t.Fatalf("%s: 1900 recorded as %d, want a negative time", stage, m)
		}
	}
	db := filepath.Join(t.TempDir(), "ix.db")
	ix := mustOpen(t, ctx, db, root, nil, true)
	check("built", ix)

	// An update (lstat in Apply) records the same.
	testtree.File(t, root, "a-2300.txt", "needle from 2300\n")
	setMtime(t, root, "a-2300.txt", y2300)
	if err := ix.Apply(ctx, []string{"a-2300.txt", "b-1900.txt"}); err != nil {
		t.Fatal(err)
	}
	check("after Apply", ix)
	ix.Close()
	check("after reopen", mustOpen(t, ctx, db, root, nil, false))
}
