package index

import (
	"encoding/binary"
	"slices"
)

// postingBuilder accumulates one build worker's posting lists, for ids
// added in ascending order, in memory it never gives back to the
// collector between runs and that holds no pointers (the collector never
// scans it):
//
//   - table, an open-addressing hash table from trigram to list head:
//     (trigram + 1) << 32 | head index, 0 for an empty slot; it grows
//     with the trigrams seen, so a builder costs what its run holds, not
//     a table over all 1<<24 trigrams.
//   - heads, one per trigram: where its list's first and last blocks are
//     in the arena, where the next byte goes, the last id and the count.
//   - arena, the lists' bytes, in chained blocks: each block is a 4-byte
//     offset of the next block (0 in the last), a 2-byte length of its
//     data (set when the next block is chained) and then the data, the
//     postings one after another. A list's first block has
//     firstBlock bytes and each next one twice the previous, up to
//     maxBlock: a short list costs a few bytes, a long one few hops.
//
// A posting in a block is uvarint(id + 1 − (previous id + 1)), the
// previous id of a run's first being −1, then the id's next mask (a
// byte, trigram.go): the data of a run's list (spill.go). writeRun copies
// it as it is; the merge reads the masks beside the ids (appendRunIDs)
// and writes them with them, packed, into the base (appendList).
//
// Postings come in batches sorted by trigram (addBatch). When the
// arena, heads, table and trigrams would exceed limit bytes, addSorted
// stops and the lists are spilled (writeRun) and the builder reset,
// which then holds nothing; a batch, and a file's trigrams, may so be
// split between two runs, which the merge does not mind (a trigram's
// list in a run still holds only ids below those of the worker's next
// run for it).
type postingBuilder struct {
	limit int
	arena []byte
	used  int // arena bytes handed out (offset 0 is never a block)
	heads []listHead
	tris  []uint32 // trigram per head
	table []uint64
	shift uint // 32 − log2(len(table))
}

// listHead locates one list in a builder's arena.
type listHead struct {
	first, tail uint32 // offsets of the first and last blocks
	pos, end    uint32 // where the next posting goes; where the last block ends
	last        uint32 // last id + 1
	n           uint32 // postings
}

// Block sizes of a builder's lists, in bytes (with the 4-byte link).
const (
	firstBlock  = 16
	maxBlock    = 4 << 10
	blockHeader = 4 + 2
)

// headCost is the most memory a list costs beside its blocks: its head
// and its trigram (in slices up to twice their length) and four table
// slots (the table grows at half full).
const headCost = 2*24 + 2*4 + 4*8

// minBuilderLimit is the least a builder is allowed, so that an empty
// builder always has room for one list.
const minBuilderLimit = 1 << 10

// newBuilder returns a builder that holds up to limit bytes.
func newBuilder(limit int) *postingBuilder {
	limit = max(limit, minBuilderLimit)
	b := &postingBuilder{limit: limit, arena: make([]byte, limit)}
	b.reset()
	return b
}

// reset empties b for the next run, keeping its memory.
func (b *postingBuilder) reset() {
	b.used = blockHeader // offset 0 means "no next block"
	b.heads, b.tris = b.heads[:0], b.tris[:0]
	if len(b.table) == 0 {
		b.table, b.shift = make([]uint64, 1<<10), 32-10
	} else {
		clear(b.table)
	}
}

// empty reports whether b holds no list.
func (b *postingBuilder) empty() bool { return len(b.heads) == 0 }

// size is the memory b's lists use.
func (b *postingBuilder) size() int {
	return b.used + headCost*len(b.heads)
}

// alloc hands out a block of n bytes, or 0 when b's limit would be
// passed.
func (b *postingBuilder) alloc(n int) uint32 {
	if b.size()+n > b.limit || b.used+n > len(b.arena) {
		return 0
	}
	off := b.used
	b.used += n
	binary.LittleEndian.PutUint32(b.arena[off:], 0)
	return uint32(off)
}

