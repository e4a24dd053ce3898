package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestParseTools(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "Glob,Grep,LS,Changes", want: DefaultTools},
		{in: "Glob,Grep,LS", want: []string{"Glob", "Grep", "LS"}},
		{in: "default", want: DefaultTools},
		{in: "compat", want: AllTools},
		{in: "all", want: AllTools},
		{in: "grep, search_in_files", want: []string{"Grep", "search_in_files"}},
		{in: "LS,ls,LS", want: []string{"LS"}},
		{in: "find_files_by_name,Glob", want: []string{"Glob", "find_files_by_name"}},
		{in: "Grep,Read", err: `unknown tool "Read"`},
		{in: " , ", err: "names no tool"},
	} {
		got, err := ParseTools(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTools(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil || !slices.Equal(got, tc.want):
			t.Errorf("ParseTools(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// wantProperties are each tool's parameters, as docs/tools.md lists them.
var wantProperties = map[string][]string{
	"Glob": {"pattern", "path", "limit", "include_hidden", "include_ignored", "case_sensitive", "type", "type_not", "sort", "changed_since"},
	"Grep": {"pattern", "path", "include", "case_sensitive", "fixed_strings", "limit", "output_mode",
		"context_before", "context_after", "context", "multiline", "timeout_ms", "include_hidden", "include_ignored", "type", "type_not", "changed_since"},
	"LS":                 {"path", "offset", "limit", "include_hidden", "include_ignored", "ignore"},
	"Changes":            {"since", "path", "pattern", "limit", "include_hidden", "include_ignored"},
	"find_files_by_name": {"name_pattern", "path"},
	"search_in_files":    {"query", "file_pattern", "path", "use_regex", "exclude_query", "timeout"},
}

var wantRequired = map[string][]string{
	"Glob":               {"pattern"},
	"Grep":               {"pattern"},
	"LS":                 nil,
	"Changes":            nil,
	"find_files_by_name": {"name_pattern"},
	"search_in_files":    {"query"},
}

// resolve parses a schema (JSON text) and resolves it, checking its
// defaults against it.
func resolve(t *testing.T, name, js string) (*jsonschema.Schema, *jsonschema.Resolved) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("%s: schema is not a JSON Schema: %v", name, err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatalf("%s: schema does not resolve: %v", name, err)
	}
	return &s, rs
}

// TestSchemas checks every tool's schemas: valid JSON Schema objects with
// exactly the documented properties, each described, the required ones
// listed, defaults that validate; and that they accept and refuse what
// the tools do.
func TestSchemas(t *testing.T) {
	for _, name := range AllTools {
		tool := Tool(name)
		if tool == nil {
			t.Fatalf("no tool %s", name)
		}
		if len(tool.Description) < 200 {
			t.Errorf("%s: description too short to teach a model: %q", name, tool.Description)
		}
		s, _ := resolve(t, name, string(tool.InputSchema.(json.RawMessage)))
		if s.Type != "object" {
			t.Errorf("%s: input schema type %q, want object", name, s.Type)
		}
		if got := slices.Sorted(maps.Keys(s.Properties)); !slices.Equal(got, slices.Sorted(slices.Values(wantProperties[name]))) {
			t.Errorf("%s: properties %v, want %v", name, got, wantProperties[name])
		}
		if !slices.Equal(s.Required, wantRequired[name]) {
			t.Errorf("%s: required %v, want %v", name, s.Required, wantRequired[name])
		}
		for p, ps := range s.Properties {
			if ps.Description == "" {
				t.Errorf("%s: property %s has no description", name, p)
			}
			if ps.Type == "" && len(ps.Types) == 0 {
				t.Errorf("%s: property %s has no type", name, p)
			}
		}
		out, _ := resolve(t, name+" output", string(tool.OutputSchema.(json.RawMessage)))
		if out.Type != "object" {
			t.Errorf("%s: output schema type %q, want object", name, out.Type)
		}
	}

	// The limits of query/params.go.
	valid := map[string][]string{
		"Glob":               {`{"pattern":"**/*.go"}`, `{"pattern":"x","limit":200,"sort":"recent","case_sensitive":false}`, `{"pattern":"**","type":"go","type_not":["md"]}`},
		"Grep":               {`{"pattern":"x","limit":1000,"output_mode":"count","context":20,"timeout_ms":60000}`, `{"pattern":"x","type":["go","py"],"type_not":"md"}`},
		"LS":                 {`{}`, `{"path":"src","offset":10,"limit":200,"ignore":["*.md","**/testdata"]}`},
		"find_files_by_name": {`{"name_pattern":"*.py"}`},
		"search_in_files":    {`{"query":"x","file_pattern":"*.py","use_regex":true,"exclude_query":"y","timeout":5}`},
	}
	invalid := map[string][]string{
		"Glob": {`{}`, `{"pattern":"x","type":1}`, `{"pattern":"x","limit":0}`, `{"pattern":"x","limit":201}`, `{"pattern":"x","sort":"size"}`, `{"pattern":1}`},
		"Grep": {`{}`, `{"pattern":"x","limit":1001}`, `{"pattern":"x","output_mode":"lines"}`, `{"pattern":"x","context":21}`,
			`{"pattern":"x","timeout_ms":0}`, `{"pattern":"x","include":["*.go"]}`},
		"LS":                 {`{"limit":201}`, `{"offset":-1}`, `{"ignore":"*.md","limit":0}`},
		"find_files_by_name": {`{}`, `{"path":"."}`},
		"search_in_files":    {`{}`, `{"query":"x","timeout":0}`, `{"query":"x","use_regex":"yes"}`},
	}
	for name, list := range valid {
		_, rs := resolve(t, name, string(Tool(name).InputSchema.(json.RawMessage)))
		for _, args := range list {
			var v map[string]any
			json.Unmarshal([]byte(args), &v)
			if err := rs.Validate(v); err != nil {
				t.Errorf("%s schema refuses %s: %v", name, args, err)
			}
		}
		for _, args := range invalid[name] {
			var v map[string]any
			json.Unmarshal([]byte(args), &v)
			if err := rs.Validate(v); err == nil {
				t.Errorf("%s schema accepts %s", name, args)
			}
		}
	}
}

// TestListTools checks the tool list a client sees for each tool set.
func TestListTools(t *testing.T) {
	for _, set := range [][]string{nil, DefaultTools, AllTools, {ToolSearchInFiles}} {
		_, cs := connect(t, Config{Query: directQuery, Root: t.TempDir(), Tools: set}, nil, nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schema, ok := tool.InputSchema.(map[string]any)
			if !ok || schema["type"] != "object" || schema["properties"] == nil {
				t.Errorf("%s: input schema %v", tool.Name, tool.InputSchema)
			}
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s: not annotated read-only", tool.Name)
			}
		}
		want := set
		if want == nil {
			want = DefaultTools
		}
		if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
			t.Errorf("tools %v, want %v", names, want)
		}
	}
}

// TestEnvelopeTools calls Glob, Grep and LS and checks their answers.
func TestEnvelopeTools(t *testing.T) {
	root := mkSample(t)
	rec := &recorder{next: directQuery}
	_, cs := connect(t, Config{Query: rec.query, Root: root}, nil, nil)
	outputs := map[string]*jsonschema.Resolved{}
	for _, name := range DefaultTools {
		_, outputs[name] = resolve(t, name, string(Tool(name).OutputSchema.(json.RawMessage)))
	}
	check := func(tool, args string) *testEnvelope {
		t.Helper()
		res := call(t, cs, tool, args)
		env := envelopeOf(t, res, args)
		var v map[string]any
		json.Unmarshal(structured(t, res), &v)
		if err := outputs[tool].Validate(v); err != nil {
			t.Errorf("%s: structuredContent does not match the output schema: %v", tool, err)
		}
		// The arguments reach the tool exactly as sent.
		if args != "" {
			if got, want := rec.last(t), tool+" "+root+" "+args; got != want {
				t.Errorf("Query got %q, want %q", got, want)
			}
		}
		return env
	}

	env := check("Glob", `{"pattern":"**/*.ts"}`)
	if want := []string{"src/b.ts", "src/util/c.ts"}; env.Status != "success" || !equal(env.Data.Paths, want) {
		t.Errorf("Glob: %s %v, want success %v", env.Status, env.Data.Paths, want)
	}
	if want := lines("Found 2 files matching '**/*.ts' in '.'", "(Scanned "); !strings.HasPrefix(env.Text, want) {
		t.Errorf("Glob text %q", env.Text)
	}
	env = check("Glob", `{"pattern":"**/*.ts","path":"src","include_hidden":false,"limit":1}`)
	if want := []string{"src/b.ts"}; env.Status != "partial" || !env.Data.Truncated || !equal(env.Data.Paths, want) {
		t.Errorf("Glob limit 1: %s %v truncated %v", env.Status, env.Data.Paths, env.Data.Truncated)
	}

	env = check("Grep", `{"pattern":"BETA","include":"*.ts"}`)
	want := []string{"src/b.ts:1: export const beta = 1;", "src/b.ts:2: export const BETA2 = 2;", "src/util/c.ts:1: // TODO beta"}
	if env.Status != "success" || !equal(env.matchLines(), want) {
		t.Errorf("Grep: %s %q, want %q", env.Status, env.matchLines(), want)
	}
	if !strings.HasSuffix(env.Text, "\n\n"+lines(want...)) {
		t.Errorf("Grep text %q", env.Text)
	}
	env = check("Grep", `{"pattern":"beta <","fixed_strings":true,"case_sensitive":true}`)
	if want := []string{"docs/readme.md:2: use beta < gamma & delta"}; !equal(env.matchLines(), want) {
		t.Errorf("Grep literal: %q, want %q", env.matchLines(), want)
	}
	env = check("Grep", `{"pattern":"beta","output_mode":"files_with_matches"}`)
	if want := []string{"src/b.ts", "src/util/c.ts", "docs/readme.md"}; !equal(env.Data.Files, want) {
		t.Errorf("Grep files: %q, want %q", env.Data.Files, want)
	}

	env = check("LS", `{"path":"src"}`)
	if want := []string{"util/", "b.ts"}; env.Status != "success" || !equal(env.entryNames(), want) {
		t.Errorf("LS src: %s %v, want %v", env.Status, env.entryNames(), want)
	}
	env = check("LS", "")
	if want := []string{"docs/", "src/", "a.go"}; !equal(env.entryNames(), want) {
		t.Errorf("LS: %v, want %v", env.entryNames(), want)
	}
	if want := lines("Listed 3 entries in '.'", "", "docs/", "src/", "a.go"); env.Text != want {
		t.Errorf("LS text %q, want %q", env.Text, want)
	}
}

// TestEnvelopeErrors checks that tool errors are isError results carrying
// the error envelope.
func TestEnvelopeErrors(t *testing.T) {
	root := mkSample(t)
	_, cs := connect(t, Config{Query: directQuery, Root: root}, nil, nil)
	for _, tc := range []struct {
		tool, args, code, msg string
	}{
		{"Glob", `{}`, "INVALID_PARAM", "Missing required parameter 'pattern'."},
		{"Glob", ``, "INVALID_PARAM", "Missing required parameter 'pattern'."},
		{"Grep", `{"include":"*.go"}`, "INVALID_PARAM", "Missing required parameter 'pattern'."},
		{"Grep", `{"pattern":"a(b"}`, "INVALID_PARAM", "Invalid regex pattern: error parsing regexp: missing closing ): `a(b`"},
		{"Grep", `{"pattern":"x","path":"../.."}`, "ACCESS_DENIED", "Access denied. Path must be within project root."},
		{"Glob", `{"pattern":"*","path":"/"}`, "ACCESS_DENIED", "Access denied. Path must be within project root."},
		{"LS", `{"path":"nope"}`, "NOT_FOUND", "Path 'nope' does not exist."},
		{"Glob", `{"pattern":"x","limit":500}`, "INVALID_PARAM", "limit must be an integer between 1 and 200."},
		// An argument the tool does not take is named, with the ones it
		// takes, not ignored.
		{"Grep", `{"pattern":"x","bogus":1}`, "INVALID_PARAM", "Unknown parameter 'bogus'. Grep takes: pattern, path, include, type, type_not, case_sensitive, fixed_strings, limit, output_mode, context_after, context_before, context, multiline, timeout_ms, include_hidden, include_ignored, changed_since."},
		{"Glob", `{"pattern":"x","Limit":5,"include_hiden":true}`, "INVALID_PARAM", "Unknown parameters 'Limit', 'include_hiden'. Glob takes: pattern, path, limit, include_hidden, include_ignored, case_sensitive, type, type_not, sort, changed_since."},
		{"LS", `{"pattern":"*.go"}`, "INVALID_PARAM", "Unknown parameter 'pattern'. LS takes: path, offset, limit, include_hidden, include_ignored, ignore."},
		{"Changes", `{"sice":"x"}`, "INVALID_PARAM", "Unknown parameter 'sice'. Changes takes: since, path, pattern, limit, include_hidden, include_ignored."},
	} {
		res := call(t, cs, tc.tool, tc.args)
		env := envelopeOf(t, res, tc.args)
		if !res.IsError || env.Error == nil || env.Error.Code != tc.code || env.Error.Message != tc.msg {
			t.Errorf("%s %s: isError %v, error %+v; want %s %q", tc.tool, tc.args, res.IsError, env.Error, tc.code, tc.msg)
		}
		if want := "Error: " + tc.msg; text(t, res) != want {
			t.Errorf("%s %s: text %q, want %q", tc.tool, tc.args, text(t, res), want)
		}
	}
}

// TestQueryFailure checks a call nothing could answer: an isError result
// with an INTERNAL_ERROR envelope.
func TestQueryFailure(t *testing.T) {
	fail := func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("no daemon and no walk")
	}
	_, cs := connect(t, Config{Query: fail, Root: t.TempDir(), Tools: AllTools}, nil, nil)
	res := call(t, cs, "Grep", `{"pattern":"x"}`)
	env := envelopeOf(t, res, `{"pattern":"x"}`)
	if !res.IsError || env.Error == nil || env.Error.Code != "INTERNAL_ERROR" || env.Error.Message != "no daemon and no walk" {
		t.Errorf("isError %v, error %+v", res.IsError, env.Error)
	}
	res = call(t, cs, ToolSearchInFiles, `{"query":"x"}`)
	if !res.IsError || text(t, res) != "no daemon and no walk" {
		t.Errorf("search_in_files: isError %v, text %q", res.IsError, text(t, res))
	}
}

