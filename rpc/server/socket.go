package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/privdir"
	"github.com/indexd/indexd/rpc"
)

// ErrInsecureDir is Listen's error when the socket's directory is not
// owned by the current user or is writable by others, so another user
// could replace the socket.
var ErrInsecureDir = errors.New("rpc: insecure socket directory")

// maxSocketPath is the longest socket path bind accepts (sun_path less
// its terminating NUL).
const maxSocketPath = 107

// Listen makes path the daemon's socket and returns its listener and a
// function releasing the instance lock:
//
//   - the directory is created 0700 if missing; it, and every directory
//     below the system's temporary directory on the way to it when it
//     lies there (indexd-UID in the fallback path), must be a real
//     directory (not a symbolic link) owned by the current user and not
//     group- or world-writable (ErrInsecureDir; see privdir.Ensure);
//   - the lock file is opened with O_NOFOLLOW;
//   - the lock file (LockPath) is locked exclusively without waiting; if
//     another process holds it, Listen returns rpc.ErrAlreadyRunning;
//   - holding the lock, a socket file left by a daemon that died is
//     removed (connecting to it is refused); one that answers means
//     another server is running (rpc.ErrAlreadyRunning); anything but a socket
//     at path is left alone and reported;
//   - the socket is created and made 0600.
//
// Closing the listener (Serve does on return) removes the socket file;
// call unlock after that, when the process no longer needs to be the only
// instance. The lock also goes when the process exits, however it exits.
func Listen(path string) (ln net.Listener, unlock func(), err error) {
	if len(path) > maxSocketPath {
		return nil, nil, fmt.Errorf("rpc: socket path %s is too long (%d bytes, at most %d); set INDEXD_SOCKET to a shorter one", path, len(path), maxSocketPath)
	}
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return nil, nil, err
	}
	lockf, err := lockFile(rpc.LockPath(path))
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	unlock = func() { once.Do(func() { lockf.Close() }) }
	if err := removeStale(path); err != nil {
		unlock()
		return nil, nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("rpc: %w", err)
	}
	// The directory is 0700, so nobody else could connect before this.
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		unlock()
		return nil, nil, fmt.Errorf("rpc: %w", err)
	}
	return l, unlock, nil
}

// ensureDir makes the socket's directory, refusing one another user could
// tamper with (see privdir.Ensure).
func ensureDir(dir string) error {
	err := privdir.Ensure(dir)
	switch {
	case errors.Is(err, privdir.ErrInsecure):
		return fmt.Errorf("%w: %w (INDEXD_SOCKET or --socket chooses another socket path)", ErrInsecureDir, err)
	case err != nil:
		return fmt.Errorf("rpc: socket directory: %w", err)
	}
	return nil
}

// lockFile opens and exclusively locks path without waiting, and writes
// this process's id into it (for people and `indexctl status`). The lock
// lives as long as the returned file is open.
func lockFile(path string) (*os.File, error) {
	f, err := privdir.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rpc: lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := ""
			if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				holder = " by pid " + strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("%w (%s is held%s)", rpc.ErrAlreadyRunning, path, holder)
		}
		return nil, fmt.Errorf("rpc: locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// removeStale removes a socket file whose server is gone. The caller holds
// the lock, so no other daemon is about to create one.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rpc: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("rpc: %s exists and is not a socket; remove it or choose another socket path", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	switch {
	case err == nil:
		c.Close()
		return fmt.Errorf("%w (%s answers though its lock was free)", rpc.ErrAlreadyRunning, path)
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rpc: removing stale socket: %w", err)
		}
		return nil
	}
	return fmt.Errorf("rpc: probing %s: %w", path, err)
}
