package query

import (
	"strings"
	"testing"

	"github.com/indexd/indexd/grep"

	"github.com/indexd/indexd/tool"
)

// U+FFFD in a pattern matches each byte of invalid UTF-8 in Go's
// regexp, but codesearch's trigram query asks for its UTF-8 encoding
// (EF BF BD): the index drops a file the walk finds.
func TestReplacementCharFound(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{"a.txt": "x\xffabc\n", "b.txt": "nothing\n"})
	walk, idx := buildTools(t, root)
	diffEngines(t, walk, idx, tool.Grep, jsonArgs("pattern", `\x{FFFD}abc`, "output_mode", "files_with_matches"))
	diffEngines(t, walk, idx, tool.Grep, jsonArgs("pattern", "\ufffdabc", "fixed_strings", true, "output_mode", "files_with_matches"))
}

// The rewrite leaves the matcher's syntax alone and turns U+FFFD into
// any character in literals (also case-folded ones) and classes.
func TestNoReplacement(t *testing.T) {
	for _, c := range []struct{ pat, want string }{
		{`\x{FFFD}abc`, `(?-s:.abc)`},
		{`ab\x{FFFD}\x{FFFD}cd`, `(?-s:ab..cd)`},
		{`(?i)ab\x{FFFD}`, `(?i-s:AB.)`},
		{`x[\x{FFF0}-\x{FFFF}]y`, `(?-s:x.y)`},
		{`(abc|d\x{FFFD})+`, `(?-s:(abc|d.)+)`},
		{`plain`, `plain`},
	} {
		m, err := grep.CompileMatcher(c.pat, grep.MatchOptions{CaseSensitive: !strings.HasPrefix(c.pat, "(?i)")})
		if err != nil {
			t.Fatal(err)
		}
		before := m.Syntax().String()
		got := noReplacement(m.Syntax()).String()
		if m.Syntax().String() != before {
			t.Errorf("%q: the matcher's syntax changed", c.pat)
		}
		if got != c.want {
			t.Errorf("%q: planned as %q, want %q", c.pat, got, c.want)
		}
	}
}
