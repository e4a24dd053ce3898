package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/tool"
)

func TestToolArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cmd   *command
		flags []string
		stdin string
		want  string
		bound bound
	}{
		{"nothing given", globCmd, nil, "", `{}`, noBound},
		{"positional only", globCmd, []string{"*.go"}, "", `{"pattern":"*.go"}`, noBound},
		{"flags in definition order", grepCmd,
			[]string{"--include-hidden", "x", "-C", "2", "--include", "*.go", "-F"}, "",
			`{"pattern":"x","include":"*.go","fixed_strings":true,"context":2,"include_hidden":true}`, noBound},
		{"explicit false and zero are sent; --limit 0 asks for all", globCmd,
			[]string{"--case-sensitive=false", "--limit", "0"}, "",
			`{"limit":0,"case_sensitive":false}`, noBound},
		{"--all", lsCmd, []string{"--all", "d"}, "", `{"path":"d","limit":0}`, noBound},
		{"a limit of 0 in --args is the tool's to refuse", lsCmd, []string{"--args", `{"limit":0}`}, "", `{"limit":0}`, agentBound},
		{"-i and -s: the last wins", grepCmd, []string{"x", "-i", "-s"}, "", `{"pattern":"x","case_sensitive":true}`, noBound},
		{"-s and -i: the last wins", grepCmd, []string{"x", "-s", "--ignore-case"}, "", `{"pattern":"x","case_sensitive":false}`, noBound},
		{"--case-sensitive then -i", grepCmd, []string{"x", "--case-sensitive", "-i"}, "", `{"pattern":"x","case_sensitive":false}`, noBound},
		{"-l, -c and --output-mode: the last wins", grepCmd, []string{"x", "-l", "-c"}, "", `{"pattern":"x","output_mode":"count"}`, noBound},
		{"-c then --output-mode", grepCmd, []string{"x", "-c", "--output-mode", "content"}, "", `{"pattern":"x","output_mode":"content"}`, noBound},
		{"-l=false is not given", grepCmd, []string{"x", "--files-with-matches=false"}, "", `{"pattern":"x"}`, noBound},
		{"-g, -t and -T repeat", grepCmd, []string{"x", "-g", "*.go", "-g", "!*_test.go", "-t", "go", "-T", "md", "--type", "c"}, "",
			`{"pattern":"x","glob":["*.go","!*_test.go"],"type":["go","c"],"type_not":["md"]}`, noBound},
		{"-w", grepCmd, []string{"-w", "a|b"}, "", `{"pattern":"(?:^|\\W)(?:a|b)(?:$|\\W)"}`, noBound},
		{"-w -F quotes the string", grepCmd, []string{"-wF", "a.b"}, "", `{"pattern":"(?:^|\\W)(?:a\\.b)(?:$|\\W)","fixed_strings":false}`, noBound},
		{"-e, repeated", grepCmd, []string{"-e", "a", "-e", "b.c"}, "", `{"pattern":"(?:a)|(?:b.c)"}`, noBound},
		{"-e with -F quotes each", grepCmd, []string{"-F", "-e", "a", "-e", "b.c"}, "", `{"pattern":"(?:a)|(?:b\\.c)","fixed_strings":false}`, noBound},
		{"one -e", grepCmd, []string{"-F", "-e", "b.c"}, "", `{"pattern":"b.c","fixed_strings":true}`, noBound},
		{"-S, lower case", grepCmd, []string{"-S", `\Wfoo(?P<Name>x)\pL\p{Lu}`}, "", `{"pattern":"\\Wfoo(?P<Name>x)\\pL\\p{Lu}","case_sensitive":false}`, noBound},
		{"-S, upper case", grepCmd, []string{"-S", "fooBar"}, "", `{"pattern":"fooBar","case_sensitive":true}`, noBound},
		{"-S then -i", grepCmd, []string{"-S", "-i", "Foo"}, "", `{"pattern":"Foo","case_sensitive":false}`, noBound},
		{"-s then -S", grepCmd, []string{"-s", "-S", "foo"}, "", `{"pattern":"foo","case_sensitive":false}`, noBound},
		{"-u", grepCmd, []string{"-u", "x"}, "", `{"pattern":"x","include_ignored":true}`, noBound},
		{"-uu", grepCmd, []string{"-uu", "x"}, "", `{"pattern":"x","include_ignored":true,"include_hidden":true}`, noBound},
		{"glob's -u is fd's", globCmd, []string{"-u", "x"}, "", `{"pattern":"x","include_ignored":true,"include_hidden":true}`, noBound},
		{"--hidden and --no-ignore", globCmd, []string{"--hidden", "-I", "x"}, "", `{"pattern":"x","include_hidden":true,"include_ignored":true}`, noBound},
		{"a quoted name is sent quoted", lsCmd, []string{`"sub"`}, "", `{"path":"\"\\\"sub\\\"\""}`, noBound},
		{"-n is accepted", grepCmd, []string{"-n", "x"}, "", `{"pattern":"x"}`, noBound},
		{"args keep their order, flags override in place", globCmd,
			[]string{"--args", `{"limit": 3, "pattern": "a", "x": [1, 2]}`, "--limit", "1", "b"}, "",
			`{"limit":1,"pattern":"b","x":[1, 2]}`, userBound},
		{"a duplicate key keeps its first place and last value", lsCmd,
			[]string{"--args", `{"path":"a","offset":1,"path":"b"}`}, "",
			`{"path":"b","offset":1}`, agentBound},
		{"args from stdin", lsCmd, []string{"--args", "-", "--ignore", "a,b", "--ignore", "c"},
			`{"path": "src"}`, `{"path":"src","ignore":["a,b","c"]}`, agentBound},
		{"no HTML escaping", grepCmd, []string{"<a href=\"x\">&"}, "",
			`{"pattern":"<a href=\"x\">&"}`, noBound},
		{"unicode keys and values", grepCmd, []string{"--args", `{"päth":"ü"}`, "ß"}, "",
			`{"päth":"ü","pattern":"ß"}`, agentBound},
		{"names that are not UTF-8 are sent quoted", globCmd, []string{"a\xff.txt", "--path", "d\xfe"}, "",
			`{"pattern":"\"a\\xff.txt\"","path":"\"d\\xfe\""}`, noBound},
		{"include too; a regex is not", grepCmd, []string{"x\xff", "--include", "a\xff.txt"}, "",
			`{"pattern":"x\ufffd","include":"\"a\\xff.txt\""}`, noBound},
		{"LS's positional path", lsCmd, []string{"d\n\xff"}, "", `{"path":"\"d\\n\\xff\""}`, noBound},
		{"valid names are sent as they are", lsCmd, []string{"d\nx"}, "", `{"path":"d\nx"}`, noBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g globals
			var q queryFlags
			fs, global := tc.cmd.flagSets(&g, &q)
			fs.Include(global)
			if err := fs.Parse(tc.flags); err != nil {
				t.Fatal(err)
			}
			got, b, err := toolArgs(tc.cmd, fs, &q, fs.Args(), strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if b != tc.bound {
				t.Errorf("toolArgs(%q): bound %v, want %v", tc.flags, b, tc.bound)
			}
			if string(got) != tc.want {
				t.Errorf("toolArgs(%q) = %s, want %s", tc.flags, got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("toolArgs(%q) = %s: not valid JSON", tc.flags, got)
			}
		})
	}
}

func TestParseObjectErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		``:                 "must be a JSON object",
		`  `:               "must be a JSON object",
		`null`:             "must be a JSON object",
		`[1]`:              "must be a JSON object",
		`"x"`:              "must be a JSON object",
		`{`:                "invalid JSON: unexpected end of input",
		`{"a":1`:           "invalid JSON: unexpected end of input",
		`{"a":}`:           "invalid JSON: invalid character '}' looking for beginning of value",
		`{a:1}`:            "invalid JSON: invalid character 'a' looking for beginning of object key string",
		`{} x`:             "invalid JSON: invalid character 'x' after top-level value",
		`{}{}`:             "invalid JSON: invalid character '{' after top-level value",
		`x`:                "invalid JSON: invalid character 'x' looking for beginning of value",
		`{"a":[1,}`:        "invalid JSON: invalid character '}' looking for beginning of value",
		"{\"a\":\"\x01\"}": "invalid JSON: invalid character '\\x01' in string literal",
	} {
		_, err := parseObject([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("parseObject(%q) error = %v, want %q", in, err, want)
		}
	}
}

// answerCode reads the answer env and returns its exit code for tool.
func answerCode(t *testing.T, tool string, env []byte) (int, error) {
	t.Helper()
	rep, err := readReply(env)
	if err != nil {
		t.Fatalf("readReply(%s): %v", env, err)
	}
	var d answerData
	if err := readData(rep.data, &d); err != nil {
		t.Fatalf("readData(%s): %v", rep.data, err)
	}
	return exitCode(tool, rep.status, &d)
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, env string
		want      int
		err       string // in the error; "" for none
	}{
		{tool.Glob, `{"status":"success","data":{"paths":["a"]}}`, daemonapi.ExitFound, ""},
		{tool.Grep, `{"status":"partial","data":{"matches":[{"file":"a","line":1,"text":""}],"truncated":true}}`, daemonapi.ExitFound, ""},
		{tool.Grep, `{"status":"success","data":{"files":["a"]}}`, daemonapi.ExitFound, ""},
		{tool.Grep, `{"status":"success","data":{"counts":[{"file":"a","count":1}]}}`, daemonapi.ExitFound, ""},
		{tool.LS, `{"status":"success","data":{"entries":[{"path":"a/","type":"dir"}]}}`, daemonapi.ExitFound, ""},
		{tool.Glob, `{"status":"success","data":{"paths":[]}}`, daemonapi.ExitNothing, ""},
		{tool.Grep, `{"status":"partial","data":{"matches":[],"fallback_used":true}}`, daemonapi.ExitNothing, ""},
		{tool.Grep, `{"status":"success","data":{"counts":[]}}`, daemonapi.ExitNothing, ""},
		{tool.LS, `{"status":"error","data":{},"error":{"code":"TIMEOUT","message":"m"}}`, daemonapi.ExitError, ""},
		{tool.Glob, `{"status":"weird","data":{"paths":["a"]}}`, daemonapi.ExitError, `unknown status "weird"`},
		{tool.Glob, `{"status":"success","data":{"entries":[]}}`, daemonapi.ExitError, "none of paths"},
		{tool.LS, `{"status":"success","data":{"paths":["a"]}}`, daemonapi.ExitError, "none of entries"},
		{tool.Grep, `{"status":"success","data":[]}`, daemonapi.ExitError, "not an object"},
		{"Find", `{"status":"success","data":{"paths":["a"]}}`, daemonapi.ExitError, `unknown tool "Find"`},
		{tool.Glob, `{"status":"success","data":{"paths":"a"}}`, daemonapi.ExitError, "data.paths that is not an array"},
		{tool.Glob, `{"status":"success","data":{"paths":null}}`, daemonapi.ExitError, "data.paths that is not an array"},
		{tool.Glob, `{"status":"success","data":{"paths": [ ] }}`, daemonapi.ExitNothing, ""},
		{tool.Glob, `{"status":"success","data":{"paths":[ "]" ]}}`, daemonapi.ExitFound, ""},
		{tool.Grep, `{"status":"success","data":{"matches":[],"files":[],"counts":[{"file":"a","count":1}]}}`, daemonapi.ExitFound, ""},
		{tool.Grep, `{"status":"success","data":{"matches":[],"files":[],"counts":[]}}`, daemonapi.ExitNothing, ""},
	} {
		got, err := answerCode(t, tc.tool, []byte(tc.env))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("exitCode(%s, %s) = %d, %v; want %d, error with %q", tc.tool, tc.env, got, err, tc.want, tc.err)
		}
	}
}
