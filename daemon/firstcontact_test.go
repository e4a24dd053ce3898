package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/clock"
	"github.com/indexd/indexd/tool"
)

// firstContactTree is a new small repository: 150 files.
func firstContactTree(t *testing.T) string {
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	for i := range 150 {
		files[fmt.Sprintf("pkg%d/f%d.go", i%10, i)] = fmt.Sprintf("package pkg%d\n\nfunc F%d() {} // needle\n", i%10, i)
	}
	return writeTree(t, files)
}

// TestFirstContactFromIndex: the first query on a new small root, and the
// first query after a restart (the saved index reopened and revalidated),
// are answered from the index: success, no fallback (first contact waits
// for the build instead of walking). The daemons' clock is a fake one that
// never moves: first contact's wait ends with the build, however long the
// build takes on a loaded machine.
func TestFirstContactFromIndex(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	root := firstContactTree(t)
	check := func(when string, a answer, wantResults int) {
		t.Helper()
		if a.Status != envelope.StatusSuccess || a.data.Used {
			t.Fatalf("%s: status %s, fallback %+v, want success from the index\n%s", when, a.Status, a.data.Fallback, a.js)
		}
		if n := len(a.data.Matches) + len(a.data.Paths); n != wantResults {
			t.Fatalf("%s: %d results, want %d\n%s", when, n, wantResults, a.js)
		}
	}

	still := clock.NewFake(time.Unix(1e9, 0)) // never moved
	td := startDaemon(t, Config{StateDir: state, clock: still})
	check("first grep on a new root", td.query(tool.MethodGrep, root, `{"pattern":"needle","limit":1000}`), 150)
	check("then a glob", td.query(tool.MethodGlob, root, `{"pattern":"pkg3/*.go","limit":200}`), 15)
	if err := td.stop(); err != nil {
		t.Fatal(err)
	}

	td = startDaemon(t, Config{StateDir: state, clock: still})
	check("first glob after a restart", td.query(tool.MethodGlob, root, `{"pattern":"**/*.go","limit":200}`), 150)
	check("then a grep", td.query(tool.MethodGrep, root, `{"pattern":"func F149\\b"}`), 1)
}
