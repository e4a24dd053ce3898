// Package daemonapi owns what the daemon's command lines share without
// linking the daemon: its state directory and log, its default memory
// bound, its flags (indexctl daemon passes them on to the engine) and
// the exit codes of indexctl and the engine. What travels on the socket
// is package rpc's.
package daemonapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/indexd/indexd/internal/privdir"
)

// DefaultMaxMemory is the daemon's default heap bound (daemon.Config's
// MaxMemory): 4 GiB.
const DefaultMaxMemory = 4 << 30

// LogName is the daemon's log file in the state directory.
const LogName = "indexd.log"

// maxLogSize: OpenLog starts a new log once the old one is this big,
// keeping one previous log (indexd.log.1).
const maxLogSize = 8 << 20

// DefaultStateDir returns $XDG_STATE_HOME/indexd, else
// ~/.local/state/indexd.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "indexd")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "indexd")
	}
	return filepath.Join(os.TempDir(), "indexd-"+strconv.Itoa(os.Getuid()), "state")
}

// BinaryVersion describes the running binary for status: its module
// version and, when the build recorded it, its VCS revision.
func BinaryVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}

// EnsureStateDir makes stateDir the daemon's private directory, or says
// why it cannot be: it is created 0700 if missing and must be a real
// directory (not a symbolic link) owned by the current user that nobody
// else can write to, and so must every directory on the way to it below
// the system's temporary directory when it lies there (indexd-UID in the
// fallback $TMPDIR/indexd-UID/state). See privdir.Ensure. The error
// names the directory and what to do.
func EnsureStateDir(stateDir string) error {
	err := privdir.Ensure(stateDir)
	switch {
	case errors.Is(err, privdir.ErrInsecure):
		return fmt.Errorf("daemon: unsafe state directory: %w (--state-dir or XDG_STATE_HOME chooses another)", err)
	case err != nil:
		return fmt.Errorf("daemon: state directory: %w", err)
	}
	return nil
}

// OpenLog opens the log in stateDir for appending, first making sure the
// directory is the user's alone (EnsureStateDir) and creating the file
// (0600) as needed; a log over 8 MiB is first renamed to indexd.log.1.
// A symbolic link at the log's path is an error, never followed. The
// daemon writes its log there, and the command that starts a daemon sends
// the daemon's standard error there too.
func OpenLog(stateDir string) (*os.File, error) {
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, LogName)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > maxLogSize {
		os.Rename(path, path+".1")
	}
	f, err := privdir.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("daemon: log %s is a symbolic link, which indexd does not follow: remove it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("daemon: log: %w", err)
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("daemon: log %s is not a regular file: remove it", path)
	}
	return f, nil
}
