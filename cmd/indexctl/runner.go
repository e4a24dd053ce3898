package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/rpc"
)

// request is one tool call (client.Request).
type request = client.Request

// runner answers tool calls. It returns the response envelope as JSON, so
// every runner's answer is printed the same way. An error means there is no
// envelope at all (the workspace could not be opened, a daemon could not be
// reached); a failed tool call is an error envelope, not an error.
type runner interface {
	query(ctx context.Context, req request) (json.RawMessage, error)
}

// runner picks how queries are answered: by the daemon, unless --direct
// (or INDEXCTL_DIRECT=1) asks for the walk, which the engine runs in a
// child process (this one does not link it).
func (c *cli) runner(g *globals) runner {
	if g.direct || envDirect() {
		return inProcess{engine: c.engine(), stderr: c.stderr}
	}
	return &viaDaemon{socket: g.socketPath(), stderr: c.stderr, engine: c.engine(), sys: &c.sys}
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

// engine is the engine binary (cmd/indexd) this command runs, found once
// (client.Engine says where); a note that it is being built goes to
// stderr.
func (c *cli) engine() *client.Engine {
	if c.eng == nil {
		c.eng = c.sys.findEngine(func(msg string) { fmt.Fprintf(c.stderr, "indexctl: %s\n", msg) })
	}
	return c.eng
}

// inProcess answers a query from the live tree, with no daemon and no
// index: the engine walks, in a child process ("indexd direct"). With a
// reason, the answer is marked as a fallback for it (the daemon could not
// be reached); --direct has none: walking is then the user's choice. An
// engine of another build than this client's walks too (client.Engine),
// saying so on stderr under --direct (a fallback's warning says why).
type inProcess struct {
	engine *client.Engine
	reason envelope.FallbackReason
	stderr io.Writer
}

func (r inProcess) query(ctx context.Context, req request) (json.RawMessage, error) {
	path, other, err := r.engine.WalkPath()
	if err != nil {
		return nil, err
	}
	if other != nil && r.reason == "" && r.stderr != nil {
		fmt.Fprintf(r.stderr, "indexctl: warning: walking with an engine of another build: %v\n", other)
	}
	args := []string{"direct", "--root", req.Root, "--cwd", req.Cwd}
	if req.Voice == rpc.VoiceCLI {
		args = append(args, "--cli")
	}
	if r.reason != "" {
		args = append(args, "--reason", string(r.reason))
	}
	if req.Unlimited {
		args = append(args, "--unlimited")
		if req.OnBatch != nil {
			args = append(args, "--stream")
		}
	}
	cmd := exec.CommandContext(ctx, path, append(args, "--", req.Tool)...)
	cmd.Stdin = bytes.NewReader(req.Args)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	if req.OnBatch != nil {
		// The results come a line each ahead of the envelope: hand them
		// over as they come.
		cmd.Stdout = &batchLines{onBatch: req.OnBatch, rest: &stdout}
	} else {
		cmd.Stdout = &stdout
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return bytes.TrimSuffix(stdout.Bytes(), []byte("\n")), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &ee) && ee.ExitCode() == 2 && stderr.Len() > 0:
		return nil, errors.New(strings.TrimSpace(stderr.String())) // the engine's error, such as a root that is gone
	}
	return nil, fmt.Errorf("the engine %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
}

// batchLines splits the output of "indexd direct --stream": each line
// {"batch":BATCH} goes to onBatch as it is complete, the rest (the
// envelope) to rest.
type batchLines struct {
	onBatch func(json.RawMessage)
	rest    *bytes.Buffer
	line    []byte
}

func (b *batchLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.line = append(b.line, p...)
			break
		}
		b.line = append(b.line, p[:i+1]...)
		p = p[i+1:]
		if data, ok := bytes.CutPrefix(b.line, []byte(batchPrefix)); ok {
			b.onBatch(bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("}")))
		} else {
			b.rest.Write(b.line)
		}
		b.line = b.line[:0]
	}
	return n, nil
}

// batchPrefix starts a line of results of "indexd direct --stream"
// (engine.BatchPrefix, which this program does not link).
const batchPrefix = `{"batch":`

// viaDaemon answers queries through the daemon, starting it if none
// answers. When it cannot be reached or started, or the connection breaks,
// it warns on stderr and answers with the walk (inProcess).
type viaDaemon struct {
	socket string
	stderr io.Writer
	engine *client.Engine
	sys    *system
}

func (r *viaDaemon) query(ctx context.Context, req request) (json.RawMessage, error) {
	d := &client.Daemon{Socket: r.socket, Stderr: r.stderr, Engine: r.engine, Dialer: r.sys.dialer, Started: r.started,
		Fallback: func(ctx context.Context, req request, reason envelope.FallbackReason) (json.RawMessage, error) {
			return inProcess{engine: r.engine, reason: reason, stderr: r.stderr}.query(ctx, req)
		}}
	return d.Query(ctx, req)
}

// started says on a terminal that this call started the daemon: a first
// use, whose answer may take longer and may come from a walk while the
// root is indexed.
func (r *viaDaemon) started() {
	if r.sys.isTerminal(r.stderr) {
		fmt.Fprintf(r.stderr, "indexctl: started the indexd daemon: it indexes each root on first use and keeps the index current (until it is ready, queries walk the tree; 'indexctl index --wait' shows the progress)\n")
	}
}

// connect connects to the daemon on socket, starting the engine if
// nothing answers there and replacing a daemon of another build
// (client.Daemon.Connect).
func (c *cli) connect(ctx context.Context, socket string) (*rpc.Client, error) {
	return (&client.Daemon{Socket: socket, Engine: c.engine(), Dialer: c.sys.dialer}).Connect(ctx)
}

// execEngine replaces this process with the engine running args (after
// its program name), for the commands that are the engine's (mcp,
// daemon): standard streams, signals and the process itself pass to it.
// It returns only on failure.
func (c *cli) execEngine(args ...string) error {
	path, err := c.engine().Path()
	if err != nil {
		return err
	}
	return c.sys.execve(path, append([]string{path}, args...), os.Environ())
}

// place is where a query runs.
type place struct {
	root string // absolute and clean, as given (symlinks not resolved)
	cwd  string // the current directory relative to the root, "." when outside it
	from string // how the root was found without --root (client.Place.From)
}

// locate finds the workspace root and the current directory within it
// (client.Locate).
func locate(rootFlag string) (place, error) {
	p, err := client.Locate(rootFlag)
	return place{root: p.Root, cwd: p.Cwd, from: p.From}, err
}

// findRoot returns the nearest ancestor of dir (dir included) holding
// .git, else dir (client.FindRoot).
func findRoot(dir string) string { return client.FindRoot(dir) }

// dialRunning connects to the daemon on socket without starting one; ok
// is false when none is running there.
func (c *cli) dialRunning(ctx context.Context, socket string) (cl *rpc.Client, ok bool, err error) {
	return client.DialRunning(ctx, c.sys.dialer, socket)
}

// stopDaemon asks the daemon on socket to shut down and waits until it
// has exited. stopped is false when none was running.
func (c *cli) stopDaemon(ctx context.Context, socket string) (stopped bool, err error) {
	return client.StopDaemon(ctx, c.sys.dialer, socket)
}
