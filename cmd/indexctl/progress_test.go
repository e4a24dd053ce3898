package main

import (
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// TestProgressAtMostOneLineASecond: off a terminal, index --wait writes a
// progress line only when the text changed and a second has passed since
// the last line, however often it is asked to show one.
func TestProgressAtMostOneLineASecond(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	clock := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(&b)
	p.now = func() time.Time { return clock }
	status := func(files int) *rpc.RootStatus {
		return &rpc.RootStatus{Root: "/r", State: rpc.StateBuilding, Phase: rpc.PhaseBuild,
			Progress: &rpc.BuildProgress{Files: files, TotalFiles: 100, TotalBytes: 0}}
	}
	step := func(d time.Duration, files int) { clock = clock.Add(d); p.show(status(files)) }
	step(0, 10)                     // first: shown
	step(100*time.Millisecond, 20)  // too soon
	step(500*time.Millisecond, 30)  // too soon
	step(400*time.Millisecond, 40)  // a second after the first: shown
	step(1500*time.Millisecond, 40) // same text: not shown
	step(10*time.Millisecond, 50)   // changed, and over a second since the last line
	step(10*time.Millisecond, 60)   // too soon
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	for i, want := range []string{"10", "40", "50"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want the progress of %s files", i+1, lines[i], want)
		}
	}
}
