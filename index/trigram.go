package index

import (
	"cmp"
	"slices"

	csindex "github.com/google/codesearch/index"
)

// Trigrams are three bytes of ASCII-lowercased content packed into the low
// 24 bits of a uint32 (first byte highest). Lowercasing on both sides makes
// a case-insensitive query one lookup per trigram; the live regexp then
// decides. Since lowercasing maps a substring of the content to a substring
// of the lowercased content, every trigram a match needs is still present:
// the index only narrows, never loses a match.

// Limits of what is indexed. A file beyond them is "unknown": a candidate
// for every Grep (docs/product.md, "Freshness").
const (
	// MaxFileSize is the largest file whose trigrams are indexed.
	MaxFileSize = 64 << 20
	// MaxFileTrigrams is the most distinct trigrams one file may have.
	MaxFileTrigrams = 1 << 17
)

var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return
}()

// Masks. Each posting (a trigram in a file) carries a byte, its mask, of
// one of two kinds, by the file's size.
//
// A file of NextMasksFrom bytes or fewer gets line masks: the eighths of
// the file holding the start of a line the trigram occurs in, bit e for
// eighth e. The line starting at byte s of a file of n bytes lies in
// eighth 8s/n (integer division, EighthOf), and an occurrence lies in
// the line holding its last byte. Outside multiline mode a match lies
// within one line, so every trigram it needs occurs in that line and has
// that line's bit: a file in which the trigrams of a query share no
// eighth, evaluated as the trigram query is (an AND of trigrams
// intersects their masks, an OR unites them), holds no match (see
// maskFilter). So the two literals of `spin_lock\(.*kfree\(` that a file
// holds only in different eighths rule it out, as do the trigrams of one
// literal that occur in it only apart.
//
// A larger file (flagged NextMasks), or one whose bytes read are not its
// size as listed (the probe takes eighths of that size), gets next
// masks: bit nextBin[c] set for each byte c (ASCII-lowercased) that
// follows an occurrence of the trigram, every bit for an occurrence at
// the end of the file. A phrase
// (a literal every match holds) is possible in it only if, for each of
// its trigrams but the last, the mask has the bit of the phrase's byte
// after it: a file holding every trigram of "xyzzy" but never "xyz"
// followed by "z" is no candidate. An eighth of a large file is many
// lines, most of which a dense one (base64, bundled JavaScript, a
// generated table) holds every common trigram in; what follows a
// trigram there still tells phrases apart. Grep does not probe files
// that large either (grep.Sizes).
//
// Either kind of mask is never zero. Schema 10 split the byte: four bits
// of line mask (quarters) and four of next mask, for every file; the
// figures that chose this are in format.go's version log. A change of
// either rule, of nextBin or of NextMasksFrom is a new schema version.

// NextMasksFrom is the size above which a file's masks are next masks.
const NextMasksFrom = 1 << 20

// nextBin spreads the bytes of source code evenly over eight bins: bytes
// were assigned, most frequent first, each to the bin with the least
// total frequency so far, by their frequency (ASCII case folded) over the
// .go files of GOROOT/src (grep/kernelfreq.go); the space alone fills
// bin 0. It is part of the on-disk format (format.go).
var nextBin = [256]uint8{
	3, 3, 4, 6, 7, 1, 2, 3, 4, 3, 5, 6, 7, 4, 1, 2, // 0x00
	3, 4, 6, 7, 1, 2, 3, 4, 6, 7, 1, 2, 3, 4, 6, 7, // 0x10
	0, 1, 6, 1, 4, 1, 2, 2, 7, 5, 5, 7, 2, 6, 1, 4, // 0x20
	7, 2, 4, 5, 3, 3, 7, 6, 1, 4, 3, 4, 5, 5, 5, 1, // 0x30
	6, 5, 1, 1, 7, 1, 5, 6, 2, 6, 6, 7, 3, 2, 6, 4, // 0x40
	4, 3, 4, 7, 2, 6, 7, 2, 3, 3, 4, 5, 2, 1, 1, 1, // 0x50
	7, 5, 1, 1, 7, 1, 5, 6, 2, 6, 6, 7, 3, 2, 6, 4, // 0x60
	4, 3, 4, 7, 2, 6, 7, 2, 3, 3, 4, 6, 3, 4, 2, 1, // 0x70
	4, 4, 4, 6, 1, 3, 4, 2, 1, 7, 1, 4, 4, 3, 2, 4, // 0x80
	3, 6, 7, 3, 6, 7, 1, 2, 3, 1, 6, 7, 2, 3, 3, 3, // 0x90
	2, 4, 3, 1, 6, 6, 6, 1, 4, 3, 4, 2, 1, 4, 7, 1, // 0xa0
	2, 2, 3, 4, 6, 1, 3, 7, 7, 6, 6, 6, 7, 7, 4, 4, // 0xb0
	2, 3, 6, 6, 4, 6, 7, 4, 1, 6, 7, 2, 3, 1, 2, 7, // 0xc0
	6, 6, 3, 4, 6, 7, 1, 2, 3, 4, 7, 1, 7, 1, 2, 3, // 0xd0
	2, 2, 1, 1, 3, 7, 2, 1, 1, 2, 3, 4, 6, 7, 1, 2, // 0xe0
	2, 4, 6, 7, 2, 1, 2, 3, 4, 6, 7, 1, 2, 3, 4, 6, // 0xf0
}

