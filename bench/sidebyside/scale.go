package main

// The scale run (-scale): the figures of the index at monorepo scale,
// through a private daemon of its own, with codesearch on the same tree in
// the same run. See scaleRun.run for the order of the steps and
// bench/README.md for what each figure means.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// scaleConfig are the scale run's settings.
type scaleConfig struct {
	tree, tree2 string // absolute, symbolic links resolved; tree2 may be ""
	runs        int    // timed runs per query
	warmup      int    // untimed runs per query and tool
	restarts    int    // stop/restart cycles timed
	writes      int    // one-file writes timed
	churn       int    // files rewritten in the burst
	churnTail   time.Duration
	indexctl    string // -indexctl's value
	csearch     string // -csearch's value
	cindex      string // -cindex's value
	rare        string
	grepLimit   int
	globLimit   int
	timeoutMS   int
	cmdTimeout  time.Duration
}

// scratchDir is the directory the scale run creates at the top of the tree
// for its one-file writes, and removes at the end.
const scratchDir = "indexd-scale-scratch"

// scaleRun is one scale run in progress.
type scaleRun struct {
	cfg    scaleConfig
	tmp    string   // private directory: the daemon's state and socket, the codesearch index
	env    []string // indexctl's environment
	socket string
	s      *setup
	rep    *scaleReport
	token  string // this run's unique suffix for planted tokens
	rare   string // the rare literal the queries use

	mu       sync.Mutex
	daemons  map[int]bool // pids of the daemons this run started
	restores []func() error
}

