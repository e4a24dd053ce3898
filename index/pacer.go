package index

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A build's memory is its path table, its builders and what it reads,
// but also the garbage it leaves on the way (directory listings, open
// calls, bbolt's nodes as it saves) until the collector next runs; and
// with the default GOGC the collector lets the heap grow to twice what
// was live at its last run before it runs again. At a million files the
// path table alone is some 200 MB, so that headroom, not the build's own
// data, would make most of its peak. The build therefore collects
// itself, at points where it knows garbage accumulates, once the heap
// holds more than an eighth (at least buildHeadroom) above what was live
// at the last collection: the peak follows what the build holds, at the
// cost of a few more collections. It changes no process-wide setting
// (GOGC, the memory limit), so other roots of the same daemon are not
// affected.

// buildHeadroom is the least garbage a build lets accumulate before it
// collects.
const buildHeadroom = 48 << 20

// heapPacer triggers the collections; its check is safe for concurrent
// use and cheap (a read of two runtime metrics).
type heapPacer struct {
	mu      sync.Mutex
	samples [2]metrics.Sample
}

// pacer is the builds' and saves' pacer.
var pacer = newHeapPacer()

func newHeapPacer() *heapPacer {
	p := &heapPacer{}
	p.samples[0].Name = "/gc/heap/live:bytes"
	p.samples[1].Name = "/memory/classes/heap/objects:bytes"
	return p
}

// check collects if the heap holds more garbage than the headroom.
// Concurrent calls while one collects return at once.
//
// The pages it frees stay mapped, for the build's next allocations:
// handed back to the system at each collection (debug.FreeOSMemory),
// they were faulted in again at once, 610,000 page faults and some 4 s
// of CPU in a 1M-file build, for a peak 30-60 MiB lower. The resident
// set so follows the heap's peak (what is live plus the headroom), and
// whoever ends a build or a compaction hands the free pages back
// (daemon, watch).
func (p *heapPacer) check() { p.checkAbove(8, runtime.GC) }

// checkLoose is check with half the live heap as the headroom, for a
// catch-up walk: it bounds the walk's garbage (after a million-file
// build it took the daemon from 235 to 551 MiB) without the collections
// every eighth would cost a restart (0.4 s of 2.2 at a million files,
// when check also handed the pages back).
func (p *heapPacer) checkLoose() { p.checkAbove(2, runtime.GC) }

// checkAbove runs collect if the heap holds more than max(live/div,
// buildHeadroom) above the live heap.
func (p *heapPacer) checkAbove(div uint64, collect func()) {
	if p == nil || !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	metrics.Read(p.samples[:])
	live, heap := p.samples[0].Value.Uint64(), p.samples[1].Value.Uint64()
	if heap > live+max(live/div, buildHeadroom) {
		collect()
	}
}

// Opening an index loads its path table (at a million files some 140 MB,
// all of it live once loaded) into slices allocated at their full size
// up front, so their pages are fresh. Should the collector run
// meanwhile, it reads those pages before the load writes them: the
// kernel maps each read page to its shared zero page, and the load's
// first write to it then copies the page and flushes the other CPUs'
// TLBs (a copy-on-write fault and an interprocessor interrupt per page).
// A reopen at a million files took 0.6 s without a collection during the
// load and 0.9–3.1 s with one (in process, in turns). The load therefore
// runs with the collector paused: what it allocates is the table it
// keeps, and the memory limit (which the daemon sets) still collects
// should other work fill the heap meanwhile; a build's own collections
// (the pacer's) run as ever. This is the one process-wide setting the
// index changes, for the length of a load.
var collectorPause struct {
	sync.Mutex
	n     int // loads running
	saved int // GOGC before the first of them
}

// SetCollectorPercent sets GOGC (debug.SetGCPercent) as the process's
// standing choice: while loads have the collector paused, it is what the
// last of them restores, so it never resumes a paused collector.
func SetCollectorPercent(p int) {
	collectorPause.Lock()
	defer collectorPause.Unlock()
	if collectorPause.n > 0 {
		collectorPause.saved = p
		return
	}
	debug.SetGCPercent(p)
}

// pauseCollector pauses the collector until the returned function is
// called; pauses nest (the last resume restores GOGC).
func pauseCollector() (resume func()) {
	collectorPause.Lock()
	if collectorPause.n++; collectorPause.n == 1 {
		collectorPause.saved = debug.SetGCPercent(-1)
	}
	collectorPause.Unlock()
	return func() {
		collectorPause.Lock()
		if collectorPause.n--; collectorPause.n == 0 {
			debug.SetGCPercent(collectorPause.saved)
		}
		collectorPause.Unlock()
	}
}
