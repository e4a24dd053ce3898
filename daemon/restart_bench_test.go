package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// Figures, measured not asserted:
//
//	INDEXD_BENCH_ROOT=/work/bench-200k INDEXD_BENCH_STATE=/tmp/restart-state \
//	    go test -run '^$' -bench Restart -benchtime 5x ./daemon/
//
// BenchmarkRestart measures restart → ready in process: a daemon indexes
// $INDEXD_BENCH_ROOT (default $(go env GOROOT)/src) into a state
// directory ($INDEXD_BENCH_STATE, kept between runs when set, so the
// build is paid once; else a temporary one) and stops; then each
// iteration starts a daemon on that state directory and times `index
// --wait` of the root, which reopens the saved index, checks it and
// catches it up with the tree, then stops the daemon (not timed). It
// reports the median and the slowest of the iterations.
func BenchmarkRestart(b *testing.B) {
	root, err := filepath.EvalSymlinks(benchRoot(b))
	if err != nil {
		b.Skip(err)
	}
	state := os.Getenv("INDEXD_BENCH_STATE")
	if state == "" {
		state = b.TempDir()
	}
	td := startDaemon(b, Config{StateDir: state})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		b.Fatalf("index: %+v", rs)
	}
	if err := td.stop(); err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		td := startDaemon(b, Config{StateDir: state})
		rs := td.index(root, true)
		ds = append(ds, time.Since(t0))
		if rs.State != rpc.StateReady || !rs.Reopened {
			b.Fatalf("index after restart: %+v", rs)
		}
		b.StopTimer()
		if err := td.stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportMS(b, "ready", ds)
}

// reportMS reports the median and the maximum of ds in ms.
func reportMS(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Sorted(slices.Values(ds))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(s[len(s)/2]), prefix+"-p50-ms")
	b.ReportMetric(ms(s[len(s)-1]), prefix+"-max-ms")
}
