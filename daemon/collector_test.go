package daemon

import (
	"context"
	"testing"
	"time"
)

// GOGC leaves about 64 MB above the live heap, within 50 and 100.
func TestCollectorPercent(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	const mb = 1 << 20
	var (
		h     heapSample
		quiet time.Duration
		freed int
	)
	r := &heapReturner{read: func() heapSample { return h }, quiet: func() time.Duration { return quiet }, free: func() { freed++ }}
	const busy, short, idle = 0, returnQuiet, returnIdle
	for _, c := range []struct {
		live, held uint64
		quiet      time.Duration
		want       bool
	}{
		{20 * mb, 3700 * mb, busy, false},                 // a burst still running
		{20 * mb, 3700 * mb, short, true},                 // over: back it goes
		{20 * mb, 20*mb + 64*mb + 32*mb, short, false},    // steady use's headroom and slack
		{20 * mb, 20*mb + 64*mb + 32*mb + 1, short, true}, // beyond them
		{400 * mb, 400*mb + 200*mb + 32*mb, short, false}, // half a large live heap is its headroom
		{400 * mb, 400*mb + 300*mb, short, true},
		// Idle: all but a slack goes back, once an idle time.
		{20 * mb, 60 * mb, idle - time.Millisecond, false},
		{20 * mb, 60 * mb, idle, true},
		{20 * mb, 60 * mb, short, false}, // a request came: a new idle time
		{20 * mb, 20*mb + 8*mb, idle, false},
		{20 * mb, 20*mb + 8*mb + 1, idle, true},
	} {
		h, quiet = heapSample{live: c.live, held: c.held}, c.quiet
		before := freed
		if got := r.check(); got != c.want || (freed > before) != c.want {
			t.Errorf("live %d MB, held %d MB, quiet %v: returned %v (freed %d times), want %v", c.live/mb, c.held/mb, c.quiet, got, freed-before, c.want)
		}
	}
	// Fragments a collection cannot give back are not collected again
	// and again: the idle rule waits for a request first.
	h, quiet = heapSample{live: 20 * mb, held: 100 * mb}, busy
	r.check()
	quiet = idle
	if !r.check() || r.check() {
		t.Error("an idle return, then again in the same idle time")
	}
	quiet = short
	r.check()
	quiet = idle
	if !r.check() {
		t.Error("no idle return in the next idle time")
	}
	if got := r.returned.Load(); got != int64(freed) {
		t.Errorf("returned counts %d, freed %d", got, freed)
	}

	// run checks at each tick and ends with its context.
	h, quiet = heapSample{live: mb, held: 1 << 30}, short
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
