package envelope

import (
	"encoding/json"
	"testing"
)

func TestChangesEnvelope(t *testing.T) {
	m := "2026-01-02T03:04:05.000000006Z"
	for _, tc := range []struct {
		name   string
		run    ChangesRun
		status Status
		text   string
		data   string
	}{
		{"clock only", ChangesRun{Data: ChangesData{Clock: "cX"}},
			StatusSuccess, "Clock for '.': cX (no since given: pass it as since to list what changes after now)",
			`{"changes":[],"clock":"cX","fresh_instance":false,"truncated":false}`},
		{"no clock", ChangesRun{},
			StatusPartial, "No clock for '.': no change journal is kept for this root yet (its index is not ready, or the answer was made without the daemon); call again once it is indexed.",
			`{"changes":[],"clock":"","fresh_instance":false,"truncated":false}`},
		{"changes", ChangesRun{Since: "cA", Data: ChangesData{Clock: "cB", Changes: []ChangeEntry{{Path: "a\nb.go", Kind: KindCreated, Mtime: &m}, {Path: "c.go", Kind: KindDeleted}}}},
			StatusSuccess, "Found 2 changed paths in '.' since the given clock (1 created, 0 modified, 1 deleted; most recent first)\nClock: cB\n\ncreated \"a\\nb.go\"\ndeleted c.go",
			`{"changes":[{"path":"\"a\\nb.go\"","kind":"created","mtime":"` + m + `"},{"path":"c.go","kind":"deleted","mtime":null}],"clock":"cB","fresh_instance":false,"truncated":false}`},
		{"none", ChangesRun{Since: "cA", Data: ChangesData{Clock: "cB"}},
			StatusSuccess, "No changes in '.' since the given clock.\nClock: cB",
			`{"changes":[],"clock":"cB","fresh_instance":false,"truncated":false}`},
		{"fresh", ChangesRun{Since: "cA", FreshReason: "the token is of another root", Data: ChangesData{Clock: "cB", FreshInstance: true, Changes: []ChangeEntry{{Path: "a.go", Kind: KindCreated, Mtime: &m}}}},
			StatusPartial, "Fresh instance: the token is of another root. Every file in '.' is listed (1); treat them all as changed.\nClock: cB\n\na.go",
			`{"changes":[{"path":"a.go","kind":"created","mtime":"` + m + `"}],"clock":"cB","fresh_instance":true,"truncated":false}`},
		{"truncated", ChangesRun{Since: "cA", Limit: 1, Data: ChangesData{Clock: "cB", Truncated: true, Changes: []ChangeEntry{{Path: "a.go", Kind: KindModified, Mtime: &m}}}},
			StatusPartial, "Found 1 changed paths in '.' since the given clock (0 created, 1 modified, 0 deleted; most recent first)\nClock: cB\n[Truncated: Showing first 1 paths. Narrow the path or pattern, or raise limit.]\n\nmodified a.go",
			`{"changes":[{"path":"a.go","kind":"modified","mtime":"` + m + `"}],"clock":"cB","fresh_instance":false,"truncated":true}`},
	} {
		e := Changes(Context{}, tc.run)
		data, err := json.Marshal(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != tc.status || e.Text != tc.text || string(data) != tc.data {
			t.Errorf("%s:\n got %s %q\n     %s\nwant %s %q\n     %s", tc.name, e.Status, e.Text, data, tc.status, tc.text, tc.data)
		}
	}
}
