package grep

import (
	"math"
	"regexp/syntax"
	"unicode"
)

// A class run is the prefilter of a pattern that requires no literal but
// does require a run of bytes of one ASCII class: every match of
// \w+\d{4}\w* holds four digits in a row, every match of [A-Z]{3,} three
// capitals. Matcher finds such runs with a byte loop that looks at one
// byte in n while none is in the class (n the run's length), and runs the
// regexp only on the lines holding one, instead of running it over every
// line. The run is read off the parsed pattern (requiredRun); it is kept
// only when source code makes it rare enough to pay (maxRunOdds).
//
// Soundness: the class holds ASCII bytes only, and every piece of the
// pattern taken into the run matches only bytes of the class (a class or
// literal whose case folding reaches outside ASCII, such as (?i)k with the
// Kelvin sign, or anything else, ends the run), so a match holds at least
// n consecutive bytes of the class. A line break is never part of a
// line-mode match, so the run lies within the line the regexp is given.
type classRun struct {
	in [256]bool // the class
	n  int       // every match holds at least n consecutive bytes in it
}

// maxRunOdds bounds how often, by the source-code byte frequencies, a
// run may start at a given byte for the prefilter to be worth it: at
// 1/256 about one line in seven passes.
const maxRunOdds = 1.0 / 256

// maxRunPieces bounds the pieces of a pattern requiredRun reads, and so
// its cost (cubic in them) on a query's path.
const maxRunPieces = 24

// ascii is a set of ASCII bytes.
type ascii [2]uint64

func (s *ascii) add(b byte)         { s[b>>6] |= 1 << (b & 63) }
func (s ascii) has(b byte) bool     { return b < 128 && s[b>>6]&(1<<(b&63)) != 0 }
func (s ascii) union(t ascii) ascii { return ascii{s[0] | t[0], s[1] | t[1]} }
func (s ascii) within(t ascii) bool { return s[0]&^t[0] == 0 && s[1]&^t[1] == 0 }
func (s ascii) odds() (p float64) {
	for b := range 128 {
		if s.has(byte(b)) {
			p += float64(byteFreq[b])
		}
	}
	return p / 1e6
}

// runPiece is one step of a pattern read as a sequence: bytes of a set,
// at least min of them in a row (any number, up to the repetition's
// bound), or, with stop, anything (it ends every run). Zero-width
// assertions are left out of the sequence: they match no byte.
type runPiece struct {
	set  ascii
	min  int
	stop bool
}

// requiredRun returns the rarest class run every match of re holds, or
// nil when it has none rare enough (re is the Matcher's parsed,
// rewritten and simplified pattern).
func requiredRun(re *syntax.Regexp) *classRun {
	pieces := runPieces(re, nil)
	if len(pieces) > maxRunPieces {
		pieces = pieces[:maxRunPieces] // a prefix's runs are runs of the whole
	}
	best, bestOdds := (*classRun)(nil), maxRunOdds
	// Each class is the union of the sets of a span of pieces; its run is
	// the longest sum of minimums over consecutive pieces within it.
	for i := range pieces {
		var class ascii
		for j := i; j < len(pieces) && !pieces[j].stop; j++ {
			class = class.union(pieces[j].set)
			n := longestRun(pieces, class)
			if n < 2 {
				continue
			}
			if odds := math.Pow(class.odds(), float64(n)); odds < bestOdds {
				best, bestOdds = &classRun{n: n}, odds
				for b := range 128 {
					best.in[b] = class.has(byte(b))
				}
			}
		}
	}
	return best
}

// longestRun returns the largest sum of minimums of consecutive pieces
// whose sets lie within class.
func longestRun(pieces []runPiece, class ascii) int {
	best, n := 0, 0
	for _, p := range pieces {
		if p.stop || !p.set.within(class) {
			n = 0
			continue
		}
		n += p.min
		best = max(best, n)
	}
	return best
}

// runPieces appends re read as a sequence of pieces to dst.
func runPieces(re *syntax.Regexp, dst []runPiece) []runPiece {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return dst // zero-width
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			dst = runPieces(sub, dst)
		}
		return dst
	case syntax.OpCapture:
		return runPieces(re.Sub[0], dst)
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			set, ok := runeSet(r, re.Flags&syntax.FoldCase != 0)
			dst = append(dst, runPiece{set: set, min: 1, stop: !ok})
		}
		return dst
	case syntax.OpCharClass:
		set, ok := classSet(re.Rune)
		return append(dst, runPiece{set: set, min: 1, stop: !ok})
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		least := 0 // how many times the repetition's one piece comes at least
		switch re.Op {
		case syntax.OpPlus:
			least = 1
		case syntax.OpRepeat:
			least = re.Min
		}
		if one := runPieces(re.Sub[0], nil); len(one) == 1 && !one[0].stop {
			return append(dst, runPiece{set: one[0].set, min: least * one[0].min})
		}
	}
	return append(dst, runPiece{stop: true}) // anything else
}

// runeSet is the set of bytes rune r matches as a literal (with its
// case variants when fold is set); ok is false unless they are all ASCII.
func runeSet(r rune, fold bool) (s ascii, ok bool) {
	if r >= utf8RuneSelf {
		return s, false
	}
	s.add(byte(r))
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8RuneSelf {
				return s, false
			}
			s.add(byte(f))
		}
	}
	return s, true
}

// classSet is the set of bytes a character class (its ranges, as
// syntax.Regexp.Rune holds them: case folding already applied) matches;
// ok is false unless they are all ASCII.
func classSet(ranges []rune) (s ascii, ok bool) {
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= utf8RuneSelf {
			return s, false
		}
		for r := lo; r <= hi; r++ {
			s.add(byte(r))
		}
	}
	return s, len(ranges) > 0
}

// utf8RuneSelf is the first rune that is not a single byte in UTF-8.
const utf8RuneSelf = 0x80

// find returns the start of the first run of at least n bytes of the
// class in buf[from:], or -1. While it sees no byte of the class it
// looks at one byte in n: a run of n must cover one of them.
func (c *classRun) find(buf []byte, from int) int {
	n := c.n
	for i := from + n - 1; i < len(buf); {
		if !c.in[buf[i]] {
			i += n
			continue
		}
		// buf[i] is in the class; the byte n before it (or from's
		// predecessor) is not, or was not looked at because a run
		// ended there: walk back to the run's start, then forward.
		s := i
		for s > from && c.in[buf[s-1]] {
			s--
		}
		e := i + 1
		for e < len(buf) && e-s < n && c.in[buf[e]] {
			e++
		}
		if e-s >= n {
			return s
		}
		i = e + n // buf[e] is not in the class, or e is the end
	}
	return -1
}

// contains reports whether b holds a run.
func (c *classRun) contains(b []byte) bool { return c.find(b, 0) >= 0 }
