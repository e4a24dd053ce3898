package index

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var sink [][]byte

// The pacer collects once the heap holds more garbage than the headroom
// above what was live, and not before.
func TestHeapPacer(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // only the pacer collects
	runtime.GC()
	p := newHeapPacer()
	numGC := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC
	}
	n := numGC()
	p.check()
	if got := numGC(); got != n {
		t.Fatalf("a heap without garbage was collected (%d collections, was %d)", got, n)
	}
	for range 2 * buildHeadroom / (1 << 20) {
		sink = append(sink, make([]byte, 1<<20))
		sink = sink[:0] // garbage at once
	}
	p.check()
	if got := numGC(); got == n {
		t.Fatalf("%d MiB of garbage were not collected", 2*buildHeadroom>>20)
	}
}

// Pauses nest: the collector runs again, at the GOGC it had, only when
// every load has resumed it.
func TestPauseCollectorNests(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(70))
	r1 := pauseCollector()
	r2 := pauseCollector()
	r1()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d while a load still runs, want -1 (off)", got)
	}
	r2()
	if got := debug.SetGCPercent(70); got != 70 {
		t.Fatalf("GOGC %d once every load resumed, want 70", got)
	}
}

// SetCollectorPercent never resumes a paused collector: set during a
// load, it is what the load's resume restores; set outside one, it is
// applied at once.
func TestSetCollectorPercentWhilePaused(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	resume := pauseCollector()
	SetCollectorPercent(77)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC %d while a load has the collector paused, want -1", p)
	}
	resume()
	if p := debug.SetGCPercent(100); p != 77 {
		t.Errorf("GOGC %d after the load, want 77", p)
	}
	SetCollectorPercent(66)
	if p := debug.SetGCPercent(100); p != 66 {
		t.Errorf("GOGC %d outside a load, want 66", p)
	}
}
