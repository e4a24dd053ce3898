package main

// The daemons run (-daemons): indexd against zoekt, daemon against daemon,
// each asked through one persistent client in this process, beside the
// read floor (the time to read the files indexd's answer came from) and,
// when installed, csearch as a process per query. See bench/README.md.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// daemonsConfig are the daemons run's settings.
type daemonsConfig struct {
	tree           string // absolute, symbolic links resolved
	runs, warmup   int
	indexctl       string // -indexctl's value
	zoektIndex     string // -zoekt-index's value (the program)
	zoektWebserver string // -zoekt-webserver's value
	zoektIndexDir  string // -zoekt-index-dir: serve this index instead of building one
	csearch        string // -csearch's value
	cindex         string // -cindex's value
	queries        string // -queries: "", "kernel", "goroot" or a file
	timeoutMS      int    // Grep's timeout_ms
	cmdTimeout     time.Duration
}

// The columns of the daemons run.
const (
	colIndexd  = "indexd"
	colZoekt   = "zoekt"
	colFloor   = "read floor"
	colCsearch = "csearch"
)

// daemonsReport is what the daemons run measured.
type daemonsReport struct {
	cfg          daemonsConfig
	started      time.Time
	loadStart    string
	loadEnd      string
	querySet     string // where the queries came from
	versions     []string
	corpus       corpusStats
	indexd       phase
	daemonPID    int
	indexBytes   int64 // status index_bytes
	stateBytes   int64 // the state directory, the log excluded
	zoekt        zoektBuild
	zoektMissing string // why zoekt was skipped, "" if it ran
	zoektServe   []string
	csMissing    string
	cindex       cindexStats
	results      []daemonResult
}

// zoektBuild describes the zoekt index the run served.
type zoektBuild struct {
	argv    []string // nil: an existing index (-zoekt-index-dir)
	dir     string
	elapsed time.Duration
	shards  int
	bytes   int64 // of the *.zoekt shards
}

// daemonResult is one query's measurements.
type daemonResult struct {
	q          query
	indexdArgs string // Grep's args, JSON
	zoektBody  string // the request zoekt was sent
	csArgv     []string
	stats      map[string]stats // by column
	ix         ixAnswer
	zk         zoektAnswer
	floorFiles int
	floorBytes int64
}

// ixAnswer is what indexd's last answer said.
type ixAnswer struct {
	status       string
	truncated    bool
	lines        int // matches returned
	matchedLines int // stats.matched_lines
	candidates   *int
	filesScanned int
	fallback     string
}

