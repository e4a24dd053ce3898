package envelope

import (
	"encoding/json"
	"math/rand/v2"
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

// grepDataStruct is GrepData.MarshalJSON through encoding/json: the
// reference for the hand-written lists.
func grepDataStruct(d *GrepData) ([]byte, error) {
	type plain GrepData
	out := struct {
		Matches *[]GrepMatch `json:"matches,omitempty"`
		Files   *[]string    `json:"files,omitempty"`
		Counts  *[]FileCount `json:"counts,omitempty"`
		*plain
	}{plain: (*plain)(d)}
	nonNil := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	switch d.Mode {
	case ModeFiles:
		l := nonNil(d.Files)
		out.Files = &l
	case ModeCount:
		l := d.Counts
		if l == nil {
			l = []FileCount{}
		}
		out.Counts = &l
	default:
		l := d.Matches
		if l == nil {
			l = []GrepMatch{}
		}
		out.Matches = &l
	}
	return jsonenc.Marshal(out)
}

// Grep's data is written as encoding/json writes it, byte for byte:
// random lists of names and lines that JSON escapes in every way, empty
// and nil lists, every mode and the other members set or not.
func TestDataAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "/", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "<", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x82", " "}
	str := func() string {
		var s string
		for n := rng.IntN(10); n > 0; n-- {
			s += parts[rng.IntN(len(parts))]
		}
		return s
	}
	strs := func() []string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		l := make([]string, 1+rng.IntN(4))
		for i := range l {
			l[i] = str()
		}
		return l
	}
	fb := func() Fallback {
		if rng.IntN(2) == 0 {
			return Fallback{}
		}
		return Fallback{Used: true, Reason: FallbackReason(str())}
	}
	for range 3000 {
		d := &GrepData{Mode: []string{ModeContent, ModeFiles, ModeCount, ""}[rng.IntN(4)], Files: strs(),
			Truncated: rng.IntN(2) == 0, AbortedReason: str(), FreshInstance: rng.IntN(2) == 0, Fallback: fb()}
		if rng.IntN(4) > 0 {
			d.Matches = []GrepMatch{}
			for range rng.IntN(4) {
				d.Matches = append(d.Matches, GrepMatch{File: str(), Line: rng.IntN(1 << 40), Text: str(), Before: strs(), After: strs()})
			}
		}
		if rng.IntN(4) > 0 {
			d.Counts = []FileCount{}
			for range rng.IntN(4) {
				d.Counts = append(d.Counts, FileCount{File: str(), Count: rng.IntN(1 << 20)})
			}
		}
		want, err := grepDataStruct(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := d.MarshalJSON(); err != nil || string(got) != string(want) {
			t.Fatalf("GrepData %#v:\n got  %s, %v\n want %s", d, got, err, want)
		}
	}
}