// runScale runs the scale harness and returns its report. It always stops
// the private daemon and restores the tree before returning.
func runScale(ctx context.Context, cfg scaleConfig) (rep *scaleReport, err error) {
	rep = &scaleReport{cfg: cfg, started: time.Now(), loadStart: loadavg(), nproc: nproc()}
	r, err := newPrivateRun(cfg, rep, "scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.tmp)
	rep.man, err = corpus.ReadManifest(cfg.tree)
	if err != nil && !os.IsNotExist(err) {
		progress("%v; treating %s as an ordinary tree", err, cfg.tree)
	}
	defer func() {
		if cerr := r.cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		rep.loadEnd = loadavg()
	}()
	err = r.run(ctx)
	return rep, err
}

// newPrivateRun makes a run's temporary directory, with the state and
// runtime directories of a daemon private to the run, and the environment
// indexctl runs in to reach it. The caller removes r.tmp; rep (may be nil)
// gets the pids of the daemons cleanup stopped.
func newPrivateRun(cfg scaleConfig, rep *scaleReport, prefix string) (*scaleRun, error) {
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"state", "run"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	r := &scaleRun{cfg: cfg, tmp: tmp, socket: privateSocket(tmp), daemons: map[int]bool{}, rep: rep}
	r.token = randomHex(6)
	// The daemon's state and socket live in tmp: no user's daemon is
	// reached, started or stopped.
	r.env = privateEnv(tmp, r.socket)
	return r, nil
}

// run takes the measurements, in this order: build from nothing, codesearch
// index, queries, one-file writes, the churn burst, restarts, two roots.
func (r *scaleRun) run(ctx context.Context) error {
	cfg, rep := r.cfg, r.rep
	r.s = &setup{tree: cfg.tree, grepLimit: cfg.grepLimit, globLimit: cfg.globLimit, timeoutMS: cfg.timeoutMS, indexctlEnv: r.env}
	r.s.indexctl, rep.indexctlFrom = findIndexctl(cfg.indexctl, r.tmp)
	if r.s.indexctl == "" {
		return errors.New("no indexctl: not built and not on $PATH")
	}
	rep.versions = append(rep.versions, fmt.Sprintf("indexctl: `%s` (%s)", r.s.indexctl, rep.indexctlFrom))
	rep.indexctl = r.s.indexctl
	r.s.csearch = lookTool(cfg.csearch, "csearch")
	cindex := lookTool(cfg.cindex, "cindex")
	if r.s.csearch == "" || cindex == "" {
		rep.csMissing = "csearch/cindex not found (go install github.com/google/codesearch/cmd/...@v1.2.0)"
	} else {
		rep.versions = append(rep.versions, fmt.Sprintf("csearch: `%s` (%s), index by `%s` (%s)", r.s.csearch, moduleVersion(r.s.csearch), cindex, moduleVersion(cindex)))
	}
	if err := r.prepareScratch(); err != nil {
		return err
	}

	progress("reading %s to warm the page cache", cfg.tree)
	rep.corpus = readTree(cfg.tree)

	// Build from nothing: no daemon runs and the state directory is empty;
	// the command starts the daemon, as a user's first command does.
	progress("indexing %s through a new daemon", cfg.tree)
	rs, wall, err := r.indexWait(ctx, cfg.tree)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	rep.build = phase{wall: wall, readyMS: rs.ReadyMS, files: rs.Files}
	pid, err := r.daemonPID(ctx)
	if err != nil {
		return err
	}
	if st, err := r.statusOnce(ctx); err == nil {
		rep.versions = append(rep.versions, fmt.Sprintf("daemon: version %s, build %s", st.Version, st.Build))
	}
	rep.statusBuilt = r.rootStatusJSON(ctx, cfg.tree)
	mem := procMem(pid)
	rep.buildHWM, rep.rssAnonBuilt = mem["VmHWM"], mem["RssAnon"]
	rep.buildCPU = procCPU(pid)
	rep.indexBytes = rs.IndexBytes
	rep.stateBytes = dirBytes(filepath.Join(r.tmp, "state"), daemonapi.LogName)

	if r.s.csearch != "" && cindex != "" {
		rep.cindex, rep.csMissing = r.buildCindex(cindex, cfg.tree, cfg.cmdTimeout)
	}

	// Queries: whole processes, indexctl and csearch interleaved run by run.
	qs := scaleQueries(rep.man, cfg.rare)
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.results = append(rep.results, measure(ctx, r.s, q, cfg.runs, cfg.warmup, cfg.cmdTimeout))
	}
	r.rare = qs[0].pattern

	cl, err := rpc.Dial(ctx, r.socket)
	if err != nil {
		return err
	}
	defer cl.Close()
	progress("timing %d one-file writes", cfg.writes)
	if rep.visible, err = r.writeVisible(ctx, cl); err != nil {
		return fmt.Errorf("one-file writes: %w", err)
	}
	progress("rewriting %d files in a burst, with a query stream", cfg.churn)
	if rep.churn, err = r.churnBurst(ctx, cl); err != nil {
		return fmt.Errorf("churn: %w", err)
	}
	cl.Close()
	rep.rssAnonQueried = procMem(pid)["RssAnon"]

	// Restarts: stop, then the command a user runs next starts a daemon
	// that reopens the saved index.
	for i := range cfg.restarts {
		progress("restart %d of %d", i+1, cfg.restarts)
		if err := r.stop(ctx); err != nil {
			return err
		}
		rs, wall, err := r.indexWait(ctx, cfg.tree)
		if err != nil {
			return fmt.Errorf("restart: %w", err)
		}
		rep.restarts = append(rep.restarts, phase{wall: wall, readyMS: rs.ReadyMS, files: rs.Files, rebuilt: !rs.Reopened})
	}
	if pid, err = r.daemonPID(ctx); err != nil {
		return err
	}
	rep.rssAnonReopened = procMem(pid)["RssAnon"]
	rep.statusReopened = r.rootStatusJSON(ctx, cfg.tree)

	if cfg.tree2 != "" {
		progress("indexing the second tree %s", cfg.tree2)
		if _, _, err := r.indexWait(ctx, cfg.tree2); err != nil {
			return fmt.Errorf("-tree2: %w", err)
		}
		if err := r.stop(ctx); err != nil {
			return err
		}
		for _, t := range []string{cfg.tree, cfg.tree2} {
			if _, _, err := r.indexWait(ctx, t); err != nil {
				return fmt.Errorf("reopening %s: %w", t, err)
			}
		}
		if pid, err = r.daemonPID(ctx); err != nil {
			return err
		}
		rep.rssAnonTwo = procMem(pid)["RssAnon"]
	}
	return nil
}

