//go:build linux

package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
)

// Figures for the issue, measured, never asserted. Run them with
//
//	go test ./watch -run '^$' -bench . -benchtime 1000x
//
// Each reports medians and p99 with ReportMetric.

// reportQuantiles reports the median and p99 of ds in µs.
func reportQuantiles(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(f float64) float64 { return float64(ds[int(f*float64(len(ds)-1))]) / float64(time.Microsecond) }
	b.ReportMetric(q(0.5), prefix+"-p50-µs")
	b.ReportMetric(q(0.99), prefix+"-p99-µs")
}

func benchTree(b *testing.B, files int) string {
	root := tempRoot(b)
	for i := range files {
		writeFile(b, root, fmt.Sprintf("d%d/e%d/f%d.txt", i%10, i%7, i), fmt.Sprintf("file %d\n", i))
	}
	return root
}

// Sync on an idle tree: the cost a query pays for read-your-writes.
func BenchmarkSyncIdle(b *testing.B) {
	for _, git := range []bool{false, true} {
		b.Run(fmt.Sprintf("git=%v", git), func(b *testing.B) {
			root := benchTree(b, 1000)
			if git {
				mkdirs(b, root, ".git")
			}
			w, _ := start(b, root, Options{})
			var ds []time.Duration
			for b.Loop() {
				t0 := time.Now()
				syncNow(b, w)
				ds = append(ds, time.Since(t0))
			}
			reportQuantiles(b, "sync", ds)
		})
	}
}

// Write to visible: a file written (WriteFile returned), then Sync; the
// file is then in the index with its content's trigrams. With db, the
// index is saved in bbolt and each batch is also a committed transaction.
func BenchmarkWriteToVisible(b *testing.B) {
	for _, db := range []bool{false, true} {
		b.Run(fmt.Sprintf("db=%v", db), func(b *testing.B) { writeToVisible(b, db) })
	}
}

func writeToVisible(b *testing.B, db bool) {
	root := benchTree(b, 1000)
	w, ix := startIndex(b, root, Options{}, db)
	var ds []time.Duration
	i := 0
	for b.Loop() {
		rel := fmt.Sprintf("d%d/new%d.txt", i%10, i)
		writeFile(b, root, rel, fmt.Sprintf("visible token%d\n", i))
		t0 := time.Now()
		syncNow(b, w)
		ds = append(ds, time.Since(t0))
		if !has(ix, rel) {
			b.Fatalf("%s not visible after Sync", rel)
		}
		i++
	}
	reportQuantiles(b, "visible", ds)
}

// Start on $GOROOT/src: the time to watch every directory (Start returns)
// and to be Ready (the initial reconcile, a stat walk). The index is built
// once, outside the timing. Nothing is written under GOROOT: Start removes
// leftover cookies only, and no Sync is made.
// INDEXD_BENCH_TREE replaces $(go env GOROOT)/src with another tree (the
// one bench/gentree makes, say).
func BenchmarkStartGOROOT(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip(err)
	}
	tree := filepath.Join(strings.TrimSpace(string(out)), "src")
	if t := os.Getenv("INDEXD_BENCH_TREE"); t != "" {
		tree = t
	}
	root, err := filepath.EvalSymlinks(tree)
	if err != nil {
		b.Skip(err)
	}
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		b.Fatal(err)
	}
	var watchT, readyT []time.Duration
	dirs, fileWatches := 0, 0
	for b.Loop() {
		t0 := time.Now()
		w, err := Start(context.Background(), root, ix, Options{})
		if err != nil {
			b.Fatal(err)
		}
		watchT = append(watchT, time.Since(t0))
		wait(b, w.Ready(), "ready")
		readyT = append(readyT, time.Since(t0))
		dirs, fileWatches = w.State().Dirs, w.State().Files
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(dirs), "dirs")
	b.ReportMetric(float64(fileWatches), "file-watches")
	b.ReportMetric(float64(ix.Len()), "files")
	reportQuantiles(b, "watch", watchT)
	reportQuantiles(b, "ready", readyT)
}

