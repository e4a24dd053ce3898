package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/tool"
)

// TestIncompleteAnswers: complete, or it says so. An answer cut short by
// anything but a limit (a time limit, a breaker, an unreadable file, a
// file searched in part, paths that may not be read, changes not
// tracked) prints what it found, then
// "indexctl: incomplete: ..." on stderr, and exits 2, in text and in
// --json alike; a limit's cut, a fallback walk and a fresh instance's
// listing are whole answers.
func TestIncompleteAnswers(t *testing.T) {
	t.Parallel()
	const ctx = `"context":{"cwd":".","params_input":{}}`
	grep := func(status, data string) string {
		return `{"status":"` + status + `","data":` + data + `,"text":"Found …","stats":{"time_ms":1},` + ctx + `}`
	}
	match := `"matches":[{"file":"a.go","line":3,"text":"x"}]`
	for _, tc := range []struct {
		name, tool, args, answer string
		bound                    bound
		code                     int
		why                      string // the incomplete line's text after "incomplete: "; "" for none
	}{
		{"whole", tool.Grep, `{"pattern":"x"}`, grep("success", `{`+match+`,"truncated":false}`), noBound, daemonapi.ExitFound, ""},
		{"the user's limit", tool.Grep, `{"pattern":"x","limit":1}`, grep("partial", `{`+match+`,"truncated":true}`), userBound, daemonapi.ExitFound, ""},
		{"the agents' limit", tool.Grep, `{"pattern":"x"}`, grep("partial", `{`+match+`,"truncated":true}`), agentBound, daemonapi.ExitFound, ""},
		{"a fallback walk", tool.Grep, `{"pattern":"x"}`, grep("partial", `{`+match+`,"truncated":false,"fallback_used":true,"fallback_reason":"index_building"}`), noBound, daemonapi.ExitFound, ""},
		{"the user's time limit", tool.Grep, `{"pattern":"x","timeout_ms":500}`,
			grep("partial", `{`+match+`,"truncated":false,"aborted_reason":"timeout"}`), noBound, daemonapi.ExitError,
			"the search stopped at its time limit (--timeout-ms 500); what it found by then is shown"},
		{"the agents' time limit", tool.Grep, `{"pattern":"x"}`,
			grep("partial", `{`+match+`,"truncated":false,"aborted_reason":"timeout"}`), agentBound, daemonapi.ExitError,
			"the search stopped at the agent tools' time limit (2000 ms, with --args); what it found by then is shown"},
		{"a truncated answer cut by time too", tool.Grep, `{"pattern":"x","timeout_ms":5}`,
			grep("partial", `{`+match+`,"truncated":true,"aborted_reason":"timeout"}`), noBound, daemonapi.ExitError,
			"the search stopped at its time limit (--timeout-ms 5); what it found by then is shown"},
		{"an unreadable file", tool.Grep, `{"pattern":"x"}`,
			grep("partial", `{`+match+`,"truncated":false,"aborted_reason":"read_error"}`), noBound, daemonapi.ExitError,
			"some files or directories could not be read (out of file descriptors, or an I/O error): matches in them are missing"},
		{"paths that may not be read", tool.Grep, `{"pattern":"x"}`,
			grep("partial", `{`+match+`,"truncated":false,"unreadable":["a/locked/","b.go"]}`), noBound, daemonapi.ExitError,
			"permission denied: could not read a/locked/, b.go; anything in them is missing"},
		{"paths that may not be read, a limit met too", tool.Grep, `{"pattern":"x","limit":1}`,
			grep("partial", `{`+match+`,"truncated":true,"unreadable":["a/locked/"]}`), userBound, daemonapi.ExitError,
			"permission denied: could not read a/locked/; anything in them is missing"},
		{"Glob, paths that may not be read, nothing found", tool.Glob, `{"pattern":"**/*.go"}`,
			`{"status":"partial","data":{"paths":[],"truncated":false,"unreadable":["1/","2/","3/","4/","5/","6/","7/"]},"text":"No files","stats":{"time_ms":1},` + ctx + `}`, noBound, daemonapi.ExitError,
			"permission denied: could not read 1/, 2/, 3/, 4/, 5/ and 2 more; anything in them is missing"},
		{"a file searched in part", tool.Grep, `{"pattern":"x","multiline":true}`,
			grep("partial", `{`+match+`,"truncated":false,"aborted_reason":"size_limit"}`), noBound, daemonapi.ExitError,
			"a file was too large to search whole with --multiline (limit 32 MiB): only its beginning was searched"},
		{"Glob's breaker", tool.Glob, `{"pattern":"**"}`,
			`{"status":"partial","data":{"paths":["a"],"truncated":false,"aborted_reason":"count_limit"},"text":"Found 1","stats":{"time_ms":1},` + ctx + `}`, agentBound, daemonapi.ExitError,
			"the walk stopped after the agent tools' 20000 entries (with --args); what it found by then is shown"},
		{"changes not tracked", tool.Changes, `{"since":"c1"}`,
			`{"status":"partial","data":{"changes":[],"clock":"c2","fresh_instance":false,"truncated":false},"text":"No changes\n[Info: Directories on the default ignore list were skipped: build/. Set include_ignored=true to search them.]\n[Info: changes inside these directories are not tracked (node_modules); list them with Glob or LS.]","stats":{"time_ms":1},` + ctx + `}`, noBound, daemonapi.ExitError,
			"changes inside these directories are not tracked (node_modules); list them with Glob or LS."},
		{"changes not tracked, and a limit met too", tool.Changes, `{"since":"c1","limit":1}`,
			`{"status":"partial","data":{"changes":[{"path":"a","kind":"created","mtime":null}],"clock":"c2","fresh_instance":false,"truncated":true},"text":"1 change\n[Truncated: showing the first 1 paths (--limit 1); more exist.]\n[Info: changes inside these directories are not tracked (node_modules); list them with Glob or LS.]","stats":{"time_ms":1},` + ctx + `}`, userBound, daemonapi.ExitError,
			"changes inside these directories are not tracked (node_modules); list them with Glob or LS."},
		{"a fresh instance's listing", tool.Changes, `{"since":"c1"}`,
			`{"status":"partial","data":{"changes":[{"path":"a","kind":"created","mtime":null}],"clock":"c2","fresh_instance":true,"truncated":false},"text":"Fresh instance: x.","stats":{"time_ms":1},` + ctx + `}`, noBound, daemonapi.ExitFound, ""},
		{"a clock asked for, none kept", tool.Changes, `{}`,
			`{"status":"partial","data":{"changes":[],"clock":"","fresh_instance":false,"truncated":false},"text":"No clock","stats":{"time_ms":1},` + ctx + `}`, noBound, daemonapi.ExitError,
			"no clock: no change journal is kept for this root (its index is still being built, and 'indexctl index --wait' waits for it; or the daemon has no file watcher on this system; or the answer was made without the daemon)"},
		{"a clock", tool.Changes, `{}`,
			`{"status":"success","data":{"changes":[],"clock":"c2","fresh_instance":false,"truncated":false},"text":"Clock","stats":{"time_ms":1},` + ctx + `}`, noBound, daemonapi.ExitFound, ""},
	} {
		for _, asJSON := range []bool{false, true} {
			var stdout, stderr bytes.Buffer
			c := &cli{stdout: &stdout, stderr: &stderr, sys: testSystem()}
			out := c.newOutput(&globals{json: asJSON}, ".")
			out.bound = tc.bound
			out.begin(json.RawMessage(tc.args))
			code := out.finish(out.answer(tc.tool, json.RawMessage(tc.args), json.RawMessage(tc.answer)))
			name := tc.name
			if asJSON {
				name += ", --json"
			}
			if code != tc.code {
				t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, tc.code, stderr.String())
			}
			var lines []string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if s, ok := strings.CutPrefix(l, "indexctl: incomplete: "); ok {
					lines = append(lines, s)
				}
			}
			switch {
			case tc.why == "" && len(lines) > 0:
				t.Errorf("%s: said incomplete: %q", name, lines)
			case tc.why != "" && (len(lines) != 1 || lines[0] != tc.why):
				t.Errorf("%s: incomplete lines %q, want %q", name, lines, tc.why)
			}
			if tc.tool == tool.Grep && !asJSON && !strings.Contains(stdout.String(), "a.go:3: x") {
				t.Errorf("%s: the match found was not printed: %q", name, stdout.String())
			}
			if tc.why != "" && strings.Contains(stderr.String(), "[Partial") {
				t.Errorf("%s: the agents' note is printed too: %q", name, stderr.String())
			}
		}
	}
}
