package query

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// The tools' contract as agents know it: the error of each bad argument
// or path, and the text formats (docs/tools.md).

func contractTree() fsTree {
	return fsTree{
		"README.md":       "# readme\n",
		"x.txt":           "hello\n",
		"src/main.py":     "def main():\n    print('hello')\n",
		"src/utils/io.py": "import os\nclass User:\n    pass\n",
		"core/agent.py":   "class Agent:\n    pass\n",
		"core/llm.py":     "class LLM:\n    pass\n",
		"empty/":          "",
	}
}

const (
	msgMissingPattern = "Missing required parameter 'pattern'."
	msgGlobLimit      = "limit must be an integer between 1 and 200."
	msgGrepLimit      = "limit must be an integer between 1 and 1000."
	msgInclude        = "include must be a string if provided."
	msgNotObject      = "Arguments must be a JSON object."
)

func TestErrorTables(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, contractTree())
	const (
		inv    = envelope.CodeInvalidParam
		nf     = envelope.CodeNotFound
		denied = envelope.CodeAccessDenied
	)
	tests := []struct {
		tool, args string
		code       envelope.Code
		msg        string
	}{
		// Missing pattern; empty and null count as missing.
		{tool.Glob, `{}`, inv, msgMissingPattern},
		{tool.Glob, `{"pattern":""}`, inv, msgMissingPattern},
		{tool.Glob, `{"pattern":null}`, inv, msgMissingPattern},
		{tool.Glob, `null`, inv, msgMissingPattern},
		{tool.Glob, `{"pattern":"./"}`, inv, msgMissingPattern},
		{tool.Grep, `{}`, inv, msgMissingPattern},
		{tool.Grep, `{"pattern":""}`, inv, msgMissingPattern},
		{tool.Grep, `{"path":"src"}`, inv, msgMissingPattern},
		// limit: out of range, a string, a fraction.
		{tool.Glob, `{"pattern":"*","limit":0}`, inv, msgGlobLimit},
		{tool.Glob, `{"pattern":"*","limit":201}`, inv, msgGlobLimit},
		{tool.Glob, `{"pattern":"*","limit":-1}`, inv, msgGlobLimit},
		{tool.Glob, `{"pattern":"*","limit":"5"}`, inv, msgGlobLimit},
		{tool.Glob, `{"pattern":"*","limit":1.5}`, inv, msgGlobLimit},
		{tool.Glob, `{"pattern":"*","limit":true}`, inv, msgGlobLimit},
		{tool.Grep, `{"pattern":"x","limit":0}`, inv, msgGrepLimit},
		{tool.Grep, `{"pattern":"x","limit":1001}`, inv, msgGrepLimit},
		{tool.Grep, `{"pattern":"x","limit":"5"}`, inv, msgGrepLimit},
		{tool.Grep, `{"pattern":"x","limit":2.5}`, inv, msgGrepLimit},
		{tool.LS, `{"limit":0}`, inv, msgGlobLimit},
		{tool.LS, `{"limit":201}`, inv, msgGlobLimit},
		{tool.LS, `{"offset":-1}`, inv, "offset must be a non-negative integer."},
		{tool.LS, `{"offset":"2"}`, inv, "offset must be a non-negative integer."},
		// include's type.
		{tool.Grep, `{"pattern":"x","include":5}`, inv, msgInclude},
		{tool.Grep, `{"pattern":"x","include":["*.go"]}`, inv, msgInclude},
		{tool.Grep, `{"pattern":"x","include":{}}`, inv, msgInclude},
		// Wrong types.
		{tool.Glob, `{"pattern":5}`, inv, "pattern must be a string."},
		{tool.Grep, `{"pattern":["a"]}`, inv, "pattern must be a string."},
		{tool.Glob, `{"pattern":"*","path":5}`, inv, "path must be a string."},
		{tool.Grep, `{"pattern":"x","path":false}`, inv, "path must be a string."},
		{tool.LS, `{"path":7}`, inv, "path must be a string."},
		{tool.Glob, `{"pattern":"*","include_hidden":"yes"}`, inv, "include_hidden must be a boolean."},
		{tool.Glob, `{"pattern":"*","include_ignored":1}`, inv, "include_ignored must be a boolean."},
		{tool.Glob, `{"pattern":"*","case_sensitive":"true"}`, inv, "case_sensitive must be a boolean."},
		{tool.Grep, `{"pattern":"x","case_sensitive":0}`, inv, "case_sensitive must be a boolean."},
		{tool.Grep, `{"pattern":"x","multiline":"no"}`, inv, "multiline must be a boolean."},
		{tool.LS, `{"include_hidden":"no"}`, inv, "include_hidden must be a boolean."},
		{tool.LS, `{"ignore":5}`, inv, "ignore must be a list of strings."},
		{tool.LS, `{"ignore":[1]}`, inv, "ignore must be a list of strings."},
		{tool.Glob, `{"pattern":"*","sort":"size"}`, inv, `sort must be one of ["path" "recent"].`},
		{tool.Grep, `{"pattern":"x","output_mode":"lines"}`, inv, `output_mode must be one of ["content" "files_with_matches" "count"].`},
		{tool.Grep, `{"pattern":"x","context":21}`, inv, "context must be an integer between 0 and 20."},
		{tool.Grep, `{"pattern":"x","context_before":-1}`, inv, "context_before must be an integer between 0 and 20."},
		{tool.Grep, `{"pattern":"x","context_after":"2"}`, inv, "context_after must be an integer between 0 and 20."},
		{tool.Grep, `{"pattern":"x","timeout_ms":0}`, inv, "timeout_ms must be an integer between 1 and 60000."},
		// Arguments that are not an object.
		{tool.Glob, `[]`, inv, msgNotObject},
		{tool.Glob, `"**/*.py"`, inv, msgNotObject},
		{tool.Grep, `5`, inv, msgNotObject},
		{tool.LS, `[{"path":"."}]`, inv, msgNotObject},
		{tool.LS, `{"path":`, inv, msgNotObject},
		// Unknown tool.
		{"Read", `{}`, inv, "Unknown tool 'Read'."},
		// Path errors.
		{tool.Glob, `{"pattern":"*","path":"nope"}`, nf, "Search root 'nope' does not exist."},
		{tool.Grep, `{"pattern":"x","path":"nope"}`, nf, "Search root 'nope' does not exist."},
		{tool.Glob, `{"pattern":"*","path":"src/nope/deeper"}`, nf, "Search root 'src/nope/deeper' does not exist."},
		{tool.LS, `{"path":"nope"}`, nf, "Path 'nope' does not exist."},
		{tool.Glob, `{"pattern":"*","path":"x.txt"}`, inv, "Search root 'x.txt' is not a directory."},
		{tool.Grep, `{"pattern":"x","path":"x.txt"}`, inv, "Search root 'x.txt' is not a directory."},
		{tool.LS, `{"path":"x.txt"}`, inv, "Path 'x.txt' is not a directory."},
		{tool.Glob, `{"pattern":"*","path":".."}`, denied, msgAccessDenied},
		{tool.Grep, `{"pattern":"x","path":"../"}`, denied, msgAccessDenied},
		{tool.LS, `{"path":"/"}`, denied, msgAccessDenied},
		// Invalid patterns.
		{tool.Glob, `{"pattern":"[a-"}`, inv, "Invalid glob pattern '[a-'."},
		{tool.Grep, `{"pattern":"x","include":"[a-"}`, inv, "Invalid include pattern '[a-'."},
		{tool.LS, `{"ignore":["[a-"]}`, inv, "Invalid ignore pattern '[a-'."},
	}
	for _, tc := range tests {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			r := run(t, tools, tc.tool, tc.args)
			wantError(t, r, tc.code, tc.msg)
			if len(r.DataKeys) != 0 {
				t.Errorf("error data = %v, want {}", r.DataKeys)
			}
		})
	}
}

