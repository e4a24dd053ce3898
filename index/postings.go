package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"slices"
)

// The base postings: one immutable byte string (a file beside the DB,
// mmap'd, or the heap for an index not yet saved), read in place. Its
// layout (see also format.go):
//
//	lists   each trigram's list, in trigram order (format below)
//	table   n × 8 bytes: trigram (3 bytes) ‖ offset of its list (5 bytes,
//	        so a base may reach 1 TiB); trigrams strictly increase; a list
//	        ends where the next begins (the last where the table begins)
//	footer  uint64 offset of the table ‖ uint32 n ‖ "IXB8"
//
// A list holds k ≥ 1 ascending file ids, each with its mask (a byte, the
// eighths of the file the trigram's lines start in, or for a file
// flagged NextMasks the bins of the bytes that follow it; never zero;
// see trigram.go), in one of two forms, told apart by the
// low bit of its first uvarint and chosen by size (the smaller; blocks on
// a tie):
//
// blocks (uvarint k<<1), for a sparse list: the ids in blocks of
// blockSize,
//
//	skips   (only when there is more than one block) one 8-byte entry per
//	        block: uint32 the block's last id ‖ uint32 where the block's
//	        data ends, counted from the start of the data
//	data    per block, per id a uvarint (id + 1 − previous id − 1) with
//	        the previous id of the first taken as −1, then the block's
//	        masks (a byte per id): the same gap coding runs through the
//	        blocks, so a block can be entered from its predecessor's skip
//	        entry alone
//
// bitmap (uvarint k<<1 | 1), for a dense one (about one file in eight
// or more): one bit per id,
//
//	uvarint w   the number of 64-bit words, the last one not zero
//	words       w × 8 bytes, little-endian: id 64i+j is listed when bit j
//	            of word i is set
//	ranks       ⌈w/8⌉ × 4 bytes, little-endian uint32: how many ids the
//	            words before word 8g hold
//	masks       k bytes, the masks in id order
//
// A query seeks through a long list by its skip entries, decoding one
// block where the rarest list leads, or by a bitmap's words, where a
// seek is a word lookup and a rank (one directory entry and at most
// eight popcounts); it allocates nothing per id read. A dense list costs
// a bit per file plus its masks, less than a byte of gap per posting.

// blockSize is how many ids a skip entry covers.
const blockSize = 128

// baseMagic ends every base.
const baseMagic = "IXB8"

const footerSize = 16

// entrySize is the size of a table entry; maxBaseLists the most bytes of
// lists its offsets can address.
const (
	entrySize    = 8
	maxBaseLists = 1 << 40
)

// entry returns the trigram and list offset of table entry i.
func (p *postings) entry(i int) (t uint32, off uint64) {
	return decodeEntry(p.data[p.tableOff+entrySize*i:])
}

// appendEntry appends the table entry of trigram t's list at off.
func appendEntry(dst []byte, t uint32, off uint64) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(t>>16), byte(t>>8), byte(t), byte(off>>32)), uint32(off))
}

// decodeEntry decodes a table entry: trigram (3 bytes) ‖ offset (5).
func decodeEntry(e []byte) (t uint32, off uint64) {
	return uint32(e[0])<<16 | uint32(e[1])<<8 | uint32(e[2]), uint64(e[3])<<32 | uint64(binary.BigEndian.Uint32(e[4:]))
}

// postings is a parsed base; its methods only read data.
type postings struct {
	data     []byte // the whole base
	tableOff int
	n        int
	// unmap releases data when it is mmap'd; nil for the heap.
	unmap func() error
}

// parsePostings checks the footer and table bounds of data.
func parsePostings(data []byte) (postings, error) {
	if len(data) < footerSize || string(data[len(data)-4:]) != baseMagic {
		return postings{}, fmt.Errorf("%w: base footer", ErrCorrupt)
	}
	f := data[len(data)-footerSize:]
	off, n := binary.BigEndian.Uint64(f), binary.BigEndian.Uint32(f[8:])
	if off > uint64(len(data)-footerSize) || uint64(n)*entrySize != uint64(len(data)-footerSize)-off {
		return postings{}, fmt.Errorf("%w: base table bounds", ErrCorrupt)
	}
	return postings{data: data, tableOff: int(off), n: int(n)}, nil
}

// emptyPostings is the base of an index with no postings.
func emptyPostings() postings {
	var w postingWriter
	p, _ := parsePostings(w.finishBytes())
	return p
}

