package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

func TestPing(t *testing.T) {
	t.Parallel()
	ts := startServer(t, testMethods(), nil)
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if r := rc.recv(); r.line != `{"jsonrpc":"2.0","id":1,"result":"pong"}`+"\n" {
		t.Errorf("ping: %q", r.line)
	}

	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopeResult(t *testing.T) {
	t.Parallel()
	ts := startServer(t, testMethods(), nil)
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":"q1","method":"glob","params":{"root":"/w","args":{"pattern":"*.go"}}}`)
	r := rc.recv()
	if string(r.ID) != `"q1"` || r.Error != nil {
		t.Fatalf("glob: %q", r.line)
	}
	// The handler's indented JSON arrives compact, on one line, with
	// nothing HTML-escaped.
	want := `{"status":"success","data":{"paths":["a <b> & c.go"],"truncated":false},"text":"Found 1 files matching '*.go' in '.'\n(Scanned 1 items in 0ms)\n\na <b> & c.go","stats":{"time_ms":0,"matched":1,"visited":1},"context":{"cwd":".","params_input":{"pattern":"*.go"}}}`
	if string(r.Result) != want {
		t.Errorf("result\n got  %s\n want %s", r.Result, want)
	}

	// A tool fault is an envelope in result, not a JSON-RPC error.
	rc.send(`{"jsonrpc":"2.0","id":2,"method":"glob","params":{"root":"/w","args":{}}}`)
	r = rc.recv()
	var env struct {
		Status string
		Error  struct{ Code string }
	}
	if r.Error != nil || json.Unmarshal(r.Result, &env) != nil || env.Status != "error" || env.Error.Code != "INVALID_PARAM" {
		t.Errorf("tool fault: %q", r.line)
	}

	// The same through the client.
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res json.RawMessage
	if err := c.Call(context.Background(), tool.MethodGlob, rpc.ToolParams{Root: "/w", Args: json.RawMessage(`{"pattern":"*.go"}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if string(res) != want {
		t.Errorf("client result\n got  %s\n want %s", res, want)
	}
	// An error response comes back as *Error, data included.
	err = c.Call(context.Background(), "fail", nil, &res)
	var rerr *rpc.Error
	if !errors.As(err, &rerr) || rerr.Code != -32000 || rerr.Message != "no <such> root" || string(rerr.Data) != `{"root":"/x"}` {
		t.Errorf("fail: %v", err)
	}
}

// blockingMethods returns a handler whose "slow" method signals started
// and then waits for release (answering "released") or for its context
// (signalling cancelled and answering an error).
func blockingMethods(started chan<- string, release <-chan struct{}, cancelled chan<- string) rpc.Methods {
	m := testMethods()
	m["slow"] = func(ctx context.Context, p json.RawMessage) (json.RawMessage, *rpc.Error) {
		started <- string(p)
		select {
		case <-release:
			return json.RawMessage(`"released"`), nil
		case <-ctx.Done():
			if cancelled != nil {
				cancelled <- string(p)
			}
			return nil, rpc.Errorf(rpc.CodeInternalError, "cancelled")
		}
	}
	return m
}

func TestPipelinedOutOfOrder(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	ts := startServer(t, blockingMethods(started, release, nil), nil)
	rc := dialRaw(t, ts.path)
	// Both requests in one write: request 1 blocks until request 2 has
	// been answered.
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`, `{"jsonrpc":"2.0","id":2,"method":"echo","params":["two"]}`)
	recvSignal(t, started, "request 1 to start")
	if r := rc.recv(); string(r.ID) != "2" || string(r.Result) != `["two"]` {
		t.Fatalf("first response: %q, want id 2", r.line)
	}
	close(release)
	if r := rc.recv(); string(r.ID) != "1" || string(r.Result) != `"released"` {
		t.Fatalf("second response: %q, want id 1", r.line)
	}

	// The client matches out-of-order answers too.
	release2 := make(chan struct{})
	started2 := make(chan string, 1)
	ts2 := startServer(t, blockingMethods(started2, release2, nil), nil)
	c, err := rpc.Dial(context.Background(), ts2.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	slow := make(chan error, 1)
	go func() {
		var res json.RawMessage
		err := c.Call(context.Background(), "slow", nil, &res)
		if err == nil && string(res) != `"released"` {
			err = fmt.Errorf("slow result %s", res)
		}
		slow <- err
	}()
	recvSignal(t, started2, "the slow call to start")
	var res json.RawMessage
	if err := c.Call(context.Background(), "echo", []int{7}, &res); err != nil || string(res) != "[7]" {
		t.Fatalf("echo while slow is in flight: %s, %v", res, err)
	}
	close(release2)
	if err := recvSignal(t, slow, "the slow call"); err != nil {
		t.Fatal(err)
	}
}

func TestNotification(t *testing.T) {
	t.Parallel()
	noted := make(chan string, 2)
	m := testMethods()
	m["note"] = func(_ context.Context, p json.RawMessage) (json.RawMessage, *rpc.Error) {
		noted <- string(p)
		return json.RawMessage(`"ignored"`), nil
	}
	ts := startServer(t, m, nil)
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","method":"note","params":{"n":1}}`,
		`{"jsonrpc":"2.0","method":"no-such-method"}`, // unknown: still no answer
		`{"jsonrpc":"2.0","method":"panic"}`,          // fails: still no answer
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := recvSignal(t, noted, "the notification"); got != `{"n":1}` {
		t.Errorf("notification params %s", got)
	}
	if r := rc.recv(); string(r.ID) != "7" {
		t.Fatalf("got %q, want only the ping's answer", r.line)
	}
	// The client notifies too.
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Notify(context.Background(), "note", map[string]int{"n": 2}); err != nil {
		t.Fatal(err)
	}
	if got := recvSignal(t, noted, "the client's notification"); got != `{"n":2}` {
		t.Errorf("notification params %s", got)
	}
	// Half-closing makes the server finish and hang up: nothing else
	// was sent back.
	rc.c.CloseWrite()
	rc.expectEOF()
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ts := startServer(t, testMethods(), nil)
	rc := dialRaw(t, ts.path)
	tests := []struct {
		line    string
		code    int
		id      string
		message string // a part of the message
	}{
		{`{`, rpc.CodeParseError, "null", "invalid JSON"},
		{`not json`, rpc.CodeParseError, "null", "invalid JSON"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} x`, rpc.CodeParseError, "null", "invalid JSON"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, rpc.CodeInvalidRequest, "null", "batch requests are not supported"},
		{`[]`, rpc.CodeInvalidRequest, "null", "batch"},
		{`"ping"`, rpc.CodeInvalidRequest, "null", "not a JSON object"},
		{`42`, rpc.CodeInvalidRequest, "null", "not a JSON object"},
		{`null`, rpc.CodeInvalidRequest, "null", "not a JSON object"},
		{`{}`, rpc.CodeInvalidRequest, "null", "jsonrpc"},
		{`{"id":1,"method":"ping"}`, rpc.CodeInvalidRequest, "1", `jsonrpc must be "2.0"`},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, rpc.CodeInvalidRequest, "1", "jsonrpc"},
		{`{"jsonrpc":2.0,"id":1,"method":"ping"}`, rpc.CodeInvalidRequest, "1", "jsonrpc"},
		{`{"jsonrpc":"2.0","id":1}`, rpc.CodeInvalidRequest, "1", "missing method"},
		{`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, rpc.CodeInvalidRequest, "1", "missing method"},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, rpc.CodeInvalidRequest, "1", "method must be a string"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, rpc.CodeInvalidRequest, "null", "id must be"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, rpc.CodeInvalidRequest, "null", "id must be"},
		// An id that is not UTF-8 cannot be echoed in valid JSON.
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}", rpc.CodeInvalidRequest, "null", "id must be valid UTF-8"},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"nope\"}", rpc.CodeInvalidRequest, "null", "id must be valid UTF-8"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, rpc.CodeInvalidRequest, "1", "params must be an object or an array"},
		{`{"jsonrpc":"2.0","id":1,"method":"nope"}`, rpc.CodeMethodNotFound, "1", `method not found: "nope"`},
		{`{"jsonrpc":"2.0","id":1,"method":"glob"}`, rpc.CodeInvalidParams, "1", "missing params"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":null}`, rpc.CodeInvalidParams, "1", "missing params"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":[1]}`, rpc.CodeInvalidParams, "1", "params must be an object"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":{}}`, rpc.CodeInvalidParams, "1", "missing root"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":{"root":5}}`, rpc.CodeInvalidParams, "1", "root must be a string, got number"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":{"root":"rel/dir"}}`, rpc.CodeInvalidParams, "1", "root must be an absolute path"},
		{`{"jsonrpc":"2.0","id":1,"method":"glob","params":{"root":"/w","cwd":["x"]}}`, rpc.CodeInvalidParams, "1", "cwd must be a string, got array"},
		{`{"jsonrpc":"2.0","id":"abc","method":"panic"}`, rpc.CodeInternalError, `"abc"`, "internal error: boom"},
		{`{"jsonrpc":"2.0","id":-1.5,"method":"badjson"}`, rpc.CodeInternalError, "-1.5", "invalid JSON"},
	}
	for _, tc := range tests {
		rc.send(tc.line)
		r := rc.recv()
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id || !strings.Contains(r.Error.Message, tc.message) {
			t.Errorf("%s\n got  %s want code %d, id %s, message with %q", tc.line, r.line, tc.code, tc.id, tc.message)
		}
		rc.ping() // still serving
	}

	// Odd but valid requests.
	rc.send(`  {"jsonrpc":"2.0","id":null,"method":"ping","extra":1}  ` + "\r")
	if r := rc.recv(); string(r.ID) != "null" || string(r.Result) != `"pong"` {
		t.Errorf("id null: %q", r.line)
	}
	// Invalid UTF-8 elsewhere reaches the handler; what it echoes is
	// answered as U+FFFD (recv checks that every answer is UTF-8).
	rc.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[\"a\xff\xfeb\", \"\xe2\x82\"]}")
	if r := rc.recv(); string(r.ID) != "2" || string(r.Result) != `["a\ufffdb", "\ufffd"]` {
		t.Errorf("params with invalid UTF-8: %q", r.line)
	}
	rc.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\xff\"}")
	if r := rc.recv(); string(r.ID) != "3" || r.Error == nil || r.Error.Code != rpc.CodeMethodNotFound {
		t.Errorf("method with invalid UTF-8: %q", r.line)
	}
	rc.send("", "   ", `{"jsonrpc":"2.0","id":"\u00e9<&>","method":"echo"}`) // blank lines are skipped
	if r := rc.recv(); string(r.ID) != `"\u00e9<&>"` || string(r.Result) != "null" {
		t.Errorf("echo without params: %q", r.line)
	}
	// A final request without a newline is answered at end of input.
	io.WriteString(rc.c, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	rc.c.CloseWrite()
	if r := rc.recv(); string(r.ID) != "9" {
		t.Errorf("last line without newline: %q", r.line)
	}
	rc.expectEOF()
}

func TestTooLarge(t *testing.T) {
	// Not parallel: it counts the process's allocations, which the
	// package's parallel tests would add to (7 MiB seen once).
	ts := startServer(t, testMethods(), nil)
	rc := dialRaw(t, ts.path)

	// Exactly at the limit: served.
	prefix, suffix := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["`, `"]}`
	pad := strings.Repeat("x", rpc.DefaultMaxRequestSize-len(prefix)-len(suffix))
	rc.send(prefix + pad + suffix)
	if r := rc.recv(); r.Error != nil || len(r.Result) != len(pad)+4 {
		t.Fatalf("request of exactly the limit: %.200s", r.line)
	}
	// One byte over: refused, and the connection goes on.
	rc.send(prefix + pad + "x" + suffix)
	if r := rc.recv(); r.Error == nil || r.Error.Code != rpc.CodeInvalidRequest || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "request too large") {
		t.Fatalf("request one byte over the limit: %.200s", r.line)
	}
	rc.ping()

	// 10 MiB: refused without being held in memory.
	big := bytes.Repeat([]byte("y"), 10<<20)
	big = append(big, '\n')
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	werr := make(chan error, 1)
	go func() {
		_, err := rc.c.Write(big)
		werr <- err
	}()
	r := rc.recv()
	if err := recvSignal(t, werr, "the 10 MiB write"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if r.Error == nil || r.Error.Code != rpc.CodeInvalidRequest || !strings.Contains(r.Error.Message, "request too large (limit 1048576 bytes)") {
		t.Fatalf("10 MiB line: %q", r.line)
	}
	// Buffering the line would allocate at least 10 MiB (more with the
	// doublings of a growing slice); reading it is bounded by the limit.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB while refusing a 10 MiB line", float64(alloc)/(1<<20))
	if alloc > 5<<20 {
		t.Errorf("allocated %d bytes while refusing a 10 MiB line", alloc)
	}
	rc.ping()
	// And the client refuses to send one.
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(context.Background(), "echo", []string{pad + "x"}, nil); err == nil || !strings.Contains(err.Error(), "request too large") {
		t.Errorf("client sent an oversized request: %v", err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestStalledClients(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	var drops atomic.Int32
	dropped := make(chan string, 10)
	ts := startServer(t, blockingMethods(started, release, nil), func(s *Server) {
		s.IdleTimeout = 300 * time.Millisecond
		s.Logf = func(format string, args ...any) {
			drops.Add(1)
			dropped <- fmt.Sprintf(format, args...)
		}
	})

	// A client waiting for a slow answer: never dropped.
	waiting := dialRaw(t, ts.path)
	waiting.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	recvSignal(t, started, "the slow request")

	// Half a line, then nothing.
	half := dialRaw(t, ts.path)
	io.WriteString(half.c, `{"jsonrpc":"2.0","id":1,"meth`)

	// Other clients are served meanwhile.
	for range 3 {
		other := dialRaw(t, ts.path)
		other.ping()
		other.c.Close()
	}
	half.expectEOF()
	if msg := recvSignal(t, dropped, "the log of the drop"); !strings.Contains(msg, "stalled mid-request") {
		t.Errorf("log: %s", msg)
	}

	// A connection that sends nothing is dropped too. Its idle deadline
	// was armed after the waiting client's, so by now the waiting client
	// has outlived its own deadline at least once.
	idle := dialRaw(t, ts.path)
	idle.expectEOF()
	if msg := recvSignal(t, dropped, "the log of the drop"); !strings.Contains(msg, "idle") {
		t.Errorf("log: %s", msg)
	}
	if n := drops.Load(); n != 2 {
		t.Errorf("%d connections dropped, want 2", n)
	}
	close(release)
	if r := waiting.recv(); string(r.Result) != `"released"` {
		t.Errorf("slow answer: %q", r.line)
	}
	// Receiving an answer counts as activity: a request sent right after
	// it is served, however long the wait was.
	waiting.ping()
}

func TestDisconnectCancels(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	cancelled := make(chan string, 1)
	release := make(chan struct{})
	var watching atomic.Pointer[chan struct{}]
	ts := startServer(t, blockingMethods(started, release, cancelled), func(s *Server) {
		s.testHookWatching = func() {
			if ch := watching.Swap(nil); ch != nil {
				close(*ch)
			}
		}
	})

	// Closing the connection cancels the request in flight.
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"slow","params":["a"]}`)
	recvSignal(t, started, "the request")
	rc.c.Close()
	if got := recvSignal(t, cancelled, "the request's cancellation"); got != `["a"]` {
		t.Errorf("cancelled %s", got)
	}

	// Shutting down the write side only (like socat at end of input)
	// does not: the answer still comes.
	w := make(chan struct{})
	watching.Store(&w)
	rc = dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":2,"method":"slow","params":["b"]}`)
	recvSignal(t, started, "the request")
	rc.c.CloseWrite()
	recvSignal(t, w, "the server to see the half-close")
	release <- struct{}{}
	if r := rc.recv(); string(r.ID) != "2" || string(r.Result) != `"released"` {
		t.Errorf("answer after half-close: %q", r.line)
	}
	rc.expectEOF()

	// A half-close followed by a hang-up cancels.
	w = make(chan struct{})
	watching.Store(&w)
	rc = dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":3,"method":"slow","params":["c"]}`)
	recvSignal(t, started, "the request")
	rc.c.CloseWrite()
	recvSignal(t, w, "the server to see the half-close")
	rc.c.Close()
	if got := recvSignal(t, cancelled, "the request's cancellation"); got != `["c"]` {
		t.Errorf("cancelled %s", got)
	}

	// A client that closes with a call in flight gets ErrClosed.
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(context.Background(), "slow", []string{"d"}, nil) }()
	recvSignal(t, started, "the call")
	c.Close()
	if err := recvSignal(t, callErr, "the call to fail"); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("call on a closed client: %v", err)
	}
	if got := recvSignal(t, cancelled, "the call's cancellation"); got != `["d"]` {
		t.Errorf("cancelled %s", got)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("ping on a closed client: %v", err)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	cancelled := make(chan string, 1)
	ts := startServer(t, blockingMethods(started, release, cancelled), func(s *Server) { s.DrainTimeout = -1 })
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// A cancelled call returns the context's error; the client goes on.
	ctx, cancel := context.WithCancel(context.Background())
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(ctx, "slow", []int{1}, nil) }()
	recvSignal(t, started, "the call")
	cancel()
	if err := recvSignal(t, callErr, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	release <- struct{}{} // its answer arrives and is dropped
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), "echo", func() {}, nil); err == nil {
		t.Error("unmarshallable params accepted")
	}
	if err := c.Call(context.Background(), "echo", json.RawMessage(`{"a":`), nil); err == nil {
		t.Error("invalid raw params accepted")
	}

	// The server going away fails the calls in flight and later ones.
	go func() { callErr <- c.Call(context.Background(), "slow", []int{2}, nil) }()
	recvSignal(t, started, "the call")
	ts.stop(t)
	recvSignal(t, cancelled, "the call's cancellation")
	// The cancelled handler's error answer was written before the
	// connection closed.
	var rerr *rpc.Error
	if err := recvSignal(t, callErr, "the call"); !errors.As(err, &rerr) || rerr.Message != "cancelled" {
		t.Errorf("call when the server stops: %v", err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, rpc.ErrConnLost) {
		t.Errorf("ping after the server stopped: %v", err)
	}
	if _, err := rpc.Dial(context.Background(), ts.path); !notListening(err) {
		t.Errorf("dial after the server stopped: %v", err)
	}
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	cancelled := make(chan string, 1)
	ts := startServer(t, blockingMethods(started, release, cancelled), func(s *Server) { s.DrainTimeout = time.Hour })
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	recvSignal(t, started, "the request")
	ts.cancel()
	// The listener closes: new clients are turned away.
	for {
		c, err := net.Dial("unix", ts.path)
		if err != nil {
			break
		}
		c.Close() // accepted before the listener closed; retry
	}
	select {
	case err := <-ts.errc:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}
	close(release)
	if r := rc.recv(); string(r.Result) != `"released"` {
		t.Errorf("answer during drain: %q", r.line)
	}
	rc.expectEOF()
	if err := recvSignal(t, ts.errc, "Serve to return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	close(ts.errc)
	select {
	case p := <-cancelled:
		t.Errorf("request %s cancelled during drain", p)
	default:
	}

	// With a short drain, a request that does not finish is cancelled.
	ts = startServer(t, blockingMethods(started, nil, cancelled), func(s *Server) { s.DrainTimeout = 20 * time.Millisecond })
	rc = dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	recvSignal(t, started, "the request")
	ts.stop(t)
	recvSignal(t, cancelled, "the cancellation")
	if r := rc.recv(); r.Error == nil || r.Error.Message != "cancelled" {
		t.Errorf("answer after drain timeout: %q", r.line)
	}
	rc.expectEOF()
}

func TestConcurrentClients(t *testing.T) {
	const clients, requests, perClientWorkers = 16, 500, 8
	// The baseline, with the network poller already set up.
	if l, err := net.Listen("unix", filepath.Join(t.TempDir(), "warm.sock")); err == nil {
		l.Close()
	}
	baseG, baseFD := runtime.NumGoroutine(), countFDs(t)
	ts := startServer(t, testMethods(), nil)

	var wg sync.WaitGroup
	errs := make(chan error, clients*perClientWorkers)
	for i := range clients {
		c, err := rpc.Dial(context.Background(), ts.path)
		if err != nil {
			t.Fatal(err)
		}
		var next atomic.Int32
		var cwg sync.WaitGroup
		for range perClientWorkers {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				for {
					j := int(next.Add(1))
					if j > requests {
						return
					}
					want := fmt.Sprintf(`{"client":%d,"req":%d,"s":"<%d>"}`, i, j, i*requests+j)
					var res json.RawMessage
					if err := c.Call(context.Background(), "echo", json.RawMessage(want), &res); err != nil {
						errs <- err
						return
					}
					if string(res) != want {
						errs <- fmt.Errorf("sent %s, got %s", want, res)
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cwg.Wait()
			c.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ts.close(t)

	deadline := time.Now().Add(wait)
	for {
		g, fd := runtime.NumGoroutine(), countFDs(t)
		if g <= baseG && fd <= baseFD {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("after Close: %d goroutines (baseline %d), %d fds (baseline %d)\n%s", g, baseG, fd, baseFD, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Server{}).Serve(context.Background(), ln); err == nil {
		t.Error("Serve without a handler")
	}
	// Accept failing for good ends Serve with its error.
	ln.Close()
	if err := (&Server{Handler: testMethods()}).Serve(context.Background(), ln); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve on a closed listener: %v", err)
	}
}

// TestPeerUID connects as another user: the server hangs up without an
// answer. The same helper as the current user gets one.
func TestPeerUID(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	dir := t.TempDir()
	// The other user must reach dir: open it and its parent (the test's
	// own temporary directory).
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary, where the other user can run it.
	helper := filepath.Join(dir, "helper")
	if err := copyFile(exe, helper); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "open.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(helper, 0o755)
	var rejected atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- (&Server{Handler: testMethods(), Logf: func(f string, a ...any) {
			if strings.Contains(fmt.Sprintf(f, a...), "peer runs as uid 65534") {
				rejected.Add(1)
			}
		}}).Serve(ctx, ln)
	}()
	defer func() {
		cancel()
		recvSignal(t, errc, "Serve to return")
	}()

	run := func(asNobody bool) string {
		cmd := exec.Command(helper)
		cmd.Env = append(os.Environ(), "RPC_TEST_PEER_SOCKET="+path)
		if asNobody {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out := run(true); out != "EOF" {
		t.Errorf("another user got %q, want the connection closed", out)
	}
	if n := rejected.Load(); n != 1 {
		t.Errorf("%d rejections logged, want 1", n)
	}
	if out := run(false); out != `{"jsonrpc":"2.0","id":1,"result":"pong"}` {
		t.Errorf("same user got %q", out)
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// TestSocatExample runs the package documentation's example against a
// test server (skipped without socat).
func TestSocatExample(t *testing.T) {
	t.Parallel()
	socat, err := exec.LookPath("socat")
	if err != nil {
		t.Skip("no socat")
	}
	ts := startServer(t, testMethods(), nil)
	cmd := exec.Command("sh", "-c", `echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | `+socat+` - UNIX-CONNECT:$SOCK`)
	cmd.Env = append(os.Environ(), "SOCK="+ts.path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if string(out) != `{"jsonrpc":"2.0","id":1,"result":"pong"}`+"\n" {
		t.Errorf("socat printed %q", out)
	}
}

// A client that never reads its answers does not hold up shutdown for
// the write timeout: once requests are cancelled, writes get a short
// deadline.
func TestShutdownWithStuckReader(t *testing.T) {
	t.Parallel()
	handled := make(chan struct{}, 8)
	m := testMethods()
	big := json.RawMessage(`"` + strings.Repeat("z", 1<<20) + `"`)
	m["big"] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
		handled <- struct{}{}
		return big, nil
	}
	ts := startServer(t, m, func(s *Server) { s.DrainTimeout = 10 * time.Millisecond })
	rc := dialRaw(t, ts.path)
	for i := range 4 {
		rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"big"}`, i))
	}
	for range 4 {
		recvSignal(t, handled, "the requests to be handled")
	}
	// 4 MiB of answers cannot all fit in the socket's buffers: at least
	// one write is blocked now or soon.
	start := time.Now()
	ts.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Serve took %v to return", d)
	}
}

// A result is written as it is when it is valid JSON on one line, and
// compacted when it holds a newline; one that is not valid JSON is an
// internal error; invalid UTF-8 becomes U+FFFD either way.
func TestAppendResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ result, want string }{
		{`{"a": 1, "b": [1, 2]}`, `{"jsonrpc":"2.0","id":7,"result":{"a": 1, "b": [1, 2]}}`},
		{"{\"a\": 1,\n \"b\":\t[1,\r\n2]}\n", `{"jsonrpc":"2.0","id":7,"result":{"a":1,"b":[1,2]}}`},
		{"[\"x\xff\",\n\"\\n\"]", `{"jsonrpc":"2.0","id":7,"result":["x\ufffd","\n"]}`},
		{"\"x\xff\"", `{"jsonrpc":"2.0","id":7,"result":"x\ufffd"}`},
		{``, `{"jsonrpc":"2.0","id":7,"result":null}`},
		{`{"a":}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"internal error: the handler returned invalid JSON"}}`},
		{"[1,\n", `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"internal error: the handler returned invalid JSON"}}`},
	} {
		if got := string(appendResult(nil, json.RawMessage("7"), json.RawMessage(tc.result))); got != tc.want+"\n" {
			t.Errorf("appendResult(%q) = %q, want %q", tc.result, got, tc.want+"\n")
		}
	}
}
