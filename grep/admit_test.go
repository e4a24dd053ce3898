package grep

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"
)

// Waiters are served fewest files taken first, then in arrival order; a
// waiter whose context ends leaves the queue without a scanner.
func TestScanPoolOrder(t *testing.T) {
	t.Parallel()
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
