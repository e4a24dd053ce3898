// Package client owns the query client's side of the daemon protocol,
// shared by the query client (cmd/indexctl) and the engine's MCP server
// (internal/engine): finding the workspace root, answering a tool call
// through the daemon (starting it, and replacing one of another build),
// stopping it, and finding the engine binary a client starts. It links
// none of the engine (no query, index, watch or daemon): what a caller
// does when the daemon cannot be reached is its Fallback.
package client

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

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/jsonread"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// Request is one tool call. Root, Cwd and Args are the params of the
// daemon protocol's tool methods (docs/protocol.md); Tool picks the method.
type Request struct {
	Tool string          // tool.Glob, Grep or LS
	Root string          // absolute workspace root
	Cwd  string          // working directory relative to Root, "." at the root
	Args json.RawMessage // the tool's arguments
	// Unlimited: the limit in Args is the command line's (any; 0 asks
	// for every result). Without OnBatch the answer is still one whole
	// envelope: the daemon streams it and Query puts it back together.
	Unlimited bool
	// OnBatch, with Unlimited, takes Glob's and Grep's results as they
	// come (a query.Batch as JSON), ahead of the answer, which then holds
	// none of them (for a limit beyond the agent tools' maximum: 0, in
	// indexctl's use).
	OnBatch func(json.RawMessage)
	// RootFrom: how Root was found when --root was not given
	// (rpc.RootFromGit, rpc.RootFromCwd); the daemon may then answer
	// from a deeper root it already has.
	RootFrom string
	// Voice is rpc.ToolParams.Voice: rpc.VoiceCLI for indexctl's
	// command line, "" for agents.
	Voice string
}

// FallbackFunc answers a request without the daemon, by walking the tree,
// the answer marked as a fallback for reason.
type FallbackFunc func(ctx context.Context, req Request, reason envelope.FallbackReason) (json.RawMessage, error)

// Daemon answers tool calls through the daemon on Socket, starting Engine
// as the daemon if none answers there, and replacing a daemon of another
// build than Engine's. When the daemon cannot be reached or started, or
// the connection breaks, it warns on Stderr and answers with Fallback.
type Daemon struct {
	Socket   string
	Stderr   io.Writer
	Engine   *Engine
	Fallback FallbackFunc
	// Dialer connects to the daemon (the zero value: rpc's defaults).
	Dialer rpc.Dialer
	// Started, if set, is called once this client has started a daemon
	// (none answered): the first use, to say what is happening.
	Started func()
}

// Query answers req. It returns the response envelope as JSON. An error
// means there is no envelope at all (a daemon could not be reached and
// the fallback failed too, or the daemon hung); a failed tool call is an
// error envelope, not an error.
func (d *Daemon) Query(ctx context.Context, req Request) (json.RawMessage, error) {
	spec, err := tool.Lookup(req.Tool)
	if err != nil {
		return nil, err
	}
	params := rpc.ToolParams{Root: req.Root, Cwd: req.Cwd, Args: req.Args, Unlimited: req.Unlimited, RootFrom: req.RootFrom, Voice: req.Voice}
	var cl *rpc.Client
	var res json.RawMessage
	streamed := false
	if req.OnBatch != nil {
		// A stream's batches go out as they come: the build is checked
		// before the call.
		if cl, err = d.Connect(ctx); err == nil {
			// No overall time limit: the answer comes at the reader's
			// pace (a hung daemon is still caught by the client's
			// answer timeout, which every batch resets).
			params.Stream = true
			err = cl.CallStream(ctx, spec.Method, params, &res, func(data json.RawMessage) {
				streamed = true
				req.OnBatch(data)
			})
		}
	} else {
		cl, err = d.connectCalling(ctx, func(cl *rpc.Client) error {
			cctx := ctx
			if wait := RequestTimeout(req); wait > 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, wait)
				defer cancel()
			}
			if !req.Unlimited {
				return cl.Call(cctx, spec.Method, params, &res)
			}
			// The command line's answer, of any size, wanted whole: the
			// daemon streams it and it is put back together here
			// (whole.go). Nothing is handed on before it is complete, so
			// a daemon replaced meanwhile is asked again from scratch.
			var w wholeAnswer
			p := params
			p.Stream, p.BatchText = true, true
			if err := cl.CallStream(cctx, spec.Method, p, &res, w.add); err != nil {
				return err
			}
			var err error
			res, err = w.envelope(res)
			return err
		})
	}
	if cl != nil {
		defer cl.Close()
	}
	var rerr *rpc.Error
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, err // the user gave up
	case streamed:
		// Part of the answer is out: walking here would repeat it.
		return nil, err
	case errors.Is(err, rpc.ErrNoAnswer):
		// A daemon is there but hung: walking here would hide it.
		return nil, noAnswer(err)
	case cl != nil && errors.As(err, &rerr):
		// The daemon refused the request.
		return nil, err
	}
	fmt.Fprintf(d.Stderr, "indexctl: warning: answering without the daemon: %v\n", err)
	return d.Fallback(ctx, req, envelope.ReasonDaemonUnavailable)
}