func (p *postings) trigram(i int) uint32 {
	t, _ := p.entry(i)
	return t
}

// list returns the i'th list's bytes, clamped to the lists area (check
// verifies the offsets on open; a query never panics on them).
func (p *postings) list(i int) []byte {
	_, lo := p.entry(i)
	hi := uint64(p.tableOff)
	if i+1 < p.n {
		_, hi = p.entry(i + 1)
	}
	hi = min(hi, uint64(p.tableOff))
	lo = min(lo, hi)
	return p.data[lo:hi]
}

// find returns the index of t in the table, or -1.
func (p *postings) find(t uint32) int {
	lo, hi := 0, p.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.trigram(m) < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < p.n && p.trigram(lo) == t {
		return lo
	}
	return -1
}

// lookup returns the list of t, nil if it has none.
func (p *postings) lookup(t uint32) []byte {
	if i := p.find(t); i >= 0 {
		return p.list(i)
	}
	return nil
}

// close releases the base's mapping, if any.
func (p *postings) close() error {
	if p.unmap == nil {
		return nil
	}
	err := p.unmap()
	p.unmap = nil
	return err
}

// cursor walks an ascending id list: an encoded list (read in place,
// seeking by its skip entries) or, when ids is set, a slice.
type cursor struct {
	cur  uint32 // the current id, when !done
	mask uint8  // its mask (encoded lists; 0xFF in slice mode)
	done bool
	n    int // ids in the list

	ids []uint32 // slice mode
	i   int

	skips []byte
	data  []byte
	nb    int    // blocks
	blk   int    // current block
	pos   int    // offset in data of the next gap
	gend  int    // end of the current block's gaps: its masks begin
	bend  int    // end of the current block
	bn    int    // ids in the current block
	j     int    // ids of the current block read
	acc   uint64 // current id + 1

	bm bitmap // bitmap mode, when bm.words is set
	r  int    // bitmap mode: the current id's rank (its mask's index)
	// and, when set, is the AND that reads this bitmap-form list a word
	// at a time; it moves the cursor only when asked (bitmapAnd.place).
	and *bitmapAnd
}

// bitmap is a bitmap-form list's parts, its lengths checked.
type bitmap struct {
	words, ranks, masks []byte
	w                   int
}

func (bm *bitmap) word(i int) uint64 { return binary.LittleEndian.Uint64(bm.words[8*i:]) }

// rank returns how many ids lie below id (64i+j, i < w).
func (bm *bitmap) rank(i, j int) int {
	g := i &^ 7
	r := int(binary.LittleEndian.Uint32(bm.ranks[g/2:]))
	for ; g < i; g++ {
		r += bits.OnesCount64(bm.word(g))
	}
	return r + bits.OnesCount64(bm.word(i)&(1<<j-1))
}

// parseBitmap splits a bitmap-form list's bytes after its first uvarint
// (k ids); ok is false unless the lengths are exact.
func parseBitmap(b []byte, k uint64) (bm bitmap, ok bool) {
	w, m := binary.Uvarint(b)
	if m <= 0 || w == 0 || w > 1<<26 {
		return bm, false
	}
	b = b[m:]
	nr := (w + 7) / 8
	if uint64(len(b)) != 8*w+4*nr+k {
		return bm, false
	}
	return bitmap{words: b[:8*w], ranks: b[8*w : 8*w+4*nr], masks: b[8*w+4*nr:], w: int(w)}, true
}

// listCursor returns a cursor on the encoded list b, positioned on its
// first id.
func listCursor(b []byte) cursor {
	c := cursor{done: true}
	h, m := binary.Uvarint(b)
	k := h >> 1
	if m <= 0 || k == 0 || k > 1<<31 {
		return c
	}
	b = b[m:]
	if h&1 == 1 {
		bm, ok := parseBitmap(b, k)
		if !ok {
			return c
		}
		c.bm, c.n, c.done = bm, int(k), false
		c.bitmapFrom(0, 0)
		return c
	}
	nb := int((k + blockSize - 1) / blockSize)
	if nb > 1 {
		if len(b) < 8*nb {
			return c
		}
		c.skips, b = b[:8*nb], b[8*nb:]
	}
	c.data, c.nb, c.n, c.done = b, nb, int(k), false
	c.enterBlock(0)
	c.next()
	return c
}