// TestCompat checks the compatibility tools' answers, exactly as
// docs/tools.md shapes them.
func TestCompat(t *testing.T) {
	root := mkSample(t)
	rec := &recorder{next: directQuery}
	_, cs := connect(t, Config{Query: rec.query, Root: root, Tools: AllTools}, nil, nil)
	outputs := map[string]*jsonschema.Resolved{}
	for _, name := range []string{ToolFindFiles, ToolSearchInFiles} {
		_, outputs[name] = resolve(t, name, string(Tool(name).OutputSchema.(json.RawMessage)))
	}
	for _, tc := range []struct {
		tool, args string
		want       string // the text: the answer's JSON
		sent       string // the arguments of the Glob or Grep call
	}{
		{ToolFindFiles, `{"name_pattern":"*.ts"}`,
			`{"files":["src/b.ts","src/util/c.ts"],"total_found":2}`,
			`Glob {"pattern":"**/*.ts","path":".","limit":200}`},
		{ToolFindFiles, `{"name_pattern":"c.ts","path":"src"}`,
			`{"files":["src/util/c.ts"],"total_found":1}`,
			`Glob {"pattern":"**/c.ts","path":"src","limit":200}`},
		{ToolFindFiles, `{"name_pattern":"src/*.ts"}`,
			`{"files":["src/b.ts"],"total_found":1}`,
			`Glob {"pattern":"src/*.ts","path":".","limit":200}`},
		{ToolFindFiles, `{"name_pattern":"*.rs","path":null}`,
			`{"files":[],"total_found":0}`,
			`Glob {"pattern":"**/*.rs","path":".","limit":200}`},
		{ToolSearchInFiles, `{"query":"beta"}`,
			`{"matches":[{"file_path":"src/b.ts","line_number":1,"line_content":"export const beta = 1;"},{"file_path":"src/util/c.ts","line_number":1,"line_content":"// TODO beta"},{"file_path":"docs/readme.md","line_number":2,"line_content":"use beta < gamma & delta"}],"total_matches":3,"files_searched":4,"timed_out":false}`,
			`Grep {"pattern":"beta","path":".","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":60000}`},
		{ToolSearchInFiles, `{"query":"beta","exclude_query":"TODO","file_pattern":"*.ts","timeout":5}`,
			`{"matches":[{"file_path":"src/b.ts","line_number":1,"line_content":"export const beta = 1;"}],"total_matches":1,"files_searched":2,"timed_out":false}`,
			`Grep {"pattern":"beta","path":".","include":"*.ts","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":5000}`},
		{ToolSearchInFiles, `{"query":"be.a"}`,
			`{"matches":[],"total_matches":0,"files_searched":4,"timed_out":false}`,
			`Grep {"pattern":"be.a","path":".","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":60000}`},
		{ToolSearchInFiles, `{"query":"[bB]e.a\\b","use_regex":true,"exclude_query":"^//|#","path":"src","timeout":3600}`,
			`{"matches":[{"file_path":"src/b.ts","line_number":1,"line_content":"export const beta = 1;"}],"total_matches":1,"files_searched":2,"timed_out":false}`,
			`Grep {"pattern":"[bB]e.a\\b","path":"src","case_sensitive":true,"fixed_strings":false,"limit":1000,"timeout_ms":60000}`},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %s: isError: %s", tc.tool, tc.args, text(t, res))
			continue
		}
		if got := text(t, res); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, got, tc.want)
		}
		if got, want := compact(t, structured(t, res)), compact(t, json.RawMessage(tc.want)); got != want {
			t.Errorf("%s %s: structuredContent %s, want %s", tc.tool, tc.args, got, want)
		}
		var v map[string]any
		json.Unmarshal(structured(t, res), &v)
		if err := outputs[tc.tool].Validate(v); err != nil {
			t.Errorf("%s: structuredContent does not match the output schema: %v", tc.tool, err)
		}
		if got, want := rec.last(t), strings.Replace(tc.sent, " ", " "+root+" ", 1); got != want {
			t.Errorf("%s %s: sent\n%s\nwant\n%s", tc.tool, tc.args, got, want)
		}
	}

	for _, tc := range []struct{ tool, args, msg string }{
		{ToolFindFiles, `{}`, "Missing required parameter 'name_pattern'."},
		{ToolFindFiles, ``, "Missing required parameter 'name_pattern'."},
		{ToolFindFiles, `{"name_pattern":""}`, "Missing required parameter 'name_pattern'."},
		{ToolFindFiles, `{"name_pattern":7}`, "name_pattern must be a string."},
		{ToolFindFiles, `{"name_pattern":"*","path":"/"}`, "Access denied. Path must be within project root."},
		{ToolFindFiles, `{"name_pattern":"*","path":"nope"}`, "Search root 'nope' does not exist."},
		{ToolSearchInFiles, `{"file_pattern":"*.go"}`, "Missing required parameter 'query'."},
		{ToolSearchInFiles, `{"query":["x"]}`, "query must be a string."},
		{ToolSearchInFiles, `{"query":"x","use_regex":1}`, "use_regex must be a boolean."},
		{ToolSearchInFiles, `{"query":"x","timeout":0}`, "timeout must be a positive integer (seconds)."},
		{ToolSearchInFiles, `{"query":"x","timeout":1.5}`, "timeout must be a positive integer (seconds)."},
		{ToolSearchInFiles, `{"query":"x","use_regex":true,"exclude_query":"("}`, "Invalid regex pattern in exclude_query: error parsing regexp: missing closing ): `(`"},
		{ToolSearchInFiles, `{"query":"(","use_regex":true}`, "Invalid regex pattern: error parsing regexp: missing closing ): `(`"},
		{ToolSearchInFiles, `{"query":"x","path":"../"}`, "Access denied. Path must be within project root."},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if !res.IsError || text(t, res) != tc.msg || res.StructuredContent != nil {
			t.Errorf("%s %s: isError %v, text %q, structured %v; want error %q", tc.tool, tc.args, res.IsError, text(t, res), res.StructuredContent, tc.msg)
		}
	}
}

