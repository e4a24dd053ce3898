// Command sidebyside times indexctl against ripgrep, fd and codesearch on
// one tree, in one run, and prints a markdown table of medians and ratios
// (bench/README.md).
//
//	go run ./bench/sidebyside -tree DIR [-runs 10] [-warmup 2] [-indexctl PATH]
//
// Every query runs as a separate process per tool (exec, no shell), its
// standard output counted and discarded, exit status 1 (nothing found)
// accepted. The page cache is warmed first by reading the whole tree, and
// each tool gets -warmup untimed runs per query; the timed runs of the
// tools are interleaved so that drift on a shared machine hits all alike.
// A missing tool is skipped and named in the report.
//
// Run it from the module root: without -indexctl it builds ./cmd/indexctl
// and its engine ./cmd/indexd into a temporary directory (falling back to
// indexctl on $PATH), and runs them with a daemon of their own there,
// which indexes the tree before the first query and is stopped at the
// end; a user's daemon is neither reached nor replaced.
//
// With -scale it runs the scale run instead (scale.go): a private daemon
// of its own on the tree, and one table of the index's figures at size —
// build, memory, DB size, restart, these queries through the daemon, a
// one-file write, a query stream during a burst of rewrites — beside
// codesearch's from the same run (bench/README.md says how each is
// measured).
//
//	go run ./bench/sidebyside -scale -tree DIR [-tree2 DIR] [-runs 10] [-restarts 3]
//
// With -daemons it runs indexd against zoekt, daemon against daemon
// (daemons.go): a private indexd daemon indexes the tree as in the scale
// run, zoekt-index builds a zoekt index of it (or -zoekt-index-dir names
// one) and zoekt-webserver serves it on a free port of 127.0.0.1; each
// query then goes through one persistent client per daemon in this
// process (a Unix-socket connection for indexd, a keep-alive HTTP
// connection to zoekt's JSON API), interleaved round by round with the
// read floor (opening and reading the files indexd's answer came from,
// GOMAXPROCS workers) and csearch when installed. It prints both builds'
// time and size and a table of medians and ratios. The queries are a
// built-in set for the kernel or $GOROOT/src, or any corpus's from a TSV
// file (-queries: class, pattern, case_sensitive 0/1, limit). Without the
// zoekt programs, zoekt's column is skipped and the report says so.
//
//	go run ./bench/sidebyside -daemons -tree DIR [-zoekt-index PATH]
//	    [-zoekt-webserver PATH] [-zoekt-index-dir DIR] [-queries FILE] [-runs 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
)