// blockIDs returns how many ids block b of a list of n holds.
func blockIDs(b, nb, n int) int {
	if b < nb-1 {
		return blockSize
	}
	return n - (nb-1)*blockSize
}

// enterBlock makes block b (whose gaps begin at c.pos) the current one;
// a block whose bounds do not fit ends the cursor (check refuses it).
func (c *cursor) enterBlock(b int) {
	c.blk, c.j = b, 0
	c.bend, c.bn = c.blockEnd(b), blockIDs(b, c.nb, c.n)
	c.gend = c.bend - c.bn
	if c.gend < c.pos {
		c.done = true
	}
}

// sliceCursor returns a cursor on ids (ascending).
func sliceCursor(ids []uint32) cursor {
	c := cursor{ids: ids, n: len(ids), done: len(ids) == 0, i: -1}
	c.next()
	return c
}

func (c *cursor) blockEnd(b int) int {
	if c.nb == 1 {
		return len(c.data)
	}
	return min(int(binary.BigEndian.Uint32(c.skips[8*b+4:])), len(c.data))
}

// next moves to the following id.
func (c *cursor) next() {
	if c.done {
		return
	}
	if c.ids != nil {
		if c.i++; c.i >= len(c.ids) {
			c.done = true
			return
		}
		c.cur, c.mask = c.ids[c.i], 0xFF
		return
	}
	if c.bm.words != nil {
		c.bitmapFrom(uint64(c.cur)+1, c.r+1)
		return
	}
	if c.j == c.bn {
		if c.blk+1 >= c.nb {
			c.done = true
			return
		}
		c.pos = c.bend
		if c.enterBlock(c.blk + 1); c.done {
			return
		}
	}
	var d uint64
	var m int
	if c.pos >= c.gend {
		m = 0
	} else if b := c.data[c.pos]; b < 0x80 {
		d, m = uint64(b), 1 // most gaps in a long list: one byte
	} else {
		d, m = binary.Uvarint(c.data[c.pos:c.gend])
	}
	if m <= 0 || d == 0 || d > 1<<32 || c.acc+d > 1<<32 {
		c.done = true // corrupt: check refuses such a base on open
		return
	}
	c.mask = maskAt(c.data[c.gend:c.bend], c.j)
	c.pos += m
	c.j++
	c.acc += d
	c.cur = uint32(c.acc - 1)
}

// seek moves to the first id ≥ t.
func (c *cursor) seek(t uint32) {
	if c.done || c.cur >= t {
		return
	}
	if c.ids != nil {
		j, _ := slices.BinarySearch(c.ids[c.i:], t)
		c.i += j - 1
		c.next()
		return
	}
	if c.bm.words != nil {
		i, ci := int(t>>6), int(c.cur>>6)
		switch {
		case i >= c.bm.w:
			c.done = true
		case i == ci: // in the current word: count the ids skipped over
			c.bitmapFrom(uint64(t), c.r+bits.OnesCount64(c.bm.word(i)&(1<<(t&63)-1)>>(c.cur&63)))
		default:
			c.bitmapFrom(uint64(t), c.bm.rank(i, int(t&63)))
		}
		return
	}
	if c.nb > 1 && binary.BigEndian.Uint32(c.skips[8*c.blk:]) < t {
		// t is past the current block: search the blocks after it.
		lo, hi := c.blk+1, c.nb
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if binary.BigEndian.Uint32(c.skips[8*m:]) < t {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == c.nb {
			c.done = true
			return
		}
		if lo > c.blk {
			c.pos = c.blockEnd(lo - 1)
			c.acc = uint64(binary.BigEndian.Uint32(c.skips[8*(lo-1):])) + 1
			if c.enterBlock(lo); c.done {
				return
			}
		}
	}
	for c.next(); !c.done && c.cur < t; c.next() {
	}
}

// bitmapFrom moves a bitmap cursor to its first id ≥ from, whose rank
// is r (the count of ids below from).
func (c *cursor) bitmapFrom(from uint64, r int) {
	i := int(from >> 6)
	if i >= c.bm.w {
		c.done = true
		return
	}
	x := c.bm.word(i) >> (from & 63) << (from & 63)
	for x == 0 {
		if i++; i >= c.bm.w {
			c.done = true
			return
		}
		x = c.bm.word(i)
	}
	if r >= c.n {
		c.done = true // more bits than k: check refuses such a base on open
		return
	}
	c.cur = uint32(i<<6 | bits.TrailingZeros64(x))
	c.r, c.mask = r, maskAt(c.bm.masks, r)
}

// maskAt returns the i'th mask of masks, 0 past its end (a list check
// refuses).
func maskAt(masks []byte, i int) uint8 {
	if i >= len(masks) {
		return 0
	}
	return masks[i]
}

// appendIDs appends every id of the encoded list b to dst.
func appendIDs(dst []uint32, b []byte) []uint32 {
	for c := listCursor(b); !c.done; c.next() {
		dst = append(dst, c.cur)
	}
	return dst
}

// appendList appends the encoding of ids (ascending, not empty) and
// their masks to dst.
func appendList(dst []byte, ids []uint32, masks []byte) []byte {
	start := len(dst)
	dst = appendBlocks(dst, ids, masks)
	w := uint64(ids[len(ids)-1])/64 + 1
	k := uint64(len(ids))
	if dense := uint64(uvarintLen(k<<1|1)+uvarintLen(w)) + 8*w + 4*((w+7)/8) + k; dense < uint64(len(dst)-start) {
		dst = appendBitmap(dst[:start], ids, masks, int(w))
	}
	return dst
}

// appendBitmap appends the bitmap form of ids (w words).
func appendBitmap(dst []byte, ids []uint32, masks []byte, w int) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ids))<<1|1)
	dst = binary.AppendUvarint(dst, uint64(w))
	words := len(dst)
	dst = append(dst, make([]byte, 8*w+4*((w+7)/8))...)
	for _, id := range ids {
		dst[words+int(id>>3)] |= 1 << (id & 7) // little-endian words: byte id/8, bit id%8
	}
	r := uint32(0)
	for g := 0; g < w; g += 8 {
		binary.LittleEndian.PutUint32(dst[words+8*w+g/2:], r)
		for i := g; i < min(g+8, w); i++ {
			r += uint32(bits.OnesCount64(binary.LittleEndian.Uint64(dst[words+8*i:])))
		}
	}
	return append(dst, masks[:len(ids)]...)
}

