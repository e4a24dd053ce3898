// Command memfig measures the daemon's memory under the command line's
// large answers and under clients that read nothing, and prints the
// figures of issue 34:
//
//   - the daemon's resident set idle, at its peak while 8 clients run
//     `indexctl grep PATTERN --all --json` at once (each answer some 30
//     MB), and 10, 30 and 60 s after they are done;
//
//   - its resident set while 16 connections each pipeline 64 streamed
//     Greps of every match and read nothing, with what it holds of
//     answers (its reply budget's use) and the clients it dropped, and
//     the latency of pings another client sends meanwhile (p50, p99,
//     max; the target is a p99 of 10 ms at most).
//
//     go run ./bench/memfig [-tree DIR] [-pattern needle] [-answer-mb 30]
//     [-clients 8] [-after 60s] [-stalled 16] [-pipelined 64] [-pings 20s]
//
// Run it from the module root on a quiet machine. It builds
// ./cmd/indexctl and ./cmd/indexd into a temporary directory and runs
// them with a daemon of their own there (XDG_STATE_HOME,
// XDG_RUNTIME_DIR and INDEXD_SOCKET point into it), stopped at the end;
// a user's daemon is neither reached nor replaced. Without -tree it
// writes a tree whose every file holds lines matching -pattern, sized so
// that `grep --all --json` answers about -answer-mb megabytes. The
// resident set is VmRSS of the daemon's /proc/PID/status, sampled every
// 10 ms for the peaks.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/indexd/indexd/rpc"
)

