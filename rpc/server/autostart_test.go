package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// inProcessDaemon is a start function for EnsureDaemon that runs the
// daemon in this process: Listen, then Serve in a goroutine, as
// `indexctl daemon` would in its own process.
type inProcessDaemon struct {
	path    string
	ctx     context.Context
	starts  atomic.Int32 // calls of start
	running atomic.Int32 // starts that got the socket
	wg      sync.WaitGroup
}

func newInProcessDaemon(t *testing.T) *inProcessDaemon {
	ctx, cancel := context.WithCancel(context.Background())
	d := &inProcessDaemon{path: filepath.Join(t.TempDir(), "indexd.sock"), ctx: ctx}
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { d.wg.Wait(); close(done) }()
		recvSignal(t, done, "the daemons to stop")
	})
	return d
}

func (d *inProcessDaemon) start() error {
	d.starts.Add(1)
	ln, unlock, err := Listen(d.path)
	if err != nil {
		return err // ErrAlreadyRunning: another start won
	}
	d.running.Add(1)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer unlock()
		(&Server{Handler: testMethods()}).Serve(d.ctx, ln)
	}()
	return nil
}

func TestEnsureDaemonStartsOnce(t *testing.T) {
	t.Parallel()
	d := newInProcessDaemon(t)
	ctx := context.Background()
	c, err := rpc.EnsureDaemon(ctx, d.path, d.start)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
	c.Close()
	if n, m := d.starts.Load(), d.running.Load(); n != 1 || m != 1 {
		t.Errorf("first call: %d starts, %d running; want 1 and 1", n, m)
	}
	// Now it answers: no start.
	c, err = rpc.EnsureDaemon(ctx, d.path, d.start)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n := d.starts.Load(); n != 1 {
		t.Errorf("second call started again (%d starts)", n)
	}
}

func TestEnsureDaemonConcurrent(t *testing.T) {
	t.Parallel()
	d := newInProcessDaemon(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := rpc.EnsureDaemon(ctx, d.path, d.start)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			if err := c.Ping(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	t.Logf("8 concurrent callers: %d starts, %d daemons", d.starts.Load(), d.running.Load())
	if n := d.running.Load(); n != 1 {
		t.Errorf("%d daemons running, want 1", n)
	}
	if n := d.starts.Load(); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
}

// A daemon still draining holds the lock: the first start fails with
// ErrAlreadyRunning, and a later one takes over.
func TestEnsureDaemonRestarts(t *testing.T) {
	t.Parallel()
	d := newInProcessDaemon(t)
	var calls atomic.Int32
	start := func() error {
		if calls.Add(1) == 1 {
			return fmt.Errorf("daemon: %w", rpc.ErrAlreadyRunning)
		}
		return d.start()
	}
	c, err := rpc.EnsureDaemon(context.Background(), d.path, start)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n := calls.Load(); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// deadlineCtx is a context with a deadline that passes when the test
// says (pass), not by the clock.
type deadlineCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newDeadlineCtx() *deadlineCtx {
	return &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
}

// pass makes the deadline pass.
func (c *deadlineCtx) pass() { c.once.Do(func() { close(c.done) }) }

// Deadline reports a deadline far off: EnsureDaemon sets none of its
// own, and only pass ends the context.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (c *deadlineCtx) Done() <-chan struct{}       { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestEnsureDaemonFailures(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "indexd.sock")
	boom := errors.New("boom")
	if _, err := rpc.EnsureDaemon(context.Background(), path, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("start error: %v", err)
	}
	// A start that starts nothing: EnsureDaemon gives up at ctx's deadline,
	// which passes once the start has run.
	ctx := newDeadlineCtx()
	_, err := rpc.EnsureDaemon(ctx, path, func() error { ctx.pass(); return nil })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no daemon answered on "+path) {
		t.Errorf("nothing started: %v", err)
	}
	// A context over before anything is tried: the same error, whichever
	// step noticed it (the dial, the start lock, the wait).
	over, stop := context.WithCancel(context.Background())
	stop()
	for range 20 {
		_, err = rpc.EnsureDaemon(over, path, func() error { return nil })
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "no daemon answered on "+path) {
			t.Fatalf("context over: %v", err)
		}
	}
	// A path that cannot be a socket is an error, not a reason to start.
	started := false
	_, err = rpc.EnsureDaemon(context.Background(), t.TempDir(), func() error { started = true; return nil })
	if err == nil || started {
		t.Errorf("dialing a directory: %v (started %v)", err, started)
	}
}
