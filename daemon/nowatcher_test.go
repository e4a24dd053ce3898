package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// A daemon without a watcher (the only mode where package watch has no
// backend, forced here on Linux) keeps no index: every Glob and Grep is
// walked and says so (no_watcher), and its data equal the indexed
// daemon's on the same tree, before and after a change; status and
// index say the root is unwatched, no DB is written, answers carry no
// clock, Changes and changed_since say the changes cannot be known, and
// forget drops the root.
func TestNoWatcherWalksAsTheIndexAnswers(t *testing.T) {
	root := writeTree(t, sample)
	indexed := startDaemon(t, Config{})
	if rs := indexed.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("the indexed daemon: %+v", rs)
	}
	td := startDaemon(t, Config{NoWatcher: true})

	rs := td.index(root, true)
	if rs.State != rpc.StateUnwatched || rs.Phase != "" || rs.Files != 0 || rs.IndexBytes != 0 || rs.DB != "" || rs.Progress != nil || rs.LastError != "" {
		t.Fatalf("index --wait without a watcher: %+v", rs)
	}
	queries := append(sampleQueries,
		struct{ method, args string }{tool.MethodGrep, `{"pattern":"hello","include":"*.go","output_mode":"content","context":1}`},
		struct{ method, args string }{tool.MethodGlob, `{"pattern":"**","include_ignored":true}`},
	)
	compare := func(when string) {
		t.Helper()
		for _, q := range queries {
			a, want := td.query(q.method, root, q.args), indexed.query(q.method, root, q.args)
			if want.data.Used && want.data.Reason != envelope.ReasonIgnoredPaths {
				t.Fatalf("%s %s %s: the indexed daemon walked (%s)", when, q.method, q.args, want.data.Reason)
			}
			switch q.method {
			case tool.MethodLS:
				if a.data.Used || a.Status != want.Status {
					t.Errorf("%s %s %s: LS is marked or differs: %s", when, q.method, q.args, a.js)
				}
			default:
				if !a.data.Used || a.data.Reason != envelope.ReasonNoWatcher {
					t.Errorf("%s %s %s: not marked as walked for no_watcher: %s", when, q.method, q.args, a.js)
				}
				if !strings.Contains(a.Text, "[Info: No index is kept: the daemon has no file watcher on this system (no_watcher); answered by a full walk.]") {
					t.Errorf("%s %s %s: the text does not say so: %q", when, q.method, q.args, a.Text)
				}
				wantStatus := want.Status
				if q.method == tool.MethodGrep {
					wantStatus = envelope.StatusPartial // the fallback's rule
				}
				if a.Status != wantStatus {
					t.Errorf("%s %s %s: status %s, want %s", when, q.method, q.args, a.Status, wantStatus)
				}
			}
			if got, exp := withoutFallback(t, a.Data), withoutFallback(t, want.Data); !bytes.Equal(got, exp) {
				t.Errorf("%s %s %s: the walk differs from the index:\n got %s\nwant %s", when, q.method, q.args, got, exp)
			}
			if strings.Contains(string(a.Context), `"clock"`) {
				t.Errorf("%s %s %s: a clock without a journal: %s", when, q.method, q.args, a.Context)
			}
		}
	}
	compare("at first")

	// A change is in the next answer of both: the walk reads the tree.
	writeFile(t, root, "lib/new.go", "package lib\n// hello again\nfunc New() {}\n")
	if err := os.Remove(filepath.Join(root, "docs", "readme.md")); err != nil {
		t.Fatal(err)
	}
	compare("after a change")

	st := td.status(root)
	if len(st.Roots) != 1 || st.Roots[0].State != rpc.StateUnwatched || st.Roots[0].Files != 0 || st.Roots[0].DB != "" {
		t.Fatalf("status: %+v", st)
	}
	if q := st.Roots[0].Queries; q != int64(2*len(queries)) {
		t.Errorf("status counts %d queries, want %d", q, 2*len(queries))
	}
	ents, err := os.ReadDir(td.cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), DBName(root)) {
			t.Errorf("state directory holds %s: an index was written", e.Name())
		}
	}

	const why = "no file watcher keeps this root (none on this system), so its changes are not tracked"
	c := td.changes(root, `{}`)
	if c.Status != envelope.StatusPartial || c.data.Clock != "" || c.ctx.Clock != "" || c.Text != "No clock for '.': "+why+"." {
		t.Errorf("Changes without since: %s", c.js)
	}
	token := indexed.clockOf(root) // a token of another daemon: well formed
	c = td.changes(root, `{"since":"`+token+`"}`)
	if c.Status != envelope.StatusPartial || !c.data.FreshInstance || c.data.Clock != "" || !strings.HasPrefix(c.Text, "Fresh instance: "+why+".") {
		t.Errorf("Changes since a token: %s", c.js)
	}
	if !c.data.Fallback.Used || c.data.Fallback.Reason != envelope.ReasonNoWatcher {
		t.Errorf("Changes since a token: its list of every file is not marked as walked: %s", c.js)
	}
	g := td.query(tool.MethodGrep, root, `{"pattern":"hello","changed_since":"`+token+`"}`)
	if g.Status != envelope.StatusPartial || !strings.Contains(string(g.Data), `"fresh_instance":true`) || !strings.Contains(g.Text, why) {
		t.Errorf("Grep with changed_since: %s", g.js)
	}

	var f struct{ Forgotten bool }
	if err := json.Unmarshal(td.call(rpc.MethodForget, rpc.RootParams{Root: root}), &f); err != nil || !f.Forgotten {
		t.Errorf("forget: %+v, %v", f, err)
	}
	if st := td.status(""); len(st.Roots) != 0 {
		t.Errorf("status after forget: %+v", st.Roots)
	}
}

// withoutFallback returns an answer's data without fallback_used and
// fallback_reason, keys sorted.
func withoutFallback(t *testing.T, data json.RawMessage) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	delete(m, "fallback_used")
	delete(m, "fallback_reason")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
