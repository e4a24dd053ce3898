package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
)

// wait bounds every wait in these tests; nothing sleeps.
const wait = 30 * time.Second

// socketPath returns a socket path in a new private directory, short
// enough for bind whatever the test's name.
func socketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "indexd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "indexd.sock")
}

// The fixture writers every test here uses.
var (
	writeTree = testtree.Write
	writeFile = testtree.File
)

// testDaemon is Run in a goroutine of the test, with a client.
type testDaemon struct {
	t      testing.TB
	cfg    Config
	cancel context.CancelFunc
	errc   chan error // Run's result
	c      *rpc.Client
	once   sync.Once
	err    error
}

// startDaemon runs Run with cfg (a temporary socket and state directory
// unless set) and connects to it. The daemon is stopped at the end of the
// test.
func startDaemon(t testing.TB, cfg Config) *testDaemon {
	t.Helper()
	if cfg.SocketPath == "" {
		cfg.SocketPath = socketPath(t)
	}
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{t: t, cfg: cfg, cancel: cancel, errc: make(chan error, 1)}
	go func() { td.errc <- Run(ctx, cfg) }()
	td.c = dialDaemon(t, cfg.SocketPath)
	t.Cleanup(func() { td.stop() })
	return td
}

// dialDaemon connects to a daemon that is starting, waiting for it.
func dialDaemon(t testing.TB, socket string) *rpc.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := rpc.EnsureDaemon(ctx, socket, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stop cancels Run, waits for it and returns its error (idempotent).
func (td *testDaemon) stop() error {
	td.t.Helper()
	td.once.Do(func() {
		td.cancel()
		td.err = td.waitRun()
		td.c.Close()
	})
	return td.err
}

// waitRun waits for Run to return.
func (td *testDaemon) waitRun() error {
	td.t.Helper()
	select {
	case err := <-td.errc:
		return err
	case <-time.After(wait):
		buf := make([]byte, 1<<20)
		td.t.Fatalf("Run did not return; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		return nil
	}
}

// call calls method and fails the test on any error.
func (td *testDaemon) call(method string, params any) json.RawMessage {
	td.t.Helper()
	res, err := td.callErr(method, params)
	if err != nil {
		td.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (td *testDaemon) callErr(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var res json.RawMessage
	err := td.c.Call(ctx, method, params, &res)
	return res, err
}

// answer is a decoded envelope with its bytes.
type answer struct {
	envelope.Raw
	js   json.RawMessage
	data struct {
		envelope.Fallback
		Paths   []string          `json:"paths"`
		Matches []json.RawMessage `json:"matches"`
		Entries []json.RawMessage `json:"entries"`
	}
}

// query calls a tool method on root and checks that the result is a
// valid envelope.
func (td *testDaemon) query(method, root, args string) answer {
	td.t.Helper()
	return decodeAnswer(td.t, td.call(method, rpc.ToolParams{Root: root, Args: json.RawMessage(args)}))
}

func decodeAnswer(t testing.TB, js json.RawMessage) answer {
	t.Helper()
	envelopetest.Validate(t, js)
	a := answer{js: js}
	if err := json.Unmarshal(js, &a.Raw); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if err := json.Unmarshal(a.Raw.Data, &a.data); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	return a
}

// walked answers a query in this process by the walk, for comparison.
func walked(t testing.TB, method, root, args string) answer {
	t.Helper()
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := rpc.ToolForMethod(method)
	js, err := query.NewDirect(ws).Run(context.Background(), tool, "", json.RawMessage(args)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return decodeAnswer(t, js)
}

// status calls status (for one root if root is not "").
func (td *testDaemon) status(root string) rpc.Status {
	td.t.Helper()
	var params any
	if root != "" {
		params = rpc.RootParams{Root: root}
	}
	var st rpc.Status
	if err := json.Unmarshal(td.call(rpc.MethodStatus, params), &st); err != nil {
		td.t.Fatal(err)
	}
	return st
}

// index calls index for root.
func (td *testDaemon) index(root string, wait bool) rpc.RootStatus {
	td.t.Helper()
	var rs rpc.RootStatus
	if err := json.Unmarshal(td.call(rpc.MethodIndex, rpc.RootParams{Root: root, Wait: wait}), &rs); err != nil {
		td.t.Fatal(err)
	}
	return rs
}

// rpcCode returns the JSON-RPC error code of err, 0 if it is not one.
func rpcCode(err error) int {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// gate is a beforeOpen hook that holds every build until released.
type gate struct {
	entered chan string   // receives the root of each build that reached the gate
	release chan struct{} // closed to let builds through
}

func newGate() *gate {
	return &gate{entered: make(chan string, 16), release: make(chan struct{})}
}

func (g *gate) hook(ctx context.Context, root string) error {
	g.entered <- root
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recv waits for a value on ch.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// logRecorder is an slog.Handler keeping the messages logged.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, msg) {
			n++
		}
	}
	return n
}

// settle yields until cond holds or the deadline passes, and reports
// whether it held.
func settle(cond func() bool) bool {
	end := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// openFDs counts this process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// closedChan is a channel that is always ready: the Ready of test
// Fresheners that have nothing to catch up.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
