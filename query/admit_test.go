package query

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
)

// Waiters are served fewest files taken first, then in arrival order; a
// waiter whose context ends leaves the queue without a scanner.
func TestScanPoolOrder(t *testing.T) {
	p := newScanPool(1)
	ctx := context.Background()
	fs := p.take(ctx, 0)
	if fs == nil {
		t.Fatal("no scanner from a free pool")
	}
	type got struct {
		name string
		fs   *fileScanner
	}
	served := make(chan got, 8)
	gone, cancel := context.WithCancel(ctx)
	for i, w := range []struct {
		name  string
		ctx   context.Context
		taken int
	}{{"full-a", ctx, 100}, {"rare", ctx, 0}, {"full-b", ctx, 100}, {"cancelled", gone, 0}, {"mid", ctx, 5}} {
		go func() { served <- got{w.name, p.take(w.ctx, w.taken)} }()
		// Queued before the next one arrives, so that arrival order is
		// the order written here.
		deadline := time.Now().Add(10 * time.Second)
		for p.queueLen() != i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s never queued", w.name)
			}
			runtime.Gosched()
		}
	}
	cancel()
	if g := <-served; g.name != "cancelled" || g.fs != nil {
		t.Fatalf("first back: %s with %v, want the cancelled waiter with nil", g.name, g.fs)
	}
	var order []string
	for range 4 {
		p.put(fs)
		g := <-served
		if g.fs == nil {
			t.Fatalf("%s got no scanner", g.name)
		}
		order = append(order, g.name)
		fs = g.fs
	}
	p.put(fs)
	if want := []string{"rare", "mid", "full-a", "full-b"}; !slices.Equal(order, want) {
		t.Fatalf("served %v, want %v", order, want)
	}
	if len(p.free) != 1 || p.queueLen() != 0 {
		t.Fatalf("pool after: %d free, %d waiting", len(p.free), p.queueLen())
	}
}

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
			env := idx.Run(context.Background(), ToolGrep, "", rare)
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
				idx.Run(ctx, ToolGrep, "", full)
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
