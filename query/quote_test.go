package query

import (
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/tool"
)

// Names and lines that could forge the text (docs/product.md, "Names and
// lines"): control characters and bytes that are not UTF-8 are printed in the
// quoted form of internal/quote, in data and text alike, and the quoted form
// names the file back in path, include and Glob's pattern.

// forged is a file name that, printed raw in Grep's text, would add a line
// claiming a match in auth.go.
const (
	forged     = "src\nauth.go:1: password = \"hunter2\""
	forgedLine = `auth.go:1: password = "hunter2"`
)

// oddNames are file names with what must be quoted, and names that must
// not be, each with its printed form, in Glob's (byte) order.
var oddNames = []struct{ raw, printed string }{
	{`"lead.txt`, `"\"lead.txt"`},
	{"a\xfe.txt", `"a\xfe.txt"`},
	{"a\xff.txt", `"a\xff.txt"`},
	{`back\slash.txt`, `"back\\slash.txt"`},
	{"cr\rname.txt", `"cr\rname.txt"`},
	{"esc\x1b[31mred.txt", `"esc\x1b[31mred.txt"`},
	{"nel\u0085.txt", `"nel\xc2\x85.txt"`},
	{"plain.txt", "plain.txt"},
	{forged, `"src\nauth.go:1: password = \"hunter2\""`},
	{"tab\there.txt", "tab\there.txt"},
	{"ünï.txt", "ünï.txt"},
}

// oddTree holds every odd name at the root, each file holding one line
// "needle in <n>" (n its index in oddNames), all with the same mtime so
// Grep's order is by path.
func oddTree(t *testing.T) (*Tools, string) {
	t.Helper()
	files := fsTree{}
	for i, n := range oddNames {
		files[n.raw] = "needle in " + string(rune('a'+i)) + "\n"
	}
	tools, root := setup(t, files)
	mt := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range oddNames {
		setMtime(t, root, n.raw, mt)
	}
	return tools, root
}

func TestQuotedNamesGlob(t *testing.T) {
	t.Parallel()
	tools, _ := oddTree(t)
	r := run(t, tools, tool.Glob, `{"pattern":"*"}`)
	wantStatus(t, r, "success")
	var want []string
	for _, n := range oddNames {
		want = append(want, n.printed)
	}
	equal(t, "paths", r.paths(), want)
	wantText(t, r, "Found 11 files matching '*' in '.'\n(Scanned 11 items in Nms)\n\n"+strings.Join(want, "\n"))
	lines := strings.Split(r.Text, "\n")
	if len(lines) != 3+len(oddNames) {
		t.Errorf("text has %d lines, want %d:\n%s", len(lines), 3+len(oddNames), r.Text)
	}
	for _, l := range lines {
		if l == forgedLine || strings.ContainsAny(l, "\r\x1b\u0085") {
			t.Errorf("text line %q is forged or holds a control character", l)
		}
	}
}

