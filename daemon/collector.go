package daemon

import (
	"os"
	"runtime/metrics"

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
