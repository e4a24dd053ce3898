package daemon

import (
	"context"
	"os"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/indexd/indexd/index"
)

// collectorHeadroom is how far the daemon lets its heap grow above what
// is live before the collector runs, once the live heap is large: with
// Go's default (GOGC 100) the heap grows to twice what is live, and after
// a while of queries the resident set stays there (a 1M-file root: 150
// MB live, 370 MB resident after streams of the benchmark queries; 284
// MB with GOGC 50, for 3% more of the daemon's CPU on those queries).
const collectorHeadroom = 64 << 20

// collectorPercent is the daemon's GOGC for a live heap of live bytes:
// the percentage that leaves collectorHeadroom above it, within 50 (at
// least half the live heap again, so that collections stay rare against
// the queries' garbage) and 100 (Go's default, for a small heap: GOROOT/
// src's 20 MB).
func collectorPercent(live uint64) int {
	p := 100 * uint64(collectorHeadroom) / max(live, 1)
	return int(min(100, max(50, p)))
}

// tuneCollector sets GOGC for the live heap that the last collection
// measured, unless the environment sets GOGC. It is called as each root
// becomes ready; a root forgotten leaves the setting until the next.
func tuneCollector() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	index.SetCollectorPercent(collectorPercent(s[0].Value.Uint64()))
}

// The heap a burst of answers leaves behind. Eight command-line answers
// of 80 MB built at once took a daemon to 3.7 GB, and 2.9 GB of it was
// still resident nine minutes later, idle: the collector had nothing to
// do (it runs when the heap grows, and otherwise only every two
// minutes), and the runtime hands free pages back to the system only
// gradually and only above what its next collection's goal allows. The
// reply budget (package rpc) now bounds the answers themselves; what a
// burst still leaves (searches' working sets, the garbage of answers
// written) is handed back by the heap returner, which collects and
// returns every free page (debug.FreeOSMemory) when
//   - the daemon has been quiet for returnQuiet and the heap holds more
//     than the live heap of the last collection and the headroom the
//     collector leaves above it in steady use (collectorPercent:
//     collectorHeadroom, or half the live heap) by more than returnSlack
//     (a burst: a daemon answering queries as usual never holds that
//     much); or
//   - it has been idle for returnIdle and the heap holds more than the
//     live heap by returnIdleSlack, once in each such idle time (else the
//     fragments a collection cannot give back would be collected again
//     and again).
//
// So the resident set is back near its idle size within returnIdle and
// returnEvery of the burst's end. Measured (bench/memfig): 8 parallel
// grep --all --json of 29 MB left 60.6 MiB resident a minute later with
// the first rule alone, from 17.1 MiB idle.
const (
	returnEvery     = 5 * time.Second
	returnQuiet     = time.Second
	returnSlack     = 32 << 20
	returnIdle      = 10 * time.Second
	returnIdleSlack = 8 << 20
)

// heapSample is what the returner reads of the heap.
type heapSample struct {
	live uint64 // live at the last collection
	held uint64 // mapped for the heap and not returned: objects, fragments, free spans
}

// readHeap reads the heap's figures from the runtime.
func readHeap() heapSample {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	var h heapSample
	for i, x := range s {
		if x.Value.Kind() != metrics.KindUint64 {
			continue
		}
		if i == 0 {
			h.live = x.Value.Uint64()
		} else {
			h.held += x.Value.Uint64()
		}
	}
	return h
}

// heapReturner hands the heap a burst left back to the system (see
// above). Its goroutine (run) is the daemon's: Run starts it and
// waits for it; it ends when the daemon's context does.
type heapReturner struct {
	read func() heapSample
	// quiet is how long the daemon has been without a request (0 while
	// one is in flight or a root builds).
	quiet func() time.Duration
	free  func() // debug.FreeOSMemory
	// returned counts the returns (status's heap_returns).
	returned atomic.Int64
	// idleDone: the idle rule returned the heap in this idle time (run's
	// alone).
	idleDone bool
}

// check returns the heap by the rules above and reports whether it did.
func (r *heapReturner) check() bool {
	q := r.quiet()
	if q < returnIdle {
		r.idleDone = false
	}
	if q < returnQuiet {
		return false
	}
	h := r.read()
	burst := h.held > h.live+max(collectorHeadroom, h.live/2)+returnSlack
	idle := q >= returnIdle && !r.idleDone && h.held > h.live+returnIdleSlack
	if !burst && !idle {
		return false
	}
	r.free()
	r.idleDone = r.idleDone || idle
	r.returned.Add(1)
	return true
}

// run checks every returnEvery (ticks) until ctx ends.
func (r *heapReturner) run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			r.check()
		}
	}
}
