package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/privdir"
	"github.com/indexd/indexd/rpc"
)

// otherUID owns what the tests plant as "another user's".
const otherUID = 12345

// runRefused runs the daemon on stateDir and returns its error, which
// must come before it serves: a daemon that answers ping instead fails
// the test (and is stopped).
func runRefused(t *testing.T, stateDir string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	socket := socketPath(t)
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, Config{StateDir: stateDir, SocketPath: socket}) }()
	served := make(chan struct{})
	go func() {
		// Ends when Run does (ctx cancelled by then): dialDaemon's wait
		// for a daemon that never comes is cut short by the cancel.
		if c, err := rpc.EnsureDaemon(ctx, socket, func() error { return nil }); err == nil {
			c.Close()
			close(served)
		}
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatalf("Run with state directory %s returned nil", stateDir)
		}
		return err
	case <-served:
		cancel()
		<-errc
		t.Fatalf("Run with state directory %s served", stateDir)
	case <-time.After(wait):
		t.Fatalf("Run with state directory %s neither failed nor served", stateDir)
	}
	return nil
}

// A symbolic link planted at the log's path is refused, by daemonapi.OpenLog and by
// Run, and its target is left alone.
func TestLogSymlinkRefused(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(state, daemonapi.LogName)
	if err := os.Symlink(target, log); err != nil {
		t.Fatal(err)
	}
	f, err := daemonapi.OpenLog(state)
	if err == nil {
		f.Close()
		t.Fatal("daemonapi.OpenLog followed a symbolic link")
	}
	if want := "daemon: log " + log + " is a symbolic link, which indexd does not follow: remove it"; err.Error() != want {
		t.Errorf("OpenLog: %v\nwant %s", err, want)
	}
	if err := runRefused(t, state); !strings.Contains(err.Error(), log+" is a symbolic link") {
		t.Errorf("Run: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "precious\n" {
		t.Errorf("the link's target now holds %q (%v)", b, err)
	}
}

// checkRefused checks an error about the unsafe directory dir.
func checkRefused(t *testing.T, err error, dir, problem string) {
	t.Helper()
	if !errors.Is(err, privdir.ErrInsecure) {
		t.Errorf("error %v does not wrap privdir.ErrInsecure", err)
	}
	want := "daemon: unsafe state directory: " + dir + " " + problem
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(--state-dir or XDG_STATE_HOME chooses another)") {
		t.Errorf("got  %v\nwant %s...", err, want)
	}
}

// empty checks that nothing was written in dir.
func empty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("%s holds %v", dir, ents)
	}
}

func TestStateDirRefused(t *testing.T) {
	t.Parallel()
	t.Run("mode 0777", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(state, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(state, 0o777)
		_, err := daemonapi.OpenLog(state)
		checkRefused(t, err, state, "is writable by its group or others (mode 0777), who could replace what indexd keeps there; fix it with: chmod 700 "+state)
		checkRefused(t, runRefused(t, state), state, "is writable")
		empty(t, state)
	})
	t.Run("symlink", func(t *testing.T) {
		real := t.TempDir()
		state := filepath.Join(t.TempDir(), "state")
		if err := os.Symlink(real, state); err != nil {
			t.Fatal(err)
		}
		_, err := daemonapi.OpenLog(state)
		checkRefused(t, err, state, "is a symbolic link; indexd keeps its files only in a real directory of its own: remove the link, or choose another directory")
		checkRefused(t, runRefused(t, state), state, "is a symbolic link")
		empty(t, real)
	})
	t.Run("owned by another user", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(state, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(state, otherUID, otherUID); err != nil {
			t.Skipf("cannot give a directory to another user: %v", err)
		}
		_, err := daemonapi.OpenLog(state)
		checkRefused(t, err, state, "is owned by uid 12345, not by the current user (uid "+strconv.Itoa(os.Getuid())+"), so its owner could replace what indexd keeps there: remove it (as its owner or root), or choose another directory")
		checkRefused(t, runRefused(t, state), state, "is owned by uid 12345")
		empty(t, state)
	})
	t.Run("a file", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		os.WriteFile(state, nil, 0o600)
		_, err := daemonapi.OpenLog(state)
		checkRefused(t, err, state, "is not a directory")
	})
}

