package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/daemon"
	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tree"
)

// request is one tool call. Root, Cwd and Args are the params of the
// daemon protocol's glob/grep/ls methods (SPEC §10); Tool picks the method.
type request struct {
	Tool string          // query.ToolGlob, ToolGrep or ToolLS
	Root string          // absolute workspace root
	Cwd  string          // working directory relative to Root, "." at the root
	Args json.RawMessage // the tool's arguments
	// Unlimited: a limit of 0 in Args asks for every result (--all).
	Unlimited bool
	// OnBatch, with Unlimited, takes Glob's and Grep's results as they
	// come (a query.Batch as JSON), ahead of the answer, which then holds
	// none of them.
	OnBatch func(json.RawMessage)
	// RootFrom: how Root was found when --root was not given
	// (rpc.RootFromGit, rpc.RootFromCwd); the daemon may then answer
	// from a deeper root it already has.
	RootFrom string
}

// runner answers tool calls. It returns the response envelope as JSON, so
// every runner's answer is printed the same way. An error means there is no
// envelope at all (the workspace could not be opened, a daemon could not be
// reached); a failed tool call is an error envelope, not an error.
type runner interface {
	query(ctx context.Context, req request) (json.RawMessage, error)
}

// runner picks how queries are answered: by the daemon, unless --direct
// (or INDEXCTL_DIRECT=1) asks for the walk in this process.
func (c *cli) runner(g *globals) runner {
	if g.direct || envDirect() {
		return inProcess{}
	}
	return &viaDaemon{socket: g.socketPath(), stderr: c.stderr}
}

// envDirect reports whether INDEXCTL_DIRECT asks for --direct.
func envDirect() bool {
	v, err := strconv.ParseBool(os.Getenv("INDEXCTL_DIRECT"))
	return err == nil && v
}

// socketPath is the daemon's socket: --socket, else the default.
func (g *globals) socketPath() string {
	if g.socket == "" {
		return rpc.DefaultSocketPath()
	}
	if abs, err := filepath.Abs(g.socket); err == nil {
		return abs
	}
	return g.socket
}

// inProcess answers a query in this process from the live tree, with no
// daemon and no index. With a reason, the answer is marked as a fallback
// for it (the daemon could not be reached); --direct has none: walking is
// then the user's choice.
type inProcess struct {
	reason envelope.FallbackReason
}

func (r inProcess) query(ctx context.Context, req request) (json.RawMessage, error) {
	ws, err := query.NewWorkspace(req.Root)
	if err != nil {
		return nil, err
	}
	tools := query.NewDirect(ws)
	tools.Unlimited = req.Unlimited
	if req.OnBatch != nil {
		tools.Sink = func(b query.Batch) {
			if js, err := marshal(b); err == nil {
				req.OnBatch(js)
			}
		}
	}
	if r.reason != "" {
		tools.Searcher = daemon.FallbackWalk{Reason: r.reason}
	}
	return tools.Run(ctx, req.Tool, req.Cwd, req.Args).MarshalJSON() // json.Marshal would re-escape "<" as \u003c
}

// viaDaemon answers queries through the daemon, starting it if none
// answers. When it cannot be reached or started, or the connection breaks,
// it warns on stderr and answers in this process.
type viaDaemon struct {
	socket string
	stderr io.Writer
}

func (r *viaDaemon) query(ctx context.Context, req request) (json.RawMessage, error) {
	method, err := rpc.MethodForTool(req.Tool)
	if err != nil {
		return nil, err
	}
	cl, err := connect(ctx, r.socket)
	if err != nil && ctx.Err() != nil {
		return nil, err // the user gave up
	}
	if errors.Is(err, rpc.ErrNoAnswer) {
		return nil, noAnswer(err) // a daemon is there but hung: walking here would hide it
	}
	streamed := false
	if err == nil {
		defer cl.Close()
		params := rpc.ToolParams{Root: req.Root, Cwd: req.Cwd, Args: req.Args, Unlimited: req.Unlimited, RootFrom: req.RootFrom}
		var res json.RawMessage
		if req.OnBatch != nil {
			// No overall time limit: the answer comes at the reader's
			// pace (a hung daemon is still caught by the client's
			// answer timeout, which every batch resets).
			params.Stream = true
			err = cl.CallStream(ctx, method, params, &res, func(data json.RawMessage) {
				streamed = true
				req.OnBatch(data)
			})
		} else {
			cctx, cancel := context.WithTimeout(ctx, requestTimeout(req))
			defer cancel()
			err = cl.Call(cctx, method, params, &res)
		}
		var rerr *rpc.Error
		switch {
		case err == nil:
			return res, nil
		case streamed:
			// Part of the answer is out: walking here would repeat it.
			return nil, err
		case errors.Is(err, rpc.ErrNoAnswer):
			// A daemon is there but hung: walking here would hide it.
			return nil, noAnswer(err)
		case errors.As(err, &rerr), ctx.Err() != nil:
			// The daemon refused the request, or the user gave up.
			return nil, err
		}
	}
	fmt.Fprintf(r.stderr, "indexctl: warning: answering without the daemon: %v\n", err)
	return inProcess{reason: envelope.ReasonDaemonUnavailable}.query(ctx, req)
}

