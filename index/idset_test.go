package index

import (
	"math/rand/v2"
	"testing"
)

// TestIDSet checks the set against a map through random puts and takes.
func TestIDSet(t *testing.T) {
	var s idSet
	want := map[uint32]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	if s.has(0) || s.last() != -1 {
		t.Fatalf("empty set: has(0) %v, last %d", s.has(0), s.last())
	}
	for range 5000 {
		id := uint32(r.IntN(700))
		on := r.IntN(3) > 0
		s.set(id, on)
		want[id] = on
		last := -1
		for i := range uint32(800) {
			if s.has(i) != want[i] {
				t.Fatalf("has(%d) = %v, want %v", i, s.has(i), want[i])
			}
			if want[i] {
				last = int(i)
			}
		}
		if s.last() != last {
			t.Fatalf("last() = %d, want %d", s.last(), last)
		}
	}
}
