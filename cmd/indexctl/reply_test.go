package main

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/jsonenc"
)

// jsonData is answerData as encoding/json reads it: the reference for
// readData.
type jsonData struct {
	Cwd     string               `json:"cwd"`
	Paths   []string             `json:"paths"`
	Matches []envelope.GrepMatch `json:"matches"`
	Files   []string             `json:"files"`
	Counts  []envelope.FileCount `json:"counts"`
}

// randomString returns a string of up to 12 bytes drawn from a set that
// JSON escapes or encodes in every way: quotes, backslashes, control
// characters, "<", U+2028, multi-byte runes and invalid UTF-8.
func randomString(rng *rand.Rand) string {
	parts := []string{"a", "/", "\"", "\\", "\n", "\t", "\x00", "\x1f", "<", "&", "é", "\u2028", "😀", "\xff", "\xe2\x82", " "}
	var s string
	for n := rng.IntN(12); n > 0; n-- {
		s += parts[rng.IntN(len(parts))]
	}
	return s
}

func randomStrings(rng *rand.Rand) []string {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	l := make([]string, rng.IntN(5)+1)
	for i := range l {
		l[i] = randomString(rng)
	}
	return l
}

// readData reads what encoding/json reads, from data as the daemon writes
// it (jsonenc) and as json.Marshal does (HTML escapes), with members
// readData does not know and members in any order.
func TestReadDataAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		m := map[string]any{"truncated": rng.IntN(2) == 0, "aborted_reason": randomString(rng), "fallback": map[string]any{"x": []int{1}}}
		if rng.IntN(2) == 0 {
			m["cwd"] = randomString(rng)
		}
		if l := randomStrings(rng); l != nil || rng.IntN(2) == 0 {
			m["paths"] = l
		}
		if l := randomStrings(rng); l != nil || rng.IntN(2) == 0 {
			m["files"] = l
		}
		if rng.IntN(2) == 0 {
			var ms []envelope.GrepMatch
			for range rng.IntN(4) {
				ms = append(ms, envelope.GrepMatch{File: randomString(rng), Line: rng.IntN(1 << 20), Text: randomString(rng), Before: randomStrings(rng), After: randomStrings(rng)})
			}
			m["matches"] = ms
		}
		if rng.IntN(2) == 0 {
			cs := []envelope.FileCount{}
			for range rng.IntN(4) {
				cs = append(cs, envelope.FileCount{File: randomString(rng), Count: rng.IntN(100)})
			}
			m["counts"] = cs
		}
		var b []byte
		var err error
		if i%2 == 0 {
			b, err = jsonenc.Marshal(m)
		} else {
			b, err = json.MarshalIndent(m, " ", "\t")
		}
		if err != nil {
			t.Fatal(err)
		}
		var got answerData
		if err := readData(b, &got); err != nil {
			t.Fatalf("readData(%s): %v", b, err)
		}
		var want jsonData
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if g := (jsonData{got.Cwd, got.Paths, got.Matches, got.Files, got.Counts}); !reflect.DeepEqual(g, want) {
			t.Fatalf("readData(%s) = %+v, encoding/json %+v", b, g, want)
		}
		for _, k := range []string{"paths", "files", "matches", "counts"} {
			var l []json.RawMessage
			if raw, ok := m[k]; ok {
				rb, _ := json.Marshal(raw)
				json.Unmarshal(rb, &l)
				if n, ok := got.arrays[k]; !ok || (l == nil) != (n < 0) || l != nil && n != len(l) {
					t.Fatalf("readData(%s): arrays[%s] = %d, %v; want %d elements", b, k, n, ok, len(l))
				}
			} else if _, ok := got.arrays[k]; ok {
				t.Fatalf("readData(%s): arrays has %s", b, k)
			}
		}
	}
}

// Whatever the bytes, reading an answer fails or succeeds without
// panicking, and what it reads is what encoding/json reads of the same
// envelope (when that has the exact keys: encoding/json also takes
// "Status").
func FuzzReadReply(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"paths":["a"],"cwd":"d"},"text":"1 file\n\na","stats":{"time_ms":0},"context":{"cwd":"d"}}`))
	f.Add([]byte(`{"status":"error","data":{},"text":"Error: x","error":{"code":"TIMEOUT","message":"m"}}`))
	f.Add([]byte(`{"status":"partial","data":{"matches":[{"file":"a","line":3,"text":"x","before":["w"]}],"counts":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := readReply(b)
		if err != nil {
			return
		}
		var members map[string]json.RawMessage
		json.Unmarshal(b, &members)
		for k := range members {
			for _, known := range []string{"status", "text", "data", "context", "error", "stats"} {
				if k != known && strings.EqualFold(k, known) {
					return // encoding/json takes it for known; readReply does not
				}
			}
		}
		var raw envelope.Raw
		if json.Unmarshal(b, &raw) != nil {
			t.Fatalf("readReply(%q) succeeded, json.Unmarshal failed", b)
		}
		if raw.Status != rep.status || raw.Text != rep.text {
			t.Errorf("readReply(%q): status %q, text %q; encoding/json %q, %q", b, rep.status, rep.text, raw.Status, raw.Text)
		}
		var d answerData
		readData(rep.data, &d)
	})
}
