package watch

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// The notifier is the watcher's backend: the system's notifications of
// changes and the table of what is watched. Everything else in this
// package is portable; the notifier is not. Linux's is inotify
// (notifier_linux.go). No other backend is proven against the watcher's
// invariants (the package doc), so elsewhere newNotifier, and with it
// Start, fails with ErrUnsupported, and Supported is false: the daemon
// then serves roots without a watcher, and without an index it could
// not keep current (package daemon, Config.NoWatcher).
//
// What a backend must give, beyond the methods of backend:
//
//   - A watch is added on a directory (Add) or a file (AddFile) already
//     opened beneath the root, never by path, so that what is watched is
//     the inode that was opened whatever the path names by then.
//   - Its Events channel carries fsnotify.Events named by absolute path
//     under the root (a file watched on its own: once per path of it the
//     table holds), in the order the system queued them, one instance
//     for the whole root, so a sync cookie's event follows every event
//     of a change made before the cookie. Its Errors channel carries
//     fsnotify.ErrEventOverflow when events were lost. Both are closed
//     when Close has ended the reader.
//   - quiet says when nothing is queued and nothing read is unsent (the
//     barrier's fast path, caughtUp).
//   - A watch refused for the system's limit is an error wrapping ENOSPC
//     (the subtree is then walked: watch_limit), and readMaxWatches
//     gives that limit for the near-limit warning, 0 if unknown.
//
// A kqueue backend (macOS, FreeBSD) would need a descriptor per watched
// file, not per directory, and names no entry in a directory's events;
// FSEvents (macOS) names paths, not opened inodes, and coalesces. Either
// needs its own proof of these invariants before it may keep an index.
type backend interface {
	// Add watches the directory dir (open beneath the root), whose
	// events are named under abs.
	Add(dir *os.File, abs string) error
	// Remove drops the directory watch at abs, if any.
	Remove(abs string)
	// AddFile watches the file open as fd (opened by openWatchable,
	// whose inode is ino) under abs, and reports whether the watch is
	// new to the inode.
	AddFile(fd int, abs string, ino uint64) (fresh bool, err error)
	// AddLink names the file watched under known also abs.
	AddLink(known, abs string) bool
	// RemoveFile drops abs from its file's watch, and the watch once it
	// has no path left.
	RemoveFile(abs string) (dropped bool)
	// FileIno reports the inode of the file watched on its own under abs.
	FileIno(abs string) (ino uint64, ok bool)
	// FilePaths returns every path of a file watched on its own.
	FilePaths() []string
	// FileWatches counts the files watched on their own.
	FileWatches() int
	// compact copies the table's paths into fresh memory.
	compact()
	// quiet reports whether nothing is queued or being sent, and how
	// many events and errors have been sent.
	quiet() (sent uint64, ok bool)
	// Close ends the reader and waits for it.
	Close() error
}

var _ backend = (*notifier)(nil)

// ErrUnsupported: the system has no notification backend the watcher is
// proven on (every system but Linux). It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("watch: no file-change notification backend on %s: %w", runtime.GOOS, errors.ErrUnsupported)
