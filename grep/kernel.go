package grep

// The literal scan kernel: finding a Matcher's prefilter literals in a
// file's bytes, in place, at close to memory speed.
//
// A literal is looked for by its two rarest bytes, not its first: the
// anchors are the bytes of the literal that occur least often in source
// code (byteFreq, measured over GOROOT/src: see kernelfreq_gen.go), found
// together by pairindex (32 places per step with AVX2), and each place
// where both occur at their distance is a candidate whose other bytes are
// compared in place. This is ripgrep's heuristic (its memchr crate ranks
// bytes by a frequency table of the same kind and searches for a "packed
// pair"); for ErrShortWrite the anchors are W (0.1% of source bytes) and
// E, not E alone. Two anchors matter when no byte of the literal is rare:
// "func main"'s rarest byte, m, is 1% of source code, a candidate every
// hundred bytes for one anchor, every 3,500 for m and u four bytes apart,
// and the scan went from 4.7 to 21 GB/s (BenchmarkKernelDenseLiteral).
//
// Where pairindex has no vector search (pairindex.Fast false: not amd64,
// or no AVX2), and for a one-byte literal, the rarest byte alone is the
// anchor, found with bytes.IndexByte (vectorised); when even that byte
// is common (more than 1 in 64 bytes of source code), a case-sensitive
// literal is searched for with bytes.Index, whose own adaptive search
// (first byte, then a vectorised two-byte scan after too many false
// hits) does better on dense candidates.
//
// Case-insensitive literals are matched under ASCII case folding without
// copying or lowercasing the buffer: the literal is kept lowercased, an
// anchor that is a letter is matched in both its cases (pairindex.Letter:
// the byte ORed with 0x20 is the lowercase letter, which holds for
// exactly its two cases; or, with one anchor, two IndexByte streams
// merged in order), anchors are chosen by the two cases' frequencies
// together (so a rare non-letter such as '(' or '_' wins over common
// letters), and candidates are compared through the fold (eight bytes at
// a time). ASCII folding is all the kernel does; the folds Go's (?i)
// applies beyond it (k with the Kelvin sign U+212A, s with the long s
// U+017F, and the case pairs of non-ASCII letters) are the analysis'
// business in match.go: it expands a folded literal into the variants
// ASCII folding cannot equate ("k" and "\u212a"), or, when there are too
// many, keeps only a piece with no such letter. So a literal set never
// misses a line the regexp matches.
//
// Go's regexp stays the reference: kernel_test.go (TestKernelCases,
// TestKernelRandom, FuzzKernel) holds the kernel, with the analysis that
// feeds it, to the lines the regexp matches for any fixed-string needle,
// with and without (?i), and to the regexp's exact non-overlapping
// leftmost match positions when the needle is its own literal set. Its
// speed is measured by the BenchmarkKernel* benchmarks
// (kernel_bench_test.go), in MB/s over a sample of GOROOT/src.

//go:generate go run kernelfreq_gen.go

import (
	"bytes"
	"encoding/binary"

	"github.com/indexd/indexd/internal/pairindex"
)

// denseFreq is the frequency (per million bytes, see byteFreq) from which
// an anchor is too common to be worth a case-sensitive IndexByte loop.
const denseFreq = 1_000_000 / 64

// litFinder finds one literal in a buffer.
type litFinder struct {
	lit  []byte // ASCII-lowercased when fold
	fold bool
	at   int  // the anchor: lit[at] is the literal's rarest byte
	a, b byte // the anchor byte and, when fold and a letter, its uppercase (else b == a)
	std  bool // search with bytes.Index (case-sensitive, no rare byte)

	// pair: search for two anchors at once (pairindex), lit[o1] in c1
	// and lit[o2] in c2, o1 < o2: the literal's two rarest bytes.
	pair   bool
	o1, o2 int
	c1, c2 pairindex.Class
}

// newLitFinder returns a finder for lit (not empty), matched exactly or,
// with fold, under ASCII case folding; with pair, by two anchors at once
// (where pairindex can: pairindex.Fast).
func newLitFinder(lit []byte, fold, pair bool) litFinder {
	f := litFinder{lit: lit, fold: fold}
	if fold {
		f.lit = make([]byte, len(lit))
		for i, c := range lit {
			f.lit[i] = lowerTable[c]
		}
	}
	if len(lit) == 0 {
		return f // found everywhere: index returns 0
	}
	cost := func(c byte) uint32 {
		if u := upperTable[c]; fold && u != c {
			return byteFreq[c] + byteFreq[u]
		}
		return byteFreq[c]
	}
	best, next := uint32(0), -1
	for i, c := range f.lit {
		if i == 0 || cost(c) < best {
			best, f.at = cost(c), i
		}
	}
	for i, c := range f.lit {
		if i != f.at && (next < 0 || cost(c) < cost(f.lit[next])) {
			next = i
		}
	}
	f.a = f.lit[f.at]
	f.b = f.a
	if fold {
		f.b = upperTable[f.a]
	}
	if pair && next >= 0 {
		f.pair = true
		f.o1, f.o2 = min(f.at, next), max(f.at, next)
		class := pairindex.Byte
		if fold {
			class = pairindex.Letter
		}
		f.c1, f.c2 = class(f.lit[f.o1]), class(f.lit[f.o2])
		return f
	}
	f.std = !fold && best >= denseFreq
	return f
}

