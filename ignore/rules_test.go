package ignore

import (
	"strings"
	"testing"
)

// The semantics below are git's (gitignore(5), wildmatch with
// WM_PATHNAME); TestRulesAgainstGit replays every case of this table
// through git itself.

const (
	F = false // a file
	D = true  // a directory
)

type ruleCase struct {
	rules string // the ignore file, lines separated by "\n"
	path  string // relative to the file's directory
	isDir bool
	want  Result
}

var ruleCases = []ruleCase{
	// Comments, blank lines, escapes.
	{"# foo\n", "# foo", F, None},
	{"#foo\n", "#foo", F, None},
	{`\#foo`, "#foo", F, Ignore},
	{"\n\n\nfoo\n\n", "foo", F, Ignore},
	{"  #foo\n", "  #foo", F, Ignore}, // "#" starts a comment only in column 1
	{`\!foo`, "!foo", F, Ignore},
	{`\!foo`, "foo", F, None},
	{"a#b", "a#b", F, Ignore},

	// Trailing spaces: trimmed unless escaped; "\\" escapes itself.
	{"foo   ", "foo", F, Ignore},
	{"foo   ", "foo   ", F, None},
	{`foo\ `, "foo ", F, Ignore},
	{`foo\ `, "foo", F, None},
	{`foo\ \ `, "foo  ", F, Ignore},
	{`foo\\  `, `foo\`, F, Ignore},
	{"foo\t", "foo\t", F, Ignore}, // only spaces are trimmed
	{" foo", " foo", F, Ignore},   // leading spaces are kept
	{"foo\r\n", "foo", F, Ignore}, // CRLF line ends
	{"foo\r", "foo", F, Ignore},

	// A trailing lone backslash never matches.
	{`foo\`, `foo\`, F, None},
	{`foo\`, `foo`, F, None},

	// Negation: the last matching line wins.
	{"*.log\n!keep.log", "keep.log", F, Whitelist},
	{"*.log\n!keep.log", "other.log", F, Ignore},
	{"!keep.log\n*.log", "keep.log", F, Ignore},
	{"!foo", "foo", F, Whitelist},
	{"!foo", "bar", F, None},
	{"!", "!", F, None},
	{"foo\n!foo/", "foo", D, Whitelist},
	{"foo\n!foo/", "foo", F, Ignore},

	// Unanchored names match at any depth, files and directories.
	{"foo", "foo", F, Ignore},
	{"foo", "foo", D, Ignore},
	{"foo", "a/foo", F, Ignore},
	{"foo", "a/b/foo", D, Ignore},
	{"foo", "foobar", F, None},
	{"foo", "a/foo/bar", F, None}, // rules match the path itself, never parents
	{"*.log", "a/b/x.log", F, Ignore},
	{"*.log", "x.log/y", F, None},
	{"*", "anything", F, Ignore},
	{"*", "a/b", D, Ignore},

	// A leading "/" anchors to the file's directory.
	{"/foo", "foo", F, Ignore},
	{"/foo", "a/foo", F, None},
	{"/*.c", "x.c", F, Ignore},
	{"/*.c", "a/x.c", F, None},
	{"//foo", "foo", F, None},

	// A slash in the middle anchors too.
	{"a/b", "a/b", F, Ignore},
	{"a/b", "x/a/b", F, None},
	{"a/*.c", "a/x.c", F, Ignore},
	{"a/*.c", "a/b/x.c", F, None},
	{"doc/frotz/", "doc/frotz", D, Ignore},
	{"doc/frotz/", "a/doc/frotz", D, None},

	// A trailing "/" matches directories only.
	{"foo/", "foo", D, Ignore},
	{"foo/", "foo", F, None},
	{"foo/", "a/foo", D, Ignore}, // and does not anchor
	{"/foo/", "a/foo", D, None},
	{"foo//", "foo", D, None},

	// "**".
	{"foo/**", "foo", D, None}, // only what is inside
	{"foo/**", "foo/x", F, Ignore},
	{"foo/**", "foo/x/y", F, Ignore},
	{"foo/**", "a/foo/x", F, None},
	{"foo/**/", "foo/x", D, Ignore},
	{"foo/**/", "foo/x", F, None},
	{"**/foo", "foo", F, Ignore},
	{"**/foo", "a/b/foo", D, Ignore},
	{"**/foo/bar", "foo/bar", F, Ignore},
	{"**/foo/bar", "x/foo/bar", F, Ignore},
	{"**/foo/bar", "x/foo/y/bar", F, None},
	{"a/**/b", "a/b", F, Ignore},
	{"a/**/b", "a/x/b", F, Ignore},
	{"a/**/b", "a/x/y/b", F, Ignore},
	{"a/**/b", "a/xb", F, None},
	{"a/**/b", "x/a/b", F, None},
	{"**", "a/b/c", F, Ignore},
	{"/**", "a", F, Ignore},
	{"a**b", "axyb", F, Ignore}, // "**" not between slashes is "*"
	{"a**b", "ax/yb", F, None},
	{"a/**b", "a/xb", F, Ignore},
	{"a/**b", "a/x/b", F, None},
	{"***/x", "a/b/x", F, Ignore}, // three stars read as two
	{"***/x", "x", F, Ignore},
	{"a/***", "a/b/c", F, Ignore},
	{"a***b", "axb", F, Ignore},
	{`\**`, "*x", F, Ignore},
	{`\**`, "x", F, None},

	// "?" and classes.
	{"?.c", "a.c", F, Ignore},
	{"?.c", "ab.c", F, None},
	{"a?b", "a/b", F, None}, // "?" never matches "/"
	{"x/a?b", "x/a/b", F, None},
	{"[abc].c", "b.c", F, Ignore},
	{"[abc].c", "d.c", F, None},
	{"[a-c].c", "b.c", F, Ignore},
	{"[a-c].c", "B.c", F, None},
	{"[!a-c].c", "d.c", F, Ignore},
	{"[!a-c].c", "b.c", F, None},
	{"[^a-c].c", "d.c", F, Ignore},
	{"[^a-c].c", "a.c", F, None},
	{"x/[!a]", "x/b", F, Ignore},
	{"x[!a]y", "x/y", F, None}, // a class never matches "/"
	{"a/q[+-0]x", "a/q/x", F, None},
	{"a/q[+-0]x", "a/q,x", F, Ignore},
	{"[]a].c", "].c", F, Ignore},
	{"[]a].c", "a.c", F, Ignore},
	{"[!]a].c", "b.c", F, Ignore},
	{"[!]a].c", "].c", F, None},
	{"[a-].c", "-.c", F, Ignore},
	{"[-a].c", "-.c", F, Ignore},
	{`[\]].c`, "].c", F, Ignore},
	{`[a\-c].c`, "b.c", F, None},
	{`[a\-c].c`, "-.c", F, Ignore},
	{"[c-a]x", "bx", F, None}, // a reversed range holds only its first byte
	{"[c-a]x", "cx", F, Ignore},
	{"[c-a]x", "ax", F, None},
	{"[c-ab]x", "bx", F, Ignore},
	{"[[:digit:]]x", "5x", F, Ignore},
	{"[[:digit:]]x", "ax", F, None},
	{"[[:alpha:][:digit:]]x", "ax", F, Ignore},
	{"[![:digit:]]x", "ax", F, Ignore},
	{"[[:bogus:]]x", "ax", F, None}, // malformed: the line never matches
	{"[[:bogus:]]x\n!ax", "ax", F, Whitelist},
	{"[[:a]x", ":x", F, Ignore}, // "[:" without ":]" before the "]" is a member
	{"foo[", "foo[", F, None},   // unterminated: never matches
	{"foo[\nbar", "bar", F, Ignore},
	{`\[x]`, "[x]", F, Ignore},
	{`\[x]`, "x", F, None},
	{`a\*b`, "a*b", F, Ignore},
	{`a\*b`, "axb", F, None},
	{`a\?b`, "a?b", F, Ignore},
	{`a\?b`, "axb", F, None},
	{`\a\b`, "ab", F, Ignore},

	// Bytes, not characters: "?" is one byte of "é" (two in UTF-8).
	{"é?", "éa", F, Ignore},
	{"é?", "éé", F, None},
	{"é??", "éé", F, Ignore},
	{"??", "é", F, Ignore},
	{"?", "é", F, None},
	{"[é]", "é", F, None},
	{"[é][é]", "é", F, Ignore},
	{"*é", "aé", F, Ignore},
	{"d/*é", "d/aé", F, Ignore},
	{"[!a]", "é", F, None},
	{"[!a][!a]", "é", F, Ignore},
}

func TestRulesMatch(t *testing.T) {
	for _, c := range ruleCases {
		r := Parse([]byte(c.rules))
		if got := r.Match(c.path, c.isDir); got != c.want {
			t.Errorf("rules %q: Match(%q, dir=%v) = %v, want %v", c.rules, c.path, c.isDir, got, c.want)
		}
	}
}

func (r Result) String() string {
	switch r {
	case None:
		return "None"
	case Ignore:
		return "Ignore"
	case Whitelist:
		return "Whitelist"
	}
	return "Result(?)"
}

func TestRulesParseLen(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"# only a comment\n\n   \n", 0},
		{"a\nb\n#c\n!d\n", 3},
		{"/\n!\n!/\n", 0},
		{"foo[\n[[:nope:]]\nok\n", 1},
		{`trailing\`, 0},
		{"no newline at end", 1},
	} {
		if got := Parse([]byte(c.text)).Len(); got != c.want {
			t.Errorf("Parse(%q).Len() = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestRulesTrimTrailingSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"a":        "a",
		"a  ":      "a",
		`a\ `:      `a\ `,
		`a\  `:     `a\ `,
		`a\\ `:     `a\\`,
		`a\\\ `:    `a\\\ `,
		`a \`:      `a \`,
		"   ":      "",
		`a b  `:    `a b`,
		"a\u00a0 ": "a\u00a0",
	} {
		if got := trimTrailingSpaces(in); got != want {
			t.Errorf("trimTrailingSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRulesAsBytes(t *testing.T) {
	if got := asBytes("plain/ascii"); got != "plain/ascii" {
		t.Errorf("asBytes(ascii) = %q", got)
	}
	got := asBytes("aé")
	if want := "a\u00c3\u00a9"; got != want {
		t.Errorf("asBytes(%q) = %q, want %q", "aé", got, want)
	}
}

// BenchmarkRulesMatch measures the common shapes of lines on a deep path.
func BenchmarkRulesMatch(b *testing.B) {
	r := Parse([]byte(strings.Join([]string{
		"node_modules", "*.log", "/build/", "docs/**/*.bak", "[Tt]emp*", "!keep.log", "a/**/b",
	}, "\n")))
	for b.Loop() {
		r.Match("src/pkg/internal/deep/file_name.go", false)
	}
}
