package index

import (
	"bytes"
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// Workers' builders with a budget small enough to chain blocks, split
// files between runs and spill many runs, merged, hold exactly the lists
// added (ids with gaps of one byte and of several, three workers taking
// chunks in turn); merged in memory without spilling they make the same
// base, byte for byte.
func TestBuilderRunsMerge(t *testing.T) {
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
			mask := (byte(id*7) ^ byte(tr)) & 0xF           // four bits, as extraction makes
			tris[id] = append(tris[id], tr<<8|uint32(mask)) // packed: trigram ‖ next mask
			want[tr] = append(want[tr], uint32(id)<<8|uint32(mask))
		}
	}
	build := func(limit int, dir string) (newBase, int) {
		t.Helper()
		sp := &spiller{at: dir}
		bs := make([]*postingBuilder, workers)
		for w := range bs {
			bs[w] = newBuilder(limit)
		}
		// Each worker's batch is added after a random number of
		// files (1–20: within a chunk and across chunks) and at the end.
		bts := make([]batch, workers)
		flush := func(w int) {
			if err := bs[w].addBatch(&bts[w], func() error { return sp.spill(w, bs[w]) }); err != nil {
				t.Fatal(err)
			}
		}
		fr := rand.New(rand.NewPCG(5, 6))
		for lo := 0; lo < files; lo += chunk {
			w := (lo / chunk) % workers
			for id := lo; id < min(lo+chunk, files); id++ {
				bts[w].put(uint32(id), tris[id])
				if fr.IntN(10) == 0 {
					flush(w)
				}
			}
		}
		for w := range bs {
			flush(w)
		}
		nb, runs, err := sp.merge(bs)
		if err != nil {
			t.Fatal(err)
		}
		return nb, runs
	}
	spilled, runs := build(minBuilderLimit, t.TempDir()+"/ix.db")
	defer spilled.p.close()
	if runs < 10 || spilled.p.unmap == nil {
		t.Fatalf("%d runs, mapped %v: the budget did not force runs", runs, spilled.p.unmap != nil)
	}
	mem, runs := build(64<<20, "")
	if runs != workers || mem.p.unmap != nil {
		t.Fatalf("in memory: %d runs merged, mapped %v", runs, mem.p.unmap != nil)
	}
	for name, nb := range map[string]newBase{"spilled": spilled, "in memory": mem} {
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
	if !slices.Equal(spilled.p.data, mem.p.data) {
		t.Fatal("the spilled base differs from the one merged in memory")
	}
}

// A builder keeps to its limit, however its lists grow.
func TestBuilderLimit(t *testing.T) {
	b := newBuilder(4 << 10)
	id, full := uint32(0), false
	for ; !full && id < 1<<20; id += 300 { // three-byte gaps
		var bt batch
		bt.put(id, []uint32{1 << 8, 2 << 8, (id % 97) << 8, (5000 + id%13) << 8})
		n := b.addSorted(bt.sorted())
		full = n < 4
		if b.size() > b.limit {
			t.Fatalf("after id %d the builder holds %d bytes, over its limit %d", id, b.size(), b.limit)
		}
	}
	if !full {
		t.Fatal("the builder never filled")
	}
}

// A batch sorts its postings by trigram and keeps each trigram's in the
// order they were put: the trigrams' high and low twelve bits both
// decide, and ids put out of order stay so.
func TestBatchSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var bt batch
	var want []uint64
	for id := range uint32(500) {
		var tris []uint32
		for range r.IntN(30) {
			tr := r.Uint32N(1 << 24)
			if r.IntN(2) == 0 {
				tr = tr&0xFFF000 | 0x123 // the same low bits, high bits apart
			}
			tris = append(tris, tr<<8|r.Uint32N(256))
		}
		id := id * 7919 % 500 // not ascending: the order put must survive
		bt.put(id, tris)
		for _, v := range tris {
			want = append(want, uint64(v>>8)<<40|uint64(id)<<8|uint64(byte(v)))
		}
	}
	slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>40, b>>40) })
	if got := bt.sorted(); !slices.Equal(got, want) {
		t.Fatal("batch.sorted differs from a stable sort by trigram")
	}
}

// merge2 is the union in id order, each posting with its own mask; of an
// id in both lists the first list's posting is kept, once.
func TestMerge2(t *testing.T) {
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
