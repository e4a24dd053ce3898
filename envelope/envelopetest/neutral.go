package envelopetest

import (
	"encoding/json"
	"regexp"
	"testing"
)

// Timing matches the timings of an envelope's text.
var Timing = regexp.MustCompile(`(Scanned \d+ items in \d+ms|Took \d+ms|timed out after \d+ms)`)

// EngineNeutral returns the envelope e as generic JSON without what
// legitimately differs between the walk and the index answering the same
// query: the work statistics (time_ms, visited, files_scanned,
// binary_skipped, candidates) and the timings of the text. Two engines'
// answers compare equal in this form.
func EngineNeutral(t testing.TB, e any) map[string]any {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if st, ok := m["stats"].(map[string]any); ok {
		for _, k := range []string{"time_ms", "visited", "files_scanned", "binary_skipped", "candidates"} {
			delete(st, k)
		}
	}
	if text, ok := m["text"].(string); ok {
		m["text"] = Timing.ReplaceAllString(text, "<timing>")
	}
	return m
}