// tmpFallback makes the state directory fall back to
// $TMPDIR/indexd-UID/state, with TMPDIR a new directory, and returns
// TMPDIR.
func tmpFallback(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	if got, want := daemonapi.DefaultStateDir(), filepath.Join(tmp, "indexd-"+strconv.Itoa(os.Getuid()), "state"); got != want {
		t.Fatalf("daemonapi.DefaultStateDir() = %s, want %s", got, want)
	}
	return tmp
}

// Without HOME the state directory is under TMPDIR, which other users
// share: the indexd-UID directory must be the user's too.
func TestStateDirTmpFallback(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		tmpFallback(t)
		f, err := daemonapi.OpenLog(daemonapi.DefaultStateDir())
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, dir := range []string{filepath.Dir(daemonapi.DefaultStateDir()), daemonapi.DefaultStateDir()} {
			fi, err := os.Lstat(dir)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v, %v; want a directory with mode 0700", dir, fi.Mode(), err)
			}
		}
		if fi, err := os.Lstat(filepath.Join(daemonapi.DefaultStateDir(), daemonapi.LogName)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the log: %v, %v", fi.Mode(), err)
		}
	})
	t.Run("made by another user", func(t *testing.T) {
		tmp := tmpFallback(t)
		planted := filepath.Join(tmp, "indexd-"+strconv.Itoa(os.Getuid()))
		if err := os.Mkdir(planted, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(planted, 0o777)
		if err := os.Lchown(planted, otherUID, otherUID); err != nil {
			t.Skipf("cannot give a directory to another user: %v", err)
		}
		_, err := daemonapi.OpenLog(daemonapi.DefaultStateDir())
		checkRefused(t, err, planted, "is owned by uid 12345")
		empty(t, planted)
		// Back to the user, but still writable by everyone.
		os.Lchown(planted, os.Getuid(), os.Getgid())
		_, err = daemonapi.OpenLog(daemonapi.DefaultStateDir())
		checkRefused(t, err, planted, "is writable by its group or others (mode 0777)")
		empty(t, planted)
	})
	t.Run("a symlink", func(t *testing.T) {
		tmp := tmpFallback(t)
		elsewhere := t.TempDir()
		planted := filepath.Join(tmp, "indexd-"+strconv.Itoa(os.Getuid()))
		if err := os.Symlink(elsewhere, planted); err != nil {
			t.Fatal(err)
		}
		_, err := daemonapi.OpenLog(daemonapi.DefaultStateDir())
		checkRefused(t, err, planted, "is a symbolic link")
		empty(t, elsewhere)
	})
}

// The list of roots and the index DBs are not written through a planted
// link either.
func TestStateFilesNoFollow(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	root := writeTree(t, sample)
	// An empty file is what bbolt would initialise as a new DB.
	targets := map[string]string{RootsName + ".tmp": "precious\n", DBName(root): ""}
	for name, content := range targets {
		target := filepath.Join(t.TempDir(), "target")
		if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(state, name)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if b, err := os.ReadFile(target); err != nil || string(b) != content {
				t.Errorf("the target of %s now holds %d bytes: %.40q (%v)", name, len(b), b, err)
			}
		})
	}
	td := startDaemon(t, Config{StateDir: state})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Errorf("index: %+v", rs)
	}
	td.stop()
	// The DB's link was discarded and a real DB written in its place.
	if fi, err := os.Lstat(filepath.Join(state, DBName(root))); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the DB: %v, %v", fi, err)
	}
	// So was the list's.
	if _, err := os.Lstat(filepath.Join(state, RootsName+".tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("roots.json.tmp: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(state, RootsName)); err != nil || string(b) != `["`+root+`"]` {
		t.Errorf("roots.json: %s, %v", b, err)
	}
}