// scaleQueries are the scale run's queries: sidebyside's, without the
// query that has no literal, and `func main` at limit 100.
func scaleQueries(m *corpus.Manifest, rare string) []query {
	var qs []query
	for _, q := range queries(m, rare) {
		switch {
		case q.pattern == `\w+\d{4}\w*`:
			continue
		case q.pattern == "func main":
			q.limit = 100
		}
		qs = append(qs, q)
	}
	return qs
}

// ctl runs indexctl with args in the private environment and returns its
// standard output and wall time. Exit status 1 (nothing found) is not an
// error.
func (r *scaleRun) ctl(ctx context.Context, args ...string) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.s.indexctl, args...)
	cmd.Dir = r.cfg.tree
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return nil, wall, fmt.Errorf("indexctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), wall, nil
}

// indexWait runs "indexctl --json index --wait ROOT" (starting the daemon
// if none runs) and returns the root's status once ready, and the wall
// time of the command.
func (r *scaleRun) indexWait(ctx context.Context, root string) (rpc.RootStatus, time.Duration, error) {
	var rs rpc.RootStatus
	out, wall, err := r.ctl(ctx, "--json", "index", "--wait", root)
	if err != nil {
		return rs, wall, err
	}
	if err := json.Unmarshal(out, &rs); err != nil {
		return rs, wall, fmt.Errorf("indexctl index: malformed answer: %w", err)
	}
	if rs.State != rpc.StateReady {
		return rs, wall, fmt.Errorf("indexctl index: %s is %s: %s", root, rs.State, rs.LastError)
	}
	if pid, err := r.daemonPID(ctx); err == nil {
		r.mu.Lock()
		r.daemons[pid] = true
		r.mu.Unlock()
	}
	return rs, wall, nil
}

// status returns the daemon's status, decoded and as JSON objects (to
// find fields this harness does not know).
func (r *scaleRun) status(ctx context.Context, cl *rpc.Client) (*rpc.Status, map[string]any, error) {
	var raw json.RawMessage
	if err := cl.Call(ctx, rpc.MethodStatus, nil, &raw); err != nil {
		return nil, nil, err
	}
	var st rpc.Status
	var obj map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, nil, fmt.Errorf("status: %w", err)
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, nil, fmt.Errorf("status: %w", err)
	}
	return &st, obj, nil
}

// statusOnce asks the running daemon its status on a connection of its
// own.
func (r *scaleRun) statusOnce(ctx context.Context) (*rpc.Status, error) {
	cl, err := rpc.Dial(ctx, r.socket)
	if err != nil {
		return nil, fmt.Errorf("reaching the daemon: %w", err)
	}
	defer cl.Close()
	st, _, err := r.status(ctx, cl)
	return st, err
}

// rootStatusJSON returns root's object in the daemon's status as
// compact JSON, whatever fields it has ("" if status fails).
func (r *scaleRun) rootStatusJSON(ctx context.Context, root string) string {
	cl, err := rpc.Dial(ctx, r.socket)
	if err != nil {
		return ""
	}
	defer cl.Close()
	var raw json.RawMessage
	if err := cl.Call(ctx, rpc.MethodStatus, rpc.RootParams{Root: root}, &raw); err != nil {
		return ""
	}
	var st struct {
		Roots []json.RawMessage `json:"roots"`
	}
	if json.Unmarshal(raw, &st) != nil || len(st.Roots) != 1 {
		return ""
	}
	return string(st.Roots[0])
}

// daemonPID asks the running daemon its process id.
func (r *scaleRun) daemonPID(ctx context.Context) (int, error) {
	st, err := r.statusOnce(ctx)
	if err != nil {
		return 0, err
	}
	if st.PID <= 0 {
		return 0, fmt.Errorf("status: no pid")
	}
	return st.PID, nil
}

// stop stops the private daemon and returns once it has exited.
func (r *scaleRun) stop(ctx context.Context) error {
	_, _, err := r.ctl(ctx, "stop")
	return err
}

