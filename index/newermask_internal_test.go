package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// newerMask, a word of ids at a time, against the selection it makes
// (newer.admits, by path order for ties): random tables of 0–300 ids
// (not a multiple of 64 but some), few distinct mtimes so that since
// falls on ties, mtimes and since at the extremes of int64, free ids
// (mtime 0), more mtimes than files (the bound), with and without a
// path, under a directory; in parts (up to four) as in one.
func TestNewerMaskOracle(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // up to four parts
	r := rand.New(rand.NewPCG(1, 2))
	mtimes := []int64{math.MinInt64, 1, 2, 3, 4, 5, math.MaxInt64}
	for trial := range 2000 {
		n := r.IntN(300)
		if trial%10 == 0 {
			n = 64 * r.IntN(4)
		}
		ix := &Index{files: make([]File, n)}
		if trial%3 == 1 {
			ix.k.newerPart = 1 + r.IntN(100) // in parts, whatever GOMAXPROCS allows
		}
		for id := range n {
			ix.files[id] = File{Path: fmt.Sprintf("d%d/f%03d", r.IntN(3), r.IntN(1000)), ModTime: mtimes[r.IntN(len(mtimes))]}
			if r.IntN(10) == 0 {
				ix.files[id] = File{} // a free id
			}
			ix.mtimes = append(ix.mtimes, ix.files[id].ModTime)
		}
		if r.IntN(4) == 0 {
			ix.mtimes = append(ix.mtimes, 9, 9, 9) // past the table: never selected
		}
		for id := range n {
			if ix.files[id].Path != "" {
				ix.order = append(ix.order, uint32(id))
			}
		}
		slices.SortFunc(ix.order, func(a, b uint32) int { return strings.Compare(ix.files[a].Path, ix.files[b].Path) })
		since := []int64{math.MinInt64, math.MinInt64 + 1, 0, 1, 2, 3, 4, 5, 6, math.MaxInt64 - 1, math.MaxInt64}[r.IntN(11)]
		nw := newer{since: since}
		pre := ""
		if r.IntN(2) == 0 {
			nw.path = fmt.Sprintf("d%d/f%03d", r.IntN(3), r.IntN(1000))
			if r.IntN(2) == 0 {
				pre = nw.path[:3] // "dK/"
			}
		}
		got := ix.newerMask(nw, pre)
		if len(got) != (len(ix.mtimes)+63)/64 {
			t.Fatalf("trial %d: %d words for %d mtimes", trial, len(got), len(ix.mtimes))
		}
		for id := range len(got) * 64 {
			want := false
			if id < n {
				f := &ix.files[id]
				want = f.ModTime > since || f.ModTime == since && (nw.path == "" || f.Path != "" && strings.HasPrefix(f.Path, pre) && f.Path < nw.path)
			}
			if g := got[id/64]&(1<<(id%64)) != 0; g != want {
				t.Fatalf("trial %d (since %d, path %q, pre %q): id %d (mtime %d, path %q) selected %v, want %v",
					trial, since, nw.path, pre, id, ix.mtimes[min(id, len(ix.mtimes)-1)], ix.files[min(id, n-1)].Path, g, want)
			}
		}
	}
}