// noAnswer adds what to do to the error of a daemon that did not answer
// (one that wraps rpc.ErrNoAnswer).
func noAnswer(err error) error {
	return fmt.Errorf("%w; try 'indexctl stop' or --direct", err)
}

// requestMargin is added to a tool's own time limit to bound the wait for
// the daemon's answer: for the daemon's read-your-writes barrier
// (daemon.SyncTimeout), a fallback walk and the answer's way back, on a
// busy machine.
const requestMargin = 30 * time.Second

// RequestTimeout bounds the wait for the daemon's answer to a tool call:
// the tool's own time limit (Grep's timeout_ms, default 2 s; Glob's
// search bound; the same 2 s for LS, which reads one directory) plus
// requestMargin. An unreadable timeout_ms counts as Grep's largest: the
// tool reports it, the wait must not cut it short. A call under the
// command line's rules (Unlimited) has no time limit but a timeout_ms
// given to Grep, and so no bound (0). (The client's answer timeout
// catches a daemon that is hung long before this.)
func RequestTimeout(req Request) time.Duration {
	ms := int64(max(tool.GrepDefaultTimeoutMS, envelope.GlobMaxDurationMS))
	if req.Unlimited {
		ms = 0
	}
	if req.Tool == tool.Grep {
		// Read as the tool reads its arguments (the last of a key given
		// twice; null is absent), without encoding/json's reflection on
		// every call.
		var raw []byte
		r := jsonread.NewReader(req.Args)
		r.Object(func(key []byte) {
			if string(key) == "timeout_ms" {
				raw = r.Raw()
			} else {
				r.Skip()
			}
		})
		if r.Err() == nil && raw != nil && string(raw) != "null" {
			ms = tool.GrepMaxTimeoutMS
			if n, err := strconv.ParseFloat(string(raw), 64); err == nil && n >= 1 && n < tool.GrepMaxTimeoutMS {
				ms = int64(n)
			}
		}
	}
	if ms == 0 {
		return 0
	}
	return time.Duration(ms)*time.Millisecond + requestMargin
}

// Connect connects to the daemon on d.Socket, starting d.Engine if nothing
// answers there. A daemon of another build than the engine's (an older one,
// say, after an upgrade, or a deleted go run binary's) is asked to shut down
// and replaced by one of this build (docs/protocol.md, "ping"): the client's
// first ping carries the engine's build ID and such a daemon refuses it.
// Only one replacement is tried, so two builds in use at once do not take
// turns forever: the second finds its daemon serving and keeps it.
func (d *Daemon) Connect(ctx context.Context) (*rpc.Client, error) {
	return d.connectCalling(ctx, nil)
}

// connectCalling is Connect, then call(cl) if call is set. The build
// check's ping goes out with the call, not before it (a request less to
// wait for); when the daemon turns out to be of another build, the call's
// answer is dropped and the call made again of its replacement. cl is
// nil when no daemon could be connected to; otherwise the caller closes
// it, whatever the call returned.
func (d *Daemon) connectCalling(ctx context.Context, call func(cl *rpc.Client) error) (cl *rpc.Client, err error) {
	// Found (or built) before the start's time runs. A client with no
	// engine of its own build is answered by no daemon: that of another
	// build would serve every root.
	if _, err := d.Engine.Path(); err != nil {
		return nil, err
	}
	build := d.Engine.Build()
	start := d.starter()
	if cl, err = d.Dialer.EnsureDaemon(ctx, d.Socket, start); err != nil {
		return nil, err
	}
	if call == nil {
		call = func(*rpc.Client) error { return nil }
	}
	if build == "" {
		return cl, call(cl)
	}
	checked := make(chan error, 1)
	go func() { checked <- cl.Call(ctx, rpc.MethodPing, rpc.PingParams{Build: build}, nil) }()
	callErr := call(cl)
	err = <-checked
	var rerr *rpc.Error
	switch {
	case err == nil:
		return cl, callErr
	case errors.As(err, &rerr) && rerr.Code == rpc.CodeOtherBuild:
	case errors.As(err, &rerr):
		return cl, callErr // a daemon that does not know the check: its answers are its own
	default:
		cl.Close()
		return nil, err // a hung daemon (rpc.ErrNoAnswer) or a broken connection
	}
	_ = cl.Call(ctx, rpc.MethodShutdown, nil, nil) // it may be gone before it answers
	cl.Close()
	if err := d.waitStopped(ctx); err != nil {
		return nil, err
	}
	if cl, err = d.Dialer.EnsureDaemon(ctx, d.Socket, start); err != nil {
		return nil, err
	}
	return cl, call(cl)
}

