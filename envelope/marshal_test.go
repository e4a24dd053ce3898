package envelope

import (
	"encoding/json"
	"testing"

	"github.com/indexd/indexd/internal/jsonenc"
)

// marshalStruct is MarshalJSON as one struct through encoding/json: the
// reference for the member-by-member MarshalJSON.
func marshalStruct(e *Envelope) ([]byte, error) {
	out := struct {
		Status  Status  `json:"status"`
		Data    any     `json:"data"`
		Text    string  `json:"text"`
		Stats   Stats   `json:"stats"`
		Context Context `json:"context"`
		Error   *Error  `json:"error,omitempty"`
	}{Status: e.Status, Data: e.Data, Text: e.Text, Stats: e.Stats, Context: e.Context}
	if out.Data == nil {
		out.Data = struct{}{}
	}
	if out.Stats == nil {
		out.Stats = &BaseStats{}
	}
	if out.Context.Cwd == "" {
		out.Context.Cwd = "."
	}
	if len(out.Context.ParamsInput) == 0 || !json.Valid(out.Context.ParamsInput) {
		out.Context.ParamsInput = json.RawMessage("{}")
	}
	if e.Status == StatusError {
		out.Error = e.Error
		if out.Error == nil {
			out.Error = &Error{Code: CodeInternal, Message: "unknown error"}
		}
	}
	return jsonenc.Marshal(out)
}

// MarshalJSON writes what encoding/json writes of the envelope as one
// struct, byte for byte, for every tool, mode and status.
func TestMarshalJSONAsOneStruct(t *testing.T) {
	odd := "a<b>&\"c\\\x01\n\u2028é\xff"
	ctx := Context{Cwd: "d" + odd, ParamsInput: json.RawMessage(`{"pattern": "x<y>",  "limit": 3}`), PathResolved: "p" + odd, Pattern: odd, Clock: "c1"}
	matches := []GrepMatch{
		{File: "f" + odd, Line: 3, Text: odd, Before: []string{"b", odd}, After: []string{odd}},
		{File: "g.go", Line: 1 << 30, Text: ""},
	}
	envs := map[string]*Envelope{
		"glob":                   Glob(ctx, GlobRun{Data: GlobData{Paths: []string{"a.go", odd}, Truncated: true}, Limit: 2, Hints: []string{"h" + odd}}),
		"glob empty, fallback":   Glob(Context{}, GlobRun{Data: GlobData{Fallback: Fallback{Used: true, Reason: ReasonWatchLimit}}}),
		"grep content":           Grep(ctx, GrepRun{Data: GrepData{Mode: ModeContent, Matches: matches}}),
		"grep files":             Grep(ctx, GrepRun{Data: GrepData{Mode: ModeFiles, Files: []string{"x", odd}, AbortedReason: AbortTimeLimit}}),
		"grep counts":            Grep(ctx, GrepRun{Data: GrepData{Mode: ModeCount, Counts: []FileCount{{odd, 4}}}}),
		"grep nothing":           Grep(Context{ParamsInput: json.RawMessage(`not json`)}, GrepRun{Data: GrepData{Mode: ModeContent}}),
		"ls":                     LS(ctx, LSRun{Data: LSData{Entries: []LSEntry{{Path: odd + "/", Type: "dir"}, {Path: "l", Type: "symlink", Link: LinkBroken}}}}),
		"fail":                   Fail(ctx, Errorf(CodeNotFound, "no %s", odd), 12),
		"error without an Error": {Status: StatusError, Text: "Error: x"},
		"bare success":           {Status: StatusSuccess},
	}
	for name, e := range envs {
		got, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := marshalStruct(e)
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
	}
	if _, err := (&Envelope{Status: "weird"}).MarshalJSON(); err == nil {
		t.Error("an invalid status marshals")
	}
}
