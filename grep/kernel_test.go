package grep

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/pairindex"
)

// The scan kernel against Go's regexp, the semantics it must keep.
//
// For a needle searched as a fixed string (regexp.QuoteMeta), with and
// without (?i), checkKernel asserts:
//   - lines: Matcher.Scan reports exactly the lines on which the regexp
//     finds a match, in order (always: this is what Grep relies on);
//   - positions: when the needle is its own literal set (Matcher.litOnly:
//     its case variants spelled out, no regexp run), the kernel's
//     successive leftmost occurrences, each search starting where the
//     last occurrence ended, are exactly regexp.FindAllIndex's
//     non-overlapping leftmost matches;
//   - each literal's finder, searching from the start and from just
//     after each occurrence, returns the occurrence a plain byte-by-byte
//     search under ASCII case folding finds (so all of them, overlapping
//     ones included).
//
// Haystacks mix ASCII, letters that fold outside ASCII (k, K, U+212A
// Kelvin sign; s, S, U+017F long s), other cased and uncased non-ASCII
// letters, U+FFFD, invalid UTF-8 (stray, truncated sequences) and empty
// lines.

// kernelStats counts what checkKernel compared, so a test can tell that
// it did not pass by checking nothing.
type kernelStats struct {
	cases, litOnly, matches, lines int
}

// regexpLines returns the [start, end) of each line of hay (without its
// newline) re matches on its own: what Matcher.Scan must report.
func regexpLines(re *regexp.Regexp, hay []byte) (lines [][2]int) {
	for s := 0; s < len(hay); {
		e := lineEnd(hay, s)
		if re.Match(hay[s:e]) {
			lines = append(lines, [2]int{s, e})
		}
		s = e + 1
	}
	return lines
}

// scanLines returns the lines m.Scan reports in hay.
func scanLines(m *Matcher, hay []byte) (lines [][2]int) {
	var sc Scanner
	m.Scan(&sc, hay, func(s, e int) bool { lines = append(lines, [2]int{s, e}); return true })
	return lines
}

func checkKernel(t *testing.T, needle string, hay []byte, fold, oneAnchor bool, st *kernelStats) {
	t.Helper()
	prefix := ""
	if fold {
		prefix = "(?i)"
	}
	re, err := regexp.Compile(prefix + regexp.QuoteMeta(needle))
	if err != nil {
		return // not a pattern (invalid UTF-8)
	}
	m, cerr := CompileMatcher(needle, MatchOptions{FixedStrings: true, CaseSensitive: !fold, oneAnchor: oneAnchor})
	if cerr != nil {
		if strings.Contains(needle, "\n") {
			return // a line break needs multiline mode
		}
		t.Fatalf("CompileMatcher(%q): %v", needle, cerr)
	}
	st.cases++
	what := fmt.Sprintf("needle %q fold=%v hay %q", needle, fold, hay)

	// Lines.
	want, got := regexpLines(re, hay), scanLines(m, hay)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: lines %v, regexp %v", what, got, want)
	}
	st.lines += len(want)

	if m.lits == nil {
		return
	}
	// Each finder against a plain search.
	for i := range m.lits.finders {
		f := &m.lits.finders[i]
		// From the start, then from just after each occurrence found.
		for from := 0; from <= len(hay); {
			g, w := f.index(hay[from:]), naiveIndex(hay[from:], f.lit, f.fold)
			if g != w {
				t.Fatalf("%s: literal %q from %d: index %d, want %d", what, f.lit, from, g, w)
			}
			if g < 0 {
				break
			}
			from += g + 1
		}
	}
	// Positions.
	if !m.litOnly {
		return
	}
	st.litOnly++
	wantPos := re.FindAllIndex(hay, -1)
	var gotPos [][]int
	var ls litScan
	ls.reset(m.lits, hay)
	for from := 0; ; {
		s, e := ls.find(from)
		if s < 0 {
			break
		}
		gotPos = append(gotPos, []int{s, e})
		from = e
	}
	if !slices.EqualFunc(gotPos, wantPos, slices.Equal) {
		t.Fatalf("%s: occurrences %v, regexp %v", what, gotPos, wantPos)
	}
	st.matches += len(wantPos)
}

