package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// withNewer streams exactly the ids of the AND that the newer files'
// bitmap holds, whatever the sizes put the bitmap: leading, second, or
// behind lists it is smaller or larger than; and over a stream that is
// not an AND.
func TestWithNewer(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	randList := func(n, bound int) []uint32 {
		var ids []uint32
		for id := range bound {
			if r.IntN(bound) < n {
				ids = append(ids, uint32(id))
			}
		}
		return ids
	}
	for trial := range 3000 {
		bound := 64 + r.IntN(2000)
		lists := make([][]uint32, 1+r.IntN(5))
		for i := range lists {
			lists[i] = randList(r.IntN(bound), bound)
		}
		words := make([]uint64, (bound+63)/64)
		density := r.IntN(bound + 1)
		for id := range bound {
			if r.IntN(bound) < density {
				words[id/64] |= 1 << (id % 64)
			}
		}
		var want []uint32
		for id := range uint32(bound) {
			in := words[id/64]&(1<<(id%64)) != 0
			for _, l := range lists {
				_, ok := slices.BinarySearch(l, id)
				in = in && ok
			}
			if in {
				want = append(want, id)
			}
		}
		kids := make([]idStream, len(lists))
		for i, l := range lists {
			kids[i] = &listStream{sliceCursor(l)}
		}
		var s idStream = kids[0]
		if len(kids) > 1 {
			s = newAnd(kids)
		}
		got := drain(nil, withNewer(s, newMaskStream(words)))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %d lists, %d newer of %d: got %v, want %v", trial, len(lists), density, bound, got, want)
		}
	}
}
