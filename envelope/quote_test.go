package envelope

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope/envelopetest"
)

// Names and lines (docs/product.md, "Names and lines"): the constructors print
// names in the quoted form of internal/quote in data, context and text, and
// lines in text.

const forged = "src\nauth.go:1: password = \"hunter2\""

func TestQuotedGlob(t *testing.T) {
	ctx := Context{Cwd: "c\x1bd", PathResolved: "d\xff", PatternNormalized: "*\r"}
	paths := []string{forged, "a\xff.txt", "a\xfe.txt", `b\s`, "ok.txt"}
	orig := slices.Clone(paths)
	e := Glob(ctx, GlobRun{Data: GlobData{Paths: paths}, Stats: GlobStats{Visited: 5}})
	js := marshal1(t, e)
	wantData := `"data":{"paths":["\"src\\nauth.go:1: password = \\\"hunter2\\\"\"","\"a\\xff.txt\"","\"a\\xfe.txt\"","\"b\\\\s\"","ok.txt"],"truncated":false}`
	if !strings.Contains(js, wantData) {
		t.Errorf("data in %s\nwant %s", js, wantData)
	}
	wantCtx := `"context":{"cwd":"\"c\\x1bd\"","params_input":{},"path_resolved":"\"d\\xff\"","pattern_normalized":"\"*\\r\""}`
	if !strings.Contains(js, wantCtx) {
		t.Errorf("context in %s\nwant %s", js, wantCtx)
	}
	wantText := `Found 5 files matching '"*\r"' in '"d\xff"'` + "\n(Scanned 5 items in 0ms)\n\n" +
		`"src\nauth.go:1: password = \"hunter2\""` + "\n" + `"a\xff.txt"` + "\n" + `"a\xfe.txt"` + "\n" + `"b\\s"` + "\nok.txt"
	if e.Text != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", e.Text, wantText)
	}
	if !slices.Equal(paths, orig) {
		t.Errorf("the caller's paths were changed: %q", paths)
	}
	// Names that need nothing are the caller's slice, unchanged.
	plain := []string{"a.go", "b/c.go"}
	if d := Glob(ctx, GlobRun{Data: GlobData{Paths: plain}}).Data.(*GlobData); &d.Paths[0] != &plain[0] {
		t.Error("plain names were copied")
	}
}

func TestQuotedGrep(t *testing.T) {
	ctx := Context{Pattern: "needle\x1b", PathResolved: "."}
	ms := []GrepMatch{
		{File: forged, Line: 1, Text: "needle"},
		{File: "a.go", Line: 3, Text: "\tneedle \x1b[31mred\rx", Before: []string{"\x85before"}, After: []string{`"after"`, "\tok"}},
	}
	e := Grep(ctx, GrepRun{Data: GrepData{Matches: ms}, Stats: GrepStats{MatchedFiles: 2, MatchedLines: 2}})
	js := marshal1(t, e)
	want := `Found 2 matches in 2 files for '"needle\x1b"' in '.'` + "\n(Sorted by mtime desc. Took 0ms)\n\n" +
		`"src\nauth.go:1: password = \"hunter2\"":1: needle` + "\n--\n" +
		`a.go-2- "\x85before"` + "\n" +
		`a.go:3: "\tneedle \x1b[31mred\rx"` + "\n" +
		`a.go-4- "\"after\""` + "\n" +
		"a.go-5- \tok"
	if e.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", e.Text, want)
	}
	if lines := strings.Split(e.Text, "\n"); len(lines) != 9 || slices.Contains(lines, `auth.go:1: password = "hunter2"`) {
		t.Errorf("text lines: %q", lines)
	}
	// Lines stay raw in data: JSON escapes them.
	wantData := `{"file":"a.go","line":3,"text":"\tneedle \u001b[31mred\rx","before":["\ufffdbefore"],"after":["\"after\"","\tok"]}`
	if !strings.Contains(js, wantData) {
		t.Errorf("data in %s\nwant %s", js, wantData)
	}
	if ms[0].File != forged {
		t.Errorf("the caller's match was changed: %q", ms[0].File)
	}

	e = Grep(ctx, GrepRun{Data: GrepData{Mode: ModeCount, Counts: []FileCount{{"a\xff", 2}, {"b", 1}}}, Stats: GrepStats{MatchedFiles: 2, MatchedLines: 3}})
	if js := marshal1(t, e); !strings.Contains(js, `"counts":[{"file":"\"a\\xff\"","count":2},{"file":"b","count":1}]`) ||
		!strings.HasSuffix(e.Text, "\n\n\"a\\xff\":2\nb:1") {
		t.Errorf("count: %s", js)
	}
	e = Grep(ctx, GrepRun{Data: GrepData{Mode: ModeFiles, Files: []string{"a\xff", "b"}}, Stats: GrepStats{MatchedFiles: 2}})
	if js := marshal1(t, e); !strings.Contains(js, `"files":["\"a\\xff\"","b"]`) || !strings.HasSuffix(e.Text, "\n\n\"a\\xff\"\nb") {
		t.Errorf("files: %s", js)
	}
}

func TestQuotedLSAndFail(t *testing.T) {
	e := LS(Context{Cwd: ".", PathResolved: "d\xff"}, LSRun{Data: LSData{Entries: []LSEntry{
		{Path: "n\nl/", Type: TypeDir}, {Path: "x\xfe@", Type: TypeLink, Link: LinkBroken}, {Path: "f", Type: TypeFile},
	}}})
	js := marshal1(t, e)
	if !strings.Contains(js, `"entries":[{"path":"\"n\\nl/\"","type":"dir"},{"path":"\"x\\xfe@\"","type":"link"},{"path":"f","type":"file"}]`) {
		t.Errorf("LS data: %s", js)
	}
	if want := "Listed 3 entries in '\"d\\xff\"'\n\n\"n\\nl/\"\n\"x\\xfe@\" -> <Broken Link>\nf"; e.Text != want {
		t.Errorf("LS text:\n%s\nwant:\n%s", e.Text, want)
	}

	e = Fail(Context{Cwd: ".", PathResolved: "a\nb"}, Errorf(CodeNotFound, "Search root '%s' does not exist.", "no\nsuch"), 0)
	js = marshal1(t, e)
	if want := `Error: "Search root 'no\nsuch' does not exist."`; e.Text != want {
		t.Errorf("Fail text %q, want %q", e.Text, want)
	}
	var raw struct {
		Context Context `json:"context"`
		Error   *Error  `json:"error"`
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Context.PathResolved != `"a\nb"` || raw.Error.Message != "Search root 'no\nsuch' does not exist." {
		t.Errorf("Fail: %s", js)
	}
}

func TestValidateQuotedPaths(t *testing.T) {
	good := `{"status":"success","data":{"paths":["\"a\\\\b\"","\"a\\xff\"","ok"]},"text":"","stats":{"time_ms":0},"context":{"cwd":"\"c\\\\d\"","params_input":{},"path_resolved":"\"d\\xff\""}}`
	if p := envelopetest.Problems([]byte(good)); p != nil {
		t.Errorf("quoted names rejected: %v", p)
	}
	for name, path := range map[string]string{
		"quoted dotdot":   `"\"../x\""`,
		"quoted absolute": `"\"/x\\n\""`,
		"quoted empty":    `"\"\""`,
		"raw backslash":   `"a\\b"`,
	} {
		js := strings.Replace(good, `"paths":[`, `"paths":[`+path+`,`, 1)
		if envelopetest.Problems([]byte(js)) == nil {
			t.Errorf("%s: accepted %s", name, js)
		}
	}
}
