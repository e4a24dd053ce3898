// Command buildprof profiles one index build in process, as the daemon
// runs it (OpenOrBuild into a fresh DB: walk, read, spill, merge, save):
// wall time, CPU time, peak RSS (VmHWM), the Go heap at its peak, and
// optionally CPU, allocation and heap-at-peak profiles and an execution
// trace.
//
//	go run ./bench/buildprof -tree /work/bench-200k -cpu cpu.pprof -trace trace.out
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/indexd/indexd/index"
)

func main() {
	tree := flag.String("tree", "", "tree to index (required)")
	dbDir := flag.String("db", "", "directory for the DB (default: a temporary one)")
	cpu := flag.String("cpu", "", "write a CPU profile here")
	allocs := flag.String("allocs", "", "write an allocation profile here")
	heap := flag.String("heap", "", "write a heap profile taken near the peak of the live heap here")
	tr := flag.String("trace", "", "write an execution trace here")
	timeline := flag.Duration("timeline", 0, "print the resident set and live heap at this interval")
	flag.Parse()
	if *tree == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *allocs != "" {
		runtime.MemProfileRate = 64 << 10
	}
	dir := *dbDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "buildprof"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	}
	db := filepath.Join(dir, "ix.db")
	if *cpu != "" {
		if err := pprof.StartCPUProfile(create(*cpu)); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *tr != "" {
		if err := trace.Start(create(*tr)); err != nil {
			fail(err)
		}
		defer trace.Stop()
	}
	var peakLive atomic.Uint64
	var peakRSS atomic.Int64
	var atPeak atomic.Value // what made up the resident set at its peak
	stop := make(chan struct{})
	sampled := make(chan struct{})
	start := time.Now()
	go func() { // sample the live heap and RSS; profile the heap near its peak
		defer close(sampled)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}
		var last uint64
		var printed time.Time
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			metrics.Read(s)
			live := s[0].Value.Uint64()
			st := status()
			if *timeline > 0 && time.Since(printed) >= *timeline {
				printed = time.Now()
				fmt.Printf("%6.1fs RssAnon=%dMiB RssFile=%dMiB liveHeap=%dMiB goMapped=%dMiB\n",
					time.Since(start).Seconds(), st["RssAnon"]>>20, st["RssFile"]>>20, live>>20, s[1].Value.Uint64()>>20)
			}
			if st["VmRSS"] > peakRSS.Load() {
				peakRSS.Store(st["VmRSS"])
				atPeak.Store(fmt.Sprintf("VmRSS=%dMiB RssAnon=%dMiB RssFile=%dMiB liveHeap=%dMiB goMapped=%dMiB at %.1fs",
					st["VmRSS"]>>20, st["RssAnon"]>>20, st["RssFile"]>>20, live>>20, s[1].Value.Uint64()>>20, time.Since(start).Seconds()))
			}
			if live > peakLive.Load() {
				peakLive.Store(live)
			}
			if *heap != "" && live > last+last/10 {
				last = live
				if f, err := os.Create(*heap); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}
	}()
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var phases []string
	ix, rebuilt, err := index.OpenOrBuild(context.Background(), db, *tree, &index.OpenOptions{
		Phase: func(p index.Phase) {
			phases = append(phases, fmt.Sprintf("%v@%.2fs", p, time.Since(start).Seconds()))
		},
	})
	if err != nil {
		fail(err)
	}
	wall := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	close(stop)
	<-sampled
	cpuT := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	fmt.Printf("build %s rebuilt=%v files=%d wall=%.2fs cpu=%.2fs (user %.2f sys %.2f) cores=%.2f VmHWM=%dMiB peakLiveHeap=%dMiB gc=%d phases=%s\n",
		*tree, rebuilt, ix.Len(), wall.Seconds(), cpuT.Seconds(),
		float64(ru.Utime.Nano()-ru0.Utime.Nano())/1e9, float64(ru.Stime.Nano()-ru0.Stime.Nano())/1e9,
		cpuT.Seconds()/wall.Seconds(), status()["VmHWM"]>>20, peakLive.Load()>>20, numGC(), strings.Join(phases, ","))
	if v, ok := atPeak.Load().(string); ok {
		fmt.Println("at the peak of VmRSS (sampled every 20 ms):", v)
	}
	ix.Close()
	if *allocs != "" {
		f := create(*allocs)
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail(err)
		}
		if err := f.Close(); err != nil {
			fail(err)
		}
	}
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// status returns the byte counts of /proc/self/status (kB lines).
func status() map[string]int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	m := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if v, isKB := strings.CutSuffix(strings.TrimSpace(v), " kB"); ok && isKB {
			n, _ := strconv.ParseInt(v, 10, 64)
			m[k] = n << 10
		}
	}
	return m
}

// create creates the file at name for a profile, or fails.
func create(name string) *os.File {
	f, err := os.Create(name)
	if err != nil {
		fail(err)
	}
	return f
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "buildprof:", err)
	os.Exit(1)
}
