package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkBoltFile checks the page structure of the bbolt file at path, with
// plain reads and before bbolt maps it, so that bbolt never meets a
// broken structure. bbolt trusts its pages: on a damaged file it panics
// (a page that "self identifies as 0"), faults on pages past the end of a
// truncated file, loops on a cycle of pages, or reports what it found from
// a goroutine of its own with a panic no caller can recover. This checks
// what it would rely on, the way it would read the file:
//
//   - the meta page bbolt would use (the valid one with the higher txid,
//     validated as bbolt does: magic, version, FNV-64a checksum) and the
//     page size it would use;
//   - every page below the high-water mark lies within the file;
//   - from the root bucket down, every page reached is below the
//     high-water mark, names itself, is a branch or leaf page, is reached
//     once (with its overflow pages), and holds its elements, keys and
//     values within its bounds, keys non-empty and in strictly increasing
//     order within the bounds its parent gives; nested buckets (inline or
//     not) are checked alike;
//   - the freelist is synced (a DB written with NoFreelistSync, as format
//     1 was, is old: ErrSchema), is a freelist page, and lists distinct
//     pages below the high-water mark that the tree does not use.
//
// Key and value bytes are not read beyond what the order check needs:
// content is the checksums' business (see format.go). Errors
// wrap ErrCorrupt (or ErrSchema); an error reading the file is returned
// as it is.
func checkBoltFile(path string) (err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			// A link planted where the DB should be: not a DB of ours.
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	bf := &boltFile{f: f, size: fi.Size()}
	// The pages are read in place from a read-only map of the file rather
	// than copied out one read at a time: on a 1M-file root the DB is a
	// quarter of a GiB, which the copies made garbage on every restart.
	// The file is locked by nobody yet, so it may shrink under the map: a
	// fault reading it is taken as damage.
	if size := fi.Size(); size > 0 && int64(int(size)) == size {
		if data, merr := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED); merr == nil {
			defer unix.Munmap(data)
			bf.data = data
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					err = corruptf("fault reading the file: %v", r)
				}
			}()
		}
	}
	m, err := bf.readMeta()
	if err != nil {
		return err
	}
	if m.freelist == bbNoFreelist {
		return fmt.Errorf("%w: the freelist is not synced (written by an older version)", ErrSchema)
	}
	ps := uint64(bf.pageSize)
	if m.pgid < 4 || m.pgid > uint64(bf.size)/ps {
		return corruptf("high-water mark %d pages; the file holds %d bytes of %d-byte pages", m.pgid, bf.size, ps)
	}
	bf.hwm = m.pgid
	bf.seen = make([]bool, m.pgid)
	bf.seen[0], bf.seen[1] = true, true
	if err := bf.checkTree(m.root, nil, nil, 0, 0); err != nil {
		return err
	}
	return bf.checkFreelist(m.freelist)
}

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common), in the
// machine's byte order as bbolt writes it.
const (
	bbMagic          = 0xED0CDAED
	bbVersion        = 2
	bbPageHeader     = 16 // id u64, flags u16, count u16, overflow u32
	bbElement        = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bbBucketHeader   = 16 // root pgid u64, sequence u64
	bbMetaSize       = 64 // magic, version, pageSize, flags u32; root bucket; freelist, pgid, txid, checksum u64
	bbBranch         = 0x01
	bbLeaf           = 0x02
	bbFreelist       = 0x10
	bbBucketLeaf     = 0x01
	bbNoFreelist     = ^uint64(0)
	bbMaxKeySize     = 32768
	bbMaxPageDepth   = 64
	bbMaxBucketDepth = 16
)

var ne = binary.NativeEndian

type boltFile struct {
	f        *os.File
	data     []byte // the file mapped, or nil: read with f
	size     int64
	pageSize int
	hwm      uint64 // pages below it are in use or free
	seen     []bool // by page id: reached from the tree or the freelist
}

type boltMeta struct {
	pageSize                   uint32
	root, freelist, pgid, txid uint64
}

// parseMeta decodes the meta in the page b (at least a header and a meta
// long) and reports whether it is valid as bbolt validates it.
func parseMeta(b []byte) (boltMeta, bool) {
	if len(b) < bbPageHeader+bbMetaSize {
		return boltMeta{}, false
	}
	m := b[bbPageHeader : bbPageHeader+bbMetaSize]
	h := fnv.New64a()
	h.Write(m[:56])
	if ne.Uint32(m[0:]) != bbMagic || ne.Uint32(m[4:]) != bbVersion || ne.Uint64(m[56:]) != h.Sum64() {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), pgid: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, true
}

// readAt reads len(b) bytes at off; a file too short is corrupt.
func (bf *boltFile) readAt(b []byte, off int64) error {
	if bf.data != nil {
		if off < 0 || off > int64(len(bf.data)) || int64(len(b)) > int64(len(bf.data))-off {
			return corruptf("%d bytes at %d: past the end of the file (%d bytes)", len(b), off, bf.size)
		}
		copy(b, bf.data[off:])
		return nil
	}
	_, err := bf.f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		return corruptf("%d bytes at %d: past the end of the file (%d bytes)", len(b), off, bf.size)
	}
	return err
}

