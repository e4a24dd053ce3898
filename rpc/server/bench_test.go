package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// Figures, measured not asserted:
//
//	go test -run '^$' -bench Ping -benchtime 10000x ./rpc/
//	go test -run '^$' -bench Throughput -benchtime 3s ./rpc/

// BenchmarkPing measures ping round trips on one connection, one at a
// time; it reports the median and the 99th percentile.
func BenchmarkPing(b *testing.B) {
	ts := startServer(b, testMethods(), nil)
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := c.Ping(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkThroughput measures requests per second with 8 clients (each
// its own connection) calling a trivial method, with 1 caller per client
// (each waits for its answer) or 16 (pipelined on the connection).
func BenchmarkThroughput(b *testing.B) {
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=8/callers=%d", callers), func(b *testing.B) {
			ts := startServer(b, testMethods(), nil)
			ctx := context.Background()
			params := json.RawMessage(`{"n":1}`)
			var clients []*rpc.Client
			for range 8 {
				c, err := rpc.Dial(ctx, ts.path)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				clients = append(clients, c)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			t0 := time.Now()
			for _, c := range clients {
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							if err := c.Call(ctx, "echo", params, nil); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "req/s")
		})
	}
}