func main() {
	var (
		treeFlag  = flag.String("tree", "", "tree to search (default: one written for the run, sized by -answer-mb)")
		pattern   = flag.String("pattern", "needle", "the Grep pattern of every query")
		answerMB  = flag.Int("answer-mb", 30, "without -tree: the size of one `grep --all --json` answer to aim for, in MB")
		clients   = flag.Int("clients", 8, "parallel `indexctl grep --all --json` runs")
		after     = flag.Duration("after", 60*time.Second, "how long to follow the resident set after the burst")
		settle    = flag.Duration("settle", 10*time.Second, "quiet time before the idle figure")
		stalled   = flag.Int("stalled", 16, "connections that pipeline streams and read nothing")
		pipelined = flag.Int("pipelined", 64, "streams each of them pipelines")
		pings     = flag.Duration("pings", 20*time.Second, "how long another client pings while they stall")
	)
	flag.Parse()
	if flag.NArg() > 0 || *clients < 1 || *stalled < 0 || *pipelined < 1 {
		flag.Usage()
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "memfig-")
	check(err, "temporary directory")
	atExit = func() { os.RemoveAll(tmp) }

	progress("building ./cmd/indexctl and ./cmd/indexd")
	out, err := exec.Command("go", "build", "-o", tmp+"/", "github.com/indexd/indexd/cmd/indexctl", "github.com/indexd/indexd/cmd/indexd").CombinedOutput()
	check(err, "go build: "+string(out))
	r := &run{ctl: filepath.Join(tmp, "indexctl"), socket: filepath.Join(tmp, "run", "indexd.sock"), tmp: tmp}
	r.env = privateEnv(tmp, r.socket)

	tree := *treeFlag
	if tree == "" {
		tree = filepath.Join(tmp, "tree")
		progress("writing a tree for %d MB answers", *answerMB)
		check(writeTree(tree, *pattern, *answerMB), "writing the tree")
	}
	tree, err = filepath.Abs(tree)
	check(err, "the tree")
	r.tree = tree

	atExit = func() {
		r.ctlRun(context.Background(), "stop")
		os.RemoveAll(tmp)
	}
	defer atExit()
	progress("indexing %s", tree)
	_, err = r.ctlRun(context.Background(), "index", "--wait", "--root", tree)
	check(err, "indexctl index")
	st, err := r.status()
	check(err, "indexctl status")
	r.pid = st.PID

	// A first query warms what every query uses (the index's pages, the
	// scan's buffers), so that idle is the daemon at rest after use.
	_, err = r.ctlRun(context.Background(), "grep", *pattern, "--root", tree, "--limit", "10")
	check(err, "a first query")
	progress("settling for %v", *settle)
	time.Sleep(*settle)
	idle := r.rss()

	// The burst.
	progress("%d × indexctl grep %s --all --json", *clients, *pattern)
	peak := r.sampleRSS()
	var (
		wg    sync.WaitGroup
		sizes = make([]int, *clients)
		errs  = make([]error, *clients)
	)
	for i := range *clients {
		wg.Go(func() {
			res, err := r.ctlRun(context.Background(), "grep", *pattern, "--root", tree, "--all", "--json")
			sizes[i], errs[i] = len(res), err
			if err == nil {
				var env struct{ Status string }
				if json.Unmarshal(res, &env) != nil || env.Status != "success" || bytes.Count(res, []byte("\n")) != 1 {
					errs[i] = fmt.Errorf("not one complete envelope (status %q)", env.Status)
				}
			}
		})
	}
	wg.Wait()
	burstPeak := peak.stop()
	for _, err := range errs {
		check(err, "indexctl grep --all --json")
	}
	done := time.Now()
	var later []string
	marks := slices.DeleteFunc([]time.Duration{10 * time.Second, 30 * time.Second}, func(d time.Duration) bool { return d >= *after })
	for _, at := range append(marks, *after) {
		time.Sleep(time.Until(done.Add(at)))
		later = append(later, fmt.Sprintf("+%v %s", at, mib(r.rss())))
	}
	stBurst, _ := r.status()

	// The stalled readers, and another client's pings meanwhile.
	var stallPeak int64
	var lat []time.Duration
	var stStall *status
	if *stalled > 0 {
		progress("%d connections × %d unread streams; pinging for %v", *stalled, *pipelined, *pings)
		peak := r.sampleRSS()
		conns, err := r.stall(*stalled, *pipelined, *pattern)
		check(err, "the stalled connections")
		lat, err = r.ping(*pings)
		check(err, "pinging")
		stStall, _ = r.status()
		stallPeak = peak.stop()
		for _, c := range conns {
			c.Close()
		}
	}

	fmt.Printf("# indexd memory figures (issue 34)\n\n")
	fmt.Printf("tree %s; %d parallel `indexctl grep %s --all --json`, answers of %s each\n\n", tree, *clients, *pattern, mb(slices.Max(sizes)))
	fmt.Printf("| daemon RSS | idle | peak in the burst | after it |\n|---|---|---|---|\n")
	fmt.Printf("| %d × grep --all --json | %s | %s | %s |\n\n", *clients, mib(idle), mib(burstPeak), strings.Join(later, ", "))
	if stBurst != nil && stBurst.Memory != nil {
		m := stBurst.Memory
		fmt.Printf("answers held at most %s of a %s budget; %d cut short; heap returned %d times\n\n", mib(m.AnswerPeak), mib(m.AnswerBudget), m.AnswersCut, m.HeapReturns)
	}
	if *stalled > 0 {
		fmt.Printf("%d connections × %d unread streams: daemon RSS at most %s", *stalled, *pipelined, mib(stallPeak))
		if stStall != nil && stStall.Memory != nil {
			m := stStall.Memory
			fmt.Printf("; answers held now %s, at most %s (budget %s); clients dropped %d", mib(m.Answer), mib(m.AnswerPeak), mib(m.AnswerBudget), m.ClientsDropped)
		}
		fmt.Printf("\n\nping on another connection meanwhile (%d pings): p50 %s, p99 %s, max %s (target: p99 ≤ 10 ms)\n",
			len(lat), ms(quantile(lat, 0.5)), ms(quantile(lat, 0.99)), ms(slices.Max(lat)))
	}
}

// run is the harness's daemon and its indexctl.
type run struct {
	ctl, socket, tmp, tree string
	env                    []string
	pid                    int
}

