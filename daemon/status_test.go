package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/rpc"
)

// A status call reads the root's index after it lets go of the
// workspace's mutex, which every query takes first (trusted): with the
// index held by a writer, the status call waits for the writer, and a
// query is not held behind the status call. (Before, status read the
// index under the mutex, so one status poll during a burst queued every
// query behind the writer and a pass over the table.)
func TestStatusDoesNotHoldQueriesBehindTheIndex(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n"})
	ctx := context.Background()
	cfg := Config{StateDir: t.TempDir(), SocketPath: socketPath(t), Logger: slog.New(slog.DiscardHandler),
		// No watcher: nothing but this test updates the index.
		NewFreshener: func(context.Context, string, *index.Index, *slog.Logger) (Freshener, error) {
			return stuckFreshener{}, nil
		}}.withDefaults()
	d := newDaemon(ctx, cfg, cfg.Logger)
	defer func() { d.stop(); d.closeAll() }()
	params, _ := json.Marshal(rpc.RootParams{Root: root, Wait: true})
	if _, rerr := d.Handle(ctx, rpc.MethodIndex, params); rerr != nil {
		t.Fatal(rerr)
	}
	d.mu.Lock()
	w := d.roots[root]
	d.mu.Unlock()
	w.mu.Lock()
	ix := w.ix
	w.mu.Unlock()

	// A writer holds the index: an update whose callback for the file it
	// removes runs with the index locked, and waits.
	must(t, os.Remove(filepath.Join(root, "gone.txt")))
	held, release, applied := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		applied <- ix.ApplyWith(ctx, []string{"gone.txt"}, index.ApplyOptions{Removed: func(*index.File) { close(held); <-release }})
	}()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	waitFor(t, held, "the update to hold the index")

	status := make(chan rpc.RootStatus, 1)
	go func() { status <- w.status() }()
	waitForStack(t, "index.(*Index).Stats", "the status call to wait for the index")

	trusted := make(chan struct{})
	go func() {
		w.trusted(ctx, ".", false)
		close(trusted)
	}()
	waitFor(t, trusted, "a query's trusted while a status call waits for the index")

	close(release)
	released = true
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if st := <-status; st.Files != 1 {
		t.Errorf("status after the update: %d files, want 1", st.Files)
	}
}

// waitFor waits for ch to be closed, failing the test after wait.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("waited %v for %s", wait, what)
	}
}

// waitForStack waits until a goroutine's stack holds fn (blocked in it),
// failing the test after wait.
func waitForStack(t *testing.T, fn, what string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); runtime.Gosched() {
		if strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn) {
			return
		}
	}
	t.Fatalf("waited %v for %s", wait, what)
}
