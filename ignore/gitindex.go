package ignore

// Reading a git repository's index file (<gitdir>/index) for one fact: which
// directories named in DefaultDirs hold an entry git tracks. The default list
// is there to skip build output and dependencies; a directory on it in which
// git tracks files (Go's src/go/build) is source, and is not skipped
// (docs/product.md, "What is skipped"). No git process is run: the index is
// read as git writes it (Documentation/gitformat-index.txt).
//
// The format, as far as it is read here. Integers are big-endian.
//
//	header      "DIRC" ‖ uint32 version (2, 3 or 4) ‖ uint32 entry count
//	entries     in path order, each:
//	              10 × uint32: ctime s, ctime ns, mtime s, mtime ns, dev,
//	                ino, mode, uid, gid, size
//	              object name: 20 bytes (SHA-1) or 32 (SHA-256; the
//	                repository's extensions.objectFormat says which)
//	              uint16 flags: assume-valid (1 bit), extended (1), stage
//	                (2), name length (12; 0xFFF for 4095 or more)
//	              version 3 and 4, extended flag set: uint16 more flags
//	              version 2 and 3: the path, then 1 to 8 NULs so that the
//	                entry's length is a multiple of 8
//	              version 4: varint N ‖ NUL-terminated suffix: the path is
//	                the previous entry's (the first's: "") less its last N
//	                bytes, then the suffix; no padding. The varint is git's
//	                offset varint: 7 bits a byte, high bit "more", and each
//	                continuation adds one before the shift.
//	extensions  until the trailer, each: 4-byte signature ‖ uint32 size ‖
//	            data. Only "link" is read; the rest are skipped.
//	trailer     the hash of everything before it; all zero when
//	            index.skipHash is set
//
// Modes: 0100644 and 0100755 files, 0120000 symlinks, 0160000 gitlinks
// (a submodule: its work tree is tracked, by its own repository), and,
// in a sparse index, 040000 for a directory of tracked files left
// collapsed (its path ends in "/"). A gitlink or a sparse directory
// counts as a tracked directory itself, as well as in its parents.
//
// A split index ("link" extension: the shared index's hash ‖ an EWAH
// bitmap of the shared entries deleted ‖ an EWAH bitmap of those
// replaced) holds only the changes from <gitdir>/sharedindex.<hash>: its
// entries with a name are added, those with an empty name replace a
// shared entry of the same path. The tracked paths are the shared
// entries not deleted and the split index's named entries.
//
// EWAH (git's ewah/ewah_io.c): uint32 bit count ‖ uint32 word count ‖
// that many uint64 words ‖ uint32 position of the last marker word. The
// words are runs: a marker word (bit 0 the running bit, bits 1–32 the
// running length in words, bits 33–63 the number of literal words that
// follow it), then those literal words, whose bit k (least significant
// first) is the bitmap's bit 64×(word's place) + k.
//
// Worked example: a version 4 index of "a/build/x.go" and "y" (both
// 0100644) starts
//
//	44 49 52 43 00 00 00 04 00 00 00 02   "DIRC", version 4, 2 entries
//	(40 bytes of stat data, mode 00 00 81 a4 at offset 24 of them)
//	(20 bytes: the object name)
//	00 0c                                 flags: name length 12
//	00 61 2f 62 75 69 6c 64 2f 78 2e 67 6f 00
//	                                      strip 0, "a/build/x.go"
//	(62 bytes of the second entry) 00 01
//	0c 79 00                              strip 12, "y"
//
// and ends with the 20-byte trailer: "a/build" is a tracked directory on
// the default list.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ErrBadIndex: a git index file that is not in a format read here
// (another version, a truncated or corrupt file). The directories it
// would have made tracked are taken as untracked: the default list
// applies, and answers say what it skipped.
var ErrBadIndex = errors.New("ignore: unreadable git index file")

// Index entry modes (the type bits, mode >> 12).
const (
	modeTypeDir     = 0o04 // a sparse directory
	modeTypeGitlink = 0o16 // a submodule
)

// maxIndexPath bounds a path in an index file (git's own limit is
// PATH_MAX-like; a longer one means a corrupt file).
const maxIndexPath = 32 << 10

// splitLink is a split index's "link" extension.
type splitLink struct {
	shared  []byte     // the shared index's hash
	deleted []bitRange // shared entries deleted, by position
}

// bitRange is a run [lo, hi) of set bits.
type bitRange struct{ lo, hi uint64 }

