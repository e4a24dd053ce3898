// Command indexfig measures the index's figures (docs/design.md) on one tree,
// in process: full build (wall time, peak RSS, DB size against the corpus),
// reopen with no changes, one-file update, and the in-process time of the
// reference Grep and Glob queries, index against walk. It prints a markdown
// table of medians.
//
//	go run ./bench/indexfig -tree "$(go env GOROOT)/src" -runs 10
//
// Peak RSS is the process's VmHWM right after the build (the build is the
// first thing it does), so it includes the Go runtime and the walk.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

func main() {
	tree := flag.String("tree", "", "tree to index (required)")
	runs := flag.Int("runs", 10, "runs per measurement (median reported)")
	flag.Parse()
	if *tree == "" {
		fmt.Fprintln(os.Stderr, "indexfig: -tree is required")
		os.Exit(2)
	}
	if err := run(*tree, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "indexfig:", err)
		os.Exit(1)
	}
}

func run(tree string, runs int) error {
	ctx := context.Background()
	ws, err := query.NewWorkspace(tree)
	if err != nil {
		return err
	}
	root := ws.Root
	tmp, err := os.MkdirTemp("", "indexfig")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db := filepath.Join(tmp, "ix.db")

	start := time.Now()
	ix, err := index.Build(ctx, root, nil)
	if err != nil {
		return err
	}
	build := time.Since(start)
	rss := peakRSS()
	scratch := filepath.Join(root, ".indexfig-scratch.txt")
	defer os.Remove(scratch)
	updateMem := measureUpdate(ix, scratch, max(runs, 20))
	if err := ix.Save(db); err != nil {
		return err
	}
	fi, err := os.Stat(db)
	if err != nil {
		return err
	}
	var corpus int64
	files := 0
	ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool { corpus += f.Size; files++; return true })
	fmt.Printf("## Index figures: %s\n\n%d files, %.1f MB\n\n", tree, files, mb(corpus))
	fmt.Printf("| figure | value |\n|---|---|\n")
	fmt.Printf("| full build (wall, %d cores) | %s |\n", nproc(), ms(build))
	fmt.Printf("| peak RSS after build (VmHWM) | %.0f MB |\n", mb(rss))
	fmt.Printf("| DB size | %.1f MB (%.1f%% of corpus) |\n", mb(fi.Size()), 100*float64(fi.Size())/float64(corpus))
	ix.Close()

	reopen := measure(runs, func() error {
		ix, rebuilt, err := index.OpenOrBuild(ctx, db, root, nil)
		if err != nil {
			return err
		}
		if rebuilt {
			return fmt.Errorf("reopen rebuilt the index")
		}
		return ix.Close()
	})
	fmt.Printf("| reopen + reconcile, no changes | %s |\n", ms(reopen))

	ix, _, err = index.OpenOrBuild(ctx, db, root, nil)
	if err != nil {
		return err
	}
	defer ix.Close()
	update := measureUpdate(ix, scratch, max(runs, 20))
	fmt.Printf("| one-file update, in memory (before the DB exists) | %s |\n", ms(updateMem))
	fmt.Printf("| one-file update, with its DB transaction (fsync) | %s |\n\n", ms(update))
	os.Remove(scratch)
	ix.Update(".indexfig-scratch.txt")

	walk := query.NewDirect(ws)
	indexed := &query.Tools{WS: ws, Searcher: query.Indexed{Index: ix}}
	fmt.Printf("| query | index | walk | walk/index | results |\n|---|---|---|---|---|\n")
	for _, q := range []struct{ name, tool, args string }{
		{"grep rare literal", tool.Grep, `{"pattern":"xyzzy_indexd_rare","case_sensitive":true}`},
		{"grep rare literal (?i)", tool.Grep, `{"pattern":"xyzzy_indexd_rare"}`},
		{"grep `func main`", tool.Grep, `{"pattern":"func main","case_sensitive":true}`},
		{"grep `func \\w+Handler\\(`", tool.Grep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true}`},
		{"grep `\\w+\\d{4}\\w*`", tool.Grep, `{"pattern":"\\w+\\d{4}\\w*","case_sensitive":true}`},
		{"glob `**/*.go`", tool.Glob, `{"pattern":"**/*.go"}`},
		{"glob `**/testdata/**/*.json`", tool.Glob, `{"pattern":"**/testdata/**/*.json"}`},
		{"glob `**/internal/**/*.go`", tool.Glob, `{"pattern":"**/internal/**/*.go"}`},
	} {
		var n int
		ti := measure(runs, func() error { var err error; n, err = answer(ctx, indexed, q.tool, q.args); return err })
		tw := measure(runs, func() error { _, err := answer(ctx, walk, q.tool, q.args); return err })
		fmt.Printf("| %s | %s | %s | %.0f× | %d |\n", q.name, ms(ti), ms(tw), float64(tw)/float64(ti), n)
	}
	return nil
}

// measureUpdate times ix.Update of a scratch file rewritten before each
// run (the write itself is not timed).
func measureUpdate(ix *index.Index, scratch string, runs int) time.Duration {
	rel := filepath.Base(scratch)
	ds := make([]time.Duration, runs)
	for i := range ds {
		if err := os.WriteFile(scratch, fmt.Appendf(nil, "scratch %d\n", i), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "indexfig:", err)
			os.Exit(1)
		}
		s := time.Now()
		if err := ix.Update(rel); err != nil {
			fmt.Fprintln(os.Stderr, "indexfig:", err)
			os.Exit(1)
		}
		ds[i] = time.Since(s)
	}
	slices.Sort(ds)
	return ds[runs/2]
}

// answer runs one query and returns how many results it gave. Grep gets a
// timeout far beyond any run, so the walk's time is measured, not its
// default 2 s timeout.
func answer(ctx context.Context, t *query.Tools, name, args string) (int, error) {
	if name == tool.Grep {
		args = strings.Replace(args, "{", `{"timeout_ms":60000,`, 1)
	}
	e := t.Run(ctx, name, ".", json.RawMessage(args))
	if e.Status == envelope.StatusError {
		return 0, fmt.Errorf("%s %s: %s", name, args, e.Text)
	}
	switch d := e.Data.(type) {
	case *envelope.GrepData:
		return len(d.Matches), nil
	case *envelope.GlobData:
		return len(d.Paths), nil
	}
	return 0, nil
}

// measure runs f n times (after one warm-up) and returns the median.
func measure(n int, f func() error) time.Duration {
	if err := f(); err != nil {
		fmt.Fprintln(os.Stderr, "indexfig:", err)
		os.Exit(1)
	}
	ds := make([]time.Duration, n)
	for i := range ds {
		s := time.Now()
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "indexfig:", err)
			os.Exit(1)
		}
		ds[i] = time.Since(s)
	}
	slices.Sort(ds)
	return ds[n/2]
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

func nproc() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "processor\t:")
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
