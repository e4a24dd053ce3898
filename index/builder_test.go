package index

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// Workers' builders with a budget small enough to split files between
// runs and spill many runs (folded or not), merged, hold exactly the lists
// added (ids with gaps of one byte and of several, three workers taking
// chunks in turn); merged in memory without spilling they make the same
// base, byte for byte.
func TestBuilderRunsMerge(t *testing.T) {
	t.Parallel()
	const workers, files, chunk = 3, 3000, 7
	r := rand.New(rand.NewPCG(3, 4))
	want := map[uint32][]uint32{}
	tris := make([][]uint32, files)
	for id := range files {
		if id%5 == 4 {
			continue // no trigram: gaps of more than 127 ids in the rare lists
		}
		set := map[uint32]bool{uint32(id % 3): true}
		for range r.IntN(40) {
			set[r.Uint32N(60)<<12|r.Uint32N(3)] = true // many files each
		}
		if r.IntN(50) == 0 {
			set[0xFFFFFF-r.Uint32N(4)] = true // a few files each
		}
		for tr := range set {
			mask := (byte(id*7) ^ byte(tr)) | 0x10          // a line bit, as extraction makes
			tris[id] = append(tris[id], tr<<8|uint32(mask)) // packed: trigram ‖ next mask
			want[tr] = append(want[tr], uint32(id)<<8|uint32(mask))
		}
	}
	var maxOpenRuns func() int // the default
	build := func(limit int, dir string) (newBase, int) {
		t.Helper()
		sp := &spiller{at: dir, workers: workers, maxOpenRuns: maxOpenRuns}
		bs := make([]*postingBuilder, workers)
		for w := range bs {
			bs[w] = newBuilder(limit)
		}
		for lo := 0; lo < files; lo += chunk {
			w := (lo / chunk) % workers
			for id := lo; id < min(lo+chunk, files); id++ {
				if err := bs[w].add(uint32(id), tris[id], func() error { return sp.spill(w, bs[w]) }); err != nil {
					t.Fatal(err)
				}
			}
		}
		nb, runs, err := sp.merge(bs)
		if err != nil {
			t.Fatal(err)
		}
		return nb, runs
	}
	spilled, runs := build(16*minBuilderPostings, t.TempDir()+"/ix.db")
	defer spilled.p.close()
	if runs < 10 || spilled.p.unmap == nil {
		t.Fatalf("%d runs, mapped %v: the budget did not force runs", runs, spilled.p.unmap != nil)
	}
	mem, runs := build(64<<20, "")
	if runs != workers || mem.p.unmap != nil {
		t.Fatalf("in memory: %d runs merged, mapped %v", runs, mem.p.unmap != nil)
	}
	// With room for 3 runs a worker, each folds its runs into one when
	// it spills a fourth, again and again (a run folded before is folded
	// with the next ones): the merge sees at most 3 a worker.
	maxOpenRuns = func() int { return 3 * workers }
	folded, runs := build(16*minBuilderPostings, t.TempDir()+"/ix.db")
	defer folded.p.close()
	if runs > 3*workers {
		t.Fatalf("folded: %d runs merged, want at most %d", runs, 3*workers)
	}
	for name, nb := range map[string]newBase{"spilled": spilled, "in memory": mem, "folded": folded} {
		if err := nb.p.check(files, func(uint32) error { return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[uint32][]uint32{}
		for i := range nb.p.n {
			for c := listCursor(nb.p.list(i)); !c.done; c.next() {
				got[nb.p.trigram(i)] = append(got[nb.p.trigram(i)], c.cur<<8|uint32(c.mask))
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			for tr, ids := range want {
				if !slices.Equal(got[tr], ids) {
					t.Fatalf("%s: list of %06x = %x, want %x (id<<8 | next mask)", name, tr, got[tr], ids)
				}
			}
			t.Fatalf("%s: %d lists, want %d", name, len(got), len(want))
		}
	}
	if !slices.Equal(spilled.p.data, mem.p.data) || !slices.Equal(folded.p.data, mem.p.data) {
		t.Fatal("the spilled or folded base differs from the one merged in memory")
	}
}

// A builder keeps to its limit: it grows up to it, then spills, even
// in the middle of a file's postings, and holds them all in the end.
func TestBuilderLimit(t *testing.T) {
	t.Parallel()
	b := newBuilder(100 * 16)
	var spilled []int
	spill := func() error {
		spilled = append(spilled, len(b.items))
		b.reset()
		return nil
	}
	tris := make([]uint32, 30)
	for id := range uint32(20) { // 600 postings
		for i := range tris {
			tris[i] = uint32(i) << 8
		}
		if err := b.add(id, tris, spill); err != nil {
			t.Fatal(err)
		}
		if cap(b.items) > 100 {
			t.Fatalf("after id %d the builder has room for %d postings, over its limit of 100", id, cap(b.items))
		}
	}
	if want := []int{100, 100, 100, 100, 100}; !slices.Equal(spilled, want) || len(b.items) != 100 {
		t.Fatalf("spilled %v and kept %d postings, want %v and 100", spilled, len(b.items), want)
	}
	if err := b.add(20, tris, func() error { return errors.New("disk full") }); err == nil || err.Error() != "disk full" {
		t.Fatalf("a full builder whose spill fails: %v, want the spill's error", err)
	}
}

// sortLow sorts a bucket by the trigram's low 12 bits and keeps each
// trigram's postings in the order they came (the ids of a run's list
// ascending), whether it sorts by insertion (up to 64 postings) or by
// counting.
func TestSortLow(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 500, 5000} {
		src := make([]uint64, n)
		for i := range src {
			low := r.Uint64N(1 << 12)
			if r.IntN(2) == 0 {
				low = r.Uint64N(4) // many postings of a few trigrams
			}
			// the same high bits; id and mask at random, not ascending
			src[i] = 0xABC<<52 | low<<40 | r.Uint64N(1<<32)<<8 | r.Uint64N(256)
		}
		want := slices.Clone(src)
		slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>40, b>>40) })
		got := make([]uint64, n)
		sortLow(got, src)
		if !slices.Equal(got, want) {
			t.Fatalf("%d postings: sortLow differs from a stable sort by trigram", n)
		}
	}
}