// noAnswer adds what to do to the error of a daemon that did not answer
// (one that wraps rpc.ErrNoAnswer).
func noAnswer(err error) error {
	return fmt.Errorf("%w; try 'indexctl stop' or --direct", err)
}

// dialer connects to the daemon: the rpc package's default timeouts (the
// tests shorten them).
var dialer rpc.Dialer

// requestMargin is added to a tool's own time limit to bound the wait for
// the daemon's answer: for the daemon's read-your-writes barrier
// (daemon.SyncTimeout), a fallback walk and the answer's way back, on a
// busy machine.
const requestMargin = 30 * time.Second

// requestTimeout bounds the wait for the daemon's answer to a tool call:
// the tool's own time limit (Grep's timeout_ms, default 2 s; Glob's
// search bound; the same 2 s for LS, which reads one directory) plus
// requestMargin. An unreadable timeout_ms counts as Grep's largest: the
// tool reports it, the wait must not cut it short. (The client's answer
// timeout catches a daemon that is hung long before this.)
func requestTimeout(req request) time.Duration {
	ms := int64(max(query.GrepDefaultTimeoutMS, query.GlobMaxDurationMS))
	if req.Tool == query.ToolGrep {
		var a struct {
			TimeoutMS json.RawMessage `json:"timeout_ms"`
		}
		if json.Unmarshal(req.Args, &a) == nil && a.TimeoutMS != nil {
			ms = query.GrepMaxTimeoutMS
			var n float64
			if json.Unmarshal(a.TimeoutMS, &n) == nil && n >= 1 && n < query.GrepMaxTimeoutMS {
				ms = int64(n)
			}
		}
	}
	return time.Duration(ms)*time.Millisecond + requestMargin
}

// connect connects to the daemon on socket, starting it if nothing
// answers there. A daemon of another build (an older indexctl's, say,
// after an upgrade, or a deleted go run binary's) is asked to shut down
// and replaced by one of this build (SPEC §10): the client's first ping
// carries its build ID and such a daemon refuses it. Only one
// replacement is tried, so two builds in use at once do not take turns
// forever: the second finds its daemon serving and keeps it.
func connect(ctx context.Context, socket string) (*rpc.Client, error) {
	cl, err := dialer.EnsureDaemon(ctx, socket, daemonStarter(socket))
	if err != nil {
		return nil, err
	}
	self := buildid.Self()
	if self == "" {
		return cl, nil
	}
	err = cl.Call(ctx, rpc.MethodPing, rpc.PingParams{Build: self}, nil)
	var rerr *rpc.Error
	switch {
	case err == nil:
		return cl, nil
	case errors.As(err, &rerr) && rerr.Code == daemon.CodeOtherBuild:
	case errors.As(err, &rerr):
		return cl, nil // a daemon that does not know the check: its answers are its own
	default:
		cl.Close()
		return nil, err // a hung daemon (rpc.ErrNoAnswer) or a broken connection
	}
	_ = cl.Call(ctx, rpc.MethodShutdown, nil, nil) // it may be gone before it answers
	cl.Close()
	if err := waitStopped(ctx, socket); err != nil {
		return nil, err
	}
	return dialer.EnsureDaemon(ctx, socket, daemonStarter(socket))
}

// stopWait bounds how long connect waits for a daemon of another build to
// stop accepting connections once asked: its drain (rpc.DrainTimeout)
// and a margin.
const stopWait = rpc.DefaultDrainTimeout + 5*time.Second

