package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
)

// Two builds of indexctl and its engine, each pair in a directory of its
// own (the same source linked with different -X flags, so two build IDs,
// as after an upgrade): the second build's first query replaces the first
// build's daemon with one of its own engine, and its answer comes from a
// daemon of its build. The identity compared is the engine's: a daemon
// is an engine.
func TestOtherBuildDaemonReplaced(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds indexctl twice")
	}
	dir := t.TempDir()
	sockDir, err := os.MkdirTemp("", "indexctl-build-") // short enough for bind
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	env := append(os.Environ(), "INDEXCTL_DIRECT=", "INDEXD_SOCKET="+filepath.Join(sockDir, "indexd.sock"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	bins := map[string]string{}    // indexctl of each build
	engines := map[string]string{} // its engine, beside it
	for _, v := range []string{"one", "two"} {
		bindir := filepath.Join(dir, v) + "/"
		cmd := exec.Command("go", "build", "-ldflags", "-X main.buildTag="+v, "-o", bindir, ".", "../indexd")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		bins[v], engines[v] = filepath.Join(bindir, "indexctl"), filepath.Join(bindir, "indexd")
	}
	if buildid.Of(engines["one"]) == buildid.Of(engines["two"]) || buildid.Of(engines["one"]) == "" {
		t.Fatalf("the two engines have the same ID %q", buildid.Of(engines["one"]))
	}
	root := testtree.Write(t, map[string]string{"a.txt": "needle\n"})
	run := func(v string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bins[v], args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("indexctl-%s %v: %v\n%s", v, args, err, out)
		}
		return string(out)
	}
	status := func(v string) rpc.Status {
		t.Helper()
		var st rpc.Status
		if err := json.Unmarshal([]byte(run(v, "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	t.Cleanup(func() {
		cmd := exec.Command(bins["two"], "stop")
		cmd.Env = env
		cmd.Run()
	})

	if out := run("one", "grep", "needle", "--root", root); !strings.Contains(out, "a.txt:1: needle") {
		t.Fatalf("first build's grep: %s", out)
	}
	first := status("one")
	if first.Build != buildid.Of(engines["one"]) {
		t.Fatalf("status build %q, want the first engine's %q", first.Build, buildid.Of(engines["one"]))
	}
	if out := run("two", "grep", "needle", "--root", root); !strings.Contains(out, "a.txt:1: needle") {
		t.Fatalf("second build's grep: %s", out)
	}
	second := status("two")
	if second.Build != buildid.Of(engines["two"]) || second.PID == first.PID {
		t.Fatalf("after the second build's query: daemon pid %d build %q; the first was pid %d, want build %q",
			second.PID, second.Build, first.PID, buildid.Of(engines["two"]))
	}
	// The first build's status does not replace (only queries do), but its
	// next query does, back again.
	if out := run("one", "grep", "needle", "--root", root); !strings.Contains(out, "a.txt:1: needle") {
		t.Fatalf("first build again: %s", out)
	}
	third := status("one")
	if third.Build != buildid.Of(engines["one"]) || third.PID == second.PID {
		t.Fatalf("the first build's query did not replace the second's daemon: %+v", third)
	}
	// A query sent behind the build check, without waiting for it, is
	// answered once, by the daemon of this build: the refused daemon's
	// answer is dropped. So is a streamed one (--all), which waits for the
	// check before any result is printed.
	for _, args := range [][]string{{"grep", "needle"}, {"grep", "--all", "needle"}} {
		before := status("one") // status does not replace: this is the running daemon
		v := "one"              // the build whose daemon is not running
		if before.Build == buildid.Of(engines["one"]) {
			v = "two"
		}
		if out := run(v, append(args, "--root", root)...); out != "a.txt:1: needle\n" {
			t.Fatalf("indexctl-%s %v after the other build's daemon: %q, want the one match once", v, args, out)
		}
		if now := status(v); now.Build != buildid.Of(engines[v]) || now.PID == before.PID {
			t.Fatalf("indexctl-%s %v did not replace the other build's daemon: %+v, before %+v", v, args, now, before)
		}
	}
}