// readGitIndex reads an index file of size bytes from r (object names
// hashLen bytes long), calling fn with each entry's path (valid only
// during the call) and whether it names a directory (a gitlink, a sparse
// directory; the trailing "/" of the latter cut). It returns the split
// index link, if the file has one, and the trailer.
func readGitIndex(r io.Reader, size int64, hashLen int, fn func(path []byte, dir bool)) (link *splitLink, trailer []byte, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	x := &indexReader{r: br, size: size}
	if hashLen != 20 && hashLen != 32 {
		return nil, nil, fmt.Errorf("%w: hash length %d", ErrBadIndex, hashLen)
	}
	var hdr [12]byte
	if err := x.full(hdr[:]); err != nil {
		return nil, nil, err
	}
	if string(hdr[:4]) != "DIRC" {
		return nil, nil, fmt.Errorf("%w: no DIRC signature", ErrBadIndex)
	}
	version := binary.BigEndian.Uint32(hdr[4:])
	if version < 2 || version > 4 {
		return nil, nil, fmt.Errorf("%w: version %d", ErrBadIndex, version)
	}
	count := binary.BigEndian.Uint32(hdr[8:])
	fixed := 40 + hashLen + 2
	var buf [40 + 32 + 4]byte
	var path []byte
	for range count {
		if err := x.full(buf[:fixed]); err != nil {
			return nil, nil, err
		}
		mode := binary.BigEndian.Uint32(buf[24:])
		flags := binary.BigEndian.Uint16(buf[40+hashLen:])
		n := fixed
		if flags&0x4000 != 0 { // extended
			if version < 3 {
				return nil, nil, fmt.Errorf("%w: extended flags in version %d", ErrBadIndex, version)
			}
			if err := x.full(buf[fixed : fixed+2]); err != nil {
				return nil, nil, err
			}
			n += 2
		}
		if version == 4 {
			strip, err := x.varint()
			if err != nil {
				return nil, nil, err
			}
			if strip > uint64(len(path)) {
				return nil, nil, fmt.Errorf("%w: prefix of %d bytes cut from a %d-byte path", ErrBadIndex, strip, len(path))
			}
			path = path[:len(path)-int(strip)]
		} else {
			path = path[:0]
		}
		suffix, err := x.cstring()
		if err != nil {
			return nil, nil, err
		}
		path = append(path, suffix...)
		if len(path) > maxIndexPath {
			return nil, nil, fmt.Errorf("%w: path of %d bytes", ErrBadIndex, len(path))
		}
		if nl := int(flags & 0xfff); nl < 0xfff && nl != len(path) {
			return nil, nil, fmt.Errorf("%w: path length %d, flags say %d", ErrBadIndex, len(path), nl)
		}
		if version < 4 {
			// Pad to a multiple of 8 from the entry's start; the NUL
			// that ended the path was the first byte of it.
			if err := x.skip(int64((n+len(path)+8)&^7 - (n + len(path) + 1))); err != nil {
				return nil, nil, err
			}
		}
		switch t := mode >> 12; {
		case t == modeTypeGitlink:
			fn(path, true)
		case t == modeTypeDir:
			p := path
			if len(p) > 0 && p[len(p)-1] == '/' {
				p = p[:len(p)-1]
			}
			fn(p, true)
		default:
			fn(path, false)
		}
	}
	for x.off < size-int64(hashLen) {
		var ext [8]byte
		if err := x.full(ext[:]); err != nil {
			return nil, nil, err
		}
		n := int64(binary.BigEndian.Uint32(ext[4:]))
		if n > size-int64(hashLen)-x.off {
			return nil, nil, fmt.Errorf("%w: extension %q of %d bytes overruns the file", ErrBadIndex, ext[:4], n)
		}
		if string(ext[:4]) != "link" {
			if err := x.skip(n); err != nil {
				return nil, nil, err
			}
			continue
		}
		data := make([]byte, n)
		if err := x.full(data); err != nil {
			return nil, nil, err
		}
		if link, err = parseLink(data, hashLen); err != nil {
			return nil, nil, err
		}
	}
	if x.off != size-int64(hashLen) {
		return nil, nil, fmt.Errorf("%w: entries overrun the trailer", ErrBadIndex)
	}
	trailer = make([]byte, hashLen)
	if err := x.full(trailer); err != nil {
		return nil, nil, err
	}
	return link, trailer, nil
}

// indexReader reads an index file, counting the bytes it took.
type indexReader struct {
	r    *bufio.Reader
	off  int64
	size int64
}

func (x *indexReader) full(b []byte) error {
	if int64(len(b)) > x.size-x.off {
		return fmt.Errorf("%w: truncated", ErrBadIndex)
	}
	n, err := io.ReadFull(x.r, b)
	x.off += int64(n)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadIndex, err)
	}
	return nil
}

func (x *indexReader) skip(n int64) error {
	if n > x.size-x.off {
		return fmt.Errorf("%w: truncated", ErrBadIndex)
	}
	for n > 0 {
		k, err := x.r.Discard(int(min(n, 1<<30)))
		x.off += int64(k)
		n -= int64(k)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadIndex, err)
		}
	}
	return nil
}

