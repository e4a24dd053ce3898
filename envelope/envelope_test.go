package envelope

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope/envelopetest"
)

// The envelope rules (docs/product.md, "The envelope") and the text
// formats (docs/tools.md).

func marshal1(t *testing.T, e *Envelope) string {
	t.Helper()
	js, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	envelopetest.Validate(t, js)
	// json.Marshal goes through MarshalJSON and must agree apart from its
	// HTML escaping.
	if std, err := json.Marshal(e); err != nil {
		t.Fatal(err)
	} else {
		envelopetest.Validate(t, std)
	}
	return string(js)
}

var ctx0 = Context{Cwd: ".", ParamsInput: json.RawMessage(`{"pattern":"*"}`), PathResolved: "."}

func TestMarshalKeys(t *testing.T) {
	tests := []struct {
		name string
		e    *Envelope
		want string
	}{
		{"zero success", &Envelope{Status: StatusSuccess, Context: Context{Cwd: "."}},
			`{"status":"success","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}}}`},
		{"error without Error", &Envelope{Status: StatusError, Context: Context{Cwd: "."}},
			`{"status":"error","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}},"error":{"code":"INTERNAL_ERROR","message":"unknown error"}}`},
		{"Error dropped unless status is error", &Envelope{Status: StatusPartial, Error: &Error{Code: CodeTimeout, Message: "m"}, Context: Context{Cwd: "."}},
			`{"status":"partial","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}}}`},
		{"invalid params_input", &Envelope{Status: StatusSuccess, Context: Context{Cwd: ".", ParamsInput: json.RawMessage(`{"a":`)}},
			`{"status":"success","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}}}`},
		{"params_input kept as given", &Envelope{Status: StatusSuccess, Context: Context{Cwd: ".", ParamsInput: json.RawMessage(`[1, "<b>"]`)}},
			`{"status":"success","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":[1,"<b>"]}}`},
		{"no HTML escaping", &Envelope{Status: StatusSuccess, Text: "a -> <b> & c", Context: Context{Cwd: "."}},
			`{"status":"success","data":{},"text":"a -> <b> & c","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}}}`},
		{"fail", Fail(ctx0, Errorf(CodeNotFound, "Search root '%s' does not exist.", "x"), 7),
			`{"status":"error","data":{},"text":"Error: Search root 'x' does not exist.","stats":{"time_ms":7},"context":{"cwd":".","params_input":{"pattern":"*"},"path_resolved":"."},"error":{"code":"NOT_FOUND","message":"Search root 'x' does not exist."}}`},
	}
	for _, tc := range tests {
		if got := marshal1(t, tc.e); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, got, tc.want)
		}
	}
	if _, err := (&Envelope{Status: "done"}).MarshalJSON(); err == nil {
		t.Error("invalid status marshalled")
	}
	if _, err := (&Envelope{}).MarshalJSON(); err == nil {
		t.Error("empty status marshalled")
	}
}