// nextBit is the bit of byte c in a next mask.
func nextBit(c byte) uint8 { return 1 << nextBin[lower[c]] }

// nextBits is nextBit of each byte, a table so that extract looks it up
// once.
var nextBits = func() (t [256]uint8) {
	for c := range t {
		t[c] = nextBit(byte(c))
	}
	return
}()

// allLines is a mask with every eighth set.
const allLines = 0xFF

// lineBit is the mask bit of the line starting at byte start of a file
// of n bytes (start < n; 0 for start = n, a line past the end, which no
// trigram is in).
func lineBit(start, n int) uint8 {
	if start >= n {
		return 0
	}
	return 1 << EighthOf(int64(start), int64(n))
}

// A posting travels through extraction, the builder, the spill, the
// merge and the delta as one uint32: trigram<<8 | mask ("packed").
// Sorting packed postings sorts them by trigram.

// packedTri returns the trigram of a packed posting.
func packedTri(v uint32) uint32 { return v >> 8 }

// trigramSet collects one file's distinct trigrams and their masks;
// reused across files.
type trigramSet struct {
	// mask holds the masks of the 1<<24 trigrams, all zero but while a
	// file is extracted. It also tells which trigrams were seen: each
	// occurrence sets a bit at once (its line's, or the next byte's), so
	// a zero mask means "not seen yet".
	mask []uint8
	out  []uint32
}

// extract returns the distinct lowercase trigrams of data with their
// masks (next masks if next, else line masks), packed (in no particular
// order), or ok=false when there are more than maxTrigrams
// (MaxFileTrigrams but in tests). The result is valid until the next
// call.
//
// The loop has no branch on what it reads but for line breaks (and, for
// next masks, the end of the data): each trigram is written to out and
// kept (n advanced) only if its mask is still zero. Whether a trigram is
// new is a coin toss in source code, and a branch on it mispredicted
// often enough to make extraction 1.75× slower. A line break, once a line, moves the line bit on.
func (s *trigramSet) extract(data []byte, maxTrigrams int, next bool) ([]uint32, bool) {
	if s.mask == nil {
		s.mask = make([]uint8, 1<<24)
	}
	mask := s.mask
	n, ok := 0, true
	if len(data) >= 3 {
		// At most one trigram a byte, and one past the limit.
		if need := min(len(data)-2, maxTrigrams+1); cap(s.out) < need {
			s.out = make([]uint32, need)
		}
		out := s.out[:cap(s.out)]
		t := uint32(lower[data[0]])<<8 | uint32(lower[data[1]])
		// line is the line bit of the line holding the byte read; a
		// trigram with a line break in it gets the bit of the line its
		// last byte is in, which no query reads (a match outside
		// multiline mode holds no line break).
		start := 0
		if data[1] == '\n' {
			start = 2
		} else if data[0] == '\n' {
			start = 1
		}
		line := lineBit(start, len(data))
		for j := 2; j < len(data); j++ {
			c := data[j]
			t = (t<<8 | uint32(lower[c])) & 0xFFFFFF
			out[n] = t
			var seen int
			if mask[t] == 0 {
				seen = 1 // compiled to a flag, not a branch
			}
			if next {
				after := uint8(0xFF) // at the end: any byte may follow
				if j+1 < len(data) {
					after = nextBits[data[j+1]]
				}
				mask[t] |= after
			} else {
				mask[t] |= line
			}
			n += seen
			if n > maxTrigrams {
				ok = false
				break
			}
			if c == '\n' {
				line = lineBit(j+1, len(data))
			}
		}
	}
	out := s.out[:n]
	for i, t := range out {
		out[i] = t<<8 | uint32(mask[t])
		mask[t] = 0
	}
	if !ok {
		return nil, false
	}
	return out, true
}