func TestQuotedNamesGrep(t *testing.T) {
	t.Parallel()
	tools, _ := oddTree(t)
	r := run(t, tools, tool.Grep, `{"pattern":"needle"}`)
	wantStatus(t, r, "success")
	var want []string
	for i, n := range oddNames {
		want = append(want, n.printed+":1: needle in "+string(rune('a'+i)))
	}
	equal(t, "matches", r.matchLines(), want)
	wantText(t, r, "Found 11 matches in 11 files for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+strings.Join(want, "\n"))
	lines := strings.Split(r.Text, "\n")
	if len(lines) != 3+len(oddNames) {
		t.Errorf("text has %d lines, want %d:\n%s", len(lines), 3+len(oddNames), r.Text)
	}
	for _, l := range lines {
		if l == forgedLine {
			t.Errorf("text holds the forged line %q", l)
		}
	}

	r = run(t, tools, tool.Grep, `{"pattern":"needle","output_mode":"files_with_matches"}`)
	var names []string
	for _, n := range oddNames {
		names = append(names, n.printed)
	}
	equal(t, "files", r.Data.Files, names)
	wantText(t, r, "Found 11 files with matches for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+strings.Join(names, "\n"))

	r = run(t, tools, tool.Grep, `{"pattern":"needle","output_mode":"count","include":"a*"}`)
	wantText(t, r, "Found 2 matches in 2 files for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+
		`"a\xfe.txt":1`+"\n"+`"a\xff.txt":1`)
}

func TestQuotedNamesLS(t *testing.T) {
	t.Parallel()
	tools, _ := oddTree(t)
	r := run(t, tools, tool.LS, `{}`)
	wantStatus(t, r, "success")
	var want []string
	for _, n := range oddNames {
		want = append(want, n.printed)
	}
	equal(t, "entries", r.entryNames(), want)
	wantText(t, r, "Listed 11 entries in '.'\n\n"+strings.Join(want, "\n"))
}

// TestQuotedNameBack: every printed name, given back as Grep's include or
// Glob's pattern, finds exactly the file it names, not its sibling that
// differs in a byte that is not UTF-8.
func TestQuotedNameBack(t *testing.T) {
	t.Parallel()
	tools, _ := oddTree(t)
	for i, n := range oddNames {
		if strings.ContainsAny(n.raw, `\*?[{`) {
			continue // a glob metacharacter: see TestQuotedIncludeGlob
		}
		r := run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "include", n.printed))
		equal(t, "include "+n.printed, r.matchLines(), []string{n.printed + ":1: needle in " + string(rune('a'+i))})
		r = run(t, tools, tool.Glob, jsonArgs("pattern", n.printed))
		equal(t, "Glob "+n.printed, r.paths(), []string{n.printed})
	}
}

// TestQuotedIncludeGlob: a quoted include is unquoted, then read as a glob;
// a byte that is not UTF-8 is one character, matched exactly (doublestar
// alone takes every such byte for U+FFFD and any other).
func TestQuotedIncludeGlob(t *testing.T) {
	t.Parallel()
	tools, _ := oddTree(t)
	tests := []struct {
		tool, args string
		want       []string
	}{
		{tool.Grep, `{"pattern":"needle","include":"\"[a]\\xff.txt\""}`, []string{`"a\xff.txt":1: needle in c`}},
		{tool.Grep, `{"pattern":"needle","include":"\"{a\\xfe,x}.txt\""}`, []string{`"a\xfe.txt":1: needle in b`}},
		{tool.Grep, `{"pattern":"needle","include":"\"a[\\xfe].txt\""}`, []string{`"a\xfe.txt":1: needle in b`}},
		{tool.Grep, `{"pattern":"needle","include":"a?.txt"}`, []string{`"a\xfe.txt":1: needle in b`, `"a\xff.txt":1: needle in c`}},
		{tool.Grep, `{"pattern":"needle","include":"a\ufffd.txt"}`, nil},
		{tool.Grep, `{"pattern":"needle","include":"\"back\\\\\\\\slash.txt\""}`, []string{`"back\\slash.txt":1: needle in d`}},
		{tool.Glob, `{"pattern":"\"A\\xff.TXT\"","case_sensitive":false}`, []string{`"a\xff.txt"`}},
		{tool.Glob, `{"pattern":"\"?\\xfe.txt\""}`, []string{`"a\xfe.txt"`}},
		{tool.Glob, `{"pattern":"\"**/a\\xff.txt\""}`, []string{`"a\xff.txt"`}},
	}
	for _, tc := range tests {
		r := run(t, tools, tc.tool, tc.args)
		got := r.paths()
		if tc.tool == tool.Grep {
			got = r.matchLines()
		}
		if tc.want == nil {
			tc.want = []string{}
		}
		equal(t, tc.tool+" "+tc.args, got, tc.want)
	}
}