// appendBlocks appends the blocks form of ids.
func appendBlocks(dst []byte, ids []uint32, masks []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ids))<<1)
	nb := (len(ids) + blockSize - 1) / blockSize
	skips := len(dst)
	if nb > 1 {
		dst = append(dst, make([]byte, 8*nb)...)
	}
	start := len(dst)
	prev := uint64(0)
	for b := range nb {
		blk := ids[b*blockSize : min(len(ids), (b+1)*blockSize)]
		for _, id := range blk {
			dst = binary.AppendUvarint(dst, uint64(id)+1-prev)
			prev = uint64(id) + 1
		}
		dst = append(dst, masks[b*blockSize:b*blockSize+len(blk)]...)
		if nb > 1 {
			binary.BigEndian.PutUint32(dst[skips+8*b:], blk[len(blk)-1])
			binary.BigEndian.PutUint32(dst[skips+8*b+4:], uint32(len(dst)-start))
		}
	}
	return dst
}

// postingWriter writes a base: lists added in trigram order, then
// finish writes the table and footer. It holds only the table (8 bytes
// per trigram) and one list's encoding.
type postingWriter struct {
	w     *bufio.Writer // nil: buf collects the base in memory
	file  *os.File      // what w writes to, when it is a file
	buf   []byte
	off   uint64
	table []byte
	n     uint32
	enc   []byte
	crc   uint32
	err   error
	runs  bool // add encodes its lists as a run's (builder.go), not a base's
}

// newPostingWriter writes a base to w (nil: to memory, see finishBytes).
func newPostingWriter(w io.Writer) *postingWriter {
	pw := &postingWriter{}
	if w != nil {
		pw.w = bufio.NewWriterSize(w, 1<<20)
		pw.file, _ = w.(*os.File)
	}
	return pw
}

func (pw *postingWriter) write(b []byte) {
	if pw.err != nil {
		return
	}
	pw.crc = crc32.Update(pw.crc, castagnoli(), b)
	pw.off += uint64(len(b))
	if pw.w == nil {
		pw.buf = append(pw.buf, b...)
		return
	}
	_, pw.err = pw.w.Write(b)
}

// add writes the list of t (greater than every trigram added before):
// ids and their masks; an empty list is left out.
func (pw *postingWriter) add(t uint32, ids []uint32, masks []byte) {
	if len(ids) == 0 {
		return
	}
	if pw.runs {
		pw.enc = appendRunList(pw.enc[:0], ids, masks)
	} else {
		pw.enc = appendList(pw.enc[:0], ids, masks)
	}
	pw.addEncoded(t, pw.enc)
}