// index returns the offset of the first occurrence of the literal in
// hay, or -1.
func (f *litFinder) index(hay []byte) int {
	n := len(f.lit)
	switch {
	case n > len(hay):
		return -1
	case n == 0:
		return 0
	}
	if f.std {
		return bytes.Index(hay, f.lit)
	}
	if f.pair {
		// Literal starts s in [0, last]: s+o1 in c1 and s+o2 in c2.
		last := len(hay) - n
		for s := 0; s <= last; s++ {
			j := pairindex.Index(hay[s+f.o1:last+f.o2+1], f.o2-f.o1, f.c1, f.c2)
			if j < 0 {
				return -1
			}
			s += j
			if f.equal(hay[s : s+n]) {
				return s
			}
		}
		return -1
	}
	// Anchors are looked for in [at, end): an occurrence of the literal
	// starting at i has its anchor at i+at, and must end in hay.
	at := f.at
	end := len(hay) - (n - 1 - at)
	if f.a == f.b {
		for i := at; i < end; i++ {
			j := bytes.IndexByte(hay[i:end], f.a)
			if j < 0 {
				return -1
			}
			i += j
			if f.equal(hay[i-at : i-at+n]) {
				return i - at
			}
		}
		return -1
	}
	// Two anchors (the two cases of a letter): na and nb are the next
	// occurrence of each at or after i (end if none), merged in order.
	na, nb := -1, -1
	for i := at; i < end; {
		if na < i {
			na = end
			if j := bytes.IndexByte(hay[i:end], f.a); j >= 0 {
				na = i + j
			}
		}
		if nb < i {
			nb = end
			if j := bytes.IndexByte(hay[i:end], f.b); j >= 0 {
				nb = i + j
			}
		}
		c := min(na, nb)
		if c >= end {
			return -1
		}
		if f.equal(hay[c-at : c-at+n]) {
			return c - at
		}
		i = c + 1
	}
	return -1
}

// equal reports whether s (as long as the literal) is the literal.
func (f *litFinder) equal(s []byte) bool {
	if !f.fold {
		return bytes.Equal(s, f.lit)
	}
	return equalFoldLower(s, f.lit)
}

// equalFoldLower reports whether s, ASCII-lowercased, is low (as long as
// s, and lowercase). Eight bytes at a time, a word of s is lowercased as
// lowerWord does.
func equalFoldLower(s, low []byte) bool {
	low = low[:len(s)]
	for len(s) >= 8 {
		if lowerWord(binary.LittleEndian.Uint64(s)) != binary.LittleEndian.Uint64(low) {
			return false
		}
		s, low = s[8:], low[8:]
	}
	for i, c := range s {
		if lowerTable[c] != low[i] {
			return false
		}
	}
	return true
}

// lowerWord ASCII-lowercases the eight bytes of w. For each byte below
// 0x80, adding 0x80-'A' sets its top bit iff it is >= 'A', adding
// 0x80-'Z'-1 iff it is > 'Z'; the XOR of the two marks exactly 'A'..'Z',
// and that bit shifted down to 0x20 is the case bit. No carry crosses a
// byte because the top bits were cleared first, and bytes from 0x80 up
// are left alone (&^ w).
func lowerWord(w uint64) uint64 {
	const ones = 0x0101010101010101
	h := w & (0x7f * ones)
	u := ((h + (0x80-'A')*ones) ^ (h + (0x80-'Z'-1)*ones)) &^ w & (0x80 * ones)
	return w | u>>2
}

// upperTable maps each byte to its ASCII uppercase.
var upperTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'a' <= i && i <= 'z' {
			t[i] = byte(i - 'a' + 'A')
		}
	}
	return
}()

// litSet is a set of literals searched for together: a scan over one
// buffer asks for the leftmost occurrence of any of them at or after a
// position, position after position.
type litSet struct {
	finders []litFinder
	longest int
}

// newLitSet returns the set of lits (none empty), matched exactly or,
// with fold, under ASCII case folding; with pair, each by two anchors at
// once (newLitFinder).
func newLitSet(lits [][]byte, fold, pair bool) *litSet {
	s := &litSet{}
	for _, l := range lits {
		s.finders = append(s.finders, newLitFinder(l, fold, pair))
		s.longest = max(s.longest, len(l))
	}
	return s
}

// contains reports whether b holds one of the literals.
func (s *litSet) contains(b []byte) bool {
	for i := range s.finders {
		if s.finders[i].index(b) >= 0 {
			return true
		}
	}
	return false
}

// litScan is one scan of a buffer for a litSet.
type litScan struct {
	set *litSet
	hay []byte
	// next[i] is where literal i next occurs at or after the position it
	// was last looked for from; len(hay) if it does not; -1 if not
	// looked for yet.
	next []int
}

// reset starts a scan of hay, reusing the scan's memory.
func (sc *litScan) reset(set *litSet, hay []byte) {
	sc.set, sc.hay = set, hay
	if cap(sc.next) < len(set.finders) {
		sc.next = make([]int, len(set.finders))
	}
	sc.next = sc.next[:len(set.finders)]
	for i := range sc.next {
		sc.next[i] = -1
	}
}

// find returns the start and end of the leftmost occurrence of a literal
// at or after from (the longest literal there, if several start at the
// same place), or -1, -1. Successive calls must not go back: from is at
// least the previous call's from.
func (sc *litScan) find(from int) (start, end int) {
	start, end = len(sc.hay), -1
	for i := range sc.set.finders {
		f := &sc.set.finders[i]
		if sc.next[i] < from {
			sc.next[i] = len(sc.hay)
			if from < len(sc.hay) {
				if j := f.index(sc.hay[from:]); j >= 0 {
					sc.next[i] = from + j
				}
			}
		}
		at := sc.next[i]
		if at < len(sc.hay) && (at < start || at == start && at+len(f.lit) > end) {
			start, end = at, at+len(f.lit)
		}
	}
	if end < 0 {
		return -1, -1
	}
	return start, end
}