// runDaemons runs the daemons harness and returns its report. It stops
// the daemons it started before returning, failed or interrupted.
func runDaemons(ctx context.Context, cfg daemonsConfig) (rep *daemonsReport, err error) {
	rep = &daemonsReport{cfg: cfg, started: time.Now(), loadStart: loadavg()}
	qs, set, err := loadQueries(cfg.queries, cfg.tree)
	if err != nil {
		return rep, err
	}
	rep.querySet = set
	r, err := newPrivateRun(scaleConfig{tree: cfg.tree, runs: cfg.runs, warmup: cfg.warmup, indexctl: cfg.indexctl,
		timeoutMS: cfg.timeoutMS, cmdTimeout: cfg.cmdTimeout}, nil, "daemons-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(r.tmp)
	defer func() { rep.loadEnd = loadavg() }()
	r.s = &setup{tree: cfg.tree, indexctlEnv: r.env, timeoutMS: cfg.timeoutMS}
	var from string
	if r.s.indexctl, from = findIndexctl(cfg.indexctl, r.tmp); r.s.indexctl == "" {
		return rep, errors.New("no indexctl: not built and not on $PATH")
	}
	rep.versions = append(rep.versions, fmt.Sprintf("indexctl: `%s` (%s); a daemon of its own", r.s.indexctl, from))
	defer func() {
		if cerr := r.cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	zIndex, zServer := lookTool(cfg.zoektIndex, "zoekt-index"), lookTool(cfg.zoektWebserver, "zoekt-webserver")
	switch {
	case zServer == "":
		rep.zoektMissing = "zoekt-webserver not found (-zoekt-webserver; build it from github.com/sourcegraph/zoekt)"
	case zIndex == "" && cfg.zoektIndexDir == "":
		rep.zoektMissing = "zoekt-index not found (-zoekt-index, or an index with -zoekt-index-dir)"
	default:
		v := fmt.Sprintf("zoekt: `%s` (%s)", zServer, moduleVersion(zServer))
		if cfg.zoektIndexDir == "" {
			v += fmt.Sprintf(", index by `%s`", zIndex)
		}
		rep.versions = append(rep.versions, v)
	}
	r.s.csearch = lookTool(cfg.csearch, "csearch")
	cindex := lookTool(cfg.cindex, "cindex")
	if r.s.csearch == "" || cindex == "" {
		rep.csMissing = "csearch/cindex not found (go install github.com/google/codesearch/cmd/...@v1.2.0)"
	} else {
		rep.versions = append(rep.versions, fmt.Sprintf("csearch: `%s` (%s), index by `%s`", r.s.csearch, moduleVersion(r.s.csearch), cindex))
	}

	progress("reading %s to warm the page cache", cfg.tree)
	rep.corpus = readTree(cfg.tree)

	progress("indexing %s through a new daemon", cfg.tree)
	rs, wall, err := r.indexWait(ctx, cfg.tree)
	if err != nil {
		return rep, fmt.Errorf("indexd build: %w", err)
	}
	rep.indexd = phase{wall: wall, readyMS: rs.ReadyMS, files: rs.Files}
	rep.indexBytes = rs.IndexBytes
	rep.stateBytes = dirBytes(filepath.Join(r.tmp, "state"), daemonapi.LogName)
	if st, err := r.statusOnce(ctx); err == nil {
		rep.daemonPID = st.PID
		rep.versions = append(rep.versions, fmt.Sprintf("indexd: version %s, build %s, pid %d (stopped at the end)", st.Version, st.Build, st.PID))
	}

	var zs *zoektServer
	if rep.zoektMissing == "" {
		rep.zoekt.dir = cfg.zoektIndexDir
		if rep.zoekt.dir == "" {
			rep.zoekt.dir = filepath.Join(r.tmp, "zoekt")
			progress("building the zoekt index")
			rep.zoekt.argv = []string{zIndex, "-index", rep.zoekt.dir, cfg.tree}
			rep.zoekt.elapsed, err = runLogged(ctx, cfg.cmdTimeout, filepath.Join(r.tmp, "zoekt-index.log"), rep.zoekt.argv)
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if err != nil {
				rep.zoektMissing = "zoekt-index failed: " + err.Error()
			}
		}
		rep.zoekt.shards, rep.zoekt.bytes = shardBytes(rep.zoekt.dir)
		if rep.zoektMissing == "" && rep.zoekt.shards == 0 {
			rep.zoektMissing = "no *.zoekt shard in " + rep.zoekt.dir
		}
	}
	if r.s.csearch != "" && cindex != "" {
		rep.cindex, rep.csMissing = r.buildCindex(cindex, cfg.tree, cfg.cmdTimeout)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if rep.zoektMissing == "" {
		progress("starting zoekt-webserver")
		zs, err = startZoekt(ctx, zServer, rep.zoekt.dir, filepath.Join(r.tmp, "zoekt-webserver.log"), cfg.cmdTimeout)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if err != nil {
			rep.zoektMissing = err.Error()
		} else {
			rep.zoektServe = zs.argv
			defer func() {
				if serr := zs.stop(); serr != nil {
					err = errors.Join(err, serr)
				}
			}()
		}
	}

	cl, err := rpc.Dial(ctx, r.socket)
	if err != nil {
		return rep, err
	}
	defer cl.Close()
	floor := newFloorReader(runtime.GOMAXPROCS(0))
	for _, q := range qs {
		res, err := r.measureDaemons(ctx, cl, zs, floor, q)
		rep.results = append(rep.results, res)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// measureDaemons times q: indexd through cl, zoekt through zs (nil:
// skipped), the read floor of the files indexd's answer came from, and
// csearch if it has an index. Every round runs each once, the order
// reversed every other round; the first cfg.warmup rounds are not timed.
func (r *scaleRun) measureDaemons(ctx context.Context, cl *rpc.Client, zs *zoektServer, floor *floorReader, q query) (daemonResult, error) {
	res := daemonResult{q: q, stats: map[string]stats{}}
	progress("%s: %s", q.name, q.pattern)
	args := map[string]any{"pattern": q.pattern, "case_sensitive": q.caseSensitive, "limit": q.limit}
	if r.s.timeoutMS > 0 {
		args["timeout_ms"] = r.s.timeoutMS
	}
	a, _ := json.Marshal(args)
	res.indexdArgs = string(a)
	timeout := r.cfg.cmdTimeout
	withTimeout := func(f func(context.Context) (sample, error)) func() (sample, error) {
		return func() (sample, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return f(ctx)
		}
	}

	// The floor's files: those of indexd's answer, asked once untimed.
	e, _, err := r.grep(ctx, cl, args)
	if err != nil {
		res.stats[colIndexd] = stats{err: err}
		return res, ctx.Err()
	}
	files := answerFiles(e, r.cfg.tree)
	res.floorFiles = len(files)

	type runner struct {
		col string
		run func() (sample, error)
	}
	runners := []runner{{colIndexd, withTimeout(func(ctx context.Context) (sample, error) {
		e, wall, err := r.grep(ctx, cl, args)
		if err != nil {
			return sample{}, err
		}
		res.ix = ixAnswer{status: e.Status, truncated: e.Data.Truncated, lines: len(e.Data.Matches), matchedLines: e.Stats.MatchedLines,
			candidates: e.Stats.Candidates, filesScanned: e.Stats.FilesScanned, fallback: e.Data.FallbackReason}
		return sample{wall: wall, lines: len(e.Data.Matches), innerMS: int(e.Stats.TimeMS)}, nil
	})}}
	if zs != nil {
		body := zoektRequest(q)
		res.zoektBody = string(body)
		runners = append(runners, runner{colZoekt, withTimeout(func(ctx context.Context) (sample, error) {
			out, status, wall, err := zs.search(ctx, body)
			if err != nil {
				return sample{}, err
			}
			if res.zk, err = decodeZoekt(status, out); err != nil {
				return sample{}, err
			}
			return sample{wall: wall, lines: res.zk.lines, innerMS: int(res.zk.duration / time.Millisecond)}, nil
		})})
	}
	if len(files) > 0 {
		runners = append(runners, runner{colFloor, func() (sample, error) {
			start := time.Now()
			n, err := floor.read(files)
			wall := time.Since(start)
			res.floorBytes = n
			return sample{wall: wall, lines: len(files), innerMS: -1}, err
		}})
	}
	if r.s.csIndex != "" {
		res.csArgv = r.s.argv(toolCsearch, q)
		runners = append(runners, runner{colCsearch, withTimeout(func(ctx context.Context) (sample, error) {
			return runOnce(ctx, r.cfg.tree, r.s.env(toolCsearch), res.csArgv, false)
		})})
	}

	failed := map[string]error{}
	samples := map[string][]sample{}
	for round := range r.cfg.warmup + r.cfg.runs {
		order := slices.Clone(runners)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, rn := range order {
			if failed[rn.col] != nil {
				continue
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
			sm, err := rn.run()
			if err != nil {
				failed[rn.col] = err
				continue
			}
			if round >= r.cfg.warmup {
				samples[rn.col] = append(samples[rn.col], sm)
			}
		}
	}
	for _, rn := range runners {
		st := summarize(samples[rn.col])
		st.err = failed[rn.col]
		res.stats[rn.col] = st
	}
	return res, nil
}

// answerFiles returns the distinct files of e's matches, in the order
// they first appear, as paths under tree.
func answerFiles(e *toolEnvelope, tree string) []string {
	seen := map[string]bool{}
	var files []string
	for _, m := range e.Data.Matches {
		if !seen[m.File] {
			seen[m.File] = true
			files = append(files, filepath.Join(tree, filepath.FromSlash(m.File)))
		}
	}
	return files
}

// floorReader reads files whole with a fixed number of workers, each with
// a buffer of its own.
type floorReader struct {
	bufs [][]byte
}

func newFloorReader(workers int) *floorReader {
	fr := &floorReader{}
	for range max(workers, 1) {
		fr.bufs = append(fr.bufs, make([]byte, 256<<10))
	}
	return fr
}

// read opens, reads whole and closes each of files, and returns the bytes
// read.
func (fr *floorReader) read(files []string) (int64, error) {
	var next, total atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, buf := range fr.bufs[:min(len(fr.bufs), len(files))] {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				n, err := readWhole(files[i], buf)
				total.Add(n)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return total.Load(), errors.Join(errs...)
}

func readWhole(name string, buf []byte) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// zoektQuery is q in zoekt's query language: the pattern as one quoted
// term (a regexp, whatever it holds: spaces, parentheses, a leading '-' or
// a word zoekt reserves), searched in contents only, with the case as
// asked.
func zoektQuery(q query) string {
	c := "no"
	if q.caseSensitive {
		c = "yes"
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(q.pattern)
	return "case:" + c + ` content:"` + quoted + `"`
}

// zoektRequest is the body of q's request to zoekt's /api/search, limited
// like indexd's answer.
func zoektRequest(q query) []byte {
	type opts struct{ TotalMaxMatchCount, ShardMaxMatchCount, MaxDocDisplayCount int }
	b, _ := json.Marshal(struct {
		Q    string
		Opts opts
	}{zoektQuery(q), opts{q.limit, q.limit, q.limit}})
	return b
}

// zoektAnswer is what the run reads of zoekt's answer.
type zoektAnswer struct {
	lines, files    int // content line matches, and the files holding them
	matchCount      int // its Stats.MatchCount
	filesConsidered int
	duration        time.Duration // its Stats.Duration
}

// decodeZoekt reads a /api/search response (HTTP status, body).
func decodeZoekt(status int, body []byte) (zoektAnswer, error) {
	var a zoektAnswer
	var v struct {
		Result *struct {
			Files []struct {
				FileName    string
				LineMatches []struct {
					LineNumber int
					FileName   bool
				}
			}
			MatchCount      int
			FilesConsidered int
			Duration        time.Duration
		}
		Error string
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return a, fmt.Errorf("zoekt: HTTP %d, malformed answer: %w: %.200q", status, err, body)
	}
	if status != http.StatusOK || v.Error != "" {
		return a, fmt.Errorf("zoekt: HTTP %d: %s", status, v.Error)
	}
	if v.Result == nil {
		return a, fmt.Errorf("zoekt: no Result in the answer: %.200q", body)
	}
	for _, f := range v.Result.Files {
		n := 0
		for _, lm := range f.LineMatches {
			if !lm.FileName {
				n++
			}
		}
		a.lines += n
		if n > 0 {
			a.files++
		}
	}
	a.matchCount, a.filesConsidered, a.duration = v.Result.MatchCount, v.Result.FilesConsidered, v.Result.Duration
	return a, nil
}

// zoektServer is a zoekt-webserver this run started, and the one
// keep-alive connection it is asked through.
type zoektServer struct {
	argv []string
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	log  string
	hc   *http.Client
}

// startZoekt starts zoekt-webserver on indexDir at a free port of
// 127.0.0.1, with its JSON API, and returns once it says it is ready (all
// shards loaded). On failure the process is stopped.
func startZoekt(ctx context.Context, bin, indexDir, logPath string, timeout time.Duration) (*zoektServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	z := &zoektServer{argv: []string{bin, "-index", indexDir, "-listen", addr, "-rpc"}, url: "http://" + addr, done: make(chan struct{}), log: logPath}
	z.cmd = exec.Command(z.argv[0], z.argv[1:]...)
	z.cmd.Stdout, z.cmd.Stderr = logf, logf
	if err := z.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		z.cmd.Wait()
		close(z.done)
	}()
	z.hc = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, z.url+"/readyz", nil)
		if resp, err := z.hc.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return z, nil
			}
		}
		select {
		case <-z.done:
			return nil, fmt.Errorf("zoekt-webserver exited before it was ready: %s", z.logTail())
		default:
		}
		if err := ctx.Err(); err != nil || time.Now().After(deadline) {
			z.stop()
			return nil, cmp.Or(err, fmt.Errorf("zoekt-webserver not ready after %v: %s", timeout, z.logTail()))
		}
		waitFor(ctx, 50*time.Millisecond)
	}
}

// search posts body to /api/search and returns the answer, timed from
// the request to the last byte of the body.
func (z *zoektServer) search(ctx context.Context, body []byte) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, z.url+"/api/search", bytes.NewReader(body))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := z.hc.Do(req)
	if err != nil {
		return nil, 0, 0, err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return out, resp.StatusCode, time.Since(start), err
}

// stop ends the server (SIGTERM, SIGKILL after 15 s) and waits for it.
func (z *zoektServer) stop() error {
	z.hc.CloseIdleConnections()
	select {
	case <-z.done:
		return nil
	default:
	}
	z.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-z.done:
		return nil
	case <-time.After(15 * time.Second):
		z.cmd.Process.Kill()
		<-z.done
		return fmt.Errorf("zoekt-webserver pid %d survived SIGTERM by 15 s; killed", z.cmd.Process.Pid)
	}
}

// logTail is the end of the server's log.
func (z *zoektServer) logTail() string {
	b, _ := os.ReadFile(z.log)
	b = bytes.TrimSpace(b)
	return string(b[max(0, len(b)-400):])
}

// runLogged runs argv with its output to logPath, and returns its wall
// time; a failure carries the log's end.
func runLogged(ctx context.Context, timeout time.Duration, logPath string, argv []string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b, _ := os.ReadFile(logPath)
		b = bytes.TrimSpace(b)
		return wall, fmt.Errorf("%v: %s", err, b[max(0, len(b)-400):])
	}
	return wall, nil
}

