package query

import (
	"encoding/json"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// Parameter decoding: defaults, boundaries, null as absent, JSON number
// forms. The error messages themselves are in seed_test.go.

func decode[P any](t *testing.T, fn func(args, rules) (P, *envelope.Error), raw string) (P, *envelope.Error) {
	t.Helper()
	a, err := decodeArgs(json.RawMessage(raw))
	if err != nil {
		var zero P
		return zero, err
	}
	return fn(a, rules{})
}

// TestParamsUnlimited: a limit of 0 asks for every result only where the
// caller may (the command line); elsewhere it is out of range.
func TestParamsUnlimited(t *testing.T) {
	t.Parallel()
	a, _ := decodeArgs(json.RawMessage(`{"pattern":"x","limit":0}`))
	for name, fn := range map[string]func(bool) (int, *envelope.Error){
		"glob": func(u bool) (int, *envelope.Error) { p, err := decodeGlob(a, rules{unlimited: u}); return p.Limit, err },
		"grep": func(u bool) (int, *envelope.Error) { p, err := decodeGrep(a, rules{unlimited: u}); return p.Limit, err },
		"ls":   func(u bool) (int, *envelope.Error) { p, err := decodeLS(a, rules{unlimited: u}); return p.Limit, err },
	} {
		if n, err := fn(true); err != nil || n != Unlimited {
			t.Errorf("%s, unlimited: limit %d, %v; want Unlimited", name, n, err)
		}
		if _, err := fn(false); err == nil || err.Code != envelope.CodeInvalidParam {
			t.Errorf("%s: limit 0 accepted without Unlimited (%v)", name, err)
		}
	}
	// Past the agents' bound only where unlimited is allowed.
	big, _ := decodeArgs(json.RawMessage(`{"pattern":"x","limit":5000}`))
	if p, err := decodeGrep(big, rules{unlimited: true}); err != nil || p.Limit != 5000 {
		t.Errorf("grep, unlimited, limit 5000: %d, %v", p.Limit, err)
	}
	if _, err := decodeGrep(big, rules{}); err == nil {
		t.Error("grep: limit 5000 accepted without Unlimited")
	}
}

func TestParamsDefaults(t *testing.T) {
	t.Parallel()
	g, err := decode(t, decodeGlob, `{"pattern":"*"}`)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "glob", g, GlobParams{Sync: true, Pattern: "*", Path: ".", Limit: 50, CaseSensitive: true, Sort: "path"})

	gr, err := decode(t, decodeGrep, `{"pattern":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "grep", gr, GrepParams{Sync: true, Pattern: "x", Path: ".", Limit: 100, OutputMode: "content", TimeoutMS: 2000})

	ls, err := decode(t, decodeLS, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "ls", ls, LSParams{Path: ".", Limit: 100})

	// null is "not given".
	g, err = decode(t, decodeGlob, `{"pattern":"*","path":null,"limit":null,"include_hidden":null,"sort":null}`)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "glob nulls", g, GlobParams{Sync: true, Pattern: "*", Path: ".", Limit: 50, CaseSensitive: true, Sort: "path"})
}

func TestParamsValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  func() (any, *envelope.Error)
		want any
	}{
		{"glob all", func() (any, *envelope.Error) {
			return decode(t, decodeGlob, `{"pattern":"a/**","path":"src","limit":200,"include_hidden":true,"include_ignored":true,"case_sensitive":false,"sort":"recent"}`)
		}, GlobParams{Sync: true, Pattern: "a/**", Path: "src", Limit: 200, IncludeHidden: true, IncludeIgnored: true, Sort: "recent"}},
		{"glob limit 1", func() (any, *envelope.Error) { return decode(t, decodeGlob, `{"pattern":"*","limit":1}`) },
			GlobParams{Sync: true, Pattern: "*", Path: ".", Limit: 1, CaseSensitive: true, Sort: "path"}},
		{"glob limit 1e1", func() (any, *envelope.Error) { return decode(t, decodeGlob, `{"pattern":"*","limit":1e1}`) },
			GlobParams{Sync: true, Pattern: "*", Path: ".", Limit: 10, CaseSensitive: true, Sort: "path"}},
		{"grep all", func() (any, *envelope.Error) {
			return decode(t, decodeGrep, `{"pattern":"p","path":"d","include":"*.go","case_sensitive":true,"fixed_strings":true,"limit":1000,
				"output_mode":"count","context":3,"context_after":20,"multiline":true,"timeout_ms":60000,"include_hidden":true,"include_ignored":true}`)
		}, GrepParams{Sync: true, Pattern: "p", Path: "d", Include: "*.go", CaseSensitive: true, FixedStrings: true, Limit: 1000,
			OutputMode: "count", Before: 3, After: 20, Multiline: true, TimeoutMS: 60000, IncludeHidden: true, IncludeIgnored: true}},
		{"grep context 0", func() (any, *envelope.Error) {
			return decode(t, decodeGrep, `{"pattern":"p","context":0,"context_before":2}`)
		},
			GrepParams{Sync: true, Pattern: "p", Path: ".", Limit: 100, OutputMode: "content", Before: 2, TimeoutMS: 2000}},
		{"ls all", func() (any, *envelope.Error) {
			return decode(t, decodeLS, `{"path":"x","offset":7,"limit":200,"include_hidden":true,"include_ignored":true,"ignore":["*.log","tmp/"]}`)
		}, LSParams{Path: "x", Offset: 7, Limit: 200, IncludeHidden: true, IncludeIgnored: true, Ignore: []string{"*.log", "tmp/"}}},
		{"ls ignore string", func() (any, *envelope.Error) { return decode(t, decodeLS, `{"ignore":"*.log"}`) },
			LSParams{Path: ".", Limit: 100, Ignore: []string{"*.log"}}},
		{"whitespace around", func() (any, *envelope.Error) { return decode(t, decodeLS, " \n\t{\"limit\" : 3 }\n") },
			LSParams{Path: ".", Limit: 3}},
		{"empty args", func() (any, *envelope.Error) { return decode(t, decodeLS, ``) },
			LSParams{Path: ".", Limit: 100}},
	}
	for _, tc := range tests {
		got, err := tc.got()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		equal(t, tc.name, got, tc.want)
	}
}

func TestParamsRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fn  func(args) (any, *envelope.Error)
		raw string
		msg string
	}{
		{globAny, `{"pattern":"*","limit":1e400}`, msgGlobLimit},
		{globAny, `{"pattern":"*","limit":200.5}`, msgGlobLimit},
		{globAny, `{"pattern":"*","limit":[5]}`, msgGlobLimit},
		{globAny, `{"pattern":"*","limit":{}}`, msgGlobLimit},
		{grepAny, `{"pattern":"x","timeout_ms":60001}`, "timeout_ms must be an integer between 1 and 60000."},
		{grepAny, `{"pattern":"x","fixed_strings":"true"}`, "fixed_strings must be a boolean."},
		{grepAny, `{"pattern":"x","include_hidden":[]}`, "include_hidden must be a boolean."},
		{grepAny, `{"pattern":"x","output_mode":5}`, `output_mode must be one of ["content" "files_with_matches" "count"].`},
		{lsAny, `{"offset":2147483648}`, "offset must be a non-negative integer."},
		{lsAny, `{"offset":0.5}`, "offset must be a non-negative integer."},
		{lsAny, `{"ignore":{"a":1}}`, "ignore must be a list of strings."},
	}
	for _, tc := range tests {
		a, err := decodeArgs(json.RawMessage(tc.raw))
		if err == nil {
			_, err = tc.fn(a)
		}
		if err == nil || err.Code != envelope.CodeInvalidParam || err.Message != tc.msg {
			t.Errorf("%s: %v, want INVALID_PARAM %q", tc.raw, err, tc.msg)
		}
	}
}

func globAny(a args) (any, *envelope.Error) { return decodeGlob(a, rules{}) }
func grepAny(a args) (any, *envelope.Error) { return decodeGrep(a, rules{}) }
func lsAny(a args) (any, *envelope.Error)   { return decodeLS(a, rules{}) }

func TestParamsDecodeArgs(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`[]`, `"x"`, `1`, `true`, `{`, `{"a":1}{}`, `{"a":}`, `{} x`} {
		if _, err := decodeArgs(json.RawMessage(raw)); err == nil || err.Message != msgNotObject {
			t.Errorf("decodeArgs(%s) = %v, want %q", raw, err, msgNotObject)
		}
	}
	for _, raw := range []string{``, `null`, ` null `, `{}`, `{"a":null}`} {
		a, err := decodeArgs(json.RawMessage(raw))
		if err != nil || len(a) != 0 {
			t.Errorf("decodeArgs(%s) = %v, %v; want no arguments", raw, a, err)
		}
	}
}

// TestParamsCommandLine: under the command line's rules (rg's and fd's)
// there is no default limit, no default time limit and no breaker; a
// limit or timeout given is taken as given; an empty Grep pattern
// matches every line. Agents keep their defaults and refuse "".
func TestParamsCommandLine(t *testing.T) {
	t.Parallel()
	args := func(raw string) args {
		a, err := decodeArgs(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	g, err := decodeGlob(args(`{"pattern":"*"}`), rules{unlimited: true})
	if err != nil || g.Limit != Unlimited || !g.NoBreakers {
		t.Errorf("glob, command line: limit %d, no breakers %v, %v", g.Limit, g.NoBreakers, err)
	}
	if g, _ := decodeGlob(args(`{"pattern":"*","limit":7}`), rules{unlimited: true}); g.Limit != 7 || !g.NoBreakers {
		t.Errorf("glob, command line, limit 7: limit %d, no breakers %v", g.Limit, g.NoBreakers)
	}
	if g, _ := decodeGlob(args(`{"pattern":"*"}`), rules{}); g.Limit != tool.GlobDefaultLimit || g.NoBreakers {
		t.Errorf("glob, agent: limit %d, no breakers %v", g.Limit, g.NoBreakers)
	}
	gr, err := decodeGrep(args(`{"pattern":"x"}`), rules{unlimited: true})
	if err != nil || gr.Limit != Unlimited || gr.TimeoutMS != 0 {
		t.Errorf("grep, command line: limit %d, timeout %d, %v", gr.Limit, gr.TimeoutMS, err)
	}
	if gr, _ := decodeGrep(args(`{"pattern":"x","timeout_ms":300}`), rules{unlimited: true}); gr.TimeoutMS != 300 {
		t.Errorf("grep, command line, timeout 300: %d", gr.TimeoutMS)
	}
	if gr, _ := decodeGrep(args(`{"pattern":"x"}`), rules{}); gr.TimeoutMS != tool.GrepDefaultTimeoutMS || gr.Limit != tool.GrepDefaultLimit {
		t.Errorf("grep, agent: limit %d, timeout %d", gr.Limit, gr.TimeoutMS)
	}
	if gr, err := decodeGrep(args(`{"pattern":""}`), rules{unlimited: true}); err != nil || gr.Pattern != "" {
		t.Errorf("grep, command line, empty pattern: %q, %v", gr.Pattern, err)
	}
	if _, err := decodeGrep(args(`{"pattern":""}`), rules{}); err == nil {
		t.Error("grep, agent: an empty pattern accepted")
	}
	if _, err := decodeGrep(args(`{}`), rules{unlimited: true}); err == nil {
		t.Error("grep, command line: a missing pattern accepted")
	}
	if l, _ := decodeLS(args(`{}`), rules{unlimited: true}); l.Limit != Unlimited {
		t.Errorf("ls, command line: limit %d", l.Limit)
	}
	if c, _ := decodeChanges(args(`{}`), rules{unlimited: true}); c.Limit != Unlimited {
		t.Errorf("changes, command line: limit %d", c.Limit)
	}
	if c, err := decodeChanges(args(`{"limit":50000}`), rules{unlimited: true}); err != nil || c.Limit != 50000 {
		t.Errorf("changes, command line, limit 50000: %d, %v", c.Limit, err)
	}
	if c, _ := decodeChanges(args(`{}`), rules{}); c.Limit != tool.ChangesDefaultLimit {
		t.Errorf("changes, agent: limit %d", c.Limit)
	}
}