func TestErrorType(t *testing.T) {
	e := Errorf(CodeInvalidParam, "limit %d", 5)
	if e.Error() != "INVALID_PARAM: limit 5" {
		t.Errorf("Error() = %q", e.Error())
	}
	var raw Raw
	if err := json.Unmarshal([]byte(marshal1(t, Fail(ctx0, e, 1))), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Status != StatusError || *raw.Error != *e || string(raw.Data) != "{}" {
		t.Errorf("raw = %+v", raw)
	}
}

func TestGlobStatusAndText(t *testing.T) {
	ctx := ctx0
	ctx.PatternNormalized = "**/*.py"
	tests := []struct {
		name   string
		run    GlobRun
		status Status
		text   string
	}{
		{"success", GlobRun{Data: GlobData{Paths: []string{"a.py", "b/c.py"}}, Stats: GlobStats{BaseStats: BaseStats{TimeMS: 5}, Visited: 9}},
			StatusSuccess, "Found 2 files matching '**/*.py' in '.'\n(Scanned 9 items in 5ms)\n\na.py\nb/c.py"},
		{"no match", GlobRun{Stats: GlobStats{Visited: 3}},
			StatusSuccess, "No files found matching '**/*.py' in '.'\n(Scanned 3 items in 0ms)"},
		{"truncated", GlobRun{Data: GlobData{Paths: []string{"a.py"}, Truncated: true}, Limit: 1},
			StatusPartial, "Found 1 files matching '**/*.py' in '.'\n(Scanned 0 items in 0ms)\n[Truncated: Showing first 1 files. Narrow the pattern or path, or raise limit (max 200).]\n\na.py"},
		{"time limit with results", GlobRun{Data: GlobData{Paths: []string{"a.py"}, AbortedReason: AbortTimeLimit}},
			StatusPartial, "Found 1 files matching '**/*.py' in '.'\n(Scanned 0 items in 0ms)\n[Partial: Search timed out (>2s). Results are incomplete.]\n\na.py"},
		{"time limit without results", GlobRun{Data: GlobData{AbortedReason: AbortTimeLimit}},
			StatusError, "No files found matching '**/*.py' in '.'\n(Scanned 0 items in 0ms)\n[Error: Search timed out before finding any match. Narrow the pattern or path.]"},
		{"unreadable, nothing found", GlobRun{Data: GlobData{Unreadable: []string{"a/", "b/", "c/", "d/", "e/", "f/"}}},
			StatusPartial, "No files found matching '**/*.py' in '.'\n(Scanned 0 items in 0ms)\n[Partial: 6 paths could not be read (permission denied): a/, b/, c/, d/, e/ and 1 more; any files in them are missing.]"},
		{"hints and fallback", GlobRun{Data: GlobData{Fallback: Fallback{Used: true, Reason: "index_building"}}, Hints: []string{"[Info: x]", ""}},
			StatusSuccess, "No files found matching '**/*.py' in '.'\n(Scanned 0 items in 0ms)\n[Info: The index could not be trusted (index_building); answered by a full walk.]\n[Info: x]"},
	}
	for _, tc := range tests {
		e := Glob(ctx, tc.run)
		js := marshal1(t, e)
		if e.Status != tc.status || e.Text != tc.text {
			t.Errorf("%s: %s %q\nwant %s %q", tc.name, e.Status, e.Text, tc.status, tc.text)
		}
		if !strings.Contains(js, `"paths":[`) {
			t.Errorf("%s: paths not an array: %s", tc.name, js)
		}
		if st := e.Stats.(*GlobStats); st.Matched != len(tc.run.Data.Paths) {
			t.Errorf("%s: matched = %d", tc.name, st.Matched)
		}
	}

	e := Glob(ctx, GlobRun{Data: GlobData{AbortedReason: AbortTimeLimit}})
	if e.Status != StatusError || e.Error.Code != CodeTimeout {
		t.Fatalf("breaker without results: %s %v", e.Status, e.Error)
	}
	if got := marshal1(t, e); !strings.Contains(got, `"data":{"paths":[],"truncated":false,"aborted_reason":"time_limit"}`) {
		t.Errorf("breaker error data: %s", got)
	}
}

func TestGrepStatusAndText(t *testing.T) {
	ctx := ctx0
	ctx.Pattern, ctx.SortedBy, ctx.PathResolved = "x", "mtime_desc", "src"
	ms := []GrepMatch{{File: "src/a.go", Line: 3, Text: "x := 1"}}
	tests := []struct {
		name   string
		run    GrepRun
		status Status
		text   string
		data   string
	}{
		{"success", GrepRun{Data: GrepData{Matches: ms}, Stats: GrepStats{MatchedFiles: 1, MatchedLines: 1}},
			StatusSuccess, "Found 1 matches in 1 files for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n\nsrc/a.go:3: x := 1",
			`{"matches":[{"file":"src/a.go","line":3,"text":"x := 1"}],"truncated":false}`},
		{"fallback is partial", GrepRun{Data: GrepData{Matches: ms, Fallback: Fallback{Used: true, Reason: "index_stale"}}, Stats: GrepStats{MatchedFiles: 1, MatchedLines: 1}},
			StatusPartial, "Found 1 matches in 1 files for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n[Info: The index could not be trusted (index_stale); answered by a full walk.]\n\nsrc/a.go:3: x := 1",
			`{"matches":[{"file":"src/a.go","line":3,"text":"x := 1"}],"truncated":false,"fallback_used":true,"fallback_reason":"index_stale"}`},
		{"timeout with results", GrepRun{Data: GrepData{Matches: ms, AbortedReason: AbortTimeout}, Stats: GrepStats{BaseStats: BaseStats{TimeMS: 2001}, MatchedFiles: 1, MatchedLines: 1}},
			StatusPartial, "Found 1 matches in 1 files for 'x' in 'src'\n(Sorted by mtime desc. Took 2001ms)\n[Partial: Search timed out after 2001ms. Results are incomplete.]\n\nsrc/a.go:3: x := 1",
			`{"matches":[{"file":"src/a.go","line":3,"text":"x := 1"}],"truncated":false,"aborted_reason":"timeout"}`},
		{"files truncated", GrepRun{Data: GrepData{Mode: ModeFiles, Files: []string{"a", "b"}, Truncated: true}, Stats: GrepStats{MatchedFiles: 2}, Limit: 2},
			StatusPartial, "Found 2 files with matches for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n[Truncated: Showing first 2 files. Narrow pattern or path.]\n\na\nb",
			`{"files":["a","b"],"truncated":true}`},
		{"count", GrepRun{Data: GrepData{Mode: ModeCount, Counts: []FileCount{{"a", 4}}}, Stats: GrepStats{MatchedFiles: 1, MatchedLines: 4}},
			StatusSuccess, "Found 4 matches in 1 files for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n\na:4",
			`{"counts":[{"file":"a","count":4}],"truncated":false}`},
		{"empty count", GrepRun{Data: GrepData{Mode: ModeCount}},
			StatusSuccess, "No matches found for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)", `{"counts":[],"truncated":false}`},
		{"empty content", GrepRun{},
			StatusSuccess, "No matches found for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)", `{"matches":[],"truncated":false}`},
		{"unreadable", GrepRun{Data: GrepData{Matches: ms, Unreadable: []string{"src/locked/"}}, Stats: GrepStats{MatchedFiles: 1, MatchedLines: 1}},
			StatusPartial, "Found 1 matches in 1 files for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n[Partial: src/locked/ could not be read (permission denied); any matches in it are missing.]\n\nsrc/a.go:3: x := 1",
			`{"matches":[{"file":"src/a.go","line":3,"text":"x := 1"}],"truncated":false,"unreadable":["src/locked/"]}`},
		{"unreadable, nothing found, quoted", GrepRun{Data: GrepData{Unreadable: []string{"src/bad\nname"}}},
			StatusPartial, "No matches found for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n[Partial: \"src/bad\\nname\" could not be read (permission denied); any matches in it are missing.]",
			`{"matches":[],"truncated":false,"unreadable":["\"src/bad\\nname\""]}`},
		{"timeout without results", GrepRun{Data: GrepData{AbortedReason: AbortTimeout}},
			StatusError, "No matches found for 'x' in 'src'\n(Sorted by mtime desc. Took 0ms)\n[Error: Search timed out before finding any match. Narrow the pattern or path.]",
			`{"matches":[],"truncated":false,"aborted_reason":"timeout"}`},
	}
	for _, tc := range tests {
		e := Grep(ctx, tc.run)
		js := marshal1(t, e)
		if e.Status != tc.status || e.Text != tc.text {
			t.Errorf("%s: %s %q\nwant %s %q", tc.name, e.Status, e.Text, tc.status, tc.text)
		}
		if !strings.Contains(js, `"data":`+tc.data+`,`) {
			t.Errorf("%s: data in %s\nwant %s", tc.name, js, tc.data)
		}
	}
}

func TestGrepContextRendering(t *testing.T) {
	ctx := ctx0
	ctx.Pattern = "m"
	ms := []GrepMatch{
		{File: "a", Line: 2, Text: "m1", Before: []string{"l1"}, After: []string{"l3"}},
		{File: "a", Line: 4, Text: "m2", Before: []string{"l3"}, After: []string{"l5"}}, // adjacent: no "--"
		{File: "a", Line: 9, Text: "m3", Before: []string{"l8"}},                        // gap: "--"
		{File: "b", Line: 1, Text: "m4", After: []string{"b2"}},                         // new file: "--"
	}
	e := Grep(ctx, GrepRun{Data: GrepData{Matches: ms}, Stats: GrepStats{MatchedFiles: 2, MatchedLines: 4}})
	want := "Found 4 matches in 2 files for 'm' in '.'\n(Sorted by mtime desc. Took 0ms)\n\n" +
		"a-1- l1\na:2: m1\na-3- l3\na:4: m2\na-5- l5\n--\na-8- l8\na:9: m3\n--\nb:1: m4\nb-2- b2"
	if e.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", e.Text, want)
	}
	// Without context, no separators.
	e = Grep(ctx, GrepRun{Data: GrepData{Matches: []GrepMatch{{File: "a", Line: 1, Text: "m"}, {File: "b", Line: 5, Text: "m"}}}, Stats: GrepStats{MatchedFiles: 2, MatchedLines: 2}})
	if !strings.HasSuffix(e.Text, "\n\na:1: m\nb:5: m") {
		t.Errorf("text without context: %q", e.Text)
	}
}

