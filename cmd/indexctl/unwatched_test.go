package main

import (
	"strings"
	"testing"

	"github.com/indexd/indexd/rpc"
)

// A root the daemon keeps no index of (no watcher on the system) is not
// shown as building or failed: index and status say it is not indexed,
// why, and that queries walk.
func TestUnwatchedRootText(t *testing.T) {
	rs := rpc.RootStatus{Root: "/src/repo", State: rpc.StateUnwatched}
	const want = "/src/repo: not indexed: the daemon has no file watcher on this system to keep an index current, so every query walks the tree (fallback no_watcher; docs/platforms.md)"
	if got := summary(&rs); got != want {
		t.Errorf("index's summary:\n got %q\nwant %q", got, want)
	}
	st := formatStatus(&rpc.Status{Roots: []rpc.RootStatus{rs}})
	lines := strings.Split(strings.TrimRight(st, "\n"), "\n")
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("status's last line %q, want %q; status:\n%s", last, want, st)
	}
	if !strings.Contains(st, "unwatched") {
		t.Errorf("status's table does not show the state:\n%s", st)
	}
}
