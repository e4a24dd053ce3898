package query

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"

	csindex "github.com/google/codesearch/index"
)

// trigramQuery is codesearch's trigram query of re (the matcher's
// syntax), planned as if each U+FFFD were any character: the regexp
// matches U+FFFD on every byte of invalid UTF-8 too ("\xff", a truncated
// sequence), while codesearch would ask for its UTF-8 encoding (EF BF
// BD) and drop a file holding a match.
func trigramQuery(re *syntax.Regexp) *csindex.Query {
	return csindex.RegexpQuery(noReplacement(re))
}

// noReplacement returns re with each U+FFFD in a literal, and each class
// holding U+FFFD, replaced by any character but "\n"; re itself when it
// holds none (re is not modified).
func noReplacement(re *syntax.Regexp) *syntax.Regexp {
	anyChar := func() *syntax.Regexp { return &syntax.Regexp{Op: syntax.OpAnyCharNotNL} }
	switch re.Op {
	case syntax.OpLiteral:
		if !slices.Contains(re.Rune, utf8.RuneError) {
			return re
		}
		cat := &syntax.Regexp{Op: syntax.OpConcat}
		start := 0
		for i := 0; i <= len(re.Rune); i++ {
			if i < len(re.Rune) && re.Rune[i] != utf8.RuneError {
				continue
			}
			if i > start {
				cat.Sub = append(cat.Sub, &syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: slices.Clone(re.Rune[start:i])})
			}
			if i < len(re.Rune) {
				cat.Sub = append(cat.Sub, anyChar())
			}
			start = i + 1
		}
		return cat
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= utf8.RuneError && utf8.RuneError <= re.Rune[i+1] {
				return anyChar()
			}
		}
		return re
	}
	var subs []*syntax.Regexp
	for i, s := range re.Sub {
		if n := noReplacement(s); n != s {
			if subs == nil {
				subs = slices.Clone(re.Sub)
			}
			subs[i] = n
		}
	}
	if subs == nil {
		return re
	}
	c := *re
	c.Sub = subs
	return &c
}