// head returns the index of t's list, adding an empty one when there is
// none, or -1 when there is no room for it.
func (b *postingBuilder) head(t uint32) int {
	mask := uint32(len(b.table) - 1)
	i := fibHash(t, b.shift)
	for {
		e := b.table[i]
		if e == 0 {
			break
		}
		if uint32(e>>32) == t+1 {
			return int(uint32(e))
		}
		i = (i + 1) & mask
	}
	blk := b.alloc(firstBlock)
	if blk == 0 || b.size()+headCost > b.limit {
		if blk != 0 { // the block fits, the head does not
			b.used -= firstBlock
		}
		return -1
	}
	h := len(b.heads)
	b.heads = append(b.heads, listHead{first: blk, tail: blk, pos: blk + blockHeader, end: blk + firstBlock})
	b.tris = append(b.tris, t)
	b.table[i] = uint64(t+1)<<32 | uint64(h)
	if 2*len(b.heads) > len(b.table) {
		b.grow()
	}
	return h
}

// grow doubles the table.
func (b *postingBuilder) grow() {
	old := b.table
	b.table = make([]uint64, 2*len(old))
	b.shift--
	mask := uint32(len(b.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := fibHash(uint32(e>>32)-1, b.shift)
		for b.table[i] != 0 {
			i = (i + 1) & mask
		}
		b.table[i] = e
	}
}

// A batch holds the postings of a run of files, each a uint64:
// trigram<<40 | id<<8 | next mask. Sorted by trigram (sorted), the
// postings of one trigram lie together, in id order, and addSorted looks
// its list up once and appends to it while its head and last block are
// in the cache: added file by file, each posting went to a list of its
// own, a few cache misses each (at a million files, a quarter of the
// build's CPU).
type batch struct {
	items, spare []uint64
}

// batchItems is how many postings a batch collects before it is sorted
// and added (a little more when one file has more): 64 Ki postings, the
// trigrams of about 55 files of the 1M-file gentree tree (1,200 distinct
// each, sampled), 1 MiB with the spare half.
const batchItems = 1 << 16

// put adds the packed postings tris (trigram.go) of file id.
func (bt *batch) put(id uint32, tris []uint32) {
	for _, v := range tris {
		bt.items = append(bt.items, uint64(packedTri(v))<<40|uint64(id)<<8|uint64(byte(v)))
	}
}

// full reports whether the batch is due to be added.
func (bt *batch) full() bool { return len(bt.items) >= batchItems }

// sorted sorts the batch by trigram, keeping the order of each trigram's
// postings (ascending ids, as put added them), and returns it: two
// stable counting passes on 12 bits each of the 24-bit trigram.
func (bt *batch) sorted() []uint64 {
	if cap(bt.spare) < len(bt.items) {
		bt.spare = make([]uint64, len(bt.items), cap(bt.items))
	}
	src, dst := bt.items, bt.spare[:len(bt.items)]
	var count [1 << 12]int
	for _, shift := range [...]uint{40, 52} {
		clear(count[:])
		for _, x := range src {
			count[x>>shift&(1<<12-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			k := x >> shift & (1<<12 - 1)
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	return src // two passes: back in items
}

// reset empties the batch, giving back what one large file made it grow
// to beyond twice batchItems.
func (bt *batch) reset() {
	if cap(bt.items) > 2*batchItems {
		bt.items, bt.spare = nil, nil
		return
	}
	bt.items = bt.items[:0]
}

// addBatch adds bt's postings, calling spill (which writes b's lists out
// and resets b) whenever b is full, and empties bt.
func (b *postingBuilder) addBatch(bt *batch, spill func() error) error {
	defer bt.reset()
	items := bt.sorted()
	for len(items) > 0 {
		n := b.addSorted(items)
		if items = items[n:]; len(items) > 0 {
			if err := spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// addSorted adds postings sorted by trigram (batch.sorted) and returns
// how many it added: all of them, or fewer when b has no room for the
// next (the caller spills b and adds the rest). Each trigram's ids must
// exceed those b already holds for it.
//
// It works on up to lookAhead trigrams at a time: first it finds (or
// adds) their lists, then it appends to them. The lookups, a cache miss
// or two each for a trigram the batch holds once, do not depend on one
// another nor on the appends, so the processor overlaps them; one after
// the other with the appends, it waited for each.
func (b *postingBuilder) addSorted(items []uint64) int {
	const lookAhead = 64
	var heads, ends [lookAhead]int32
	for i := 0; i < len(items); {
		k, j, full := 0, i, false
		for ; k < lookAhead && j < len(items); k++ {
			t := uint32(items[j] >> 40)
			h := b.head(t)
			if full = h < 0; full {
				break
			}
			e := j + 1
			for e < len(items) && uint32(items[e]>>40) == t {
				e++
			}
			heads[k], ends[k] = int32(h), int32(e)
			j = e
		}
		for g := range k {
			hd := &b.heads[heads[g]]
			for ; i < int(ends[g]); i++ {
				if !b.appendPosting(hd, uint32(items[i]>>8), byte(items[i])) {
					return i // lists found ahead may stay empty (writeRun skips them)
				}
			}
		}
		if full {
			return i // no room for the next list
		}
	}
	return len(items)
}

// appendPosting appends id's posting (gap, next mask) to the list of hd, chaining a new
// block when the last is full; false when there is no room for one.
func (b *postingBuilder) appendPosting(hd *listHead, id uint32, mask byte) bool {
	gap := id + 1 - hd.last
	n := uint32(1)
	if gap >= 0x80 {
		n = uint32(uvarintLen(uint64(gap)))
	}
	n++ // the next mask
	if hd.pos+n > hd.end {
		size := min(2*(hd.end-hd.tail), maxBlock)
		blk := b.alloc(int(size))
		if blk == 0 {
			return false
		}
		binary.LittleEndian.PutUint32(b.arena[hd.tail:], blk)
		binary.LittleEndian.PutUint16(b.arena[hd.tail+4:], uint16(hd.pos-hd.tail-blockHeader))
		hd.tail, hd.pos, hd.end = blk, blk+blockHeader, blk+size
	}
	if n == 2 {
		b.arena[hd.pos] = byte(gap)
	} else {
		binary.PutUvarint(b.arena[hd.pos:], uint64(gap))
	}
	b.arena[hd.pos+n-1] = mask
	hd.pos += n
	hd.last = id + 1
	hd.n++
	return true
}

// uvarintLen is the length of x's uvarint.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// appendData appends the data of hd's list (its postings, as a run's
// list holds them) to dst.
func (b *postingBuilder) appendData(dst []byte, hd *listHead) []byte {
	for blk := hd.first; blk != hd.tail; {
		n := uint32(binary.LittleEndian.Uint16(b.arena[blk+4:]))
		dst = append(dst, b.arena[blk+blockHeader:blk+blockHeader+n]...)
		blk = binary.LittleEndian.Uint32(b.arena[blk:])
	}
	return append(dst, b.arena[hd.tail+blockHeader:hd.pos]...)
}

// writeRun writes b's lists, in trigram order, to pw as a run: each list
// is uvarint k and its data, with no skip entries (a run is only read
// whole, by the merge).
func (b *postingBuilder) writeRun(pw *postingWriter) {
	order := make([]uint32, len(b.heads))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return int(b.tris[x]) - int(b.tris[y]) })
	for _, h := range order {
		hd := &b.heads[h]
		if hd.n == 0 {
			continue // found ahead of a full arena (addSorted)
		}
		pw.enc = binary.AppendUvarint(pw.enc[:0], uint64(hd.n))
		pw.enc = b.appendData(pw.enc, hd)
		pw.addEncoded(b.tris[h], pw.enc)
	}
}