// merge2 is the union in id order, each posting with its own mask; of an
// id in both lists the first list's posting is kept, once.
func TestMerge2(t *testing.T) {
	t.Parallel()
	a := &postingList{ids: []uint32{1, 3, 5}, masks: []byte{0xa1, 0xa3, 0xa5}}
	b := &postingList{ids: []uint32{0, 2, 3, 6, 7}, masks: []byte{0xb0, 0xb2, 0xb3, 0xb6, 0xb7}}
	var got postingList
	merge2(&got, a, b)
	if want := []uint32{0, 1, 2, 3, 5, 6, 7}; !slices.Equal(got.ids, want) {
		t.Fatalf("ids %v, want %v", got.ids, want)
	}
	if want := []byte{0xb0, 0xa1, 0xb2, 0xa3, 0xa5, 0xb6, 0xb7}; !bytes.Equal(got.masks, want) {
		t.Fatalf("masks %x, want %x", got.masks, want)
	}
	// Random lists in stretches of consecutive ids, as a build's workers
	// make them, some ids in both, appended after what dst holds.
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		var a, b postingList
		want := map[uint32]byte{}
		n := uint32(r.IntN(600))
		for id := uint32(0); id < n; {
			which := r.IntN(9) // a, b, or (rarely) both
			for end := id + 1 + uint32(r.IntN(20)); id < end; id++ {
				switch {
				case which < 4:
					a.ids, a.masks = append(a.ids, id), append(a.masks, byte(id))
					want[id] = byte(id)
				case which < 8:
					b.ids, b.masks = append(b.ids, id), append(b.masks, byte(id)^0xff)
					want[id] = byte(id) ^ 0xff
				default:
					a.ids, a.masks = append(a.ids, id), append(a.masks, byte(id))
					b.ids, b.masks = append(b.ids, id), append(b.masks, 0x55)
					want[id] = byte(id)
				}
			}
		}
		got := postingList{ids: []uint32{99}, masks: []byte{0x99}}
		merge2(&got, &a, &b)
		if len(got.ids) != len(want)+1 || got.ids[0] != 99 || got.masks[0] != 0x99 {
			t.Fatalf("%d ids after the one held, want %d, or the one held changed", len(got.ids)-1, len(want))
		}
		for i, id := range got.ids[1:] {
			if m, ok := want[id]; !ok || m != got.masks[i+1] || i > 0 && id <= got.ids[i] {
				t.Fatalf("posting %d: id %d mask %#x, want ascending ids each with its list's mask (%#x, %v)", i, id, got.masks[i+1], m, ok)
			}
		}
	}
}