// A burst of 10,000 new files written in a temp tree (100 directories,
// existing and watched): the time and CPU (user+system of the whole
// process, the writer's included) until a Sync after the last write
// returns, and the watcher's batches.
func BenchmarkBurst10k(b *testing.B) {
	const n = 10000
	var absorb, total []time.Duration
	var cpu time.Duration
	var batches uint64
	round := 0
	for b.Loop() {
		b.StopTimer()
		root := tempRoot(b)
		for d := range 100 {
			mkdirs(b, root, fmt.Sprintf("d%02d", d))
		}
		w, ix := start(b, root, Options{})
		before := w.State().Batches
		b.StartTimer()
		cpu0 := cpuTime()
		t0 := time.Now()
		for i := range n {
			p := filepath.Join(root, fmt.Sprintf("d%02d/f%05d.txt", i%100, i))
			if err := os.WriteFile(p, fmt.Appendf(nil, "burst %d token%05d round %d\n", i, i, round), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		syncNow(b, w)
		total = append(total, time.Since(t0))
		absorb = append(absorb, time.Since(t1))
		cpu += cpuTime() - cpu0
		b.StopTimer()
		batches += w.State().Batches - before
		if got := ix.Len(); got != n {
			b.Fatalf("index holds %d files after the burst, want %d", got, n)
		}
		round++
		b.StartTimer()
	}
	reportQuantiles(b, "write+sync", total)
	reportQuantiles(b, "after-last-write", absorb)
	b.ReportMetric(float64(cpu.Milliseconds())/float64(round), "cpu-ms/burst")
	b.ReportMetric(float64(batches)/float64(round), "batches/burst")
}

// The cost of watching the files with more than one link on their own:
// a tree of INDEXD_BENCH_FILES files (default 20,000, in 70 directories)
// in which no file, or every tenth, has a second link outside the root.
// Each round starts a watcher on the built index and reports the time to
// Ready (the initial reconcile's walk, which adds every watch), a Sync
// on the idle tree, and, with links, a write through an outside link
// until a Sync after it returns (the index then holds it: checked); the
// watches added are counted (file-watches, dirs). Run with
//
//	go test ./watch -run '^$' -bench HardLinks -benchtime 20x
func BenchmarkHardLinks(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("INDEXD_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	for _, every := range []int{0, 10} {
		b.Run(fmt.Sprintf("link-every=%d", every), func(b *testing.B) {
			root := benchTree(b, n)
			store := b.TempDir()
			var linked []string
			for i := 0; every > 0 && i < n; i += every {
				l := filepath.Join(store, strconv.Itoa(i))
				if err := os.Link(filepath.Join(root, fmt.Sprintf("d%d/e%d/f%d.txt", i%10, i%7, i)), l); err != nil {
					b.Fatal(err)
				}
				linked = append(linked, l)
			}
			ix, err := index.Build(context.Background(), root, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			var readyT, syncT, visibleT []time.Duration
			st := State{}
			round := 0
			for b.Loop() {
				t0 := time.Now()
				w, err := Start(context.Background(), root, ix, Options{})
				if err != nil {
					b.Fatal(err)
				}
				wait(b, w.Ready(), "ready")
				readyT = append(readyT, time.Since(t0))
				t1 := time.Now()
				syncNow(b, w)
				syncT = append(syncT, time.Since(t1))
				if len(linked) > 0 {
					tok := fmt.Sprintf("linkedwrite%dx", round)
					f, err := os.OpenFile(linked[round%len(linked)], os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					if _, err := f.WriteString(tok + "\n"); err != nil {
						b.Fatal(err)
					}
					f.Close()
					syncNow(b, w)
					visibleT = append(visibleT, time.Since(t2))
					if len(candidates(b, ix, tok)) != 1 {
						b.Fatalf("%s written through a link is not in the index after Sync", tok)
					}
				}
				st = w.State()
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				round++
			}
			b.ReportMetric(float64(st.Files), "file-watches")
			b.ReportMetric(float64(st.Dirs), "dirs")
			b.ReportMetric(float64(ix.Len()), "files")
			reportQuantiles(b, "ready", readyT)
			reportQuantiles(b, "sync", syncT)
			reportQuantiles(b, "visible", visibleT)
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