// addEncoded writes list, encoded, as the list of t (greater than every
// trigram added before).
func (pw *postingWriter) addEncoded(t uint32, list []byte) {
	if pw.off >= maxBaseLists {
		if pw.err == nil {
			pw.err = fmt.Errorf("index: the base's lists exceed %d bytes", int64(maxBaseLists))
		}
		return
	}
	pw.table = appendEntry(pw.table, t, pw.off)
	pw.n++
	pw.write(list)
}

// finish writes the table and footer and flushes; it returns the base's
// size and CRC-32C.
func (pw *postingWriter) finish() (size int64, crc uint32, err error) {
	tableOff := pw.off
	pw.write(pw.table)
	var f [footerSize]byte
	binary.BigEndian.PutUint64(f[:], tableOff)
	binary.BigEndian.PutUint32(f[8:], pw.n)
	copy(f[12:], baseMagic)
	pw.write(f[:])
	if pw.err == nil && pw.w != nil {
		pw.err = pw.w.Flush()
	}
	return int64(pw.off), pw.crc, pw.err
}

// flush writes out what pw buffers (the lists so far; not the table).
func (pw *postingWriter) flush() error {
	if pw.err == nil && pw.w != nil {
		pw.err = pw.w.Flush()
	}
	return pw.err
}

// appendPart appends the lists part wrote to f (flushed, trigrams above
// every one added to pw before) to pw, and their table entries, shifted
// to where they land. Into a file, the kernel copies them (os.File's
// ReadFrom: copy_file_range), and pw's CRC-32C is combined with the one
// part computed as it wrote them: the copy is the merge's one step on a
// single core, and through this process it read and wrote every byte
// again (1.4 s of a 1M-file build's 7.4 s merge).
func (pw *postingWriter) appendPart(f *os.File, part *postingWriter) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	shift := pw.off
	if pw.file != nil {
		if pw.flush() != nil {
			return pw.err
		}
		n, err := io.CopyN(pw.file, f, int64(part.off))
		pw.off += uint64(n)
		pw.crc = crc32Combine(crc32.Castagnoli, pw.crc, part.crc, n)
		if err != nil {
			pw.err = err
			return err
		}
	}
	buf := make([]byte, 1<<20)
	for left := int64(part.off) - int64(pw.off-shift); left > 0 && pw.err == nil; {
		n, err := io.ReadFull(f, buf[:min(int64(len(buf)), left)])
		if err != nil {
			return err
		}
		pw.write(buf[:n])
		left -= int64(n)
	}
	if pw.err == nil && pw.off >= maxBaseLists {
		pw.err = fmt.Errorf("index: the base's lists exceed %d bytes", int64(maxBaseLists))
	}
	for e := part.table; len(e) >= entrySize; e = e[entrySize:] {
		t, off := decodeEntry(e)
		pw.table = appendEntry(pw.table, t, off+shift)
	}
	pw.n += part.n
	return pw.err
}

// finishBytes finishes a base written to memory and returns it.
func (pw *postingWriter) finishBytes() []byte {
	pw.finish()
	return pw.buf
}

// check verifies the base's structure: trigrams strictly increasing and
// within 24 bits, offsets ascending within the lists area, each list
// decoding to exactly its count of strictly increasing ids below bound,
// each with its mask (not zero), its skip entries matching its blocks; ok is
// called for each id.
func (p *postings) check(bound uint64, ok func(id uint32) error) error {
	if err := p.checkTable(); err != nil {
		return err
	}
	for i := range p.n {
		if err := checkList(p.list(i), bound, ok); err != nil {
			return fmt.Errorf("%w: posting list of %06x: %w", ErrCorrupt, p.trigram(i), err)
		}
	}
	return nil
}

// checkTable verifies the table alone: trigrams strictly increasing
// within 24 bits, offsets from 0, never decreasing, within the lists.
func (p *postings) checkTable() error {
	prevOff := uint64(0)
	for i := range p.n {
		t, off := p.entry(i)
		if i > 0 && t <= p.trigram(i-1) {
			return fmt.Errorf("%w: trigrams out of order", ErrCorrupt)
		}
		if off < prevOff || off > uint64(p.tableOff) || i == 0 && off != 0 {
			return fmt.Errorf("%w: list offsets", ErrCorrupt)
		}
		prevOff = off
	}
	if p.n == 0 && p.tableOff != 0 {
		return fmt.Errorf("%w: lists without a table", ErrCorrupt)
	}
	return nil
}

