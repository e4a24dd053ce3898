package ignore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireGit skips the test when git is not installed, and fails it on CI,
// where a missing git means the differential tests would silently vanish.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH")
	}
}

// TestRulesAgainstGit replays ruleCases through git: each case gets its
// own directory holding its rules as .gitignore and its path (a file, or a
// directory with a file inside), and `git check-ignore` says whether git
// ignores the path. A path is ignored by git when a rule ignores it or any
// directory above it (git cannot re-include a file whose parent directory
// is excluded), which is also what a walker that prunes ignored
// directories sees; the expectation is computed that way from Match.
func TestRulesAgainstGit(t *testing.T) {
	requireGit(t)
	home := t.TempDir()
	repo := t.TempDir()
	gitCmd(t, home, repo, "init", "-q")
	var paths []string
	want := map[string]bool{}
	for i, c := range ruleCases {
		dir := fmt.Sprintf("c%03d", i)
		writeFile(t, filepath.Join(repo, dir, ".gitignore"), c.rules)
		p := filepath.Join(repo, dir, filepath.FromSlash(c.path))
		if c.isDir {
			writeFile(t, filepath.Join(p, "inside"), "")
		} else {
			writeFile(t, p, "")
		}
		rel := dir + "/" + c.path
		paths = append(paths, rel)
		want[rel] = walkerIgnores(Parse([]byte(c.rules)), c.path, c.isDir)
	}
	out := gitCmdStdin(t, home, repo, strings.Join(paths, "\x00")+"\x00",
		"check-ignore", "--no-index", "-z", "-v", "-n", "--stdin")
	// Records: source, line number, pattern, path, each NUL-terminated;
	// the source is empty when no pattern matched.
	f := strings.Split(string(out), "\x00")
	got := map[string]bool{}
	for i := 0; i+3 < len(f); i += 4 {
		pattern, path := f[i+2], f[i+3]
		got[path] = f[i] != "" && !strings.HasPrefix(pattern, "!")
	}
	for i, c := range ruleCases {
		rel := paths[i]
		g, ok := got[rel]
		if !ok {
			t.Errorf("git check-ignore said nothing about %q", rel)
			continue
		}
		if g != want[rel] {
			t.Errorf("rules %q, path %q (dir=%v): git ignored=%v, ours=%v (Match=%v)",
				c.rules, c.path, c.isDir, g, want[rel], Parse([]byte(c.rules)).Match(c.path, c.isDir))
		}
	}
}

// walkerIgnores reports whether a walker pruning ignored directories
// leaves out path: a directory above it or the path itself is ignored.
func walkerIgnores(r *Rules, path string, isDir bool) bool {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if r.Match(strings.Join(parts[:i], "/"), true) == Ignore {
			return true
		}
	}
	return r.Match(path, isDir) == Ignore
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitEnv is a hermetic environment for git: no system config, HOME (and
// so the global config and excludes file) in a directory the test owns.
func gitEnv(home string) []string {
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return env
}

func gitCmd(t *testing.T, home, dir string, args ...string) []byte {
	t.Helper()
	return gitCmdStdin(t, home, dir, "", args...)
}

func gitCmdStdin(t *testing.T, home, dir, stdin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// check-ignore exits 1 when nothing is ignored.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || args[0] != "check-ignore" {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	return out
}
