package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/clock"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/rpc/server"
	"github.com/indexd/indexd/tool"
)

// sample is a small tree with a hidden and an ignored directory.
var sample = map[string]string{
	"go.mod":                    "module sample\n",
	"main.go":                   "package main\n\nfunc main() {}\n",
	"lib/lib.go":                "package lib\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
	"lib/lib_test.go":           "package lib\n",
	"docs/readme.md":            "# Sample\nfunc in prose\n",
	".hidden/secret.go":         "package hidden\nfunc main() {}\n",
	"node_modules/dep/index.js": "function main() {}\n",
}

// sampleFiles is how many files the index of sample holds: hidden ones
// included, ignored ones not.
const sampleFiles = 6

// sampleQueries are valid queries on sample, every tool and mode.
var sampleQueries = []struct{ method, args string }{
	{tool.MethodGlob, `{"pattern":"**/*.go"}`},
	{tool.MethodGlob, `{"pattern":"*.md","path":"docs"}`},
	{tool.MethodGlob, `{"pattern":"**/*.go","include_hidden":true}`},
	{tool.MethodGrep, `{"pattern":"func"}`},
	{tool.MethodGrep, `{"pattern":"HELLO","include":"*.go","output_mode":"files_with_matches"}`},
	{tool.MethodGrep, `{"pattern":"func","output_mode":"count","path":"lib"}`},
	{tool.MethodGrep, `{"pattern":"no such text anywhere"}`},
	{tool.MethodLS, `{}`},
	{tool.MethodLS, `{"path":"lib"}`},
}

func TestPing(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	if res := td.call(rpc.MethodPing, nil); !bytes.Equal(res, rpc.Pong) {
		t.Errorf("ping: %s", res)
	}
}