func main() {
	var (
		treeFlag   = flag.String("tree", "", "tree to search (required)")
		runs       = flag.Int("runs", 10, "timed runs per tool and query")
		warmup     = flag.Int("warmup", 2, "untimed runs per tool and query before the timed ones")
		indexctl   = flag.String("indexctl", "", "indexctl binary (default: build ./cmd/indexctl, else indexctl on $PATH; \"none\" to skip)")
		ctlFlags   = flag.String("indexctl-flags", "--direct", "global flags for every indexctl command, space separated")
		rgFlag     = flag.String("rg", "", "ripgrep binary (default: rg on $PATH; \"none\" to skip)")
		fdFlag     = flag.String("fd", "", "fd binary (default: fdfind or fd on $PATH; \"none\" to skip)")
		csFlag     = flag.String("csearch", "", "csearch binary (default: on $PATH or in $GOPATH/bin; \"none\" to skip codesearch)")
		ciFlag     = flag.String("cindex", "", "cindex binary (default: on $PATH or in $GOPATH/bin)")
		rare       = flag.String("rare", "", "the rare literal (default: the generator's planted one for a generated tree, else \"xyzzy\", rare in $GOROOT/src)")
		grepLimit  = flag.Int("grep-limit", 1000, "indexctl grep --limit (1-1000); rg and csearch print every match")
		globLimit  = flag.Int("glob-limit", 200, "indexctl glob --limit (1-200); fd and rg --files print every match")
		timeoutMS  = flag.Int("timeout-ms", 60000, "indexctl grep --timeout-ms (1-60000), so a slow scan is measured rather than cut at the 2 s default")
		cmdTimeout = flag.Duration("cmd-timeout", 5*time.Minute, "kill any single command running longer than this")
		only       = flag.String("tools", strings.Join(allTools, ","), "tools to run, comma separated")

		scale     = flag.Bool("scale", false, "the scale run: a private daemon's figures (build, memory, restart, queries, writes, churn) and codesearch's, as one table")
		tree2     = flag.String("tree2", "", "-scale: a second tree, to report the daemon's memory with two roots open")
		restarts  = flag.Int("restarts", 3, "-scale: timed restarts (median reported)")
		writes    = flag.Int("writes", 10, "-scale: timed one-file writes (median reported)")
		churn     = flag.Int("churn", 2000, "-scale: files rewritten (then restored) in the burst")
		churnTail = flag.Duration("churn-tail", 2*time.Second, "-scale: how long the query stream runs before the burst, and after the daemon has caught up with it")

		daemons     = flag.Bool("daemons", false, "indexd against zoekt, daemon against daemon, one persistent client each, beside the read floor and csearch")
		zoektIndex  = flag.String("zoekt-index", "", "-daemons: zoekt-index binary (default: on $PATH or in $GOPATH/bin; \"none\" to skip zoekt)")
		zoektServer = flag.String("zoekt-webserver", "", "-daemons: zoekt-webserver binary (default: on $PATH or in $GOPATH/bin; \"none\" to skip zoekt)")
		zoektDir    = flag.String("zoekt-index-dir", "", "-daemons: serve this existing zoekt index of the tree instead of building one")
		queriesFlag = flag.String("queries", "", "-daemons: a TSV file of queries (class, pattern, case_sensitive 0/1, limit), or a built-in set: kernel, goroot (default: kernel for a tree with Kbuild and MAINTAINERS at its top, else goroot)")
	)
	flag.Parse()
	if *treeFlag == "" || *runs < 1 || *warmup < 0 || flag.NArg() > 0 || *scale && *daemons ||
		*scale && (*restarts < 1 || *writes < 1 || *churn < 1 || *churnTail <= 0) {
		flag.Usage()
		os.Exit(2)
	}
	tree := realDir("-tree", *treeFlag)
	if *daemons {
		cfg := daemonsConfig{
			tree: tree, runs: *runs, warmup: *warmup, indexctl: *indexctl,
			zoektIndex: *zoektIndex, zoektWebserver: *zoektServer, csearch: *csFlag, cindex: *ciFlag,
			queries: *queriesFlag, timeoutMS: *timeoutMS, cmdTimeout: *cmdTimeout,
		}
		if *zoektDir != "" {
			cfg.zoektIndexDir = realDir("-zoekt-index-dir", *zoektDir)
		}
		runReported(func(ctx context.Context) (writer, error) { return nilIfNone(runDaemons(ctx, cfg)) })
		return
	}
	if *scale {
		cfg := scaleConfig{
			tree: tree, runs: *runs, warmup: *warmup, restarts: *restarts, writes: *writes, churn: *churn, churnTail: *churnTail,
			indexctl: *indexctl, csearch: *csFlag, cindex: *ciFlag, rare: *rare,
			grepLimit: *grepLimit, globLimit: *globLimit, timeoutMS: *timeoutMS, cmdTimeout: *cmdTimeout,
		}
		if *tree2 != "" {
			cfg.tree2 = realDir("-tree2", *tree2)
		}
		runReported(func(ctx context.Context) (writer, error) { return nilIfNone(runScale(ctx, cfg)) })
		return
	}
	want := map[string]bool{}
	for _, t := range strings.Split(*only, ",") {
		want[strings.TrimSpace(t)] = true
	}

	tmp, err := os.MkdirTemp("", "sidebyside-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)

	r := &report{tree: tree, runs: *runs, warmup: *warmup, started: time.Now(), missing: map[string]string{}, loadStart: loadavg()}
	r.man, err = corpus.ReadManifest(tree)
	if err != nil && !os.IsNotExist(err) {
		progress("%v; treating %s as an ordinary tree", err, tree)
	}
	s := &setup{tree: tree, grepLimit: *grepLimit, globLimit: *globLimit, timeoutMS: *timeoutMS, indexctlFlags: strings.Fields(*ctlFlags)}

	// Tools.
	if want[toolIndexctl] {
		s.indexctl, r.indexctlFrom = findIndexctl(*indexctl, tmp)
		if s.indexctl == filepath.Join(tmp, "indexctl") {
			// Built here: it gets a daemon of its own (state and socket in
			// tmp), indexed before the first query and stopped at the
			// end, so that no user's daemon is replaced and none outlives
			// its deleted binary. An indexctl named by -indexctl, or found
			// on $PATH, talks to the user's daemon.
			s.indexctlEnv = privateEnv(tmp, privateSocket(tmp))
			r.indexctlFrom += "; a daemon of its own, indexed before the first query"
			defer stopPrivate(s)
		}
	}
	// Interrupted, the run ends the command under way, starts no other,
	// stops its daemon and removes tmp.
	ctx, stopSignals := interruptible()
	defer stopSignals()
	interrupted := func() {
		progress("interrupted")
		if s.indexctlEnv != nil {
			stopPrivate(s)
		}
		os.RemoveAll(tmp)
		os.Exit(130)
	}
	if want[toolRg] || want[toolRgFiles] {
		s.rg = lookTool(*rgFlag, "rg")
	}
	if want[toolFd] {
		s.fd = lookTool(*fdFlag, "fdfind", "fd")
	}
	var cindex string
	if want[toolCsearch] {
		s.csearch = lookTool(*csFlag, "csearch")
		cindex = lookTool(*ciFlag, "cindex")
	}
	r.noteTools(s, cindex, want)

	// Warm the page cache, and measure the corpus.
	progress("reading %s to warm the page cache", tree)
	r.corpus = readTree(tree)

	// codesearch's index, built once, timed.
	if s.csearch != "" && cindex != "" {
		progress("building the codesearch index")
		r.cindex = buildCindex(cindex, tree, filepath.Join(tmp, "csearchindex"), *cmdTimeout)
		if r.cindex.err == nil {
			s.csIndex = r.cindex.file
		} else {
			r.missing[toolCsearch] = "cindex failed: " + r.cindex.err.Error()
		}
	}

	if s.indexctlEnv != nil {
		progress("indexing %s", tree)
		if out, err := runCmd(ctx, s, *cmdTimeout, "index", "--wait", tree); ctx.Err() != nil {
			interrupted()
		} else if err != nil {
			stopPrivate(s)
			os.RemoveAll(tmp)
			fatal(fmt.Errorf("indexctl index --wait: %v: %s", err, out))
		}
	}
	r.queries = queries(r.man, *rare)
	for _, q := range r.queries {
		r.results = append(r.results, measure(ctx, s, q, *runs, *warmup, *cmdTimeout))
		if ctx.Err() != nil {
			interrupted()
		}
	}
	r.setup = s
	r.write(os.Stdout)
}

// runCmd runs s's indexctl with args in its environment and returns its
// combined output.
func runCmd(ctx context.Context, s *setup, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.indexctl, args...)
	cmd.Env = s.indexctlEnv
	return cmd.CombinedOutput()
}

