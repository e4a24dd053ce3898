package query

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// The admission figure (not a timed test: it prints, it does not assert;
// INDEXD_ADMISSION_FIGURE=1 to run it): the index-backed Grep of a rare
// literal over $GOROOT/src, idle and while 64 goroutines each run
// full-scan regexes without pause.
func TestAdmissionFigure(t *testing.T) {
	if os.Getenv("INDEXD_ADMISSION_FIGURE") == "" {
		t.Skip("a figure, run on request: INDEXD_ADMISSION_FIGURE=1")
	}
	_, idx := gorootTools(t)
	rare := json.RawMessage(`{"pattern":"QuokkaNeedleZeta|xyzzy","sync":false}`)
	full := json.RawMessage(`{"pattern":"\\w+\\d{4}\\w*","limit":1000,"timeout_ms":60000}`)
	measure := func(n int) []time.Duration {
		var ds []time.Duration
		for range n {
			t0 := time.Now()
			env := idx.Run(context.Background(), tool.Grep, "", rare)
			ds = append(ds, time.Since(t0))
			if env.Status == envelope.StatusError {
				t.Fatalf("rare literal: %+v", env.Error)
			}
		}
		slices.Sort(ds)
		return ds
	}
	measure(5) // warm
	idle := measure(31)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var fulls atomic.Int64
	for range 64 {
		wg.Go(func() {
			for ctx.Err() == nil {
				idx.Run(ctx, tool.Grep, "", full)
				fulls.Add(1)
			}
		})
	}
	time.Sleep(time.Second) // let the load build up: a figure, not a synchronisation
	loaded := measure(31)
	cancel()
	wg.Wait()
	t.Logf("rare literal, index: idle median %v (p90 %v); under 64 full scans median %v (p90 %v), %.1f× idle; %d full scans meanwhile",
		idle[15], idle[27], loaded[15], loaded[27], float64(loaded[15])/float64(idle[15]), fulls.Load())
}
