package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// Figures, measured not asserted:
//
//	go test -run '^$' -bench Clients -benchtime 2000x ./daemon/
//
// BenchmarkClients measures queries per second through the socket with 8
// clients (each its own connection, one query at a time) on a ready index
// of $INDEXD_BENCH_ROOT (default $(go env GOROOT)/src), for each kind of
// query. The build is not timed.
func BenchmarkClients(b *testing.B) {
	root := benchRoot(b)
	td := startDaemon(b, Config{})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		b.Fatalf("index: %+v", rs)
	}
	ctx := context.Background()
	for _, q := range []struct{ name, method, args string }{
		{"grep-rare", tool.MethodGrep, `{"pattern":"xyzzy_indexd_rare"}`},
		{"grep-few", tool.MethodGrep, `{"pattern":"lowerhex"}`},
		{"grep-common", tool.MethodGrep, `{"pattern":"func main","limit":100}`},
		{"glob-all-go", tool.MethodGlob, `{"pattern":"**/*.go"}`},
		{"ls", tool.MethodLS, `{"path":"net/http"}`},
	} {
		b.Run(q.name, func(b *testing.B) {
			params := rpc.ToolParams{Root: root, Args: json.RawMessage(q.args)}
			var clients []*rpc.Client
			for range 8 {
				clients = append(clients, dialDaemon(b, td.cfg.SocketPath))
			}
			defer func() {
				for _, c := range clients {
					c.Close()
				}
			}()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			t0 := time.Now()
			for _, c := range clients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						var res json.RawMessage
						if err := c.Call(ctx, q.method, params, &res); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "queries/s")
		})
	}
}

// benchRoot returns the tree the benchmarks index: $INDEXD_BENCH_ROOT,
// else $(go env GOROOT)/src (the benchmark is skipped without either).
func benchRoot(b *testing.B) string {
	root := os.Getenv("INDEXD_BENCH_ROOT")
	if root == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Skip("no GOROOT:", err)
		}
		root = strings.TrimSpace(string(out)) + "/src"
	}
	return root
}