func TestInvalidRegex(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, contractTree())
	for _, p := range []string{"(", "[a-", "a{2,1}", `\k`, "*x"} {
		r := run(t, tools, tool.Grep, jsonArgs("pattern", p))
		wantStatus(t, r, "error")
		if r.Error.Code != envelope.CodeInvalidParam || !strings.HasPrefix(r.Error.Message, "Invalid regex pattern: ") {
			t.Errorf("%q: error %s %q, want INVALID_PARAM \"Invalid regex pattern: ...\"", p, r.Error.Code, r.Error.Message)
		}
		if len(r.Error.Message) <= len("Invalid regex pattern: ") {
			t.Errorf("%q: message has no details: %q", p, r.Error.Message)
		}
		if r.Context.Pattern != p {
			t.Errorf("%q: context.pattern = %q", p, r.Context.Pattern)
		}
	}
}

// Arguments are echoed exactly, unknown keys are ignored.
func TestParamsInputAndUnknownKeys(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, contractTree())
	args := `{"pattern": "**/*.py",  "path":"src", "frobnicate": [1,2], "limit": 2}`
	r := run(t, tools, tool.Glob, args)
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"src/main.py", "src/utils/io.py"})
	if string(r.Context.ParamsInput) != `{"pattern":"**/*.py","path":"src","frobnicate":[1,2],"limit":2}` {
		t.Errorf("params_input = %s", r.Context.ParamsInput)
	}
	if r.Context.Cwd != "." || r.Context.PathResolved != "src" || r.Context.PatternNormalized != "**/*.py" {
		t.Errorf("context = %+v", r.Context)
	}

	r = run(t, tools, tool.Grep, `{"pattern":"class","unknown":true,"include":null}`)
	wantStatus(t, r, "success")
	if r.Context.SortedBy != "mtime_desc" || r.Context.Pattern != "class" {
		t.Errorf("grep context = %+v", r.Context)
	}
	r = run(t, tools, tool.LS, `{"whatever":{"a":1}}`)
	wantStatus(t, r, "success")
}

