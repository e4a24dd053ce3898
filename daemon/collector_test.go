package daemon

import (
	"context"
	"testing"
	"time"
)

// GOGC leaves about 64 MB above the live heap, within 50 and 100.
func TestCollectorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {20 * mb, 100}, {64 * mb, 100}, {100 * mb, 64}, {128 * mb, 50}, {150 * mb, 50}, {1 << 30, 50},
	} {
		if got := collectorPercent(c.live); got != c.want {
			t.Errorf("collectorPercent(%d MB) = %d, want %d", c.live/mb, got, c.want)
		}
	}
}

// The heap returner hands the heap back once the daemon is quiet and
// holds more than the collector's headroom and the slack beyond the live
// heap, and only then: not while requests run, not for the garbage of
// steady use. Its goroutine ends with its context.
func TestHeapReturner(t *testing.T) {
	const mb = 1 << 20
	var (
		h     heapSample
		quiet bool
		freed int
	)
	r := &heapReturner{read: func() heapSample { return h }, quiet: func() bool { return quiet }, free: func() { freed++ }}
	for _, c := range []struct {
		live, held uint64
		quiet      bool
		want       bool
	}{
		{20 * mb, 3700 * mb, false, false},               // a burst still running
		{20 * mb, 3700 * mb, true, true},                 // over: back it goes
		{20 * mb, 20*mb + 64*mb + 32*mb, true, false},    // steady use's headroom and slack
		{20 * mb, 20*mb + 64*mb + 32*mb + 1, true, true}, // beyond them
		{400 * mb, 400*mb + 200*mb + 32*mb, true, false}, // half a large live heap is its headroom
		{400 * mb, 400*mb + 300*mb, true, true},
	} {
		h, quiet = heapSample{live: c.live, held: c.held}, c.quiet
		before := freed
		if got := r.check(); got != c.want || (freed > before) != c.want {
			t.Errorf("live %d MB, held %d MB, quiet %v: returned %v (freed %d times), want %v", c.live/mb, c.held/mb, c.quiet, got, freed-before, c.want)
		}
	}
	if got := r.returned.Load(); got != int64(freed) {
		t.Errorf("returned counts %d, freed %d", got, freed)
	}

	// run checks at each tick and ends with its context.
	h, quiet = heapSample{live: mb, held: 1 << 30}, true
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	done := make(chan struct{})
	go func() { defer close(done); r.run(ctx, ticks) }()
	before := freed
	tick := func() {
		select {
		case ticks <- time.Time{}:
		case <-time.After(wait):
			t.Fatal("the returner took no tick")
		}
	}
	tick()
	tick() // the first check is done once the second tick is taken
	cancel()
	recv(t, done, "the returner's goroutine to end")
	if freed < before+1 {
		t.Errorf("run returned the heap %d times for two ticks", freed-before)
	}
}