// cleanup restores the tree, stops the daemon and ends any daemon of this
// run still alive (by its pid, and only if it still runs our indexctl).
func (r *scaleRun) cleanup() error {
	var errs []error
	r.mu.Lock()
	restores := r.restores
	r.restores = nil
	r.mu.Unlock()
	for i := len(restores) - 1; i >= 0; i-- {
		if err := restores[i](); err != nil {
			errs = append(errs, err)
		}
	}
	if r.s == nil || r.s.indexctl == "" {
		return errors.Join(errs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := r.stop(ctx); err != nil {
		errs = append(errs, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid := range r.daemons {
		if r.rep != nil {
			r.rep.daemonPIDs = append(r.rep.daemonPIDs, pid)
		}
		// stop returns once the daemon has let go of its socket; its
		// process may take a moment longer to be gone.
		deadline := time.Now().Add(10 * time.Second)
		for daemonAlive(pid, r.s.indexctl) && time.Now().Before(deadline) {
			waitFor(ctx, 20*time.Millisecond)
		}
		if daemonAlive(pid, r.s.indexctl) {
			errs = append(errs, fmt.Errorf("daemon pid %d survived indexctl stop by 10 s; killed", pid))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if r.rep != nil {
		slices.Sort(r.rep.daemonPIDs)
	}
	return errors.Join(errs...)
}

// daemonAlive reports whether process pid runs the program indexctl (a
// process gone, a zombie or a reused pid does not).
func daemonAlive(pid int, indexctl string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.HasPrefix(cmdline, append([]byte(indexctl), 0))
}

// onCleanup registers f to run at cleanup (last registered, first run).
func (r *scaleRun) onCleanup(f func() error) {
	r.mu.Lock()
	r.restores = append(r.restores, f)
	r.mu.Unlock()
}

// prepareScratch makes sure the scratch directory is free: one left by an
// interrupted run (holding only this harness's files) is removed.
func (r *scaleRun) prepareScratch() error {
	dir := filepath.Join(r.cfg.tree, scratchDir)
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "visible-") {
			return fmt.Errorf("%s exists and holds %s, not written by this harness: remove it", dir, e.Name())
		}
	}
	return os.RemoveAll(dir)
}

// sample of a query through the socket.
type rpcSample struct {
	at     time.Duration // start, from the start of the stream
	wall   time.Duration // round trip
	tookMS int64         // the daemon's stats.time_ms
}

// toolEnvelope is the part of a tool's envelope the scale run reads.
type toolEnvelope struct {
	Status string `json:"status"`
	Data   struct {
		Matches []struct {
			File string `json:"file"`
		} `json:"matches"`
		Truncated      bool   `json:"truncated"`
		FallbackUsed   bool   `json:"fallback_used"`
		FallbackReason string `json:"fallback_reason"`
	} `json:"data"`
	Text  string `json:"text"`
	Stats struct {
		TimeMS       int64 `json:"time_ms"`
		MatchedLines int   `json:"matched_lines"`
		Candidates   *int  `json:"candidates"`
		FilesScanned int   `json:"files_scanned"`
	} `json:"stats"`
}

// grep runs Grep through the socket with args (a JSON object's members).
func (r *scaleRun) grep(ctx context.Context, cl *rpc.Client, args map[string]any) (*toolEnvelope, time.Duration, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, 0, err
	}
	var raw json.RawMessage
	start := time.Now()
	err = cl.Call(ctx, tool.MethodGrep, rpc.ToolParams{Root: r.cfg.tree, Args: a}, &raw)
	wall := time.Since(start)
	if err != nil {
		return nil, wall, err
	}
	var e toolEnvelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, wall, fmt.Errorf("grep: malformed envelope: %w", err)
	}
	if e.Status == "error" {
		return nil, wall, fmt.Errorf("grep %s: %s", a, e.Text)
	}
	return &e, wall, nil
}

// visibleStats are the one-file write figures.
type visibleStats struct {
	n        int
	walls    []time.Duration // write closed → synced answer listing the file
	tookMS   []int64
	misses   int // synced answers that did not list the file yet
	fallback string
}

// writeVisible writes new files, each holding a fresh token, and times a
// synced Grep for the token until it lists the file.
func (r *scaleRun) writeVisible(ctx context.Context, cl *rpc.Client) (visibleStats, error) {
	vs := visibleStats{n: r.cfg.writes}
	dir := filepath.Join(r.cfg.tree, scratchDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return vs, err
	}
	r.onCleanup(func() error { return os.RemoveAll(dir) })
	for i := range r.cfg.writes {
		token := fmt.Sprintf("IndexdScaleVisible%sN%d", r.token, i)
		name := fmt.Sprintf("visible-%d.txt", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("written by the scale harness: "+token+"\n"), 0o644); err != nil {
			return vs, err
		}
		start := time.Now()
		deadline := start.Add(10 * time.Second)
		for {
			e, _, err := r.grep(ctx, cl, map[string]any{"pattern": token, "case_sensitive": true, "limit": 10})
			if err != nil {
				return vs, err
			}
			if e.Data.FallbackUsed {
				vs.fallback = e.Data.FallbackReason
			}
			if len(e.Data.Matches) == 1 && e.Data.Matches[0].File == scratchDir+"/"+name {
				vs.walls = append(vs.walls, time.Since(start))
				vs.tookMS = append(vs.tookMS, e.Stats.TimeMS)
				break
			}
			vs.misses++
			if time.Now().After(deadline) {
				return vs, fmt.Errorf("%s not found 10 s after it was written", token)
			}
		}
	}
	// Leave the tree as it was: remove the files and wait until the index
	// has seen it (a synced query after the removal).
	if err := os.RemoveAll(dir); err != nil {
		return vs, err
	}
	_, _, err := r.grep(ctx, cl, map[string]any{"pattern": "IndexdScaleVisible" + r.token, "case_sensitive": true, "limit": 1})
	return vs, err
}

// churnStats are the query stream's figures around the churn burst.
type churnStats struct {
	files       int
	quiet       []rpcSample // the stream before the burst
	burst       []rpcSample // from the burst's first write to the end of the tail
	duringMerge []rpcSample // those of burst that started while status showed a merge
	writeTime   time.Duration
	catchUp     time.Duration // last write → the synced answer listing the last file
	mergeFields []string      // merge-related status fields seen, "key=value"
	mergeSeen   bool          // a merge-related field reported activity
	fallback    string
}

// churnFile is one file of the burst and what restores it.
type churnFile struct {
	rel   string
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

// churnBurst streams queries through the socket (unsynced, so that the
// stream measures waiting for the writer, not the read-your-writes
// barrier) while rewriting cfg.churn files of the tree in a burst, then
// restores them (contents, modes and mtimes).
func (r *scaleRun) churnBurst(ctx context.Context, cl *rpc.Client) (churnStats, error) {
	cs := churnStats{}
	files, err := pickChurnFiles(r.cfg.tree, r.cfg.churn)
	if err != nil {
		return cs, err
	}
	cs.files = len(files)
	if len(files) == 0 {
		return cs, fmt.Errorf("no file to rewrite in %s", r.cfg.tree)
	}
	restore := func() error {
		var errs []error
		for _, f := range files {
			p := filepath.Join(r.cfg.tree, f.rel)
			if err := os.WriteFile(p, f.data, f.mode); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := os.Chmod(p, f.mode); err != nil {
				errs = append(errs, err)
			}
			if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	restored := false
	r.onCleanup(func() error {
		if restored {
			return nil
		}
		return restore()
	})

	st, err := r.startStream(ctx, map[string]any{"pattern": r.rare, "case_sensitive": true, "limit": 100, "sync": false})
	if err != nil {
		return cs, err
	}
	defer st.end()
	// Quiet: the stream alone.
	waitFor(ctx, r.cfg.churnTail)
	// The burst: every file rewritten with a line holding this run's token
	// appended, the last file's token unique.
	burstStart := st.since()
	tok := "IndexdScaleChurn" + r.token
	for i, f := range files {
		extra := "\n// " + tok + "\n"
		if i == len(files)-1 {
			extra = "\n// " + tok + "Last\n"
		}
		if err := os.WriteFile(filepath.Join(r.cfg.tree, f.rel), append(slices.Clip(f.data), extra...), f.mode); err != nil {
			return cs, err
		}
	}
	cs.writeTime = st.since() - burstStart
	// Caught up: a synced query sees the last write.
	lastDone := time.Now()
	e, _, err := r.grep(ctx, cl, map[string]any{"pattern": tok + "Last", "case_sensitive": true, "limit": 10})
	if err != nil {
		return cs, err
	}
	cs.catchUp = time.Since(lastDone)
	if len(e.Data.Matches) != 1 || e.Data.Matches[0].File != files[len(files)-1].rel {
		return cs, fmt.Errorf("a synced grep for %sLast after the burst found %d matches", tok, len(e.Data.Matches))
	}
	// The tail: go on while status shows a merge (at most a minute), then
	// for churnTail.
	for deadline := time.Now().Add(time.Minute); st.mergeActive() && time.Now().Before(deadline); {
		waitFor(ctx, 100*time.Millisecond)
	}
	waitFor(ctx, r.cfg.churnTail)
	if err := st.end(); err != nil {
		return cs, err
	}
	cs.fallback = st.fallback
	for _, s := range st.samples {
		switch {
		case s.at < burstStart:
			cs.quiet = append(cs.quiet, s)
		default:
			cs.burst = append(cs.burst, s)
			for _, m := range st.merging {
				if s.at+s.wall >= m.start && s.at <= m.end {
					cs.duringMerge = append(cs.duringMerge, s)
					break
				}
			}
		}
	}
	cs.mergeSeen = len(st.merging) > 0
	for f := range st.fields {
		cs.mergeFields = append(cs.mergeFields, f)
	}
	slices.Sort(cs.mergeFields)

	// Restore the files and wait until the index has seen it.
	err = restore()
	restored = true
	if err != nil {
		return cs, err
	}
	e, _, err = r.grep(ctx, cl, map[string]any{"pattern": tok, "case_sensitive": true, "limit": 1})
	if err != nil {
		return cs, err
	}
	if len(e.Data.Matches) != 0 {
		return cs, fmt.Errorf("%s still found after the files were restored", tok)
	}
	return cs, nil
}

// queryStream sends one query after another through a connection of its
// own, and polls status every 50 ms on another, until ended.
type queryStream struct {
	t0       time.Time
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	conns    []*rpc.Client
	mu       sync.Mutex
	samples  []rpcSample
	merging  []span          // from the first to the last of consecutive polls showing a merge
	fields   map[string]bool // merge-related status fields seen, "key=value"
	fallback string          // a fallback reason an answer gave
	errs     []error
	ended    bool
}

// startStream starts a stream of Grep with args.
func (r *scaleRun) startStream(ctx context.Context, args map[string]any) (*queryStream, error) {
	st := &queryStream{t0: time.Now(), fields: map[string]bool{}}
	for range 2 {
		cl, err := rpc.Dial(ctx, r.socket)
		if err != nil {
			for _, c := range st.conns {
				c.Close()
			}
			return nil, err
		}
		st.conns = append(st.conns, cl)
	}
	ctx, st.cancel = context.WithCancel(ctx)
	st.wg.Go(func() {
		for ctx.Err() == nil {
			at := st.since()
			e, wall, err := r.grep(ctx, st.conns[0], args)
			st.mu.Lock()
			switch {
			case err != nil && ctx.Err() == nil:
				st.errs = append(st.errs, err)
			case err == nil:
				st.samples = append(st.samples, rpcSample{at: at, wall: wall, tookMS: e.Stats.TimeMS})
				if e.Data.FallbackUsed {
					st.fallback = e.Data.FallbackReason
				}
			}
			st.mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	st.wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		open := false // the last poll showed a merge: the next extends its span
		for {
			at := st.since()
			if _, obj, err := r.status(ctx, st.conns[1]); err == nil {
				kv, active := mergeState(obj, r.cfg.tree)
				st.mu.Lock()
				for _, f := range kv {
					st.fields[f] = true
				}
				switch {
				case active && open:
					st.merging[len(st.merging)-1].end = st.since()
				case active:
					st.merging = append(st.merging, span{at, st.since()})
				}
				open = active
				st.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return st, nil
}

// since is the time since the stream started.
func (st *queryStream) since() time.Duration { return time.Since(st.t0) }

// mergeActive reports whether the last status polls showed a merge.
func (st *queryStream) mergeActive() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.merging) > 0 && st.since()-st.merging[len(st.merging)-1].end < 200*time.Millisecond
}

// end stops the stream and waits for it; it returns the errors of its
// queries. Its results may be read once it has returned. Ending an ended
// stream does nothing.
func (st *queryStream) end() error {
	if st.ended {
		return nil
	}
	st.ended = true
	st.cancel()
	st.wg.Wait()
	for _, c := range st.conns {
		c.Close()
	}
	return errors.Join(st.errs...)
}

// span is an interval from the start of the stream.
type span struct{ start, end time.Duration }

// waitFor waits d, or until ctx is done.
func waitFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// mergeState finds, in the status object, the fields of root's status
// (and of objects nested in it) whose names speak of merges or
// compactions, as "key=value", and whether one reports activity: true, a
// positive count under a name saying running, active, pending or
// in_progress, or a state other than idle.
func mergeState(status map[string]any, root string) (kv []string, active bool) {
	roots, _ := status["roots"].([]any)
	for _, x := range roots {
		ro, _ := x.(map[string]any)
		if ro == nil || ro["root"] != root {
			continue
		}
		var visit func(prefix string, o map[string]any, inMerge bool)
		visit = func(prefix string, o map[string]any, inMerge bool) {
			for k, v := range o {
				lk := strings.ToLower(k)
				named := inMerge || strings.Contains(lk, "merg") || strings.Contains(lk, "compact")
				if sub, ok := v.(map[string]any); ok {
					visit(prefix+k+".", sub, named)
					continue
				}
				if !named {
					continue
				}
				kv = append(kv, fmt.Sprintf("%s%s=%v", prefix, k, v))
				switch v := v.(type) {
				case bool:
					active = active || v
				case float64:
					for _, w := range []string{"running", "active", "pending", "in_progress", "inprogress"} {
						if strings.Contains(lk, w) && v > 0 {
							active = true
						}
					}
				case string:
					if strings.Contains(lk, "state") || strings.Contains(lk, "phase") {
						switch strings.ToLower(v) {
						case "", "idle", "none", "ready", "done":
						default:
							active = true
						}
					}
				}
			}
		}
		visit("", ro, false)
	}
	return kv, active
}

// pickChurnFiles chooses up to n small visible text files of the tree,
// spread over it (every k-th in walk order), and reads what restores them.
func pickChurnFiles(tree string, n int) ([]churnFile, error) {
	var all []string
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if p != tree && (strings.HasPrefix(name, ".") || ignore.DefaultDirs[name] || name == "coverage" || name == scratchDir) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(name, ".log") && !strings.HasSuffix(name, ".tmp") {
			if fi, err := d.Info(); err == nil && fi.Size() > 0 && fi.Size() <= 64<<10 {
				rel, _ := filepath.Rel(tree, p)
				all = append(all, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	step := max(1, len(all)/max(n, 1))
	var files []churnFile
	for i := 0; i < len(all) && len(files) < n; i += step {
		p := filepath.Join(tree, all[i])
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			continue // binary: leave it alone
		}
		files = append(files, churnFile{rel: all[i], data: data, mode: fi.Mode().Perm(), mtime: fi.ModTime()})
	}
	return files, nil
}

// procMem returns the memory fields of /proc/PID/status, in KiB.
func procMem(pid int) map[string]int64 {
	m := map[string]int64{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

// procCPU returns the user plus system CPU time a process has used
// (/proc/PID/stat fields 14 and 15, in USER_HZ = 100 ticks a second).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // from field 3
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// dirBytes is the total size of the regular files under dir, except the
// one named skip.
func dirBytes(dir, skip string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() != skip {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func nproc() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "processor\t:")
}

// moduleVersion returns the main module and version a Go binary was built
// from ("go version -m"), "?" if unknown.
func moduleVersion(bin string) string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return "?"
	}
	for l := range strings.Lines(string(out)) {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" {
			return f[1] + " " + f[2]
		}
	}
	return "?"
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// interruptible returns a context ended by SIGINT or SIGTERM, so that an
// interrupted run still restores the tree and stops its daemon.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// buildCindex builds the run's codesearch index of tree, which its
// csearch commands then use; missing says why codesearch is skipped when
// the build failed.
func (r *scaleRun) buildCindex(cindex, tree string, timeout time.Duration) (cs cindexStats, missing string) {
	progress("building the codesearch index")
	cs = buildCindex(cindex, tree, filepath.Join(r.tmp, "csearchindex"), timeout)
	if cs.err != nil {
		return cs, "cindex failed: " + cs.err.Error()
	}
	r.s.csIndex = cs.file
	return cs, ""
}
