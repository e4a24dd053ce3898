package index

import (
	"encoding/binary"
)

// postingBuilder holds one build worker's postings in memory until they
// are written out as a run (spill.go): each a uint64, trigram<<40 |
// id<<8 | mask (trigram.go), in the order the worker added them,
// that is by ascending id. Memory that holds no pointers (the collector
// never scans it):
//
//   - items, the postings, up to limit/16 of them (growing by doubling
//     up to there, so that a small tree costs what it holds);
//   - spare, as many again, where writeRun sorts them.
//
// writeRun sorts the postings by trigram, keeping each trigram's in the
// order added (its ids ascending): a first counting pass on the
// trigram's high 12 bits from items into spare, then each of those
// buckets (a few thousand postings of text, in the cache) by the low
// 12 bits back into its place in items, and writes each trigram's list
// as it comes. Sorting a whole run at once replaced lists grown posting
// by posting in chained blocks (a hash table lookup and a cache miss or
// two per trigram per file): a posting costs 16 bytes in memory with the
// sort's space instead of some 7 in a block, and the 1M-file build's
// CPU went from 58 to 47 s.
//
// A run's list is uvarint k and then k postings, each uvarint gap ‖
// mask byte, the gap being id + 1 − (previous id + 1), the previous id
// of a list's first being −1: two bytes for a gap below 128, which most
// are. No skip entries: a run is only read whole, by the merge, which
// reads the masks beside the ids (appendRunIDs) and writes them with
// them, packed, into the base (appendList); a run folded from others
// (spiller.fold) is written in the same format (appendRunList).
//
// When items is full, add has the worker spill (write the run, then
// reset), so a file's postings may be split between two runs; the merge
// does not mind: a trigram's list in a run still holds only ids below
// those of the worker's next run for it (a file's trigrams are
// distinct).
type postingBuilder struct {
	max          int // the most postings items holds
	items, spare []uint64
}

// minBuilderPostings is the least a builder holds, so that a budget
// split among many workers still spills runs of some size.
const minBuilderPostings = 64

// newBuilder returns a builder that holds up to limit bytes: limit/16
// postings and the space to sort them.
func newBuilder(limit int) *postingBuilder {
	return &postingBuilder{max: max(limit/16, minBuilderPostings)}
}

// reset empties b for the next run, keeping its memory.
func (b *postingBuilder) reset() { b.items = b.items[:0] }

// empty reports whether b holds no posting.
func (b *postingBuilder) empty() bool { return len(b.items) == 0 }

// add adds the packed postings tris (trigram.go) of file id, above every
// id b holds, calling spill (which writes b out and resets it) whenever b
// is full.
func (b *postingBuilder) add(id uint32, tris []uint32, spill func() error) error {
	for len(tris) > 0 {
		if len(b.items) == cap(b.items) {
			if cap(b.items) >= b.max {
				if err := spill(); err != nil {
					return err
				}
			} else {
				grown := make([]uint64, len(b.items), min(max(2*cap(b.items), 1<<12), b.max))
				copy(grown, b.items)
				b.items = grown
			}
		}
		n := min(len(tris), cap(b.items)-len(b.items))
		for _, v := range tris[:n] {
			b.items = append(b.items, uint64(packedTri(v))<<40|uint64(id)<<8|uint64(byte(v)))
		}
		tris = tris[n:]
	}
	return nil
}

// writeRun writes b's postings to pw as a run: the lists in trigram
// order, each uvarint k and its postings.
func (b *postingBuilder) writeRun(pw *postingWriter) {
	if cap(b.spare) < len(b.items) {
		b.spare = make([]uint64, cap(b.items))
	}
	spare := b.spare[:len(b.items)]
	var count [1 << 12]int
	for _, x := range b.items {
		count[x>>52]++
	}
	var starts [1<<12 + 1]int
	sum := 0
	for i, c := range count {
		starts[i], count[i] = sum, sum
		sum += c
	}
	starts[1<<12] = sum
	for _, x := range b.items {
		k := x >> 52
		spare[count[k]] = x
		count[k]++
	}
	// The postings are all in spare now: each bucket is sorted back into
	// its place in items.
	for hi := range 1 << 12 {
		if lo, end := starts[hi], starts[hi+1]; lo < end {
			sortLow(b.items[lo:end], spare[lo:end])
			writeLists(pw, b.items[lo:end])
		}
	}
}

// writeLists writes the lists of sorted, postings sorted by trigram.
func writeLists(pw *postingWriter, sorted []uint64) {
	for i := 0; i < len(sorted); {
		t := sorted[i] >> 40
		e := i + 1
		for e < len(sorted) && sorted[e]>>40 == t {
			e++
		}
		enc := binary.AppendUvarint(pw.enc[:0], uint64(e-i))
		last := uint32(0) // last id + 1
		for _, x := range sorted[i:e] {
			id := uint32(x >> 8)
			enc = appendRunPosting(enc, id+1-last, byte(x))
			last = id + 1
		}
		pw.enc = enc
		pw.addEncoded(uint32(t), enc)
		i = e
	}
}

// appendRunPosting appends a run's posting: uvarint gap ‖ mask.
func appendRunPosting(dst []byte, gap uint32, mask byte) []byte {
	if gap < 0x80 {
		return append(dst, byte(gap), mask)
	}
	return append(binary.AppendUvarint(dst, uint64(gap)), mask)
}

// appendRunList appends the run list of ids, ascending, and their
// masks: uvarint k and the postings.
func appendRunList(dst []byte, ids []uint32, masks []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	last := uint32(0) // last id + 1
	for i, id := range ids {
		dst = appendRunPosting(dst, id+1-last, masks[i])
		last = id + 1
	}
	return dst
}

// sortLow sets dst to the postings of src (a bucket: their trigrams
// share the high 12 bits) sorted by the trigram's low 12 bits, keeping
// the order of each trigram's.
func sortLow(dst, src []uint64) {
	if len(src) <= 64 { // an insertion sort costs less than the counts
		copy(dst, src)
		for i := 1; i < len(dst); i++ {
			x := dst[i]
			j := i
			for ; j > 0 && dst[j-1]>>40 > x>>40; j-- {
				dst[j] = dst[j-1]
			}
			dst[j] = x
		}
		return
	}
	var count [1 << 12]int32
	for _, x := range src {
		count[x>>40&(1<<12-1)]++
	}
	sum := int32(0)
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, x := range src {
		k := x >> 40 & (1<<12 - 1)
		dst[count[k]] = x
		count[k]++
	}
}