// Glob's text (docs/tools.md, "Glob").
func TestGlobText(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, contractTree())
	r := run(t, tools, tool.Glob, `{"pattern":"**/*.py","path":"core"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "Found 2 files matching '**/*.py' in 'core'\n(Scanned 2 items in Nms)\n\ncore/agent.py\ncore/llm.py")
	equal(t, "stats", [2]int{r.Stats.Matched, r.Stats.Visited}, [2]int{2, 2})
	equal(t, "data keys", r.DataKeys, []string{"paths", "truncated"})

	r = run(t, tools, tool.Glob, `{"pattern":"*.rs"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "No files found matching '*.rs' in '.'\n(Scanned 5 items in Nms)")
	equal(t, "paths", r.paths(), []string{})

	r = run(t, tools, tool.Glob, `{"pattern":"**/*.py","limit":2}`)
	wantStatus(t, r, "partial")
	wantText(t, r, "Found 2 files matching '**/*.py' in '.'\n(Scanned 10 items in Nms)\n"+
		"[Truncated: Showing first 2 files. Narrow the pattern or path, or raise limit (max 200).]\n\n"+
		"core/agent.py\ncore/llm.py")
	if !r.Data.Truncated {
		t.Error("truncated = false")
	}
}

// Grep's text (docs/tools.md, "Grep").
func TestGrepText(t *testing.T) {
	t.Parallel()
	tools, _ := setupOrdered(t)
	r := run(t, tools, tool.Grep, `{"pattern":"class\\s+\\w+:"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "Found 3 matches in 3 files for 'class\\s+\\w+:' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+
		"src/utils/io.py:2: class User:\ncore/agent.py:1: class Agent:\ncore/llm.py:1: class LLM:")
	equal(t, "stats", [2]int{r.Stats.MatchedFiles, r.Stats.MatchedLines}, [2]int{3, 3})

	r = run(t, tools, tool.Grep, `{"pattern":"class","path":"src"}`)
	wantText(t, r, "Found 1 matches in 1 files for 'class' in 'src'\n(Sorted by mtime desc. Took Nms)\n\nsrc/utils/io.py:2: class User:")

	r = run(t, tools, tool.Grep, `{"pattern":"nothing_here"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "No matches found for 'nothing_here' in '.'\n(Sorted by mtime desc. Took Nms)")
	equal(t, "matches", r.Data.Matches, []envelope.GrepMatch{})

	r = run(t, tools, tool.Grep, `{"pattern":"class","limit":2}`)
	wantStatus(t, r, "partial")
	wantText(t, r, "Found 2 matches in 2 files for 'class' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		"[Truncated: Showing first 2 matches. Narrow pattern or path.]\n\n"+
		"src/utils/io.py:2: class User:\ncore/agent.py:1: class Agent:")
}

// LS's text (docs/tools.md, "LS").
func TestLSText(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, contractTree())
	r := run(t, tools, tool.LS, `{}`)
	wantStatus(t, r, "success")
	wantText(t, r, "Listed 5 entries in '.'\n\ncore/\nempty/\nsrc/\nREADME.md\nx.txt")

	r = run(t, tools, tool.LS, `{"path":".","limit":2}`)
	wantStatus(t, r, "partial")
	wantText(t, r, "Listed 2 entries in '.' (truncated from 5 total). Use 'offset' to paginate.\n\ncore/\nempty/")

	r = run(t, tools, tool.LS, `{"path":"empty"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "Listed 0 entries in 'empty'")
	equal(t, "entries", r.Data.Entries, []envelope.LSEntry{})
}

// ---- golden envelopes ----

var update = flag.Bool("update", false, "rewrite the golden envelopes in ../testdata/golden")

const goldenDir = "../testdata/golden"

var goldenTimingRE = regexp.MustCompile(`("time_ms":)\d+|(in |Took |after )\d+ms`)

// normGolden zeroes time_ms and the timings in text, then indents.
func normGolden(t *testing.T, js []byte) []byte {
	t.Helper()
	js = goldenTimingRE.ReplaceAllFunc(js, func(m []byte) []byte {
		if bytes.HasPrefix(m, []byte(`"time_ms":`)) {
			return []byte(`"time_ms":0`)
		}
		return regexp.MustCompile(`\d+ms$`).ReplaceAll(m, []byte("0ms"))
	})
	var out bytes.Buffer
	if err := json.Indent(&out, js, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// TestGolden compares whole envelopes with testdata/golden/NAME.json.
// go test ./query -run Golden -update rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	tools, root := setupOrdered(t)
	mkTree(t, root, fsTree{"link": "->core", "node_modules/m.js": "", "nolink": "->nope"})
	tests := []struct{ name, tool, args string }{
		{"glob_success", tool.Glob, `{"pattern":"**/*.py","path":"core"}`},
		{"glob_no_match", tool.Glob, `{"pattern":"**/*.js"}`},
		{"glob_truncated", tool.Glob, `{"pattern":"**/*.py","limit":1}`},
		{"glob_not_found", tool.Glob, `{"pattern":"*","path":"nope"}`},
		{"grep_success", tool.Grep, `{"pattern":"class\\s+\\w+","path":"core"}`},
		{"grep_truncated", tool.Grep, `{"pattern":"class","limit":2}`},
		{"grep_invalid_regex", tool.Grep, `{"pattern":"("}`},
		{"grep_files", tool.Grep, `{"pattern":"class","output_mode":"files_with_matches"}`},
		{"grep_access_denied", tool.Grep, `{"pattern":"x","path":"../etc"}`},
		{"ls_truncated", tool.LS, `{"limit":3}`},
		{"ls_links", tool.LS, `{"offset":3}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := normGolden(t, runJSON(t, tools, tc.tool, ".", json.RawMessage(tc.args)))
			file := filepath.Join(goldenDir, tc.name+".json")
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./query -run Golden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs:\n--- got\n%s--- want\n%s", file, got, want)
			}
		})
	}
}

// setupOrdered is setup of contractTree with the Python files' mtimes
// apart (io.py newest, then agent.py, then llm.py), so that Grep's order
// is known.
func setupOrdered(t *testing.T) (*Tools, string) {
	t.Helper()
	tools, root := setup(t, contractTree())
	setMtime(t, root, "src/utils/io.py", base.Add(3))
	setMtime(t, root, "core/agent.py", base.Add(2))
	setMtime(t, root, "core/llm.py", base.Add(1))
	return tools, root
}
