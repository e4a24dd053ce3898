package grep

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
)

// litStrings returns a litSet's literals.
func litStrings(s *litSet) []string {
	var out []string
	for _, f := range s.finders {
		out = append(out, string(f.lit))
	}
	return out
}

// TestRequiredLiterals: the literals the prefilter looks for, and the
// further sets a line must hold before the regexp runs on it.
func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern string
		fold    bool
		lits    []string
		also    [][]string
	}{
		{`func \w+Handler\(`, true, []string{"handler("}, [][]string{{"func "}}},
		{`func \w+Handler\(`, false, []string{"Handler("}, [][]string{{"func "}}},
		// The longest set first; the empty piece before \w+ is no set.
		{`\w+ab.*abcd.+abc`, false, []string{"abcd"}, [][]string{{"abc"}, {"ab"}}},
		// A repetition of at least one keeps what its body requires
		// (x{2,} is xx+: each set once).
		// (A single byte is not worth a look.)
		{`(xyz.*uvwxy)+q`, false, []string{"uvwxy"}, [][]string{{"xyz"}}},
		{`x(abc.*def){2,}y`, false, []string{"abc"}, [][]string{{"def"}}},
		// Beside an alternation, each branch's sets are not required.
		{`(aaaa.*bbb|cccc.*ddd)\d+eeeee`, false, []string{"eeeee"}, [][]string{{"aaaa", "cccc"}}},
		// Optional parts require nothing.
		{`(abcdef.*ghi)?jk`, false, []string{"jk"}, nil},
		{`(abcdef.*ghi)*jk`, false, []string{"jk"}, nil},
		// Exact answers need no check beside the literals.
		{`foo(bar|baz)`, false, []string{"foobar", "foobaz"}, nil},
		// A folded literal with too many letters folding outside ASCII:
		// its longest safe piece, then the others.
		{`kkkkkabcdkkxyzkk.*tt`, true, []string{"abcd"}, [][]string{{"xyz"}, {"tt"}}},
		// A set from a folded piece inside a case-sensitive pattern is
		// compared under folding too.
		{`Abc\d+(?i:xyz\s+defg)+`, false, []string{"defg"}, [][]string{{"xyz"}, {"abc"}}},
		// At most maxAlso further sets.
		{`a1.b2.c3.d4.e5.f6.ggggg`, false, []string{"ggggg"}, [][]string{{"a1"}, {"b2"}, {"c3"}, {"d4"}}},
	}
	for _, c := range cases {
		m, err := CompileMatcher(c.pattern, MatchOptions{CaseSensitive: !c.fold})
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if m.lits == nil {
			t.Errorf("%q fold=%v: no literals", c.pattern, c.fold)
			continue
		}
		var also [][]string
		for _, s := range m.also {
			also = append(also, litStrings(s))
		}
		if got := litStrings(m.lits); !slices.Equal(got, c.lits) || !slices.EqualFunc(also, c.also, slices.Equal) {
			t.Errorf("%q fold=%v: literals %q also %q, want %q also %q", c.pattern, c.fold, got, also, c.lits, c.also)
		}
	}
	// The folded set from a case-sensitive pattern's folded part matches
	// under folding.
	m, _ := CompileMatcher(`Abc\d+(?i:xyz\s+defg)+`, MatchOptions{CaseSensitive: true})
	if !m.holdsAlso([]byte("abc XYZ")) {
		t.Errorf("the further sets are not compared under folding")
	}
}

