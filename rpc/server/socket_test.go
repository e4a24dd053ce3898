package server

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/indexd/indexd/rpc"
)

func TestDefaultSocketPath(t *testing.T) {
	t.Setenv("INDEXD_SOCKET", "/tmp/x/my.sock")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	t.Setenv("XDG_CACHE_HOME", "/home/u/.cache")
	if got := rpc.DefaultSocketPath(); got != "/tmp/x/my.sock" {
		t.Errorf("with INDEXD_SOCKET: %s", got)
	}
	t.Setenv("INDEXD_SOCKET", "rel.sock")
	wd, _ := os.Getwd()
	if got := rpc.DefaultSocketPath(); got != filepath.Join(wd, "rel.sock") {
		t.Errorf("with a relative INDEXD_SOCKET: %s", got)
	}
	t.Setenv("INDEXD_SOCKET", "")
	if got := rpc.DefaultSocketPath(); got != "/run/user/1000/indexd/indexd.sock" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative/dir") // ignored, as the XDG spec says
	if got := rpc.DefaultSocketPath(); got != "/home/u/.cache/indexd/indexd.sock" {
		t.Errorf("without XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/v")
	if got := rpc.DefaultSocketPath(); got != "/home/v/.cache/indexd/indexd.sock" {
		t.Errorf("under HOME: %s", got)
	}
	if got := rpc.LockPath("/run/user/1000/indexd/indexd.sock"); got != "/run/user/1000/indexd/indexd.lock" {
		t.Errorf("LockPath: %s", got)
	}
}

func TestListenPermissions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "indexd")
	path := filepath.Join(dir, "indexd.sock")
	ln, unlock, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	defer ln.Close()
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{
		{dir, fs.ModeDir | 0o700},
		{path, fs.ModeSocket | 0o600},
		{rpc.LockPath(path), 0o600},
	} {
		fi, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	if b, _ := os.ReadFile(rpc.LockPath(path)); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want this pid", b)
	}
	// Closing the listener removes the socket.
	ln.Close()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after Close: %v", err)
	}
}

func TestListenRefusesInsecureDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []fs.FileMode{0o770, 0o702, 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := Listen(filepath.Join(dir, "indexd.sock"))
		if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "writable by its group or others") || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Errorf("mode %o: %v", mode, err)
		}
	}
	// Readable by others is fine: the socket itself is 0600.
	os.Chmod(dir, 0o755)
	ln, unlock, err := Listen(filepath.Join(dir, "indexd.sock"))
	if err != nil {
		t.Fatalf("mode 755: %v", err)
	}
	ln.Close()
	unlock()

	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, _, err := Listen(filepath.Join(f, "indexd.sock")); err == nil {
		t.Error("Listen under a regular file")
	}
	if _, _, err := Listen("/tmp/" + strings.Repeat("d", 120) + "/indexd.sock"); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("long path: %v", err)
	}
}

func TestListenRefusesOtherOwner(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, _, err := Listen(filepath.Join(dir, "indexd.sock"))
	if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("dir owned by nobody: %v", err)
	}
}

func TestListenOneInstance(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "indexd.sock")
	ln, unlock, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Listen(path)
	if !errors.Is(err, rpc.ErrAlreadyRunning) || !strings.Contains(err.Error(), "by pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Listen: %v", err)
	}
	// The first one is untouched.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Handler: testMethods()}).Serve(ctx, ln) }()
	c, err := rpc.Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
	c.Close()
	cancel()
	recvSignal(t, done, "Serve to return")
	unlock()
	// Once released, the next one takes over.
	ln, unlock, err = Listen(path)
	if err != nil {
		t.Fatalf("Listen after release: %v", err)
	}
	ln.Close()
	unlock()

	// Of concurrent Listens, exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []func()
	lost := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ln, unlock, err := Listen(path)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, func() { ln.Close(); unlock() })
			case errors.Is(err, rpc.ErrAlreadyRunning):
				lost++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || lost != 7 {
		t.Errorf("%d Listens won, %d lost; want 1 and 7", len(won), lost)
	}
	for _, f := range won {
		f()
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "indexd.sock")
	// A daemon that died: its socket file stays, its lock is gone.
	ln, unlock, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	unlock()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("no stale socket: %v", err)
	}
	if _, err := rpc.Dial(context.Background(), path); !notListening(err) {
		t.Fatalf("dial to the stale socket: %v", err)
	}
	ln, unlock, err = Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Handler: testMethods()}).Serve(ctx, ln) }()
	defer func() { cancel(); recvSignal(t, done, "Serve to return") }()
	c, err := rpc.Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
}

func TestListenLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Not a socket: reported, not removed.
	path := filepath.Join(dir, "indexd.sock")
	os.WriteFile(path, []byte("mine"), 0o600)
	if _, _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Error("the regular file was touched")
	}
	// A live server that does not hold the lock (another program, an
	// old version): not replaced.
	path = filepath.Join(dir, "live.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, _, err := Listen(path); !errors.Is(err, rpc.ErrAlreadyRunning) {
		t.Errorf("Listen over a live socket: %v", err)
	}
	// The lock was released again.
	f, err := lockFile(rpc.LockPath(path))
	if err != nil {
		t.Errorf("lock after a failed Listen: %v", err)
	} else {
		f.Close()
	}
}

// A socket directory that is a symbolic link is refused, even to a
// private directory: whoever controls the link's directory could point
// it elsewhere.
func TestListenRefusesSymlinkDir(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	_, _, err := Listen(filepath.Join(link, "indexd.sock"))
	if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), link+" is a symbolic link") || !strings.Contains(err.Error(), "INDEXD_SOCKET or --socket chooses another socket path") {
		t.Errorf("symlinked directory: %v", err)
	}
	if ents, _ := os.ReadDir(real); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
}

// Without XDG_RUNTIME_DIR, XDG_CACHE_HOME and HOME, the socket is in
// $TMPDIR/indexd-UID, which other users could have made first.
func TestListenTmpFallback(t *testing.T) {
	tmp := t.TempDir()
	for k, v := range map[string]string{"TMPDIR": tmp, "HOME": "", "XDG_RUNTIME_DIR": "", "XDG_CACHE_HOME": "", "INDEXD_SOCKET": ""} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(tmp, "indexd-"+strconv.Itoa(os.Getuid()))
	path := rpc.DefaultSocketPath()
	if want := filepath.Join(dir, "indexd.sock"); path != want {
		t.Fatalf("DefaultSocketPath() = %s, want %s", path, want)
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if _, _, err := Listen(path); !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), dir+" is writable by its group or others (mode 0777)") {
		t.Errorf("indexd-UID with mode 0777: %v", err)
	}
	if err := os.Lchown(dir, 12345, 12345); err == nil {
		if _, _, err := Listen(path); !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), dir+" is owned by uid 12345") {
			t.Errorf("indexd-UID of another user: %v", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("written in a directory refused: %v", ents)
	}
	// Made by the daemon itself: 0700, and served.
	os.Remove(dir)
	ln, unlock, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	unlock()
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v", dir, fi.Mode(), err)
	}
}