// readMeta finds the page size and the meta bbolt would use, as its Open
// and DB.meta do.
func (bf *boltFile) readMeta() (boltMeta, error) {
	var buf [4096]byte
	canRead := false
	if n, _ := bf.f.ReadAt(buf[:], 0); n == len(buf) {
		canRead = true
		if m, ok := parseMeta(buf[:]); ok {
			bf.pageSize = int(m.pageSize)
		}
	}
	for i := 0; bf.pageSize == 0 && i <= 14; i++ {
		pos := int64(1024) << i
		if pos >= bf.size-1024 {
			break
		}
		n, _ := bf.f.ReadAt(buf[:], pos)
		if n == len(buf) || int64(n) == bf.size-pos {
			canRead = true
			if m, ok := parseMeta(buf[:n]); ok {
				bf.pageSize = int(m.pageSize)
			}
		}
	}
	if bf.pageSize == 0 {
		if !canRead {
			return boltMeta{}, corruptf("no meta page")
		}
		bf.pageSize = os.Getpagesize()
	}
	ps := bf.pageSize
	if ps < 1024 || ps > 1<<16 || ps&(ps-1) != 0 {
		return boltMeta{}, corruptf("page size %d", ps)
	}
	if bf.size < int64(2*ps) {
		return boltMeta{}, corruptf("%d bytes: shorter than two pages", bf.size)
	}
	page := make([]byte, bbPageHeader+bbMetaSize)
	var metas [2]boltMeta
	var valid [2]bool
	for i := range metas {
		if err := bf.readAt(page, int64(i*ps)); err != nil {
			return boltMeta{}, err
		}
		metas[i], valid[i] = parseMeta(page)
	}
	a, b := 0, 1 // a: the higher txid, tried first
	if metas[1].txid > metas[0].txid {
		a, b = 1, 0
	}
	var m boltMeta
	switch {
	case valid[a]:
		m = metas[a]
	case valid[b]:
		m = metas[b]
	default:
		return boltMeta{}, corruptf("both meta pages are invalid")
	}
	if int(m.pageSize) != ps {
		return boltMeta{}, corruptf("meta page size %d, file read with %d", m.pageSize, ps)
	}
	return m, nil
}

// span is one page with its overflow pages (or an inline bucket's page,
// held in a value), read lazily from its start.
type span struct {
	bf           *boltFile // nil for an inline page: buf is all there is
	off          int64     // file offset of the page
	size         uint64    // bytes in the span
	buf          []byte    // its first len(buf) bytes
	id           uint64
	flags, count uint16
	overflow     uint32
	inline       bool
}

// bytes returns the span's bytes [off, off+n), reading them if needed.
func (s *span) bytes(off, n uint64) ([]byte, error) {
	if off > s.size || n > s.size-off {
		return nil, corruptf("page %d: bytes [%d, %d) beyond its %d", s.id, off, off+n, s.size)
	}
	if end := off + n; end > uint64(len(s.buf)) {
		if s.bf == nil {
			return nil, corruptf("inline page: bytes [%d, %d) beyond its %d", off, end, len(s.buf))
		}
		if d := s.bf.data; d != nil {
			if s.off+int64(end) > int64(len(d)) {
				return nil, corruptf("%d bytes at %d: past the end of the file (%d bytes)", end, s.off, s.bf.size)
			}
			s.buf = d[s.off : s.off+int64(end)]
		} else {
			more := make([]byte, end)
			copy(more, s.buf)
			if err := s.bf.readAt(more[len(s.buf):], s.off+int64(len(s.buf))); err != nil {
				return nil, err
			}
			s.buf = more
		}
	}
	return s.buf[off : off+n], nil
}

func parseHeader(s *span) {
	s.id, s.flags, s.count, s.overflow = ne.Uint64(s.buf[0:]), ne.Uint16(s.buf[8:]), ne.Uint16(s.buf[10:]), ne.Uint32(s.buf[12:])
}

// page reads the header of page id (below the high-water mark) and marks
// it and its overflow pages seen.
func (bf *boltFile) page(id uint64) (*span, error) {
	if id < 2 || id >= bf.hwm {
		return nil, corruptf("page %d: outside [2, %d)", id, bf.hwm)
	}
	ps := uint64(bf.pageSize)
	s := &span{bf: bf, off: int64(id * ps), size: ps}
	if bf.data != nil && s.off+int64(ps) <= int64(len(bf.data)) {
		s.buf = bf.data[s.off : s.off+int64(ps)] // read in place
	} else {
		s.buf = make([]byte, ps)
		if err := bf.readAt(s.buf, s.off); err != nil {
			return nil, err
		}
	}
	parseHeader(s)
	if s.id != id {
		return nil, corruptf("page %d: names itself %d", id, s.id)
	}
	if uint64(s.overflow) >= bf.hwm-id {
		return nil, corruptf("page %d: %d overflow pages pass the high-water mark %d", id, s.overflow, bf.hwm)
	}
	s.size = (uint64(s.overflow) + 1) * ps
	for p := id; p <= id+uint64(s.overflow); p++ {
		if bf.seen[p] {
			return nil, corruptf("page %d: reached twice", p)
		}
		bf.seen[p] = true
	}
	return s, nil
}

