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

// The README's first command on a fresh machine: an indexctl built from
// this checkout with no engine beside it or on $PATH, run inside the
// checkout (as go run does), builds the engine from the checkout into the
// state directory, saying at once that this is its first build, starts it
// as the daemon and is answered by it; the next query finds it built.
// Run inside another checkout of the module (another clone, other
// sources), it still runs the engine of the checkout it was built from,
// as does a go run of this checkout, which is checked to be of the same
// engine's build: the daemon is not replaced.
func TestDevBuildStartsEngine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the engine")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sockDir, err := os.MkdirTemp("", "indexctl-dev-") // short enough for bind
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	bin := filepath.Join(dir, "bin", "indexctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + dir, "XDG_STATE_HOME=" + state,
		"INDEXD_SOCKET=" + filepath.Join(sockDir, "indexd.sock"), "GORACE=atexit_sleep_ms=0"}
	for _, k := range []string{"GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		} else if k == "GOCACHE" || k == "GOMODCACHE" {
			out, err := exec.Command("go", "env", k).Output()
			if err != nil {
				t.Fatal(err)
			}
			env = append(env, k+"="+strings.TrimSpace(string(out)))
		}
	}
	root := testtree.Write(t, map[string]string{"cmd/app/main.go": "package main\n\nfunc main() {}\n"})
	// Another checkout of the module, whose engine does not build.
	other := testtree.Write(t, map[string]string{
		"go.mod":               "module github.com/indexd/indexd\n\ngo 1.26\n",
		"cmd/indexd/main.go":   "package main\n\nfunc main() { not Go }\n",
		"cmd/indexctl/main.go": "package main\n\nfunc main() {}\n",
	})
	runIn := func(dir, bin string, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("indexctl %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, &o, &e)
		}
		return o.String(), e.String()
	}
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		return runIn(checkout, bin, args...)
	}
	t.Cleanup(func() {
		cmd := exec.Command(bin, "stop")
		cmd.Dir, cmd.Env = checkout, env
		cmd.Run()
	})

	out, errs := run("grep", "func main", "--include", "*.go", "--root", root)
	if !strings.Contains(out, "cmd/app/main.go:3: func main() {}") {
		t.Errorf("grep: %s", out)
	}
	if want := "indexctl: building the engine from " + checkout + " (first use: compiling it may take a minute or so)\n"; !strings.HasPrefix(errs, want) {
		t.Errorf("no note that the engine is built; stderr:\n%s", errs)
	}
	engines, err := filepath.Glob(filepath.Join(state, "indexd", "engine", "*", "indexd"))
	if err != nil || len(engines) != 1 {
		t.Fatalf("engines built in the state directory: %v, %v", engines, err)
	}
	statusOut, _ := run("status", "--json")
	var st rpc.Status
	if err := json.Unmarshal([]byte(statusOut), &st); err != nil {
		t.Fatal(err)
	}
	if want := buildid.Of(engines[0]); st.Build != want || want == "" {
		t.Errorf("the daemon's build %q, want the built engine's %q", st.Build, want)
	}
	// Nothing changed: the engine is not built again, and the same
	// daemon answers.
	out, errs = run("grep", "func main", "--include", "*.go", "--root", root)
	if !strings.Contains(out, "cmd/app/main.go:3: func main() {}") || errs != "" {
		t.Errorf("second grep: stdout %s, stderr %s", out, errs)
	}
	statusOut, _ = run("status", "--json")
	var st2 rpc.Status
	if err := json.Unmarshal([]byte(statusOut), &st2); err != nil {
		t.Fatal(err)
	}
	if st2.PID != st.PID {
		t.Errorf("the daemon was replaced (pid %d, then %d) though nothing changed", st.PID, st2.PID)
	}

	// From the other checkout: this checkout's engine, at once.
	out, errs = runIn(other, bin, "grep", "func main", "--include", "*.go", "--root", root)
	if !strings.Contains(out, "cmd/app/main.go:3: func main() {}") || errs != "" {
		t.Errorf("grep from another checkout: stdout %s, stderr %s", out, errs)
	}
	// A go run of this checkout, from the other one: another client, of
	// the same engine's build.
	runBin := filepath.Join(dir, "run", "indexctl")
	if err := os.MkdirAll(filepath.Dir(runBin), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "run", "-exec", "cp", ".", runBin).CombinedOutput(); err != nil { // cp BINARY runBin
		t.Fatalf("go run: %v\n%s", err, out)
	}
	out, errs = runIn(other, runBin, "grep", "func main", "--include", "*.go", "--root", root)
	if !strings.Contains(out, "cmd/app/main.go:3: func main() {}") || errs != "indexctl: building the engine from "+checkout+" for this build of indexctl (the engine there was built with another)\n" {
		t.Errorf("grep of a go run client: stdout %s, stderr %s", out, errs)
	}
	for _, b := range []string{bin, runBin} {
		statusOut, _ = runIn(other, b, "status", "--json")
		var st3 rpc.Status
		if err := json.Unmarshal([]byte(statusOut), &st3); err != nil {
			t.Fatal(err)
		}
		if st3.PID != st.PID {
			t.Errorf("the daemon was replaced (pid %d, then %d) by a client of the same engine", st.PID, st3.PID)
		}
	}
	if engines, err := filepath.Glob(filepath.Join(state, "indexd", "engine", "*", "indexd")); err != nil || len(engines) != 1 {
		t.Errorf("engines built in the state directory: %v, %v", engines, err)
	}
}