// TestQuotedDirPath: a directory named with bytes that are not UTF-8 (or
// with a backslash or a leading quote) is named back in path by its
// printed form, for each tool, and only it is searched.
func TestQuotedDirPath(t *testing.T) {
	t.Parallel()
	files := fsTree{
		"d\xff/x.txt":        "needle ff\n",
		"d\xfe/x.txt":        "needle fe\n",
		`b\s/x.txt`:          "needle bs\n",
		`"q/x.txt`:           "needle q\n",
		"n\nl/x.txt":         "needle nl\n",
		"d\xff/sub/deep.txt": "needle deep\n",
	}
	tools, root := setup(t, files)
	mt := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for f := range files {
		setMtime(t, root, f, mt)
	}
	tests := []struct {
		path, resolved, text string
		grep                 []string
		glob                 []string
	}{
		{`"d\xff"`, `"d\xff"`, "Listed 2 entries in '\"d\\xff\"'\n\nsub/\nx.txt",
			[]string{`"d\xff/sub/deep.txt":1: needle deep`, `"d\xff/x.txt":1: needle ff`},
			[]string{`"d\xff/sub/deep.txt"`, `"d\xff/x.txt"`}},
		{`"d\xfe/"`, `"d\xfe"`, "Listed 1 entries in '\"d\\xfe\"'\n\nx.txt",
			[]string{`"d\xfe/x.txt":1: needle fe`}, []string{`"d\xfe/x.txt"`}},
		{`"b\\s"`, `"b\\s"`, "Listed 1 entries in '\"b\\\\s\"'\n\nx.txt",
			[]string{`"b\\s/x.txt":1: needle bs`}, []string{`"b\\s/x.txt"`}},
		{`"\"q"`, `"\"q"`, "Listed 1 entries in '\"\\\"q\"'\n\nx.txt",
			[]string{`"\"q/x.txt":1: needle q`}, []string{`"\"q/x.txt"`}},
		{`"q`, `"\"q"`, "Listed 1 entries in '\"\\\"q\"'\n\nx.txt", // not a quoted form: taken as it is
			[]string{`"\"q/x.txt":1: needle q`}, []string{`"\"q/x.txt"`}},
		{`"n\nl"`, `"n\nl"`, "Listed 1 entries in '\"n\\nl\"'\n\nx.txt",
			[]string{`"n\nl/x.txt":1: needle nl`}, []string{`"n\nl/x.txt"`}},
	}
	for _, tc := range tests {
		r := run(t, tools, tool.LS, jsonArgs("path", tc.path))
		wantStatus(t, r, "success")
		equal(t, "LS path_resolved of "+tc.path, r.Context.PathResolved, tc.resolved)
		wantText(t, r, tc.text)
		r = run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "path", tc.path))
		equal(t, "Grep in "+tc.path, r.matchLines(), tc.grep)
		equal(t, "Grep path_resolved of "+tc.path, r.Context.PathResolved, tc.resolved)
		r = run(t, tools, tool.Glob, jsonArgs("pattern", "**/*.txt", "path", tc.path))
		equal(t, "Glob in "+tc.path, r.paths(), tc.glob)
	}
}

// TestQuotedLines: a matching or context line holding control characters
// is printed quoted in text (and raw in data); TABs and ordinary quotes
// stay as written.
func TestQuotedLines(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"f.go": "before \x1b]0;title\x07\n" +
			"needle \x1b[31mred\x1b[0m\rf.go:9: fake\n" +
			"after\x85\n" +
			"\n" +
			"\tneedle(\"tab\\n\")\n" +
			"\n" +
			"\"needle\"\n" +
			"\n" +
			"needle caf\xe9 nel\u0085\n",
	})
	r := run(t, tools, tool.Grep, `{"pattern":"needle","context":1,"limit":1}`)
	wantStatus(t, r, "partial")
	wantText(t, r, "Found 1 matches in 1 files for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		"[Truncated: Showing first 1 matches. Narrow pattern or path.]\n\n"+
		`f.go-1- "before \x1b]0;title\x07"`+"\n"+
		`f.go:2: "needle \x1b[31mred\x1b[0m\rf.go:9: fake"`+"\n"+
		`f.go-3- "after\x85"`)
	if got, want := r.Data.Matches[0].Text, "needle \x1b[31mred\x1b[0m\rf.go:9: fake"; got != want {
		t.Errorf("data text = %q, want %q", got, want)
	}
	for _, l := range strings.Split(r.Text, "\n") {
		if strings.HasPrefix(l, "f.go:9:") || strings.ContainsAny(l, "\r\x1b\x07") {
			t.Errorf("text line %q is forged or holds a control character", l)
		}
	}
	r = run(t, tools, tool.Grep, `{"pattern":"needle"}`)
	wantText(t, r, "Found 4 matches in 1 files for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+
		`f.go:2: "needle \x1b[31mred\x1b[0m\rf.go:9: fake"`+"\n"+
		"f.go:5: \tneedle(\"tab\\n\")\n"+
		`f.go:7: "\"needle\""`+"\n"+
		`f.go:9: "needle caf\xe9 nel\xc2\x85"`)
}

