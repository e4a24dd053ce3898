package glob

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// The fast segment matcher must agree with doublestar on every pattern it
// accepts. Patterns and paths are drawn from small alphabets so that
// matches are frequent.
func TestFastGlobAgreesWithDoublestar(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	segPats := []string{"**", "*", "a", "b", "*.go", "a*", "*a", "[ab]", "?", "{a,b}", "a.go", ".x", "*_test.go", "**",
		"a*.go", "?a*", "*ab*", "x*_test.go", "ab?.go", "a*b?", "[ab]b*.go"}
	names := []string{"a", "b", "a.go", "ab", "ba", "x_test.go", ".x", "c", "aa.go", "b.go", "ab.go", "xab", "abc.go", "bab.go"}
	checked := 0
	for range 200000 {
		n := 1 + r.IntN(4)
		ps := make([]string, n)
		for i := range ps {
			ps[i] = segPats[r.IntN(len(segPats))]
		}
		pat := strings.Join(ps, "/")
		fast := compileSegments(ps)
		if fast == nil {
			continue
		}
		m := 1 + r.IntN(4)
		cs := make([]string, m)
		for i := range cs {
			cs[i] = names[r.IntN(len(names))]
		}
		path := strings.Join(cs, "/")
		want := doublestar.MatchUnvalidated(pat, path)
		if got := matchSegments(fast, path); got != want {
			t.Fatalf("pattern %q path %q: fast %v, doublestar %v", pat, path, got, want)
		}
		g, err := Compile(pat, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Match(path); got != want { // with the literal prefilter
			t.Fatalf("pattern %q path %q: Match %v, doublestar %v", pat, path, got, want)
		}
		checked++
	}
	if checked < 10000 {
		t.Fatalf("only %d cases checked", checked)
	}
}

// matchKey changes only non-ASCII bytes, into non-ASCII runes, so an
// ASCII string is a substring or suffix of a path exactly when it is one
// of the path's matchKey form (Pattern.rawNeeds relies on it).
func TestMatchKeyKeepsASCII(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", ".go", "/", "\xff", "\xc3", "é", "\U0010FF7F", "\U0010FFFF", "\U0010FF80", "go", "\x80"}
	for range 50000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		raw := b.String()
		key := matchKey(raw)
		for _, n := range []string{".go", "a.go", "go", "a/", "/a", "aa", "o/"} {
			if strings.Contains(raw, n) != strings.Contains(key, n) || strings.HasSuffix(raw, n) != strings.HasSuffix(key, n) {
				t.Fatalf("%q (key %q) and %q disagree", raw, key, n)
			}
		}
	}
}
