package rpc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrAlreadyRunning: another daemon holds the socket's lock (or, with the
// lock free, something already answers on the socket). The server's
// Listen returns it; EnsureDaemon takes a start error wrapping it as
// success.
var ErrAlreadyRunning = errors.New("rpc: a daemon is already running")

// DefaultSocketPath returns where the daemon listens: $INDEXD_SOCKET if
// set, else $XDG_RUNTIME_DIR/indexd/indexd.sock, else
// indexd/indexd.sock in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache). The result is absolute.
func DefaultSocketPath() string {
	if p := os.Getenv("INDEXD_SOCKET"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	// The XDG spec says to ignore a relative XDG_RUNTIME_DIR.
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "indexd", "indexd.sock")
	}
	if d, err := os.UserCacheDir(); err == nil && filepath.IsAbs(d) {
		return filepath.Join(d, "indexd", "indexd.sock")
	}
	return filepath.Join(os.TempDir(), "indexd-"+strconv.Itoa(os.Getuid()), "indexd.sock")
}

// LockPath returns the lock file guarding the socket at path: the socket's
// name with ".sock" replaced by ".lock" (indexd.sock → indexd.lock), in the
// same directory.
func LockPath(path string) string {
	return strings.TrimSuffix(path, ".sock") + ".lock"
}