// stopWait bounds how long Connect waits for a daemon of another build to
// stop accepting connections once asked: its drain (rpc.DrainTimeout)
// and a margin.
const stopWait = rpc.DefaultDrainTimeout + 5*time.Second

// waitStopped returns once nothing accepts connections on the socket any
// more, checking with a growing interval, or fails after stopWait.
func (d *Daemon) waitStopped(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	delay := time.Millisecond
	for {
		c, err := d.Dialer.Dial(ctx, d.Socket)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("indexctl: the daemon of another build on %s did not stop within %v", d.Socket, stopWait)
			}
			return nil
		}
		c.Close()
		select {
		case <-ctx.Done():
			return fmt.Errorf("indexctl: the daemon of another build on %s did not stop within %v", d.Socket, stopWait)
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// starter returns the start function for rpc.EnsureDaemon: it runs the
// engine as "indexd --socket SOCKET", detached (a session of its own, the
// root directory as its working directory, standard input and output on
// /dev/null, standard error appended to the daemon's log), and returns
// without waiting for it.
//
// The child is reaped by a goroutine rather than released, so a daemon
// that fails at once (an unusable socket directory, say) is reported by
// the next call of the start function instead of after EnsureDaemon's
// whole timeout. A daemon that finds another one serving exits with 0 and
// is not an error.
func (d *Daemon) starter() func() error {
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
		path, err := d.Engine.Path()
		if err != nil {
			return err
		}
		stateDir := daemonapi.DefaultStateDir()
		logf, err := daemonapi.OpenLog(stateDir)
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd := exec.Command(path, "--socket", d.Socket)
		cmd.Dir = "/"
		cmd.Stderr = logf // stdin and stdout: /dev/null
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		if d.Started != nil {
			d.Started()
		}
		go func() {
			if err := cmd.Wait(); err != nil {
				mu.Lock()
				failed = fmt.Errorf("the daemon exited: %v (its log: %s)", err, filepath.Join(stateDir, daemonapi.LogName))
				mu.Unlock()
			}
		}()
		return nil
	}
}

// Place is where a query runs.
type Place struct {
	Root string // absolute and clean, as given (symlinks not resolved)
	Cwd  string // the current directory relative to the root, "." when outside it
	// From is how the root was found without --root: rpc.RootFromGit or
	// rpc.RootFromCwd ("" with --root).
	From string
}

// Locate finds the workspace root and the current directory within it.
// The root is rootFlag (relative to the current directory) if set, else
// the nearest ancestor of the current directory holding .git, else the
// current directory; in the last two cases the daemon may answer from a
// deeper root it already has (rpc.ToolParams.RootFrom).
func Locate(rootFlag string) (Place, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Place{}, fmt.Errorf("current directory: %w", err)
	}
	root, from := rootFlag, ""
	switch {
	case root == "":
		root = FindRoot(wd)
		from = rpc.RootFromGit
		if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
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
			return Place{}, fmt.Errorf("root '%s' is not a directory", name)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Place{}, fmt.Errorf("root '%s' does not exist", name)
	case err != nil:
		return Place{}, fmt.Errorf("root '%s': %w", name, err)
	}
	p := Place{Root: root, Cwd: ".", From: from}
	if realWd, err := filepath.EvalSymlinks(wd); err == nil && within(real, realWd) {
		if rel, err := filepath.Rel(real, realWd); err == nil {
			p.Cwd = filepath.ToSlash(rel)
		}
	}
	return p, nil
}

// within reports whether the clean absolute path p is root or lies under
// it, comparing whole components (tree.Within, which this package does
// not link).
func within(root, p string) bool {
	if p == root {
		return true
	}
	if root == string(filepath.Separator) {
		return len(p) > 0 && p[0] == filepath.Separator
	}
	return len(p) > len(root) && p[:len(root)] == root && p[len(root)] == filepath.Separator
}

// FindRoot returns the nearest ancestor of dir (dir included) holding .git
// (a directory, or a file as in worktrees and submodules), else dir.
func FindRoot(dir string) string {
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

// DialRunning connects to the daemon on socket without starting one; ok
// is false when none is running there.
func DialRunning(ctx context.Context, dialer rpc.Dialer, socket string) (cl *rpc.Client, ok bool, err error) {
	cl, err = dialer.Dial(ctx, socket)
	switch {
	case err == nil:
		return cl, true, nil
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED):
		return nil, false, nil
	}
	return nil, false, err
}

// StopDaemon asks the daemon on socket to shut down and waits until it
// has exited (released its instance lock). stopped is false when none was
// running.
func StopDaemon(ctx context.Context, dialer rpc.Dialer, socket string) (stopped bool, err error) {
	cl, ok, err := DialRunning(ctx, dialer, socket)
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