// queryTrigram converts a codesearch query trigram (a 3-byte string) to
// ours.
func queryTrigram(s string) uint32 {
	return uint32(lower[s[0]])<<16 | uint32(lower[s[1]])<<8 | uint32(lower[s[2]])
}

// findPacked returns the index of trigram t in the packed postings tris
// (sorted), or -1.
func findPacked(tris []uint32, t uint32) int {
	i, ok := slices.BinarySearchFunc(tris, t, func(v, t uint32) int { return cmp.Compare(packedTri(v), t) })
	if !ok {
		return -1
	}
	return i
}

// matchSet reports whether a file with the sorted packed postings tris
// can satisfy q.
func matchSet(q *csindex.Query, tris []uint32) bool {
	return holds(q, func(t uint32) bool { return findPacked(tris, t) >= 0 })
}

// holds evaluates the trigram query q over a text of which has tells
// whether it holds a trigram, given ASCII-lowercased and packed as 24 bits
// (the index's folding: lowercasing both sides makes a case-insensitive
// query one lookup, and a superset). A text whose has answers true for
// every trigram it holds (and maybe others) and for which holds is false
// cannot match the regexp q was made from. The index's postings (matchSet)
// and the block filters of large files (blocks.go) are read through it.
func holds(q *csindex.Query, has func(tri uint32) bool) bool {
	switch q.Op {
	case csindex.QAll:
		return true
	case csindex.QNone:
		return false
	case csindex.QAnd:
		for _, t := range q.Trigram {
			if !has(queryTrigram(t)) {
				return false
			}
		}
		for _, s := range q.Sub {
			if !holds(s, has) {
				return false
			}
		}
		return true
	default: // QOr
		for _, t := range q.Trigram {
			if has(queryTrigram(t)) {
				return true
			}
		}
		for _, s := range q.Sub {
			if holds(s, has) {
				return true
			}
		}
		return false
	}
}

// fibHash is Fibonacci hashing: the top 32−shift bits of x times 2^32/φ,
// the index's hash of a trigram into a power-of-two table.
func fibHash(x uint32, shift uint) uint32 { return (x * 0x9E3779B1) >> shift }

// trigramHash hashes the trigram t (24 bits, ASCII-folded) to bits bits
// (1 to 32), as the index hashes trigrams into its tables, signatures
// and block filters.
func trigramHash(t uint32, bits uint) uint32 { return fibHash(t, 32-bits) }

// setDelta records tris as id's delta set, with its signature. Caller
// holds mu (or owns ix).
func (ix *Index) setDelta(id uint32, tris []uint32) {
	ix.dropDelta(id)
	ix.delta[id] = tris
	ix.dsl.add(id, tris)
	ix.deltaBytes += deltaSize(tris)
}

// dropDelta removes id's delta set and signature, if it has them. Caller
// holds mu.
func (ix *Index) dropDelta(id uint32) {
	if tris, ok := ix.delta[id]; ok {
		ix.deltaBytes -= deltaSize(tris)
		ix.dsl.remove(id, tris)
		delete(ix.delta, id)
	}
}

// deltaSize is what a delta set and its signature hold, in bytes: the
// heap a changed file costs until a compaction folds it into the base.
func deltaSize(tris []uint32) int64 {
	return 4*int64(cap(tris)) + sliceBytes
}
