package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/engine"
	"github.com/indexd/indexd/internal/textdiff"
	"github.com/indexd/indexd/rpc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata (and cmp files of the scripts) with the current output")

// testSystem is the system of the commands the tests run in their own
// process: the ones that exec the engine fail rather than replace the
// process, and the engine is the copy of this binary TestMain puts on
// $PATH (found there once the tests run), never one built elsewhere.
func testSystem() system {
	sys := processSystem()
	sys.execve = func(string, []string, []string) error { return errors.New("exec is disabled in the tests' process") }
	sys.findEngine = func(func(string)) *client.Engine {
		return client.EngineFunc(func() (string, error) { return exec.LookPath(client.EngineName) })
	}
	return sys
}

// runIn runs indexctl's command line args in this process with sys.
func runIn(sys system, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&cli{stdin: stdin, stdout: stdout, stderr: stderr, sys: sys}).run(args)
}

func TestMain(m *testing.M) {
	// Scripts run "indexctl" as a separate process: this test binary,
	// re-executed under that name, runs the real main; under the name
	// "indexd", beside it, it is the engine indexctl runs.
	testscript.Main(m, map[string]func(){
		"indexctl":        main,
		client.EngineName: func() { os.Exit(engine.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts found in testdata/script")
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			if os.Getenv("GORACE") == "" {
				// Under -race, every process otherwise sleeps 1s at exit.
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			return setupDaemonEnv(env)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "noparentgit":
				// No ancestor of the temporary directory holds .git, so a
				// workspace there has no root but the current directory.
				tmp := os.Getenv("GOTMPDIR")
				if tmp == "" {
					tmp = os.TempDir()
				}
				dir, err := filepath.EvalSymlinks(tmp)
				if err != nil {
					return false, err
				}
				return findRoot(dir) == dir && !exists(filepath.Join(dir, ".git")), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"cmpmasked": cmdCmpMasked,
			"chtime":    cmdChtime,
			"mknamed":   cmdMknamed,
		},
	})
}

// setupDaemonEnv gives each script a daemon of its own, never the
// user's: a socket in a new private directory (outside $WORK, so queries
// of $WORK do not see it, and short enough for bind) and a state
// directory beside it. A daemon the script leaves running is stopped at
// its end.
//
// Queries walk in-process (INDEXCTL_DIRECT=1): the query scripts pin the
// walk's output, whose work statistics differ from the index's. Scripts
// about the daemon unset it.
func setupDaemonEnv(env *testscript.Env) error {
	dir, err := os.MkdirTemp("", "indexctl-")
	if err != nil {
		return err
	}
	socket := filepath.Join(dir, "indexd.sock")
	env.Setenv("INDEXD_SOCKET", socket)
	env.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	env.Setenv("INDEXCTL_DIRECT", "1")
	env.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if _, err := client.StopDaemon(ctx, rpc.Dialer{}, socket); err != nil {
			env.T().Log("stopping the script's daemon: ", err)
		}
		os.RemoveAll(dir)
	})
	return nil
}

// cmdExits runs "exits CODE PROGRAM [ARGS...]": it runs the program like
// exec and checks its exit code.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad exit code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// Durations vary from run to run; cmpmasked replaces them.
var (
	reDuration = regexp.MustCompile(`\b\d+ms\b`)
	reTimeMS   = regexp.MustCompile(`"time_ms":\d+`)
)

func maskTimes(s string) string {
	s = reDuration.ReplaceAllString(s, "Nms")
	return reTimeMS.ReplaceAllString(s, `"time_ms":N`)
}

// cmdCmpMasked runs "cmpmasked FILE WANT": like cmp, after replacing every
// duration ("12ms" and "time_ms":12) by N in both.
func cmdCmpMasked(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmpmasked FILE WANT")
	}
	got, want := maskTimes(ts.ReadFile(args[0])), maskTimes(ts.ReadFile(args[1]))
	if (got == want) == !neg {
		return
	}
	if neg {
		ts.Fatalf("%s and %s do not differ", args[0], args[1])
	}
	ts.Logf("%s", textdiff.Lines(want, got))
	ts.Fatalf("%s and %s differ", args[0], args[1])
}

// cmdChtime runs "chtime TIME FILE...": it sets the files' modification
// times to TIME (RFC 3339, or "now").
func cmdChtime(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: chtime TIME FILE...")
	}
	when := time.Now()
	if args[0] != "now" {
		var err error
		if when, err = time.Parse(time.RFC3339, args[0]); err != nil {
			ts.Fatalf("chtime: %v", err)
		}
	}
	for _, f := range args[1:] {
		ts.Check(os.Chtimes(ts.MkAbs(f), when, when))
	}
}

// cmdMknamed runs "mknamed CONTENT NAME...": it creates files, with their
// directories, named by the bodies of Go string literals (a\xff.txt,
// src\nauth.go: any byte but NUL, as no txtar name can be) and holding
// CONTENT, also the body of a Go string literal. Each file's modification time is 2001-01-01,
// so Grep lists them in path order.
func cmdMknamed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mknamed CONTENT NAME...")
	}
	content, err := strconv.Unquote(`"` + args[0] + `"`)
	if err != nil {
		ts.Fatalf("mknamed: %s: %v", args[0], err)
	}
	when := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, lit := range args[1:] {
		name, err := strconv.Unquote(`"` + lit + `"`)
		if err != nil {
			ts.Fatalf("mknamed: %s: %v", lit, err)
		}
		p := ts.MkAbs(name)
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
		ts.Check(os.WriteFile(p, []byte(content), 0o644))
		ts.Check(os.Chtimes(p, when, when))
	}
}

// TestHelpGolden compares the help texts with the golden files in
// testdata; "go test -update" rewrites them.
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"help.golden", []string{"-h"}},
		{"grep-help.golden", []string{"grep", "-h"}},
		{"index-help.golden", []string{"index", "-h"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runIn(testSystem(), tc.args, strings.NewReader(""), &stdout, &stderr); code != daemonapi.ExitFound {
				t.Fatalf("indexctl %s: exit code %d, stderr:\n%s", strings.Join(tc.args, " "), code, &stderr)
			}
			if stderr.Len() > 0 {
				t.Errorf("indexctl %s wrote to stderr:\n%s", strings.Join(tc.args, " "), &stderr)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := stdout.String(); got != string(want) {
				t.Errorf("indexctl %s differs from %s (run go test -update to accept):\n%s",
					strings.Join(tc.args, " "), path, textdiff.Lines(string(want), got))
			}
		})
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