// ctlRun runs indexctl with args and returns its standard output.
func (r *run) ctlRun(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.ctl, args...)
	cmd.Env = r.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return out, nil // nothing found
		}
		return out, fmt.Errorf("indexctl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// status is what memfig reads of the daemon's status.
type status struct {
	PID    int `json:"pid"`
	Memory *struct {
		Answer         int64 `json:"answer_bytes"`
		AnswerPeak     int64 `json:"answer_peak_bytes"`
		AnswerBudget   int64 `json:"answer_budget_bytes"`
		AnswersCut     int64 `json:"answers_cut"`
		ClientsDropped int64 `json:"clients_dropped"`
		HeapReturns    int64 `json:"heap_returns"`
	} `json:"memory"`
}

func (r *run) status() (*status, error) {
	out, err := r.ctlRun(context.Background(), "status", "--json")
	if err != nil {
		return nil, err
	}
	var st status
	return &st, json.Unmarshal(out, &st)
}

// rss returns the daemon's resident set, from /proc/PID/status.
func (r *run) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(rest, "%d kB", &kb)
			return kb << 10
		}
	}
	return -1
}

// sampler follows the daemon's resident set every 10 ms until stopped.
type sampler struct {
	peak atomic.Int64
	quit chan struct{}
	done chan struct{}
}

func (r *run) sampleRSS() *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() { // owned by the sampler: stop ends it and waits
		defer close(s.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if v := r.rss(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peak.
func (s *sampler) stop() int64 {
	close(s.quit)
	<-s.done
	return s.peak.Load()
}

// stall opens n connections, each sending k streamed Greps of every
// match of pattern, and reads nothing from them.
func (r *run) stall(n, k int, pattern string) ([]net.Conn, error) {
	args, _ := json.Marshal(map[string]any{"pattern": pattern, "limit": 0})
	params, err := json.Marshal(rpc.ToolParams{Root: r.tree, Args: args, Unlimited: true, Stream: true})
	if err != nil {
		return nil, err
	}
	var conns []net.Conn
	for i := range n {
		c, err := net.Dial("unix", r.socket)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
		w := bufio.NewWriter(c)
		for j := range k {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"grep","params":%s}`+"\n", i*k+j, params)
		}
		if err := w.Flush(); err != nil {
			return conns, err
		}
	}
	return conns, nil
}

// ping pings the daemon on a connection of its own for d, a ping every
// 10 ms, and returns each one's latency.
func (r *run) ping(d time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, r.socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var lat []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		start := time.Now()
		if err := c.Ping(ctx); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}

// writeTree writes a tree whose `grep PATTERN --all --json` answer is
// about mb megabytes: 100 lines holding the pattern in each file (some
// 260 bytes of answer a line: the match in data, its line in text).
func writeTree(dir, pattern string, mb int) error {
	const perFile, perLine = 100, 260
	files := max(1, mb<<20/(perFile*perLine))
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%50))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		var b strings.Builder
		for j := range perFile {
			fmt.Fprintf(&b, "line %d of file %d: the %s sits among some words to give the line a usual length\n", j, i, pattern)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", i)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// privateEnv is the environment with the daemon's state and socket in
// tmp (INDEXCTL_DIRECT, which would bypass the daemon, dropped).
func privateEnv(tmp, socket string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "INDEXD_SOCKET", "INDEXCTL_DIRECT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_STATE_HOME="+filepath.Join(tmp, "state"), "XDG_RUNTIME_DIR="+filepath.Join(tmp, "run"), "INDEXD_SOCKET="+socket)
}

func quantile(l []time.Duration, q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func mb(n int) string    { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "memfig: "+format+"\n", args...)
}

// atExit runs before memfig exits, also on a failure: it stops the
// daemon.
var atExit func()

func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "memfig: %s: %v\n", what, err)
		if atExit != nil {
			atExit()
		}
		os.Exit(1)
	}
}