func checkList(b []byte, bound uint64, ok func(id uint32) error) error {
	h, m := binary.Uvarint(b)
	k := h >> 1
	if m <= 0 || k == 0 || k > bound {
		return fmt.Errorf("count")
	}
	b = b[m:]
	if h&1 == 1 {
		return checkBitmap(b, k, bound, ok)
	}
	nb := int((k + blockSize - 1) / blockSize)
	var skips []byte
	if nb > 1 {
		if len(b) < 8*nb {
			return fmt.Errorf("skips")
		}
		skips, b = b[:8*nb], b[8*nb:]
	}
	acc, pos := uint64(0), 0
	for blk := range nb {
		n := blockIDs(blk, nb, int(k))
		for j := range n {
			d, m := binary.Uvarint(b[pos:])
			if m <= 0 || d == 0 {
				return fmt.Errorf("id %d", blk*blockSize+j)
			}
			pos += m
			if acc += d; acc > bound {
				return fmt.Errorf("id %d beyond %d", acc-1, bound)
			}
			if err := ok(uint32(acc - 1)); err != nil {
				return err
			}
		}
		// The block's masks, a byte each.
		if pos += n; pos > len(b) {
			return fmt.Errorf("masks of block %d", blk)
		}
		if err := checkMasks(b[pos-n : pos]); err != nil {
			return fmt.Errorf("block %d: %w", blk, err)
		}
		if nb > 1 && (binary.BigEndian.Uint32(skips[8*blk:]) != uint32(acc-1) || binary.BigEndian.Uint32(skips[8*blk+4:]) != uint32(pos)) {
			return fmt.Errorf("skip entry %d", blk)
		}
	}
	if pos != len(b) {
		return fmt.Errorf("trailing bytes")
	}
	return nil
}

// checkMasks verifies a list's masks: none is zero (a posting's trigram
// occurs in some line; a zero mask would rule its file out of every
// query that reads it).
func checkMasks(masks []byte) error {
	for i, m := range masks {
		if m == 0 {
			return fmt.Errorf("mask %d: zero", i)
		}
	}
	return nil
}

// checkBitmap verifies a bitmap-form list after its first uvarint: exact
// lengths, k ids, all below bound, the last word not zero, every rank
// entry right.
func checkBitmap(b []byte, k, bound uint64, ok func(id uint32) error) error {
	bm, fits := parseBitmap(b, k)
	if !fits {
		return fmt.Errorf("bitmap lengths")
	}
	if bm.word(bm.w-1) == 0 {
		return fmt.Errorf("bitmap's last word empty")
	}
	if err := checkMasks(bm.masks); err != nil {
		return fmt.Errorf("bitmap: %w", err)
	}
	n := uint64(0)
	for i := range bm.w {
		if i%8 == 0 && binary.LittleEndian.Uint32(bm.ranks[i/2:]) != uint32(n) {
			return fmt.Errorf("rank %d", i/8)
		}
		for x := bm.word(i); x != 0; x &= x - 1 {
			id := uint64(i)<<6 | uint64(bits.TrailingZeros64(x))
			if id >= bound {
				return fmt.Errorf("id %d beyond %d", id, bound)
			}
			if err := ok(uint32(id)); err != nil {
				return err
			}
			n++
		}
	}
	if n != k {
		return fmt.Errorf("bitmap holds %d ids, not %d", n, k)
	}
	return nil
}

// crc32Combine returns the CRC-32 (of the reversed polynomial poly, as
// hash/crc32 computes it) of a‖b from crcA, crcB and the length of b:
// crcA advanced over lenB zero bytes by powers of the GF(2) operator for
// one zero bit, then xored with crcB (zlib's crc32_combine).
func crc32Combine(poly, crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32 // operators for 2^k zero bits
	odd[0] = poly
	for n, row := 1, uint32(1); n < 32; n, row = n+1, row<<1 {
		odd[n] = row
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for lenB > 0 {
		gf2Square(&even, &odd) // one zero byte, then 4, 16, …
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even) // two zero bytes, then 8, 32, …
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		lenB >>= 1
	}
	return crcA ^ crcB
}

// gf2Times returns the 32×32 GF(2) matrix mat times vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat².
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
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