// stopPrivate stops the daemon of s's private environment.
func stopPrivate(s *setup) {
	if out, err := runCmd(context.Background(), s, 40*time.Second, "stop"); err != nil {
		progress("indexctl stop: %v: %s", err, out)
	}
}

// realDir returns dir made absolute with symbolic links resolved, and
// exits if it is not a directory.
func realDir(flagName, dir string) string {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		fatal(err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		fatal(fmt.Errorf("%s %s: not a directory", flagName, dir))
	}
	return abs
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sidebyside:", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sidebyside: "+format+"\n", args...)
}

// findIndexctl returns the indexctl to run and where it came from.
func findIndexctl(flagValue, tmp string) (string, string) {
	switch flagValue {
	case "none":
		return "", ""
	case "":
		// indexctl and its engine, indexd, side by side: indexctl
		// finds the engine beside it.
		bin := filepath.Join(tmp, "indexctl")
		// The packages' import paths build from any directory of the
		// module (the scale test runs in bench/sidebyside).
		out, err := exec.Command("go", "build", "-o", tmp+"/", "github.com/indexd/indexd/cmd/indexctl", "github.com/indexd/indexd/cmd/indexd").CombinedOutput()
		if err == nil {
			from := "built from ./cmd/indexctl and ./cmd/indexd"
			if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
				from += " at HEAD " + strings.TrimSpace(string(rev)) + " plus any uncommitted changes"
			}
			return bin, from
		}
		progress("go build ./cmd/indexctl ./cmd/indexd: %v: %s", err, strings.TrimSpace(string(out)))
		if p := lookTool("", "indexctl"); p != "" {
			return p, "$PATH"
		}
		return "", ""
	}
	p := lookTool(flagValue)
	return p, "-indexctl"
}

// queries returns the benchmark's queries (bench/README.md). For a generated
// tree the manifest says how many visible matches each should find.
func queries(m *corpus.Manifest, rare string) []query {
	if rare == "" {
		rare = "xyzzy"
		if m != nil {
			rare = corpus.RareLiteral
		}
	}
	qs := []query{
		{name: "grep rare literal", kind: kindGrep, pattern: rare, caseSensitive: true},
		{name: "grep -i rare literal", kind: kindGrep, pattern: strings.ToLower(rare)},
		{name: "grep `func main`", kind: kindGrep, pattern: "func main", caseSensitive: true},
		{name: "grep Handler decl", kind: kindGrep, pattern: `func \w+Handler\(`, caseSensitive: true},
		{name: "grep no literal", kind: kindGrep, pattern: `\w+\d{4}\w*`, caseSensitive: true},
	}
	for _, g := range corpus.GlobPatterns {
		qs = append(qs, query{name: "glob " + g, kind: kindGlob, pattern: g})
	}
	if m != nil && rare == corpus.RareLiteral {
		qs[0].expect = fmt.Sprint(m.RareFiles)
		qs[1].expect = fmt.Sprint(m.RareFiles + m.RareUpperFiles)
	}
	if m != nil {
		qs[2].expect = fmt.Sprint(m.FuncMainFiles)
		qs[3].expect = fmt.Sprint(m.HandlerLines)
		for i := range corpus.GlobPatterns {
			qs[5+i].expect = fmt.Sprint(m.Globs[qs[5+i].pattern])
		}
	}
	return qs
}