// While the index builds, the walk answers and says so; once `index`
// with wait returns, the index answers exactly what the walk does.
func TestBuildingThenReady(t *testing.T) {
	t.Parallel()
	g := newGate()
	td := startDaemon(t, Config{hooks: &testHooks{beforeOpen: g.hook}})
	root := writeTree(t, sample)

	for i, q := range sampleQueries {
		a := td.query(q.method, root, q.args)
		if i == 0 {
			if got := recv(t, g.entered, "the build to start"); got != root {
				t.Fatalf("building %q, want %q", got, root)
			}
		}
		want := walked(t, q.method, root, q.args)
		switch q.method {
		case tool.MethodLS:
			if a.data.Used || a.Status != want.Status {
				t.Errorf("%s %s while building: %s", q.method, q.args, a.js)
			}
		default:
			if !a.data.Used || a.data.Reason != envelope.ReasonIndexBuilding {
				t.Errorf("%s %s while building: no fallback index_building: %s", q.method, q.args, a.js)
			}
			if q.method == tool.MethodGrep && a.Status != envelope.StatusPartial {
				t.Errorf("%s %s while building: status %s, want partial (fallback)", q.method, q.args, a.Status)
			}
			if q.method == tool.MethodGlob && a.Status != want.Status {
				t.Errorf("%s %s while building: status %s, want %s", q.method, q.args, a.Status, want.Status)
			}
		}
		if !equalStrings(a.data.Paths, want.data.Paths) || !equalRaw(a.data.Matches, want.data.Matches) || !equalRaw(a.data.Entries, want.data.Entries) {
			t.Errorf("%s %s while building differs from the walk:\n got %s\nwant %s", q.method, q.args, a.Data, want.Data)
		}
	}
	st := td.status("")
	if len(st.Roots) != 1 || st.Roots[0].Root != root || st.Roots[0].State != rpc.StateBuilding {
		t.Fatalf("status while building: %+v", st)
	}

	close(g.release)
	rs := td.index(root, true)
	if rs.State != rpc.StateReady || rs.Files != sampleFiles || rs.Reopened || rs.IndexBytes == 0 || rs.Progress != nil {
		t.Fatalf("index --wait: %+v", rs)
	}
	for _, q := range sampleQueries {
		a := td.query(q.method, root, q.args)
		want := walked(t, q.method, root, q.args)
		if a.data.Used {
			t.Errorf("%s %s when ready: fallback %s", q.method, q.args, a.data.Reason)
		}
		// Only the index counts candidates.
		if q.method == tool.MethodGrep && !strings.Contains(string(a.Stats), `"candidates":`) {
			t.Errorf("%s %s when ready: not answered by the index: %s", q.method, q.args, a.Stats)
		}
		if a.Status != want.Status || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("%s %s: the index differs from the walk:\n got %s %s\nwant %s %s", q.method, q.args, a.Status, a.Data, want.Status, want.Data)
		}
	}
	st = td.status(root)
	if len(st.Roots) != 1 {
		t.Fatalf("status of the root: %+v", st)
	}
	r := st.Roots[0]
	wantQueries := int64(2 * len(sampleQueries))
	if r.State != rpc.StateReady || r.Files != sampleFiles || r.IndexBytes == 0 || r.Queries != wantQueries || st.Queries != wantQueries {
		t.Errorf("status: %+v, root %+v", st, r)
	}
	if st.PID != os.Getpid() || st.Socket != td.cfg.SocketPath || st.StateDir != td.cfg.StateDir {
		t.Errorf("status: %+v", st)
	}
	if fi, err := os.Stat(r.DB); err != nil || fi.Size() != r.IndexBytes || filepath.Base(r.DB) != DBName(root) {
		t.Errorf("DB %s: %v (index_bytes %d)", r.DB, err, r.IndexBytes)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

func equalRaw(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// A root given through a symlink is the same root; status names the real
// path.
func TestRootThroughSymlink(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := writeTree(t, sample)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	td.index(link, true)
	a := td.query(tool.MethodGlob, link, `{"pattern":"**/*.go"}`)
	if a.data.Used || len(a.data.Paths) != 3 {
		t.Errorf("glob through the link: %s", a.js)
	}
	st := td.status("")
	if len(st.Roots) != 1 || st.Roots[0].Root != root {
		t.Errorf("status: %+v", st.Roots)
	}
}

// A bad root is an error envelope for the tools and an invalid-params
// error for the other methods.
func TestBadRoots(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	file := filepath.Join(dir, "file")
	writeFile(t, dir, "file", "x")

	for _, tc := range []struct {
		root string
		code envelope.Code
	}{
		{missing, envelope.CodeNotFound},
		{file, envelope.CodeInvalidParam},
	} {
		for _, m := range []string{tool.MethodGlob, tool.MethodGrep, tool.MethodLS} {
			args := `{"pattern":"x"}`
			a := td.query(m, tc.root, args)
			if a.Status != envelope.StatusError || a.Error == nil || a.Error.Code != tc.code || !strings.Contains(a.Error.Message, tc.root) {
				t.Errorf("%s on %s: %s", m, tc.root, a.js)
			}
			if !strings.Contains(string(a.Context), `"params_input":`+args) {
				t.Errorf("%s on %s: context %s", m, tc.root, a.Context)
			}
		}
		for _, m := range []string{rpc.MethodIndex, rpc.MethodStatus} {
			if _, err := td.callErr(m, rpc.RootParams{Root: tc.root}); rpcCode(err) != rpc.CodeInvalidParams {
				t.Errorf("%s on %s: %v", m, tc.root, err)
			}
		}
	}
	for _, m := range []string{tool.MethodGlob, rpc.MethodIndex, rpc.MethodForget, rpc.MethodStatus} {
		if _, err := td.callErr(m, map[string]string{"root": "relative/path"}); rpcCode(err) != rpc.CodeInvalidParams {
			t.Errorf("%s with a relative root: %v", m, err)
		}
	}
	for _, m := range []string{rpc.MethodIndex, rpc.MethodForget} {
		if _, err := td.callErr(m, nil); rpcCode(err) != rpc.CodeInvalidParams {
			t.Errorf("%s without params: %v", m, err)
		}
	}
	if st := td.status(""); len(st.Roots) != 0 {
		t.Errorf("bad roots were added: %+v", st.Roots)
	}
}

// A call refused for its arguments or its path (outside the root,
// missing, not a directory; a bad pattern or parameter) serves no root:
// nothing is added, indexed or watched. Only a call that runs does.
func TestRefusedCallAddsNoRoot(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := writeTree(t, sample)
	outside := t.TempDir()
	for _, c := range []struct{ method, args string }{
		{tool.MethodGrep, `{"pattern":"root","path":"` + outside + `"}`},
		{tool.MethodGrep, `{"pattern":"root","path":"../.."}`},
		{tool.MethodGlob, `{"pattern":"*","path":"missing"}`},
		{tool.MethodGlob, `{"pattern":"*","path":"main.go"}`},
		{tool.MethodLS, `{"path":"` + outside + `"}`},
		{tool.MethodGrep, `{"pattern":"("}`},
		{tool.MethodGrep, `{"pattern":"x","limit":-1}`},
		{tool.MethodGrep, `{"pattern":"x","type":"golang"}`},
		{tool.MethodGlob, `{}`},
		{tool.MethodChanges, `{"since":"not a token","path":"missing"}`},
	} {
		if ans := td.query(c.method, root, c.args); ans.Error == nil {
			t.Errorf("%s %s: %s, want an error", c.method, c.args, ans.js)
		}
	}
	if st := td.status(""); len(st.Roots) != 0 {
		t.Fatalf("refused calls added roots: %+v", st.Roots)
	}
	if ans := td.query(tool.MethodLS, root, `{}`); ans.Error != nil {
		t.Fatalf("LS: %s", ans.js)
	}
	if st := td.status(""); len(st.Roots) != 1 {
		t.Fatalf("a call that ran added no root: %+v", st.Roots)
	}
}

func TestTooManyRoots(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{MaxRoots: 2})
	a, b, c := writeTree(t, sample), writeTree(t, sample), writeTree(t, sample)
	td.index(a, false)
	td.query(tool.MethodGlob, b, `{"pattern":"*"}`)
	ans := td.query(tool.MethodGlob, c, `{"pattern":"*"}`)
	if ans.Error == nil || ans.Error.Code != envelope.CodeInvalidParam || !strings.Contains(ans.Error.Message, "indexctl forget") {
		t.Errorf("a third root: %s", ans.js)
	}
	if _, err := td.callErr(rpc.MethodIndex, rpc.RootParams{Root: c}); rpcCode(err) != rpc.CodeTooManyRoots {
		t.Errorf("index of a third root: %v", err)
	}
	td.call(rpc.MethodForget, rpc.RootParams{Root: a})
	if rs := td.index(c, true); rs.State != rpc.StateReady {
		t.Errorf("after forgetting one: %+v", rs)
	}
}

func TestForget(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := writeTree(t, sample)
	rs := td.index(root, true)
	if _, err := os.Stat(rs.DB); err != nil {
		t.Fatal(err)
	}
	var fr rpc.ForgetResult
	json.Unmarshal(td.call(rpc.MethodForget, rpc.RootParams{Root: root}), &fr)
	if !fr.Forgotten || fr.Root != root {
		t.Errorf("forget: %+v", fr)
	}
	if _, err := os.Stat(rs.DB); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the DB is still there: %v", err)
	}
	if st := td.status(""); len(st.Roots) != 0 {
		t.Errorf("status after forget: %+v", st.Roots)
	}
	json.Unmarshal(td.call(rpc.MethodForget, rpc.RootParams{Root: root}), &fr)
	if fr.Forgotten {
		t.Errorf("forgetting twice: %+v", fr)
	}
	// Used again, it is indexed afresh.
	if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Reopened {
		t.Errorf("after forget: %+v", rs)
	}
	// A root that vanished is forgotten by its old path.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(td.call(rpc.MethodForget, rpc.RootParams{Root: root}), &fr)
	if !fr.Forgotten {
		t.Errorf("forgetting a vanished root: %+v", fr)
	}
}

