package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// DefaultStartTimeout is how long EnsureDaemon waits for a daemon it
// started to answer, when ctx has no earlier deadline.
const DefaultStartTimeout = 10 * time.Second

// restartInterval: while waiting for a daemon it started, EnsureDaemon
// calls start again at this interval. A daemon that is still draining
// after a shutdown keeps the instance lock for a moment, so the daemon
// started right after it exits with ErrAlreadyRunning; the next start
// succeeds. Extra starts are harmless: all but one exit at the lock.
const restartInterval = 500 * time.Millisecond

// EnsureDaemon connects to the daemon on the socket at path, starting it
// first if nothing listens there. start must launch the daemon and return
// without waiting for it (the CLI runs the engine, `indexd`,
// detached with setsid); a start error wrapping ErrAlreadyRunning counts
// as success. EnsureDaemon then dials with backoff until the daemon
// answers, ctx is done, or DefaultStartTimeout passes.
//
// Concurrent calls in one process for the same path start the daemon
// once; across processes, several daemons may be launched but the lock
// taken by the server's Listen (package rpc/server) lets only one of them serve.
//
// The Client has the default timeouts; see Dialer.EnsureDaemon.
func EnsureDaemon(ctx context.Context, path string, start func() error) (*Client, error) {
	return Dialer{}.EnsureDaemon(ctx, path, start)
}

// errNoDaemon is wrapped by EnsureDaemon's error when ctx ended first.
var errNoDaemon = errors.New("no daemon answered")

// EnsureDaemon is the package's EnsureDaemon, connecting with d. When ctx
// ends first, the error says so the same way wherever it was (dialing,
// waiting for another caller's start, waiting for the daemon): it wraps
// ctx's error and names the socket.
func (d Dialer) EnsureDaemon(ctx context.Context, path string, start func() error) (*Client, error) {
	c, err := d.ensure(ctx, path, start)
	if err != nil && ctx.Err() != nil && !errors.Is(err, errNoDaemon) {
		err = fmt.Errorf("rpc: %w on %s: %w (last error: %v)", errNoDaemon, path, ctx.Err(), err)
	}
	return c, err
}

func (d Dialer) ensure(ctx context.Context, path string, start func() error) (*Client, error) {
	c, err := d.Dial(ctx, path)
	if err == nil || !notListening(err) {
		return c, err
	}
	// Connecting to a file that is not a socket is refused like
	// connecting to a dead daemon's socket; a daemon could not replace it.
	if fi, err := os.Stat(path); err == nil && fi.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("rpc: %s exists and is not a socket", path)
	}
	release, err := startLock(ctx, path)
	if err != nil {
		return nil, err
	}
	defer release()
	// Another caller may have started it while this one waited.
	if c, err = d.Dial(ctx, path); err == nil || !notListening(err) {
		return c, err
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	run := func() error {
		if err := start(); err != nil && !errors.Is(err, ErrAlreadyRunning) {
			return fmt.Errorf("rpc: starting the daemon: %w", err)
		}
		return nil
	}
	if err := run(); err != nil {
		return nil, err
	}
	lastStart := time.Now()
	lastErr := err
	delay := time.Millisecond
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("rpc: %w on %s: %w (last error: %v)", errNoDaemon, path, ctx.Err(), lastErr)
		}
		c, err := d.Dial(ctx, path)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("rpc: %w on %s: %w (last error: %v)", errNoDaemon, path, ctx.Err(), lastErr)
		}
		if !notListening(err) && !errors.Is(err, syscall.EAGAIN) {
			return nil, err
		}
		lastErr = err
		if time.Since(lastStart) >= restartInterval {
			if err := run(); err != nil {
				return nil, err
			}
			lastStart = time.Now()
		}
		delay = min(2*delay, 50*time.Millisecond)
		t.Reset(delay)
	}
}

// notListening reports whether a Dial error means no server is there: no
// socket file, or one nobody listens on.
func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

var (
	startMu   sync.Mutex                   // guards starting
	startSems = map[string]chan struct{}{} // per socket path: held while a caller starts its daemon
)

// startLock serialises the callers in this process that start the daemon
// for one socket path.
func startLock(ctx context.Context, path string) (release func(), err error) {
	startMu.Lock()
	sem, ok := startSems[path]
	if !ok {
		sem = make(chan struct{}, 1)
		startSems[path] = sem
	}
	startMu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