// TestCompatTimeout checks that a Grep timeout is search_in_files's
// timed_out, with or without matches, not an error.
func TestCompatTimeout(t *testing.T) {
	answers := map[string]string{
		// A timeout with nothing found is a TIMEOUT error envelope.
		"none": `{"status":"error","data":{"matches":[],"truncated":false,"aborted_reason":"timeout"},"text":"Error: Search timed out before finding any match. Narrow the pattern or path.","stats":{"time_ms":1000,"matched_files":0,"matched_lines":0,"files_scanned":7,"binary_skipped":0,"ignored":0},"context":{"cwd":".","params_input":{}},"error":{"code":"TIMEOUT","message":"Search timed out before finding any match. Narrow the pattern or path."}}`,
		"some": `{"status":"partial","data":{"matches":[{"file":"a.go","line":3,"text":"x := 1"}],"truncated":false,"aborted_reason":"timeout"},"text":"...","stats":{"time_ms":1000,"matched_files":1,"matched_lines":1,"candidates":12,"files_scanned":9,"binary_skipped":0,"ignored":0},"context":{"cwd":".","params_input":{}}}`,
	}
	fake := func(_ context.Context, tool, _ string, args json.RawMessage) (json.RawMessage, error) {
		var a struct{ Pattern string }
		json.Unmarshal(args, &a)
		return json.RawMessage(answers[a.Pattern]), nil
	}
	_, cs := connect(t, Config{Query: fake, Root: t.TempDir(), Tools: []string{ToolSearchInFiles}}, nil, nil)
	for q, want := range map[string]string{
		"none": `{"matches":[],"total_matches":0,"files_searched":7,"timed_out":true}`,
		"some": `{"matches":[{"file_path":"a.go","line_number":3,"line_content":"x := 1"}],"total_matches":1,"files_searched":12,"timed_out":true}`,
	} {
		res := call(t, cs, ToolSearchInFiles, `{"query":"`+q+`","timeout":1}`)
		if res.IsError || text(t, res) != want {
			t.Errorf("%s: isError %v, text %s; want %s", q, res.IsError, text(t, res), want)
		}
	}
}