// index --wait ends when the root is forgotten meanwhile.
func TestIndexWaitStopped(t *testing.T) {
	t.Parallel()
	g := newGate()
	td := startDaemon(t, Config{hooks: &testHooks{beforeOpen: g.hook}})
	root := writeTree(t, sample)
	errc := make(chan error, 1)
	go func() {
		_, err := td.callErr(rpc.MethodIndex, rpc.RootParams{Root: root, Wait: true})
		errc <- err
	}()
	recv(t, g.entered, "the build to start")
	td.call(rpc.MethodForget, rpc.RootParams{Root: root})
	if err := recv(t, errc, "index to return"); rpcCode(err) != rpc.CodeStopped {
		t.Errorf("index --wait on a forgotten root: %v", err)
	}
}

// A failed build leaves the root in state error, answered by the walk;
// index builds it again.
func TestBuildFailureRetry(t *testing.T) {
	t.Parallel()
	fail := make(chan bool, 2)
	fail <- true
	fail <- false
	hooks := &testHooks{beforeOpen: func(ctx context.Context, root string) error {
		if <-fail {
			return errors.New("disk on fire")
		}
		return nil
	}}
	td := startDaemon(t, Config{hooks: hooks})
	root := writeTree(t, sample)
	rs := td.index(root, true)
	if rs.State != rpc.StateError || rs.LastError != "disk on fire" {
		t.Fatalf("failed build: %+v", rs)
	}
	a := td.query(tool.MethodGrep, root, `{"pattern":"func"}`)
	if !a.data.Used || a.data.Reason != envelope.ReasonIndexError || a.Status != envelope.StatusPartial {
		t.Errorf("grep on a failed root: %s", a.js)
	}
	if rs := td.index(root, true); rs.State != rpc.StateReady || rs.LastError != "" {
		t.Errorf("retry: %+v", rs)
	}
	if a := td.query(tool.MethodGrep, root, `{"pattern":"func"}`); a.data.Used {
		t.Errorf("grep after the retry: %s", a.js)
	}
}