func TestLSStatusAndText(t *testing.T) {
	ctx := Context{Cwd: ".", PathResolved: "src"}
	entries := []LSEntry{{Path: "d/", Type: TypeDir}, {Path: "f", Type: TypeFile}, {Path: "l@", Type: TypeLink, Link: LinkOutside}, {Path: "b@", Type: TypeLink, Link: LinkBroken}, {Path: "in@/", Type: TypeLink}}
	e := LS(ctx, LSRun{Data: LSData{Entries: entries}, Stats: LSStats{Total: 5, Dirs: 1, Files: 1, Links: 3}})
	js := marshal1(t, e)
	if e.Status != StatusSuccess || e.Text != "Listed 5 entries in 'src'\n\nd/\nf\nl@ -> <Outside Sandbox>\nb@ -> <Broken Link>\nin@/" {
		t.Errorf("%s %q", e.Status, e.Text)
	}
	if !strings.Contains(js, `{"path":"l@","type":"link"}`) || strings.Contains(js, "outside") {
		t.Errorf("link state leaked into data: %s", js)
	}
	e = LS(ctx, LSRun{Data: LSData{Entries: entries[:2], Truncated: true}, Stats: LSStats{Total: 5}})
	if e.Status != StatusPartial || e.Text != "Listed 2 entries in 'src' (truncated from 5 total). Use 'offset' to paginate.\n\nd/\nf" {
		t.Errorf("%s %q", e.Status, e.Text)
	}
	e = LS(Context{Cwd: "."}, LSRun{})
	if got := marshal1(t, e); e.Status != StatusSuccess || e.Text != "Listed 0 entries in '.'" || !strings.Contains(got, `"entries":[]`) {
		t.Errorf("empty: %s", got)
	}
}

