package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// childEnv makes the test binary run the daemon instead of the tests (see
// TestMain): "run" serves normally; "block" stops the first build at its
// first progress report, after printing "building" on stdout, and waits
// there to be killed.
const childEnv = "INDEXD_DAEMON_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	testtree.QuickChildExit()
	os.Exit(m.Run())
}

func child(mode string) int {
	cfg := Config{SocketPath: os.Getenv("INDEXD_SOCKET"), StateDir: os.Getenv("INDEXD_TEST_STATE")}
	if mode == "block" {
		var once sync.Once
		cfg.hooks = &testHooks{progress: func(ctx context.Context, p index.Progress) {
			once.Do(func() { fmt.Println("building") })
			<-ctx.Done()
		}}
	}
	if err := Foreground(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild runs the daemon in a child process; it is killed at the end
// of the test if still running. It returns the child and its stdout.
func startChild(t *testing.T, mode, socket, state string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "INDEXD_SOCKET="+socket, "INDEXD_TEST_STATE="+state)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// kill9 kills the child with SIGKILL and reaps it.
func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// bigTree is a tree with enough files for a build to report progress
// before it ends (the build reports after each batch of 512 files).
func bigTree(t *testing.T) string {
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%40, i)] = fmt.Sprintf("line one\nfile number %d\n", i)
	}
	return writeTree(t, files)
}

// checkAgainstWalk runs queries on root and compares them with the walk.
func checkAgainstWalk(t *testing.T, td *testDaemon, root string) {
	t.Helper()
	for _, q := range []struct{ method, args string }{
		{tool.MethodGlob, `{"pattern":"**/f1*.txt","limit":1000}`},
		{tool.MethodGrep, `{"pattern":"file number 1\\d\\d\\b","limit":1000}`},
		{tool.MethodGrep, `{"pattern":"after the crash"}`},
		{tool.MethodLS, `{"path":"d07"}`},
	} {
		a, want := td.query(q.method, root, q.args), walked(t, q.method, root, q.args)
		if a.data.Used || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("%s %s:\n got %s\nwant %s", q.method, q.args, a.js, want.Data)
		}
	}
}

// kill -9 in the middle of a build: the next daemon builds again (nothing
// was saved) and answers correctly.
func TestKill9MidBuild(t *testing.T) {
	t.Parallel()
	root := bigTree(t)
	socket, state := socketPath(t), t.TempDir()
	cmd, out := startChild(t, "block", socket, state)
	c := dialDaemon(t, socket)
	if err := c.Call(context.Background(), rpc.MethodIndex, rpc.RootParams{Root: root}, nil); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		l, _ := out.ReadString('\n')
		lines <- l
	}()
	if l := recv(t, lines, "the child to start building"); l != "building\n" {
		t.Fatalf("child said %q", l)
	}
	var st rpc.Status
	var res json.RawMessage
	if err := c.Call(context.Background(), rpc.MethodStatus, nil, &res); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(res, &st)
	if len(st.Roots) != 1 || st.Roots[0].Phase != rpc.PhaseBuild || st.Roots[0].Progress == nil ||
		st.Roots[0].Progress.TotalFiles != 2000 || st.Roots[0].Progress.Files >= 2000 {
		t.Errorf("status mid-build: %s", res)
	}
	kill9(t, cmd)
	c.Close()

	writeFile(t, root, "d07/late.txt", "written after the crash\n")
	td := startDaemon(t, Config{SocketPath: socket, StateDir: state})
	rs := td.index(root, true)
	if rs.State != rpc.StateReady || rs.Reopened || rs.Files != 2001 {
		t.Fatalf("after the crash: %+v", rs)
	}
	checkAgainstWalk(t, td, root)
}

// kill -9 once the index is saved: the next daemon reopens it, catches
// up with the changes made meanwhile and answers correctly.
func TestKill9WhenReady(t *testing.T) {
	t.Parallel()
	root := bigTree(t)
	socket, state := socketPath(t), t.TempDir()
	cmd, _ := startChild(t, "run", socket, state)
	c := dialDaemon(t, socket)
	var res json.RawMessage
	if err := c.Call(context.Background(), rpc.MethodIndex, rpc.RootParams{Root: root, Wait: true}, &res); err != nil {
		t.Fatal(err)
	}
	c.Close()
	writeFile(t, root, "d07/late.txt", "written after the crash\n")
	writeFile(t, root, "d01/f0001.txt", "file number 1000000, after the crash\n")
	os.Remove(root + "/d02/f0002.txt")
	kill9(t, cmd)

	td := startDaemon(t, Config{SocketPath: socket, StateDir: state})
	rs := td.index(root, true)
	if rs.State != rpc.StateReady || !rs.Reopened || rs.Files != 2000 {
		t.Fatalf("after the crash: %+v", rs)
	}
	checkAgainstWalk(t, td, root)
}

// kill -9 at whatever point the build has reached when status first
// shows it saving or ready (best effort: the save is short): the next
// daemon reopens or rebuilds, and answers correctly either way.
func TestKill9AroundSave(t *testing.T) {
	t.Parallel()
	root := bigTree(t)
	socket, state := socketPath(t), t.TempDir()
	cmd, _ := startChild(t, "run", socket, state)
	c := dialDaemon(t, socket)
	ctx := context.Background()
	if err := c.Call(ctx, rpc.MethodIndex, rpc.RootParams{Root: root}, nil); err != nil {
		t.Fatal(err)
	}
	phase := ""
	settle(func() bool {
		var res json.RawMessage
		if err := c.Call(ctx, rpc.MethodStatus, nil, &res); err != nil {
			t.Fatal(err)
		}
		var st rpc.Status
		json.Unmarshal(res, &st)
		if len(st.Roots) == 1 && (st.Roots[0].Phase == rpc.PhaseSave || st.Roots[0].State != rpc.StateBuilding) {
			phase = st.Roots[0].Phase + st.Roots[0].State
			return true
		}
		return false
	})
	kill9(t, cmd)
	c.Close()
	t.Logf("killed at %s", phase)

	td := startDaemon(t, Config{SocketPath: socket, StateDir: state})
	if rs := td.index(root, true); rs.State != rpc.StateReady || rs.Files != 2000 {
		t.Fatalf("after the crash: %+v", rs)
	}
	checkAgainstWalk(t, td, root)
}
