package index

import (
	"regexp/syntax"
	"testing"

	csindex "github.com/google/codesearch/index"
)

// oneLiteral tells a query of one literal's trigrams (in either case)
// from one of two literals or more, of alternatives, or of none.
func TestOneLiteral(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    bool
	}{
		{`func main`, true},
		{`(?i)func main`, true},
		{`xyz`, true},
		{`aaaaaa`, true}, // one trigram, repeated
		{`EXPORT_SYMBOL.*kmalloc`, false},
		{`func \w+Handler\(`, false},
		{`kmalloc\(\w+, GFP_\w+\)`, false},
		{`abcd|wxyz`, false},
		{`needle\d`, false}, // an OR of ten trigrams at its end
		{`\w+`, false},
		{`ab`, false}, // no trigram
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		q := normalizeQuery(csindex.RegexpQuery(re))
		if got := oneLiteral(q); got != c.want {
			t.Errorf("%s (%s): oneLiteral = %v, want %v", c.pattern, q, got, c.want)
		}
	}
}