// A restart with the same state directory reopens the saved index.
func TestRestartReopens(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	root := writeTree(t, sample)
	td := startDaemon(t, Config{StateDir: state})
	rs := td.index(root, true)
	if rs.Reopened {
		t.Fatalf("first build: %+v", rs)
	}
	before, err := os.Stat(rs.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := td.stop(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "lib/new.go", "package lib\nfunc New() {}\n")
	os.Remove(filepath.Join(root, "main.go"))

	td = startDaemon(t, Config{StateDir: state})
	// The restarted daemon reopens the root on its own, before any query.
	if st := td.status(""); len(st.Roots) != 1 || st.Roots[0].Root != root {
		t.Fatalf("after restart, before any query: status %+v", st)
	}
	rs = td.index(root, true)
	if rs.State != rpc.StateReady || !rs.Reopened || rs.Files != sampleFiles {
		t.Fatalf("after restart: %+v", rs)
	}
	after, err := os.Stat(rs.DB)
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("the DB was not reused: %v", err)
	}
	for _, q := range sampleQueries {
		a, want := td.query(q.method, root, q.args), walked(t, q.method, root, q.args)
		if a.data.Used || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("%s %s after restart:\n got %s\nwant %s", q.method, q.args, a.Data, want.Data)
		}
	}
}

// shutdown answers, then Run drains, closes everything, removes the
// socket and releases the lock.
func TestShutdown(t *testing.T) {
	fds := openFDs(t)
	td := startDaemon(t, Config{})
	root := writeTree(t, sample)
	td.index(root, true)
	var sr rpc.ShutdownResult
	json.Unmarshal(td.call(rpc.MethodShutdown, nil), &sr)
	if !sr.Stopping {
		t.Errorf("shutdown: %+v", sr)
	}
	if err := td.waitRun(); err != nil {
		t.Errorf("Run: %v", err)
	}
	td.c.Close()
	if _, err := os.Lstat(td.cfg.SocketPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	ln, unlock, err := server.Listen(td.cfg.SocketPath)
	if err != nil {
		t.Fatalf("the lock is still held: %v", err)
	}
	ln.Close()
	unlock()
	if n := openFDs(t); n > fds {
		t.Errorf("%d descriptors open after Run, %d before", n, fds)
	}
	td.once.Do(func() {}) // already stopped
}

// A second daemon on the same socket exits quietly.
func TestAlreadyRunning(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	if err := Run(context.Background(), Config{SocketPath: td.cfg.SocketPath, StateDir: t.TempDir()}); err != nil {
		t.Errorf("second Run: %v", err)
	}
	td.call(rpc.MethodPing, nil)
}

// With IdleExit, the daemon stops on its own once it has had no request
// for that long, and not before: a request restarts the count. Its clock
// is a fake one, which moves only when the test moves it.
func TestIdleExit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := clock.NewFake(time.Unix(1e9, 0))
	cfg := Config{SocketPath: socketPath(t), StateDir: t.TempDir(), IdleExit: time.Minute, clock: fake}
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg) }()
	c := dialDaemon(t, cfg.SocketPath)
	defer c.Close()
	recv(t, fake.Armed(1), "the idle timer")
	fake.Advance(30 * time.Second)
	if err := c.Ping(ctx); err != nil { // idle from here
		t.Fatal(err)
	}
	// A minute after the start, half a minute after the ping: the timer
	// fires, and is set again for the rest of the minute.
	fake.Advance(30 * time.Second)
	select {
	case <-fake.Armed(1):
	case err := <-errc:
		t.Fatalf("the daemon stopped half a minute after a request: %v", err)
	case <-time.After(wait):
		t.Fatal("timed out waiting for the idle timer to be set again")
	}
	fake.Advance(30 * time.Second)
	if err := recv(t, errc, "the idle daemon to stop"); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// The log goes to indexd.log in the state directory by default.
