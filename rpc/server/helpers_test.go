package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// wait is how long a test waits for something that should happen at once;
// reaching it is a failure, never a synchronisation.
const wait = 10 * time.Second

func TestMain(m *testing.M) {
	if p := os.Getenv("RPC_TEST_PEER_SOCKET"); p != "" {
		os.Exit(peerHelper(p))
	}
	testtree.QuickChildExit()
	os.Exit(m.Run())
}

// peerHelper runs in a child process (see TestPeerUID): it sends a ping
// and prints the answer, or EOF if the server hung up without one.
func peerHelper(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		fmt.Println("EOF") // the server may have closed already
		return 0
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err == nil:
		fmt.Print(line)
	case errors.Is(err, io.EOF) || isReset(err):
		fmt.Println("EOF")
	default:
		fmt.Println("read:", err)
		return 1
	}
	return 0
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// testMethods is the fake handler most tests use.
func testMethods() rpc.Methods {
	return rpc.Methods{
		rpc.MethodPing: func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) { return rpc.Pong, nil },
		"echo": func(_ context.Context, p json.RawMessage) (json.RawMessage, *rpc.Error) {
			return p, nil
		},
		tool.MethodGlob: func(_ context.Context, p json.RawMessage) (json.RawMessage, *rpc.Error) {
			tp, err := rpc.DecodeToolParams(p)
			if err != nil {
				return nil, err
			}
			var args map[string]any
			if json.Unmarshal(tp.Args, &args) != nil || args["pattern"] == nil {
				// A tool fault is an envelope, not a protocol error.
				return json.RawMessage(`{"status":"error","data":{},"text":"Error: Missing required parameter 'pattern'.","stats":{"time_ms":0},"context":{"cwd":".","params_input":{}},"error":{"code":"INVALID_PARAM","message":"Missing required parameter 'pattern'."}}`), nil
			}
			return json.RawMessage(`{
  "status": "success",
  "data": {"paths": ["a <b> & c.go"], "truncated": false},
  "text": "Found 1 files matching '*.go' in '.'\n(Scanned 1 items in 0ms)\n\na <b> & c.go",
  "stats": {"time_ms": 0, "matched": 1, "visited": 1},
  "context": {"cwd": ".", "params_input": {"pattern": "*.go"}}
}`), nil
		},
		"panic": func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) { panic("boom") },
		"badjson": func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
			return json.RawMessage(`{nope`), nil
		},
		"fail": func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
			return nil, &rpc.Error{Code: -32000, Message: "no <such> root", Data: json.RawMessage(`{"root":"/x"}`)}
		},
	}
}

// testServer is a server on a socket in a temporary directory, stopped
// and waited for at the end of the test.
type testServer struct {
	path   string
	cancel context.CancelFunc
	errc   chan error
	unlock func()
}

func startServer(t testing.TB, h rpc.Handler, configure func(*Server)) *testServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "indexd.sock")
	ln, unlock, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: h}
	if configure != nil {
		configure(srv)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{path: path, cancel: cancel, errc: make(chan error, 1), unlock: unlock}
	go func() { ts.errc <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { ts.close(t) })
	return ts
}

// close stops the server and releases its lock (idempotent).
func (ts *testServer) close(t testing.TB) {
	t.Helper()
	ts.stop(t)
	ts.unlock()
}

// stop cancels Serve and waits for it to return (idempotent).
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	ts.cancel()
	select {
	case err, ok := <-ts.errc:
		if ok {
			close(ts.errc)
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		}
	case <-time.After(wait):
		buf := make([]byte, 1<<20)
		t.Fatalf("Serve did not return after cancel; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// rawClient speaks the protocol by hand.
type rawClient struct {
	t testing.TB
	c *net.UnixConn
	r *bufio.Reader
}

func dialRaw(t testing.TB, path string) *rawClient {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c.(*net.UnixConn), r: bufio.NewReader(c)}
}

func (rc *rawClient) send(lines ...string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, strings.Join(lines, "\n")+"\n"); err != nil {
		rc.t.Fatal(err)
	}
}

// reply is a decoded response line.
type reply struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *rpc.Error
	line   string
}

// recv reads one response and checks its shape.
func (rc *rawClient) recv() reply {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(wait))
	line, err := rc.r.ReadString('\n')
	if err != nil {
		rc.t.Fatalf("reading a response: %v (got %q)", err, line)
	}
	var m map[string]json.RawMessage
	// encoding/json accepts invalid UTF-8; JSON text must be UTF-8.
	if err := json.Unmarshal([]byte(line), &m); err != nil || !utf8.ValidString(line) {
		rc.t.Fatalf("response is not a JSON object in UTF-8: %q", line)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		rc.t.Errorf("response without jsonrpc 2.0: %q", line)
	}
	r := reply{ID: m["id"], Result: m["result"], line: line}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if hasResult == hasError || r.ID == nil || len(m) != 3 {
		rc.t.Errorf("malformed response: %q", line)
	}
	if hasError {
		r.Error = new(rpc.Error)
		if err := json.Unmarshal(m["error"], r.Error); err != nil {
			rc.t.Errorf("malformed error: %q", line)
		}
	}
	return r
}

// expectEOF reads until the server closes the connection; any response
// is a failure.
func (rc *rawClient) expectEOF() {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(wait))
	line, err := rc.r.ReadString('\n')
	if err == nil || line != "" {
		rc.t.Fatalf("got %q, want the connection closed", line)
	}
	if !errors.Is(err, io.EOF) && !isReset(err) {
		rc.t.Fatalf("got %v, want the connection closed", err)
	}
}

func (rc *rawClient) ping() {
	rc.t.Helper()
	rc.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := rc.recv(); string(r.ID) != `"p"` || string(r.Result) != `"pong"` {
		rc.t.Fatalf("ping: %s", r.line)
	}
}

// recvSignal waits for a value on ch, failing after wait.
func recvSignal[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// countFDs returns the number of this process's open file descriptors.
func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// notListening reports whether a Dial error means no server is there: no
// socket file, or one nobody listens on.
func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