// waitStopped returns once nothing accepts connections on socket any
// more, checking with a growing interval, or fails after stopWait.
func waitStopped(ctx context.Context, socket string) error {
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	delay := time.Millisecond
	for {
		c, err := dialer.Dial(ctx, socket)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("indexctl: the daemon of another build on %s did not stop within %v", socket, stopWait)
			}
			return nil
		}
		c.Close()
		select {
		case <-ctx.Done():
			return fmt.Errorf("indexctl: the daemon of another build on %s did not stop within %v", socket, stopWait)
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// daemonStarter returns the start function for rpc.EnsureDaemon: it runs
// this executable again as "indexctl daemon --socket SOCKET", detached (a
// session of its own, the root directory as its working directory,
// standard input and output on /dev/null, standard error appended to the
// daemon's log), and returns without waiting for it.
//
// The child is reaped by a goroutine rather than released, so a daemon
// that fails at once (an unusable socket directory, say) is reported by
// the next call of the start function instead of after EnsureDaemon's
// whole timeout. A daemon that finds another one serving exits with 0 and
// is not an error.
//
// Under "go run", the executable lives in a temporary directory that go
// run may remove once indexctl exits; the daemon keeps running, since it
// holds its executable open.
func daemonStarter(socket string) func() error {
	var (
		mu     sync.Mutex
		failed error // the last child that exited with an error
	)
	return func() error {
		mu.Lock()
		err := failed
		mu.Unlock()
		if err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		stateDir := daemon.DefaultStateDir()
		logf, err := daemon.OpenLog(stateDir)
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd := exec.Command(self, "daemon", "--socket", socket)
		cmd.Dir = "/"
		cmd.Stderr = logf // stdin and stdout: /dev/null
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			if err := cmd.Wait(); err != nil {
				mu.Lock()
				failed = fmt.Errorf("the daemon exited: %v (its log: %s)", err, filepath.Join(stateDir, daemon.LogName))
				mu.Unlock()
			}
		}()
		return nil
	}
}

// place is where a query runs.
type place struct {
	root string // absolute and clean, as given (symlinks not resolved)
	cwd  string // the current directory relative to the root, "." when outside it
	// from is how the root was found without --root: rpc.RootFromGit or
	// rpc.RootFromCwd ("" with --root).
	from string
}

// locate finds the workspace root and the current directory within it.
// The root is rootFlag (relative to the current directory) if set, else the
// nearest ancestor of the current directory holding .git, else the current
// directory; in the last two cases the daemon may answer from a deeper
// root it already has (rpc.ToolParams.RootFrom).
func locate(rootFlag string) (place, error) {
	wd, err := os.Getwd()
	if err != nil {
		return place{}, fmt.Errorf("current directory: %w", err)
	}
	root, from := rootFlag, ""
	switch {
	case root == "":
		root = findRoot(wd)
		from = rpc.RootFromGit
		if root == wd && !exists(filepath.Join(wd, ".git")) {
			from = rpc.RootFromCwd
		}
	case !filepath.IsAbs(root):
		root = filepath.Join(wd, root)
	}
	root = filepath.Clean(root)
	name := rootFlag
	if name == "" {
		name = root
	}
	real, err := filepath.EvalSymlinks(root)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			return place{}, fmt.Errorf("root '%s' is not a directory", name)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return place{}, fmt.Errorf("root '%s' does not exist", name)
	case err != nil:
		return place{}, fmt.Errorf("root '%s': %w", name, err)
	}
	p := place{root: root, cwd: ".", from: from}
	if realWd, err := filepath.EvalSymlinks(wd); err == nil && tree.Within(real, realWd) {
		if rel, err := filepath.Rel(real, realWd); err == nil {
			p.cwd = filepath.ToSlash(rel)
		}
	}
	return p, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// findRoot returns the nearest ancestor of dir (dir included) holding .git
// (a directory, or a file as in worktrees and submodules), else dir.
func findRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// dialRunning connects to the daemon on socket without starting one; ok
// is false when none is running there.
func dialRunning(ctx context.Context, socket string) (cl *rpc.Client, ok bool, err error) {
	cl, err = dialer.Dial(ctx, socket)
	switch {
	case err == nil:
		return cl, true, nil
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED):
		return nil, false, nil
	}
	return nil, false, err
}

// stopDaemon asks the daemon on socket to shut down and waits until it
// has exited (released its instance lock). stopped is false when none was
// running.
func stopDaemon(ctx context.Context, socket string) (stopped bool, err error) {
	cl, ok, err := dialRunning(ctx, socket)
	if !ok {
		return false, err
	}
	defer cl.Close()
	if err := cl.Call(ctx, rpc.MethodShutdown, nil, nil); err != nil {
		return false, err
	}
	return true, waitGone(ctx, socket)
}

// waitGone waits until no daemon holds the instance lock of socket.
func waitGone(ctx context.Context, socket string) error {
	f, err := os.Open(rpc.LockPath(socket))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	// Polling another process's exit: a shared lock is granted once the
	// daemon's exclusive one is gone.
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("waiting for the daemon to exit: %w", err)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the daemon to exit: %w", ctx.Err())
		}
	}
}