func TestDefaultLog(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{Version: "v-test"})
	td.stop()
	b, err := os.ReadFile(filepath.Join(td.cfg.StateDir, daemonapi.LogName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `msg=serving`) || !strings.Contains(string(b), "version=v-test") || !strings.Contains(string(b), "msg=stopped") {
		t.Errorf("log:\n%s", b)
	}
}

// syncFreshener is a Freshener for tests: its sync barrier reconciles the
// whole tree, so every query sees the writes made before it.
type syncFreshener struct {
	ix *index.Index
}

func (f *syncFreshener) Sync(ctx context.Context) error {
	_, err := f.ix.Reconcile(ctx)
	return err
}
func (f *syncFreshener) Stale(dir string) envelope.FallbackReason {
	if strings.HasPrefix(dir, "stale") {
		return envelope.ReasonIndexStale // the barrier passes: only Stale says so
	}
	return ""
}
func (f *syncFreshener) Live() []string         { return nil }
func (f *syncFreshener) Ready() <-chan struct{} { return closedChan }
func (f *syncFreshener) Done() <-chan struct{}  { return nil }
func (f *syncFreshener) Close() error           { return nil }

// The Freshener's barrier runs before each indexed query and its Stale
// reasons reach the envelope.
func TestFreshenerBarrierAndStale(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	newFresh := func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
		return &syncFreshener{ix: ix}, nil
	}
	td := startDaemon(t, Config{NewFreshener: newFresh, Logger: slog.New(rec)})
	files := map[string]string{"stale/a.txt": "x"}
	for i := range 1100 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = fmt.Sprintf("file %d\n", i)
	}
	root := writeTree(t, files)
	td.index(root, true)

	// Read your writes through the barrier.
	writeFile(t, root, "new.txt", "brand new needle\n")
	a := td.query(tool.MethodGrep, root, `{"pattern":"brand new needle"}`)
	if a.data.Used || len(a.data.Matches) != 1 {
		t.Errorf("a file written before the query: %s", a.js)
	}
	if a := td.query(tool.MethodGlob, root, `{"pattern":"*","path":"stale"}`); a.data.Reason != envelope.ReasonIndexStale {
		t.Errorf("stale directory: %s", a.js)
	}
	// Queries after many changes: still the Freshener's barrier, and the
	// index (which the Freshener alone updates and compacts) answers as
	// the walk does.
	for i := range 1100 {
		writeFile(t, root, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("changed file %d, longer\n", i))
	}
	a = td.query(tool.MethodGrep, root, `{"pattern":"changed file 1099,"}`)
	want := walked(t, tool.MethodGrep, root, `{"pattern":"changed file 1099,"}`)
	if !bytes.Equal(a.Data, want.Data) || len(a.data.Matches) != 1 {
		t.Errorf("after the changes:\n got %s\nwant %s", a.Data, want.Data)
	}
}

// Past the memory limit no new root is added, and both the query and the
// index call say why and what to do.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{MaxMemory: 1})
	root := writeTree(t, sample)
	a := td.query(tool.MethodGrep, root, `{"pattern":"x"}`)
	if a.Status != envelope.StatusError || a.Error == nil || a.Error.Code != envelope.CodeExecution ||
		!strings.Contains(a.Error.Message, "memory limit") || !strings.Contains(a.Error.Message, "indexctl forget") {
		t.Errorf("query past the memory limit: %s", a.js)
	}
	if _, err := td.callErr("index", rpc.RootParams{Root: root}); rpcCode(err) != rpc.CodeMemoryLimit {
		t.Errorf("index past the memory limit: %v", err)
	}
}