// ---- envelopetest.Validate itself ----

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestValidateRejects(t *testing.T) {
	good := `{"status":"success","data":{},"text":"","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}}}`
	if p := envelopetest.Problems([]byte(good)); p != nil {
		t.Fatalf("good envelope rejected: %v", p)
	}
	errEnv := `{"status":"error","data":{},"text":"Error: x","stats":{"time_ms":3},"context":{"cwd":".","params_input":null},"error":{"code":"TIMEOUT","message":"x"}}`
	if p := envelopetest.Problems([]byte(errEnv)); p != nil {
		t.Fatalf("good error envelope rejected: %v", p)
	}
	bad := map[string]string{
		"not json":              `{`,
		"array":                 `[]`,
		"trailing":              good + `{}`,
		"extra key":             strings.Replace(good, `"text":""`, `"text":"","extra":1`, 1),
		"duplicate key":         strings.Replace(good, `"text":""`, `"text":"","text":""`, 1),
		"missing data":          strings.Replace(good, `"data":{},`, ``, 1),
		"null data":             strings.Replace(good, `"data":{}`, `"data":null`, 1),
		"array data":            strings.Replace(good, `"data":{}`, `"data":[]`, 1),
		"bad status":            strings.Replace(good, `"success"`, `"ok"`, 1),
		"error key on success":  strings.TrimSuffix(good, "}") + `,"error":{"code":"TIMEOUT","message":"x"}}`,
		"error status no error": strings.Replace(good, `"success"`, `"error"`, 1),
		"unknown code":          strings.Replace(errEnv, `TIMEOUT`, `OOPS`, 1),
		"empty message":         strings.Replace(errEnv, `"message":"x"`, `"message":""`, 1),
		"message not string":    strings.Replace(errEnv, `"message":"x"`, `"message":1`, 1),
		"extra error key":       strings.Replace(errEnv, `"message":"x"`, `"message":"x","hint":"y"`, 1),
		"float time_ms":         strings.Replace(good, `"time_ms":0`, `"time_ms":1.5`, 1),
		"string time_ms":        strings.Replace(good, `"time_ms":0`, `"time_ms":"0"`, 1),
		"negative time_ms":      strings.Replace(good, `"time_ms":0`, `"time_ms":-1`, 1),
		"exponent time_ms":      strings.Replace(good, `"time_ms":0`, `"time_ms":1e3`, 1),
		"no time_ms":            strings.Replace(good, `"time_ms":0`, `"matched":0`, 1),
		"null stats":            strings.Replace(good, `{"time_ms":0}`, `null`, 1),
		"text not string":       strings.Replace(good, `"text":""`, `"text":5`, 1),
		"no cwd":                strings.Replace(good, `"cwd":".",`, ``, 1),
		"cwd not string":        strings.Replace(good, `"cwd":"."`, `"cwd":1`, 1),
		"absolute cwd":          strings.Replace(good, `"cwd":"."`, `"cwd":"/x"`, 1),
		"no params_input":       strings.Replace(good, `,"params_input":{}`, ``, 1),
		"absolute path":         strings.Replace(good, `"data":{}`, `"data":{"paths":["/etc/passwd"]}`, 1),
		"dotdot file":           strings.Replace(good, `"data":{}`, `"data":{"matches":[{"file":"../x","line":1,"text":""}]}`, 1),
		"backslash":             strings.Replace(good, `"data":{}`, `"data":{"files":["a\\b"]}`, 1),
		"bad path_resolved":     strings.Replace(good, `"cwd":"."`, `"cwd":".","path_resolved":"/abs"`, 1),
	}
	for name, js := range bad {
		rec := &recorder{TB: t}
		envelopetest.Validate(rec, []byte(js))
		if len(rec.errs) == 0 {
			t.Errorf("%s: accepted %s", name, js)
		}
	}
}