// TestQuotedHintsAndErrors: the names in hints and the arguments repeated
// in error messages are quoted in text too.
func TestQuotedHintsAndErrors(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{".h\nid/a.go": "x\n"})
	r := run(t, tools, tool.Glob, `{"pattern":"**/*.go"}`)
	wantText(t, r, "No files found matching '**/*.go' in '.'\n(Scanned 1 items in Nms)\n"+
		`[Info: Hidden paths were skipped: ".h\nid/". Set include_hidden=true to search them.]`)

	r = run(t, tools, tool.Grep, `{"pattern":"x","path":"no\nsuch"}`)
	if r.Error == nil || r.Error.Message != "Search root 'no\nsuch' does not exist." {
		t.Fatalf("error = %+v", r.Error)
	}
	equal(t, "text", r.Text, `Error: "Search root 'no\nsuch' does not exist."`)

	r = run(t, tools, tool.Grep, `{"pattern":"a\nb","multiline":true}`)
	wantText(t, r, "No matches found for '\"a\\nb\"' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		`[Info: Hidden paths were skipped: ".h\nid/". Set include_hidden=true to search them.]`)
}

// TestQuotedNamesIndexed: the index answers the odd names exactly as the
// walk does.
func TestQuotedNamesIndexed(t *testing.T) {
	t.Parallel()
	_, root := oddTree(t)
	mkTree(t, root, fsTree{"d\xff/x.txt": "needle\n", "d\xfe/x.txt": "needle\n"})
	walk, idx := buildTools(t, root)
	for _, c := range []struct{ tool, args string }{
		{tool.Glob, `{"pattern":"*"}`},
		{tool.Glob, `{"pattern":"**/*.txt"}`},
		{tool.Glob, `{"pattern":"\"d\\xff/*\""}`},
		{tool.Glob, `{"pattern":"\"A\\xFF.TXT\"","case_sensitive":false}`},
		{tool.Glob, `{"pattern":"*","path":"\"d\\xfe\""}`},
		{tool.Grep, `{"pattern":"needle"}`},
		{tool.Grep, `{"pattern":"needle","include":"\"a\\xff.txt\""}`},
		{tool.Grep, `{"pattern":"needle","include":"\"[a]\\xfe.txt\""}`},
		{tool.Grep, `{"pattern":"needle","path":"\"d\\xff\""}`},
	} {
		diffEngines(t, walk, idx, c.tool, c.args)
	}
}

// A name that is itself a complete quoted string ("sub", quotes
// included) reaches the tools in the quoted form: the agent-facing rule
// unquotes one level, so the path "sub" names sub/ and the path
// "\"sub\"" names "sub"/, through the socket as through the CLI (which
// sends such a name quoted).
func TestQuotedNameThatIsQuoted(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{"sub/p.txt": "needle\n", `"sub"/q.txt`: "needle\n"})
	r := run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "path", `"sub"`))
	equal(t, "path \"sub\"", r.matchLines(), []string{"sub/p.txt:1: needle"})
	r = run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "path", `"\"sub\""`))
	equal(t, `path "\"sub\""`, r.matchLines(), []string{`"\"sub\"/q.txt":1: needle`})
	r = run(t, tools, tool.Glob, jsonArgs("pattern", `"\"sub\"/*"`))
	equal(t, "Glob", r.paths(), []string{`"\"sub\"/q.txt"`})
	r = run(t, tools, tool.LS, jsonArgs("path", `"\"sub\""`))
	if r.Status != "success" || !strings.Contains(r.Text, "q.txt") {
		t.Errorf("LS of \"sub\": %s", r.Text)
	}
}
