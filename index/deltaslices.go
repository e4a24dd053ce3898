package index

import (
	"fmt"
	"math/bits"

	csindex "github.com/google/codesearch/index"
)

// The delta's signatures, bit-sliced. Each file in the delta holds a
// slot; row r of the slices has bit s set when the file in slot s holds
// a trigram whose sliceBits-bit hash (trigramHash) is r. A query is
// evaluated over the rows a word — 64 files — at a time (admit): an AND
// of trigrams is an AND of their rows, an OR an OR, so a query names the
// files that may match it after reading a few rows, not a signature per
// changed file (which cost every query a cache miss or more per file:
// 7 ms for 7,560 files in the delta on a 1M-file root). The slices admit
// every file holding a query's trigrams, and a file holding none of a
// rare trigram's hash only by the chance that another of its trigrams
// shares it: a file of t trigrams sets about 1−e^(−t/4096) of its
// column (a quarter at 1,200), so an AND of a few trigrams admits few
// files it does not hold. The admitted files' sets are then read
// (matchSet) as before.
//
// Invariants (Index.Check): a slot per delta set and a delta set per
// used slot; the bits of a used slot's column are those of its set's
// trigrams; a free slot's column is zero.

// sliceBits is log₂ of the number of rows.
const sliceBits = 12

// sliceBytes is what a slot costs in the rows, in bytes (deltaSize).
const sliceBytes = 1 << sliceBits / 8

// freeSlot marks a free slot in deltaSlices.ids.
const freeSlot = ^uint32(0)

// deltaSlices are the bit-sliced signatures of the delta's files.
type deltaSlices struct {
	rows [][]uint64        // 1<<sliceBits rows of ⌈len(ids)/64⌉ words
	used []uint64          // the used slots
	ids  []uint32          // slot → file id, freeSlot when free
	slot map[uint32]uint32 // file id → slot
	free []uint32          // free slots, for reuse
}

func newDeltaSlices() *deltaSlices {
	return &deltaSlices{rows: make([][]uint64, 1<<sliceBits), slot: make(map[uint32]uint32)}
}

// sliceRow returns the row of the trigram tri (24 bits, folded).
func sliceRow(tri uint32) uint32 { return fibHash(tri, 32-sliceBits) }

// add gives id a slot holding the packed postings tris; id must have
// none.
func (d *deltaSlices) add(id uint32, tris []uint32) {
	var s uint32
	if n := len(d.free); n > 0 {
		s, d.free = d.free[n-1], d.free[:n-1]
		d.ids[s] = id
	} else {
		s = uint32(len(d.ids))
		d.ids = append(d.ids, id)
		if int(s)%64 == 0 { // a new word in every row
			for r := range d.rows {
				d.rows[r] = append(d.rows[r], 0)
			}
			d.used = append(d.used, 0)
		}
	}
	d.slot[id] = s
	d.used[s/64] |= 1 << (s % 64)
	for _, v := range tris {
		d.rows[sliceRow(packedTri(v))][s/64] |= 1 << (s % 64)
	}
}

// remove frees id's slot (its column cleared through its set tris), if
// it has one.
func (d *deltaSlices) remove(id uint32, tris []uint32) {
	s, ok := d.slot[id]
	if !ok {
		return
	}
	for _, v := range tris {
		d.rows[sliceRow(packedTri(v))][s/64] &^= 1 << (s % 64)
	}
	d.used[s/64] &^= 1 << (s % 64)
	d.ids[s] = freeSlot
	d.free = append(d.free, s)
	delete(d.slot, id)
}

// each calls fn with the id of each file whose column admits q
// (normalized), in slot order.
func (d *deltaSlices) each(q *csindex.Query, fn func(id uint32)) {
	for i := range d.used {
		x := d.admit(q, i) & d.used[i]
		for ; x != 0; x &= x - 1 {
			fn(d.ids[64*i+bits.TrailingZeros64(x)])
		}
	}
}

// admit returns word i of the slots whose columns admit q.
func (d *deltaSlices) admit(q *csindex.Query, i int) uint64 {
	switch q.Op {
	case csindex.QAll:
		return ^uint64(0)
	case csindex.QNone:
		return 0
	case csindex.QAnd:
		x := ^uint64(0)
		for _, t := range q.Trigram {
			x &= d.rows[sliceRow(queryTrigram(t))][i]
		}
		for _, s := range q.Sub {
			if x == 0 {
				break
			}
			x &= d.admit(s, i)
		}
		return x
	default: // QOr
		var x uint64
		for _, t := range q.Trigram {
			x |= d.rows[sliceRow(queryTrigram(t))][i]
		}
		for _, s := range q.Sub {
			x |= d.admit(s, i)
		}
		return x
	}
}

// check verifies the slices against the delta's sets (see the
// invariants above).
func (d *deltaSlices) check(delta map[uint32][]uint32) error {
	if len(d.slot) != len(delta) {
		return fmt.Errorf("%w: %d delta slots for %d delta sets", ErrCorrupt, len(d.slot), len(delta))
	}
	if len(d.used) != (len(d.ids)+63)/64 {
		return fmt.Errorf("%w: %d words of used slots for %d slots", ErrCorrupt, len(d.used), len(d.ids))
	}
	// The rows as the sets make them (each used slot's column its set's
	// trigrams' rows, every other bit zero), compared with the slices a
	// word at a time.
	words := len(d.used)
	want := make([]uint64, len(d.rows)*words)
	for s, id := range d.ids {
		used := d.used[s/64]&(1<<(s%64)) != 0
		tris, ok := delta[id]
		if id == freeSlot && used || id != freeSlot && (!used || !ok || d.slot[id] != uint32(s)) {
			return fmt.Errorf("%w: delta slot %d (file id %d, used %v) does not match its set", ErrCorrupt, s, id, used)
		}
		for _, v := range tris {
			want[int(sliceRow(packedTri(v)))*words+s/64] |= 1 << (s % 64)
		}
	}
	for r, row := range d.rows {
		if len(row) != words {
			return fmt.Errorf("%w: delta slice row %d has %d words, not %d", ErrCorrupt, r, len(row), words)
		}
		for w, x := range row {
			if diff := x ^ want[r*words+w]; diff != 0 {
				return fmt.Errorf("%w: delta slot %d's bit in row %d is not its set's", ErrCorrupt, 64*w+bits.TrailingZeros64(diff), r)
			}
		}
	}
	return nil
}
