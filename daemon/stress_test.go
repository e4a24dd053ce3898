package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// 16 clients × 500 mixed queries (and status/index calls; 100 under
// -race, testtree.RaceEnabled) while files churn: every answer is a
// valid envelope, none an error; once Run has returned, the goroutines
// and descriptors are back to where they were.
func TestConcurrentClients(t *testing.T) {
	clients, perClient := 16, 500
	if testtree.RaceEnabled {
		perClient = 100
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	files := map[string]string{"churn/keep.txt": "keep\n"}
	for k, v := range sample {
		files[k] = v
	}
	for i := range 300 {
		files[fmt.Sprintf("pkg%d/file%d.go", i%12, i)] = fmt.Sprintf("package pkg%d\n\nfunc F%d() int { return %d }\n", i%12, i, i)
	}
	root := writeTree(t, files)

	cfg := Config{SocketPath: socketPath(t), StateDir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg) }()
	conns := make([]*rpc.Client, clients)
	for i := range conns {
		conns[i] = dialDaemon(t, cfg.SocketPath)
	}

	// The churner rewrites and removes a bounded set of files until the
	// clients are done.
	stop, churned := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(churned)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(root, "churn", fmt.Sprintf("c%d.go", i%20))
			if i%3 == 2 {
				os.Remove(p)
			} else {
				os.WriteFile(p, []byte(fmt.Sprintf("package churn\n// round %d\nfunc C() {}\n", i)), 0o644)
			}
		}
	}()

	mixed := []struct{ method, args string }{
		{tool.MethodGlob, `{"pattern":"**/*.go"}`},
		{tool.MethodGrep, `{"pattern":"func F1\\d+","limit":5}`},
		{tool.MethodGrep, `{"pattern":"round","path":"churn"}`},
		{tool.MethodLS, `{"path":"churn"}`},
		{tool.MethodGlob, `{"pattern":"*.go","path":"churn","sort":"recent"}`},
		{tool.MethodGrep, `{"pattern":"return 7","output_mode":"count"}`},
		{tool.MethodLS, `{}`},
		{rpc.MethodStatus, ``},
		{rpc.MethodIndex, ``},
	}
	var wg sync.WaitGroup
	for c, cl := range conns {
		wg.Go(func() {
			defer cl.Close()
			for i := range perClient {
				q := mixed[(c+i)%len(mixed)]
				var params any = rpc.ToolParams{Root: root, Args: json.RawMessage(q.args)}
				switch q.method {
				case rpc.MethodStatus:
					params = nil
				case rpc.MethodIndex:
					params = rpc.RootParams{Root: root}
				}
				var res json.RawMessage
				if err := cl.Call(ctx, q.method, params, &res); err != nil {
					t.Errorf("client %d, %s %s: %v", c, q.method, q.args, err)
					return
				}
				if _, ok := rpc.ToolForMethod(q.method); !ok {
					continue
				}
				for _, p := range envelopetest.Problems(res) {
					t.Errorf("client %d, %s %s: %s\n%s", c, q.method, q.args, p, res)
				}
				var env envelope.Raw
				if err := json.Unmarshal(res, &env); err != nil || env.Status == envelope.StatusError {
					t.Errorf("client %d, %s %s: %v %s", c, q.method, q.args, err, res)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-churned

	cancel()
	if err := recv(t, errc, "Run to return"); err != nil {
		t.Errorf("Run: %v", err)
	}
	if !settle(func() bool { return runtime.NumGoroutine() <= goroutines }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Run, %d before:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
	}
	if !settle(func() bool { return openFDs(t) <= fds }) {
		t.Errorf("%d descriptors open after Run, %d before", openFDs(t), fds)
	}
}

// When Run returns, the block-filter builder has stopped too: a daemon
// stopped just after queries that asked for filters of large files does
// not go on reading them (nor leave its goroutine) once it is gone. Its
// block cache has no racy window: the files, written a moment ago (a
// file's ctime cannot be set back), get filters all the same.
func TestRunStopsTheBlockBuilder(t *testing.T) {
	files := map[string]string{}
	line := "filler text of a large file, and a needle on every line\n"
	for i := range 24 {
		files[fmt.Sprintf("big/f%02d.txt", i)] = strings.Repeat(line, (300<<10)/len(line))
	}
	root := writeTree(t, files)
	cfg := Config{SocketPath: socketPath(t), StateDir: t.TempDir(), hooks: &testHooks{blocks: index.BlockCacheOptions{NoRacyWindow: true}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg) }()
	c := dialDaemon(t, cfg.SocketPath)
	defer c.Close()
	if err := c.Call(ctx, rpc.MethodIndex, rpc.RootParams{Root: root, Wait: true}, nil); err != nil {
		t.Fatal(err)
	}
	var res json.RawMessage
	args := json.RawMessage(`{"pattern":"needle","output_mode":"count","limit":1000}`)
	if err := c.Call(ctx, tool.MethodGrep, rpc.ToolParams{Root: root, Args: args}, &res); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := recv(t, errc, "Run to return"); err != nil {
		t.Errorf("Run: %v", err)
	}
	// Nothing is read once Run has returned: the builder's goroutine may
	// still be on its way out (Close waits for its work, not its exit),
	// but it reads no further file.
	read := readBytes(t)
	building := func() bool {
		buf := make([]byte, 1<<20)
		return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "BlockCache).build")
	}
	if !settle(func() bool { return !building() }) {
		t.Errorf("the block builder still runs %v after Run returned", wait)
	}
	if n := readBytes(t) - read; n > 64<<10 {
		t.Errorf("%d bytes read after Run returned", n)
	}
}

// readBytes is the number of bytes this process has read (rchar of
// /proc/self/io, which counts its own reads of that file too: a few
// hundred bytes).
func readBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no rchar in /proc/self/io:\n%s", b)
	return 0
}