// TestScanFurtherSetsAgainstRegexp: patterns of several required pieces
// report exactly the lines the regexp matches, on text whose lines hold
// the pieces together, apart, and in other cases; and the further sets
// turn lines away before the regexp.
func TestScanFurtherSetsAgainstRegexp(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"func ", "Handler(", "kS", "\u212a", "ab", "x_y", "é", "\uFFFD"}
	joins := []string{`\w+`, `.*`, `\s*`, `[a-z]?`, `.+`, `\W`}
	filler := []string{"a", "Z", " ", "_", "(", "k", "\u017f", "\xff", "\n", "\n", "zz"}
	n := 1500
	if testing.Short() || testtree.RaceEnabled {
		n = 200
	}
	turnedAway, matched := 0, 0
	for range n {
		var pat strings.Builder
		var used []string
		for i := range 2 + r.IntN(2) {
			if i > 0 {
				pat.WriteString(joins[r.IntN(len(joins))])
			}
			p := pieces[r.IntN(len(pieces))]
			used = append(used, p)
			pat.WriteString(regexp.QuoteMeta(p))
		}
		var hay strings.Builder
		for range 1 + r.IntN(12) {
			hay.WriteString(randomText(r, filler, r.IntN(4)))
			p := used[r.IntN(len(used))]
			if r.IntN(2) == 0 {
				p = recase(r, p)
			}
			hay.WriteString(p)
		}
		for _, fold := range []bool{false, true} {
			prefix := ""
			if fold {
				prefix = "(?i)"
			}
			re := regexp.MustCompile(prefix + pat.String())
			m, err := CompileMatcher(pat.String(), MatchOptions{CaseSensitive: !fold})
			if err != nil {
				t.Fatalf("%q: %v", pat.String(), err)
			}
			b := []byte(hay.String())
			want, got := regexpLines(re, b), scanLines(m, b)
			if !slices.Equal(got, want) {
				t.Fatalf("%q fold=%v hay %q: lines %v, regexp %v", pat.String(), fold, b, got, want)
			}
			matched += len(want)
			for s := 0; s < len(b); {
				e := lineEnd(b, s)
				if m.lits != nil && m.lits.contains(b[s:e]) && !m.holdsAlso(b[s:e]) {
					turnedAway++
				}
				s = e + 1
			}
		}
	}
	if turnedAway < n/2 || matched < n/4 {
		t.Fatalf("checked too little: %d lines turned away, %d matched", turnedAway, matched)
	}
}

// FuzzScanPrefilter: for any pattern, the lines Matcher.Scan reports are
// exactly those on which its own regexp, run on every line, matches: the
// prefilter (the literal, the further sets, the class run) drops no line
// and adds none.
//
//	go test -run XXX -fuzz FuzzScanPrefilter -fuzztime 60s ./query
func FuzzScanPrefilter(f *testing.F) {
	for _, c := range []struct{ pat, hay string }{
		{`func \w+Handler\(`, "func xHandler(\nfunc Handler(\nx.Handler(\n FUNC aHANDLER( "},
		{`needle.*kelvin`, "needle \u212aELVIN\nkelvin needle\n"},
		{`kkkkkabcdkkxyzkk.*tt`, "KKKKKABCDKKXYZKKtt\n\u212akkkkabcdkkxyzkk tt"},
		{`(ab.*cd)+ef`, "abcdef\nabxcdyabcdef\nef cd ab"},
		{`\w+\d{4}\w*`, "abc1234\n12 34\n"},
		{`a\x{FFFD}b.*cd`, "a\xffb cd\na\ufffdbcd"},
	} {
		f.Add(c.pat, []byte(c.hay), false)
		f.Add(c.pat, []byte(c.hay), true)
	}
	f.Fuzz(func(t *testing.T, pat string, hay []byte, fold bool) {
		if len(pat) > 100 || len(hay) > 4<<10 {
			return
		}
		m, err := CompileMatcher(pat, MatchOptions{CaseSensitive: !fold})
		if err != nil {
			return
		}
		if want, got := regexpLines(m.re, hay), scanLines(m, hay); !slices.Equal(got, want) {
			t.Fatalf("%q fold=%v hay %q: lines %v, regexp %v", pat, fold, hay, got, want)
		}
	})
}

// lastLineBreak is bytes.LastIndexByte for "\n", at every length and
// position around its blocks' bounds.
func TestLastLineBreak(t *testing.T) {
	t.Parallel()
	for n := range 1100 {
		b := bytes.Repeat([]byte{'x'}, n)
		if got := lastLineBreak(b); got != -1 {
			t.Fatalf("%d bytes, no line break: %d", n, got)
		}
		for _, at := range []int{0, 1, n / 3, n - 257, n - 256, n - 255, n - 2, n - 1} {
			if at < 0 || at >= n {
				continue
			}
			c := bytes.Clone(b)
			c[at] = '\n'
			if n > 600 {
				c[at/2] = '\n' // an earlier one too
			}
			if got, want := lastLineBreak(c), bytes.LastIndexByte(c, '\n'); got != want {
				t.Fatalf("%d bytes, line breaks at %d (and %d): %d, want %d", n, at, at/2, got, want)
			}
		}
	}
}
