package rpc

import (
	"encoding/json"
	"testing"

	"github.com/indexd/indexd/internal/jsonenc"
)

// The hand-written encodings of the params are what encoding/json makes
// of their tags, over every field set and unset and strings that need
// escaping (compacted, as a request carries them).
func TestParamsMarshalJSON(t *testing.T) {
	t.Parallel()
	type plainTool ToolParams // no MarshalJSON: encoding/json by reflection
	type plainPing PingParams
	tools := []ToolParams{
		{},
		{Root: "/r"},
		{Root: "/r", Cwd: "a/b", Args: json.RawMessage(`{"pattern":"x"}`)},
		{Root: "/tmp/<a&b>\"q\"\\\u2028\t\x01é", Cwd: "\xff", Args: json.RawMessage(` { "a" : [1, 2] } `), Unlimited: true, Stream: true, RootFrom: RootFromGit},
		{Root: "/r", Unlimited: true},
		{Root: "/r", Stream: true, RootFrom: RootFromCwd},
		{Root: "/r", Unlimited: true, Stream: true, BatchText: true},
	}
	for _, p := range tools {
		checkParamsJSON(t, p, plainTool(p))
	}
	for _, p := range []PingParams{{}, {Build: "abc/def"}, {Build: "a\"<b>\n"}} {
		checkParamsJSON(t, p, plainPing(p))
	}
}

func checkParamsJSON(t *testing.T, p json.Marshaler, plain any) {
	t.Helper()
	got, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := jsonenc.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	line, err := encodeRequest([]byte("1"), "m", p)
	if err != nil {
		t.Fatal(err)
	}
	wantLine, err := encodeRequest([]byte("1"), "m", json.RawMessage(want))
	if err != nil {
		t.Fatal(err)
	}
	if string(line) != string(wantLine) {
		t.Errorf("%+v: request %s, by reflection %s (params %s)", p, line, wantLine, got)
	}
}

// FuzzParamsMarshalJSON: the same, for any strings and arguments.
func FuzzParamsMarshalJSON(f *testing.F) {
	f.Add("/r", "a", `{"pattern":"x"}`, true, false, "git", "build")
	f.Add("\xff<>&", "\u2028", ` [ 1 ] `, false, true, "", "")
	f.Fuzz(func(t *testing.T, root, cwd, args string, unlimited, stream bool, from, build string) {
		type plainTool ToolParams
		type plainPing PingParams
		p := ToolParams{Root: root, Cwd: cwd, Unlimited: unlimited, Stream: stream, RootFrom: from}
		if args != "" {
			if !json.Valid([]byte(args)) {
				return // encoding/json refuses it; so does the request
			}
			p.Args = json.RawMessage(args)
		}
		checkParamsJSON(t, p, plainTool(p))
		checkParamsJSON(t, PingParams{Build: build}, plainPing{Build: build})
	})
}
