package grep

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The ordering places files in exactly the order a full sort by (mtime
// descending, path) gives, whatever the input order, ties and sizes, and
// a placed prefix never moves while more are placed.
func TestOrderingEqualsSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000, 3000, 5000} { // 3000, 5000: past sortPast, sorted at 1024 and 1667
		for _, mtimes := range []int{1, 3, 1 << 30} { // all tied, few, distinct
			files := make([]File, n)
			for i := range files {
				files[i] = File{Rel: fmt.Sprintf("d%d/f%d", rng.IntN(50), rng.IntN(1000)), ModTime: int64(rng.IntN(mtimes))}
			}
			want := slices.Clone(files)
			slices.SortStableFunc(want, func(a, b File) int {
				return cmp.Or(cmp.Compare(b.ModTime, a.ModTime), strings.Compare(a.Rel, b.Rel))
			})
			o := newOrdering(files)
			for step := 0; o.placed < n; step++ {
				before := slices.Clone(files[:o.placed])
				o.upTo(o.placed + 1 + step%5)
				if !slices.Equal(files[:len(before)], before) {
					t.Fatalf("n %d: the placed prefix moved", n)
				}
			}
			if o.next() {
				t.Fatalf("n %d: next after all were placed", n)
			}
			// Equal paths with equal mtimes are interchangeable; compare keys.
			for i := range files {
				if files[i].ModTime != want[i].ModTime || files[i].Rel != want[i].Rel {
					t.Fatalf("n %d, mtimes %d: #%d is %v, want %v", n, mtimes, i, files[i], want[i])
				}
			}
		}
	}
}

// BenchmarkOrdering places a tenth, and all, of 200,000 files with
// distinct mtimes (a dense pattern on a large tree).
func BenchmarkOrdering(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	files := make([]File, 200_000)
	for i := range files {
		files[i] = File{Rel: fmt.Sprintf("d%d/f%d.go", rng.IntN(5000), i), ModTime: rng.Int64()}
	}
	for _, k := range []int{len(files) / 10, len(files)} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			work := make([]File, len(files))
			for b.Loop() {
				b.StopTimer()
				copy(work, files)
				b.StartTimer()
				o := newOrdering(work)
				for o.placed < k {
					o.upTo(o.placed + 8)
				}
			}
		})
	}
}