// naiveIndex is the first occurrence of lit in hay, byte by byte, under
// ASCII case folding if fold (lit is lowercase then).
func naiveIndex(hay, lit []byte, fold bool) int {
	for i := 0; i+len(lit) <= len(hay); i++ {
		ok := true
		for j, c := range lit {
			h := hay[i+j]
			if fold {
				h = lowerTable[h]
			}
			if h != c {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// kernelCases are fixed cases: matches at the start and end of the
// buffer, overlapping occurrences, a needle longer than the buffer, empty
// lines, the non-ASCII folds of k and s, U+FFFD against invalid UTF-8.
var kernelCases = []struct{ needle, hay string }{
	{"abc", "abc"},
	{"abc", "abcabc"},
	{"abc", "xabc\nabcx\n\nabc"},
	{"aa", "aaa\naaaa\n"},
	{"aba", "ababa"},
	{"abcd", "abc"},
	{"x", ""},
	{"x", "\n\n\nx\n\n"},
	{"ErrShortWrite", "io.ErrShortWrite\nERRSHORTWRITE errſhortwrite\n"},
	{"kelvin", "\u212aelvin Kelvin KELVIN kelvin"},
	{"\u212a", "k K \u212a"},
	{"ss", "ſſ sſ Sſ ſs SS"},
	{"\u017f", "s S \u017f \xc5"},
	{"sk", "ſ\u212a s\xe2\x84\xaa S\xe2\x84"},
	{"é", "É é e\u0301"},
	{"\uFFFD", "a\xffb\n\xe2\x84c\n\uFFFD\n"},
	{"x\uFFFDy", "x\xffy x\uFFFDy x\xe2\x84y"},
	{"_x", "a_X _x\n"},
	{"kksskkss", "KKSSKKSS\n\u212a\u212a\u017f\u017fkkss\n"},
	{"(", "f(x)\n(\n"},
	{"WRITE", "write Write wRiTe\n"},
}

// eachAnchoring runs test with literals found by two anchors at once
// (when this machine can) and by one, in parallel.
func eachAnchoring(t *testing.T, test func(t *testing.T, oneAnchor bool)) {
	t.Parallel()
	for _, pair := range []bool{true, false} {
		if pair && !pairindex.Fast {
			continue
		}
		t.Run(map[bool]string{true: "pair", false: "one"}[pair], func(t *testing.T) {
			t.Parallel()
			test(t, !pair)
		})
	}
}

func TestKernelCases(t *testing.T) { eachAnchoring(t, testKernelCases) }

func testKernelCases(t *testing.T, oneAnchor bool) {
	var st kernelStats
	for _, c := range kernelCases {
		for _, fold := range []bool{false, true} {
			checkKernel(t, c.needle, []byte(c.hay), fold, oneAnchor, &st)
		}
	}
	if st.cases != 2*len(kernelCases) || st.litOnly == 0 || st.matches == 0 || st.lines == 0 {
		t.Fatalf("checked too little: %+v", st)
	}
}

// kernelPieces are what random needles and haystacks are made of.
var kernelPieces = []string{
	"a", "A", "b", "e", "E", "k", "K", "\u212a", "s", "S", "\u017f", "x", "X",
	"_", "(", " ", "é", "É", "σ", "Σ", "ς", "\uFFFD", "\u00b5", "\u03bc",
}

// kernelHayPieces add what only a haystack holds: line breaks, invalid
// and truncated UTF-8.
var kernelHayPieces = append([]string{"\n", "\n\n", "\xff", "\xe2\x84", "\xc5", "\xbf"}, kernelPieces...)

func randomText(r *rand.Rand, pieces []string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestKernelRandom compares the kernel with the regexp on random needles
// and haystacks, the haystacks often built around copies of the needle
// in other cases so that there are matches to find.
func TestKernelRandom(t *testing.T) { eachAnchoring(t, testKernelRandom) }

func testKernelRandom(t *testing.T, oneAnchor bool) {
	r := rand.New(rand.NewPCG(1, 2))
	var st kernelStats
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		needle := randomText(r, kernelPieces, 1+r.IntN(5))
		// One haystack in three is long enough for the vector search
		// (32 places and more) to run several steps.
		parts := r.IntN(6)
		if r.IntN(3) == 0 {
			parts = 10 + r.IntN(30)
		}
		var hay strings.Builder
		for range parts {
			hay.WriteString(randomText(r, kernelHayPieces, r.IntN(6)))
			if r.IntN(2) == 0 {
				hay.WriteString(recase(r, needle))
			}
		}
		for _, fold := range []bool{false, true} {
			checkKernel(t, needle, []byte(hay.String()), fold, oneAnchor, &st)
		}
	}
	if st.cases != 2*n || st.litOnly < n || st.matches < n || st.lines < n {
		t.Fatalf("checked too little: %+v", st)
	}
}

// recase returns s with each rune swapped, at random, for another member
// of its case-folding orbit.
func recase(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		orbit := []rune{c}
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		b.WriteRune(orbit[r.IntN(len(orbit))])
	}
	return b.String()
}

// FuzzKernel: the kernel agrees with the regexp (see checkKernel) on any
// needle (valid UTF-8, no line break: what a fixed-string Grep pattern
// can be) and any haystack, with and without case folding.
//
//	go test -run XXX -fuzz FuzzKernel -fuzztime 60s ./query
func FuzzKernel(f *testing.F) {
	for _, c := range kernelCases {
		f.Add(c.needle, []byte(c.hay), false)
		f.Add(c.needle, []byte(c.hay), true)
	}
	f.Fuzz(func(t *testing.T, needle string, hay []byte, fold bool) {
		if needle == "" || !utf8.ValidString(needle) || strings.Contains(needle, "\n") {
			return
		}
		if len(needle) > 256 || len(hay) > 16<<10 {
			return // long inputs only slow the fuzzer down (compiling, checking)
		}
		var st kernelStats
		checkKernel(t, needle, hay, fold, false, &st)
		if st.cases != 1 {
			t.Fatalf("needle %q: not checked", needle)
		}
		// The same haystack with the needle appended in another case:
		// there is at least one match.
		r := rand.New(rand.NewPCG(uint64(len(hay)), uint64(len(needle))))
		hay2 := append(bytes.Clone(hay), recase(r, needle)...)
		checkKernel(t, needle, hay2, fold, false, &st)
		if fold && st.lines == 0 || !fold && bytes.HasSuffix(hay2, []byte(needle)) && st.lines == 0 {
			t.Fatalf("needle %q fold=%v hay %q: no line matched", needle, fold, hay2)
		}
	})
}