// checkTree checks the subtree rooted at page id, whose keys must lie in
// [lo, hi) (nil: unbounded).
func (bf *boltFile) checkTree(id uint64, lo, hi []byte, depth, bdepth int) error {
	if depth > bbMaxPageDepth || bdepth > bbMaxBucketDepth {
		return corruptf("page %d: nested too deep", id)
	}
	s, err := bf.page(id)
	if err != nil {
		return err
	}
	return bf.checkNode(s, lo, hi, depth, bdepth)
}

// checkNode checks a branch or leaf page's elements and what they lead to.
func (bf *boltFile) checkNode(s *span, lo, hi []byte, depth, bdepth int) error {
	switch {
	case s.flags == bbBranch && !s.inline && s.count > 0:
	case s.flags == bbLeaf:
	default:
		return corruptf("page %d: flags %#x with %d elements where a branch or leaf page belongs", s.id, s.flags, s.count)
	}
	n := uint64(s.count)
	table, err := s.bytes(bbPageHeader, n*bbElement)
	if err != nil {
		return err
	}
	keys := make([][]byte, n)
	for i := range n {
		e := table[i*bbElement:]
		at := bbPageHeader + i*bbElement // the element's offset: positions count from it
		pos, ksize := uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:]))
		if s.flags == bbBranch {
			pos, ksize = uint64(ne.Uint32(e[0:])), uint64(ne.Uint32(e[4:]))
		}
		if ksize == 0 || ksize > bbMaxKeySize {
			return corruptf("page %d: key %d of %d bytes", s.id, i, ksize)
		}
		k, err := s.bytes(at+pos, ksize)
		if err != nil {
			return err
		}
		if i > 0 && bytes.Compare(keys[i-1], k) >= 0 || lo != nil && bytes.Compare(k, lo) < 0 || hi != nil && bytes.Compare(k, hi) >= 0 {
			return corruptf("page %d: key %d out of order", s.id, i)
		}
		keys[i] = k
		if s.flags == bbLeaf {
			eflags, vsize := ne.Uint32(e[0:]), uint64(ne.Uint32(e[12:]))
			if eflags&^bbBucketLeaf != 0 {
				return corruptf("page %d: element %d has flags %#x", s.id, i, eflags)
			}
			if eflags&bbBucketLeaf == 0 {
				if at+pos+ksize+vsize > s.size { // bounds only: the bytes are the checksums' business
					return corruptf("page %d: value %d past the page", s.id, i)
				}
				continue
			}
			v, err := s.bytes(at+pos+ksize, vsize)
			if err != nil {
				return err
			}
			if err := bf.checkBucket(v, depth, bdepth+1); err != nil {
				return err
			}
		}
	}
	if s.flags == bbBranch {
		for i := range n {
			chi := hi
			if i+1 < n {
				chi = keys[i+1]
			}
			if err := bf.checkTree(ne.Uint64(table[i*bbElement+8:]), keys[i], chi, depth+1, bdepth); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBucket checks a nested bucket from its value: a header, then its
// root page or, inline (root 0), the page itself.
func (bf *boltFile) checkBucket(v []byte, depth, bdepth int) error {
	if len(v) < bbBucketHeader {
		return corruptf("bucket value of %d bytes", len(v))
	}
	if root := ne.Uint64(v); root != 0 {
		return bf.checkTree(root, nil, nil, 0, bdepth)
	}
	if len(v) < bbBucketHeader+bbPageHeader {
		return corruptf("inline bucket of %d bytes", len(v))
	}
	s := &span{buf: v[bbBucketHeader:], size: uint64(len(v) - bbBucketHeader), inline: true}
	parseHeader(s)
	if bdepth > bbMaxBucketDepth {
		return corruptf("buckets nested too deep")
	}
	return bf.checkNode(s, nil, nil, depth, bdepth)
}

// checkFreelist checks the freelist page and the pages it lists.
func (bf *boltFile) checkFreelist(id uint64) error {
	s, err := bf.page(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if s.flags != bbFreelist {
		return corruptf("freelist page %d: flags %#x", id, s.flags)
	}
	first, count := uint64(0), uint64(s.count)
	if count == 0xFFFF {
		b, err := s.bytes(bbPageHeader, 8)
		if err != nil {
			return err
		}
		first, count = 1, ne.Uint64(b)
	}
	if count > (s.size-bbPageHeader)/8-first {
		return corruptf("freelist page %d: %d ids do not fit", id, count)
	}
	ids, err := s.bytes(bbPageHeader+first*8, count*8)
	if err != nil {
		return err
	}
	for i := range count {
		p := ne.Uint64(ids[i*8:])
		if p < 2 || p >= bf.hwm {
			return corruptf("freelist: page %d outside [2, %d)", p, bf.hwm)
		}
		if bf.seen[p] {
			return corruptf("freelist: page %d is in use or listed twice", p)
		}
		bf.seen[p] = true
	}
	return nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: bbolt file: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