// shardBytes counts the *.zoekt files in dir and their total size.
func shardBytes(dir string) (int, int64) {
	m, _ := filepath.Glob(filepath.Join(dir, "*.zoekt"))
	var n int64
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return len(m), n
}

//go:embed queries/*.tsv
var querySets embed.FS

// loadQueries returns the run's queries: from the file named by flagValue,
// or the set built in under that name ("kernel", "goroot"), or, when
// flagValue is "", the kernel's set for a tree with Kbuild and MAINTAINERS
// at its top and GOROOT/src's otherwise. It says where they came from.
func loadQueries(flagValue, tree string) ([]query, string, error) {
	name := flagValue
	if name == "" {
		name = "goroot"
		_, err1 := os.Stat(filepath.Join(tree, "Kbuild"))
		_, err2 := os.Stat(filepath.Join(tree, "MAINTAINERS"))
		if err1 == nil && err2 == nil {
			name = "kernel"
		}
	}
	if !strings.ContainsAny(name, "/.") {
		if b, err := querySets.ReadFile("queries/" + name + ".tsv"); err == nil {
			qs, err := parseQueries(bytes.NewReader(b))
			return qs, "the built-in set `" + name + "` (bench/sidebyside/queries/" + name + ".tsv)", err
		}
	}
	f, err := os.Open(flagValue)
	if err != nil {
		return nil, "", fmt.Errorf("-queries: %w", err)
	}
	defer f.Close()
	qs, err := parseQueries(f)
	if err != nil {
		return nil, "", fmt.Errorf("-queries %s: %w", flagValue, err)
	}
	return qs, "`" + flagValue + "`", nil
}

// parseQueries reads queries, one a line, as tab-separated fields: class
// (the row's label), pattern (a Go regexp), case_sensitive (0 or 1) and
// limit (1 to 1000). Blank lines and lines starting with '#' are skipped.
func parseQueries(r io.Reader) ([]query, error) {
	var qs []query
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: %d tab-separated fields, want 4 (class, pattern, case_sensitive, limit)", n, len(f))
		}
		q := query{name: strings.TrimSpace(f[0]), kind: kindGrep, pattern: f[1]}
		switch f[2] {
		case "0":
		case "1":
			q.caseSensitive = true
		default:
			return nil, fmt.Errorf("line %d: case_sensitive %q, want 0 or 1", n, f[2])
		}
		limit, err := strconv.Atoi(f[3])
		if err != nil || limit < 1 || limit > 1000 {
			return nil, fmt.Errorf("line %d: limit %q, want 1 to 1000", n, f[3])
		}
		q.limit = limit
		if q.name == "" || q.pattern == "" {
			return nil, fmt.Errorf("line %d: empty class or pattern", n)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, errors.New("no queries")
	}
	return qs, nil
}