// cstring returns the bytes before the next NUL (valid until the next
// read), taking the NUL too.
func (x *indexReader) cstring() ([]byte, error) {
	b, err := x.r.ReadSlice(0)
	x.off += int64(len(b))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: path: %w", ErrBadIndex, err)
	case x.off > x.size:
		return nil, fmt.Errorf("%w: truncated", ErrBadIndex)
	}
	return b[:len(b)-1], nil
}

// varint reads git's offset varint (varint.c).
func (x *indexReader) varint() (uint64, error) {
	var b [1]byte
	if err := x.full(b[:]); err != nil {
		return 0, err
	}
	v := uint64(b[0] & 127)
	for b[0]&128 != 0 {
		v++
		if v == 0 || v>>57 != 0 {
			return 0, fmt.Errorf("%w: varint overflows", ErrBadIndex)
		}
		if err := x.full(b[:]); err != nil {
			return 0, err
		}
		v = v<<7 + uint64(b[0]&127)
	}
	return v, nil
}

// parseLink parses a "link" extension's data.
func parseLink(data []byte, hashLen int) (*splitLink, error) {
	if len(data) < hashLen {
		return nil, fmt.Errorf("%w: link extension of %d bytes", ErrBadIndex, len(data))
	}
	l := &splitLink{shared: data[:hashLen]}
	rest := data[hashLen:]
	if len(rest) == 0 {
		return l, nil
	}
	del, rest, err := readEWAH(rest)
	if err != nil {
		return nil, err
	}
	if _, _, err := readEWAH(rest); err != nil { // the replacements: paths unchanged
		return nil, err
	}
	l.deleted = del
	return l, nil
}

// readEWAH decodes one EWAH bitmap at the start of data into its runs of
// set bits, in order, and returns the bytes after it. The runs take at
// most 64 per literal word and one per marker word, so a hostile bitmap
// costs memory in proportion to its size, whatever bit count it claims.
func readEWAH(data []byte) (runs []bitRange, rest []byte, err error) {
	if len(data) < 8 {
		return nil, nil, fmt.Errorf("%w: EWAH header", ErrBadIndex)
	}
	words := uint64(binary.BigEndian.Uint32(data[4:]))
	if words > uint64(len(data)-8)/8 || 8+8*words+4 > uint64(len(data)) {
		return nil, nil, fmt.Errorf("%w: EWAH of %d words in %d bytes", ErrBadIndex, words, len(data))
	}
	w := data[8 : 8+8*words]
	rest = data[8+8*words+4:]
	add := func(lo, hi uint64) {
		if k := len(runs) - 1; k >= 0 && runs[k].hi == lo {
			runs[k].hi = hi
			return
		}
		runs = append(runs, bitRange{lo, hi})
	}
	var pos uint64
	for i := 0; i < len(w); {
		rlw := binary.BigEndian.Uint64(w[i:])
		i += 8
		run := (rlw >> 1) & 0xffffffff
		if rlw&1 != 0 && run > 0 {
			add(pos, pos+run*64)
		}
		pos += run * 64
		for range rlw >> 33 {
			if i >= len(w) {
				return nil, nil, fmt.Errorf("%w: EWAH literal words overrun", ErrBadIndex)
			}
			lit := binary.BigEndian.Uint64(w[i:])
			i += 8
			for k := range uint64(64) {
				if lit&(1<<k) != 0 {
					add(pos+k, pos+k+1)
				}
			}
			pos += 64
		}
	}
	return runs, rest, nil
}

// trackedDirs collects the directories on the default list that hold a
// tracked entry, from an index's entries in order.
type trackedDirs struct {
	set  map[string]struct{}
	prev []byte // the last directory looked at: entries in one directory come together
}

// add records the entry at path (a directory itself when dir).
func (t *trackedDirs) add(path []byte, dir bool) {
	d := path
	if !dir {
		i := bytes.LastIndexByte(path, '/')
		if i < 0 {
			return
		}
		d = path[:i]
	}
	if bytes.Equal(d, t.prev) && t.prev != nil {
		return
	}
	t.prev = append(t.prev[:0], d...)
	start := 0
	for i := 0; i <= len(d); i++ {
		if i < len(d) && d[i] != '/' {
			continue
		}
		if DefaultDirs[string(d[start:i])] {
			if t.set == nil {
				t.set = make(map[string]struct{})
			}
			if _, ok := t.set[string(d[:i])]; !ok {
				t.set[string(d[:i])] = struct{}{}
			}
		}
		start = i + 1
	}
}

// sorted returns the set's directories in order.
func (t *trackedDirs) sorted() []string {
	out := make([]string, 0, len(t.set))
	for d := range t.set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// inRanges reports whether i lies in one of runs (sorted), moving *k past
// the runs below i: positions are asked in increasing order.
func inRanges(runs []bitRange, k *int, i uint64) bool {
	for *k < len(runs) && runs[*k].hi <= i {
		*k++
	}
	return *k < len(runs) && runs[*k].lo <= i
}
