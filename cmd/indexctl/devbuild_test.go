package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/daemon"
	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/testtree"
)

// The README's first command on a fresh machine: an indexctl built from
// this checkout with no engine beside it or on $PATH, run inside the
// checkout (as go run does), builds the engine from the checkout into the
// state directory, starts it as the daemon and is answered by it; the
// next query finds it built.
func TestDevBuildStartsEngine(t *testing.T) {
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
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = checkout, env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("indexctl %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, &o, &e)
		}
		return o.String(), e.String()
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
	if !strings.Contains(errs, "indexctl: building the engine from "+checkout) {
		t.Errorf("no note that the engine is built; stderr:\n%s", errs)
	}
	engines, err := filepath.Glob(filepath.Join(state, "indexd", "engine", "*", "indexd"))
	if err != nil || len(engines) != 1 {
		t.Fatalf("engines built in the state directory: %v, %v", engines, err)
	}
	statusOut, _ := run("status", "--json")
	var st daemon.Status
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
	var st2 daemon.Status
	if err := json.Unmarshal([]byte(statusOut), &st2); err != nil {
		t.Fatal(err)
	}
	if st2.PID != st.PID {
		t.Errorf("the daemon was replaced (pid %d, then %d) though nothing changed", st.PID, st2.PID)
	}
}
