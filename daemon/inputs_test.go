package daemon

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// Read-your-writes for the inputs of the ignore rules (issues 34 and 35),
// through the daemon with its watcher: a query issued after an edit of
// .git/info/exclude, of the global excludes file, or a git command that
// rewrites .git/index has returned sees it, from the index, every time.

// hermeticHome points HOME and XDG_CONFIG_HOME at a fresh directory and
// turns git's system configuration off; it returns the home.
func hermeticHome(t *testing.T) string {
	t.Helper()
	home := writeTree(t, nil)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_CONFIG_SYSTEM"} {
		if old, had := os.LookupEnv(k); had {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, old) })
		}
	}
	return home
}

func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

// tookRE matches the time a text reports.
var tookRE = regexp.MustCompile(`Took \d+ms`)

// indexAnswer fails the test unless a is the index's answer with status
// success.
func indexAnswer(t *testing.T, what string, a answer) {
	t.Helper()
	if a.data.Used || a.Status != envelope.StatusSuccess {
		t.Fatalf("%s: not the index's complete answer: %s", what, a.js)
	}
}

// The case: *.dat taken out of .git/info/exclude, then the global
// excludes file emptied, each edit followed at once by a query.
func TestRuleInputEditsSeenByTheNextQuery(t *testing.T) {
	home := hermeticHome(t)
	td := startDaemon(t, Config{})
	root := writeTree(t, map[string]string{
		".git/info/exclude": "*.dat\n",
		"a.dat":             "needle dat\n",
		"sub/b.dat":         "needle dat\n",
		"c.tmp":             "needle tmp\n",
	})
	writeFile(t, home, ".config/git/ignore", "*.tmp\n")
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	a := td.query(tool.MethodGlob, root, `{"pattern":"**/*.dat"}`)
	indexAnswer(t, "before", a)
	if len(a.data.Paths) != 0 || !strings.Contains(a.Text, "[Info: Ignored paths were skipped: a.dat, sub/b.dat.") {
		t.Fatalf("before the edit: %s", a.js)
	}
	for i := range 10 {
		exclude, wantDat := "*.dat\n", []string(nil)
		if i%2 == 0 {
			exclude, wantDat = fmt.Sprintf("# round %d\n", i), []string{"a.dat", "sub/b.dat"}
		}
		writeFile(t, root, ".git/info/exclude", exclude)
		a := td.query(tool.MethodGlob, root, `{"pattern":"**/*.dat"}`)
		indexAnswer(t, "glob after the edit", a)
		if !slices.Equal(a.data.Paths, wantDat) {
			t.Fatalf("round %d: info/exclude %q: glob **/*.dat = %q, want %q", i, exclude, a.data.Paths, wantDat)
		}

		global, wantTmp := "*.tmp\n", 0
		if i%2 == 0 {
			global, wantTmp = "", 1
		}
		tmp := filepath.Join(home, ".config/git/ignore.new")
		if err := os.WriteFile(tmp, []byte(global), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(home, ".config/git/ignore")); err != nil {
			t.Fatal(err)
		}
		g := td.query(tool.MethodGrep, root, `{"pattern":"needle tmp"}`)
		indexAnswer(t, "grep after the edit", g)
		if len(g.data.Matches) != wantTmp {
			t.Fatalf("round %d: global excludes %q: grep found %d matches, want %d: %s", i, global, len(g.data.Matches), wantTmp, g.js)
		}
	}
}

// Issue 35: in a repository whose tracked go/build holds source, Grep
// finds go/build/build.go, and an untracked build/ is still skipped and
// named; git add and git rm --cached (which rewrite .git/index by rename)
// are seen by the next query.
func TestTrackedBuildDirThroughTheDaemon(t *testing.T) {
	hermeticHome(t)
	td := startDaemon(t, Config{})
	root := writeTree(t, map[string]string{
		"go/build/build.go":  "package build\n\nfunc Import(path string) {}\n",
		"build/gen/build.go": "package gen\n\nfunc Import(path string) {}\n",
		"README":             "readme\n",
	})
	runGit(t, root, "init", "-q", "--template=")
	runGit(t, root, "add", "go", "README")
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	const args = `{"pattern":"func Import\\(","output_mode":"files_with_matches"}`
	const note = "[Info: Directories on the default ignore list were skipped: build/. Set include_ignored=true to search them.]"
	a := td.query(tool.MethodGrep, root, args)
	indexAnswer(t, "grep", a)
	if w := walked(t, tool.MethodGrep, root, args); tookRE.ReplaceAllString(w.Text, "") != tookRE.ReplaceAllString(a.Text, "") {
		t.Errorf("the walk answers\n%s\nthe index\n%s", w.Text, a.Text)
	}
	if !strings.Contains(a.Text, "\n\ngo/build/build.go") || strings.Contains(a.Text, "build/gen") || !strings.Contains(a.Text, note) {
		t.Fatalf("grep: %s", a.Text)
	}
	for i := range 6 {
		if i%2 == 0 {
			runGit(t, root, "rm", "-q", "-r", "--cached", "go/build")
		} else {
			runGit(t, root, "add", "go/build")
		}
		a := td.query(tool.MethodGrep, root, args)
		indexAnswer(t, "grep after git", a)
		found := strings.Contains(a.Text, "go/build/build.go")
		if found != (i%2 == 1) {
			t.Fatalf("round %d: go/build tracked=%v, answer:\n%s", i, i%2 == 1, a.Text)
		}
	}
}