// result is one query's measurements, per tool.
type result struct {
	q     query
	argv  map[string][]string
	stats map[string]stats
}

// measure runs q with every tool: warm-up runs, then the timed runs
// interleaved tool by tool, until ctx ends.
func measure(ctx context.Context, s *setup, q query, runs, warmup int, timeout time.Duration) result {
	res := result{q: q, argv: map[string][]string{}, stats: map[string]stats{}}
	var tools []string
	for _, t := range allTools {
		if a := s.argv(t, q); a != nil {
			res.argv[t] = a
			tools = append(tools, t)
		}
	}
	progress("%s: %s", q.name, strings.Join(tools, ", "))
	run := func(t string) (sample, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return runOnce(ctx, s.tree, s.env(t), res.argv[t], t == toolIndexctl)
	}
	failed := map[string]error{}
	for _, t := range tools {
		for range warmup {
			if _, err := run(t); err != nil {
				failed[t] = err
				break
			}
		}
	}
	samples := map[string][]sample{}
	for range runs {
		for _, t := range tools {
			if failed[t] != nil {
				continue
			}
			sm, err := run(t)
			if err != nil {
				failed[t] = err
				continue
			}
			samples[t] = append(samples[t], sm)
		}
	}
	for _, t := range tools {
		st := summarize(samples[t])
		st.err = failed[t]
		res.stats[t] = st
	}
	return res
}

// corpusStats describe the tree as read to warm the cache.
type corpusStats struct {
	files, dirs int
	bytes       int64
	nonDotBytes int64 // files cindex walks (no name on the path starts with '.')
	nonDotFiles int
	elapsed     time.Duration
	unreadable  int
}

// readTree reads every regular file under root once, hidden and ignored
// ones included, so that every tool then runs on a warm page cache.
func readTree(root string) corpusStats {
	var cs corpusStats
	start := time.Now()
	buf := make([]byte, 1<<20)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			cs.unreadable++
			return nil
		}
		if d.IsDir() {
			if p != root {
				cs.dirs++
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			cs.unreadable++
			return nil
		}
		var n int64
		for {
			k, err := f.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		f.Close()
		cs.files++
		cs.bytes += n
		rel, _ := filepath.Rel(root, p)
		if !strings.HasPrefix(rel, ".") && !strings.Contains(rel, "/.") {
			cs.nonDotFiles++
			cs.nonDotBytes += n
		}
		return nil
	})
	cs.elapsed = time.Since(start)
	return cs
}

// cindexStats describe the codesearch index build.
type cindexStats struct {
	argv    []string
	file    string
	elapsed time.Duration
	maxRSS  int64 // KiB
	size    int64
	err     error
}

func buildCindex(cindex, tree, file string, timeout time.Duration) cindexStats {
	cs := cindexStats{argv: []string{cindex, tree}, file: file}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cindex, tree)
	cmd.Env = append(os.Environ(), "CSEARCHINDEX="+file)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	cs.err = cmd.Run()
	cs.elapsed = time.Since(start)
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cs.maxRSS = ru.Maxrss
		}
	}
	if cs.err == nil {
		fi, err := os.Stat(file)
		if err != nil {
			cs.err = err
		} else {
			cs.size = fi.Size()
		}
	}
	return cs
}

// writer is a run's report.
type writer interface{ write(w io.Writer) }

// nilIfNone returns a run's report as a writer, nil when the run made
// none (a nil pointer in an interface is not nil).
func nilIfNone[R interface {
	comparable
	writer
}](rep R, err error) (writer, error) {
	var none R
	if rep == none {
		return nil, err
	}
	return rep, err
}

// runReported runs a run interruptibly (SIGINT, SIGTERM), prints its
// report, a partial one too, and exits on its error.
func runReported(run func(ctx context.Context) (writer, error)) {
	ctx, stop := interruptible()
	rep, err := run(ctx)
	stop()
	if rep != nil {
		rep.write(os.Stdout)
	}
	if err != nil {
		fatal(err)
	}
}
