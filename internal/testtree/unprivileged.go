package testtree

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// Nobody is the user and group an unprivileged test child runs as.
const Nobody = 65534

// Unprivileged makes the calling test run where file permissions bind
// it, so that a directory or file made unreadable (mode 0) is unreadable
// to the code under test. A process that is not root is already there:
// Unprivileged returns false and the test goes on. Root bypasses file
// permissions, so as root Unprivileged runs the test again (only it: a
// top-level test, by name) in a child process as Nobody, and returns
// true once the child passed; the caller then returns at once. The
// child is a copy of the test binary that Nobody may run, in a
// directory it may enter (under the system's temporary directory, or
// /tmp when that one is private), with TMPDIR (so t.TempDir) and HOME
// there; its working directory is that directory, so such a test must
// not read testdata. Where no such child can be started (no user
// switch allowed, a temporary directory mounted noexec) the test is
// skipped, saying why, but under CI (CI=true) it fails.
//
// A failure of the child fails the test with the child's output.
func Unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("testtree.Unprivileged: %s is a subtest; call it from the top-level test", t.Name())
	}
	base := os.TempDir()
	if !searchable(base) {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "test.bin")
	if err := copyExecutable(os.Args[0], exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	if _, set := os.LookupEnv("GORACE"); !set {
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0") // as QuickChildExit
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit) && os.Getenv("CI") == "true":
		t.Fatalf("CI must run this test as uid %d, and cannot: %v", Nobody, err)
	case err != nil && !errors.As(err, &exit):
		t.Skipf("cannot run the test as uid %d here: %v", Nobody, err)
	case err != nil:
		t.Fatalf("the test run as uid %d failed: %v\n%s", Nobody, err, out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("the test run as uid %d did not pass:\n%s", Nobody, out)
	}
	return true
}

// searchable reports whether every directory of the absolute path dir
// may be searched by anyone.
func searchable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// copyExecutable copies the file src to dst, mode 0755.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
