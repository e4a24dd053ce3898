// Package privdir makes and checks the directories in which indexd keeps
// what only its user may touch: the daemon's state directory (index DBs,
// the list of roots, the log) and the socket's directory.
//
// A directory another user controls is a way in: whoever can rename
// entries in it can swap the log for a symbolic link to a file of the
// user's (which the daemon would then append to), or replace an index DB.
// So before anything is written, Ensure checks that the directory, and
// every directory indexd made on the way to it, is a real directory (not
// a symbolic link, checked with Lstat), owned by the current user and
// writable by nobody else; files in it are then opened with O_NOFOLLOW.
package privdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrInsecure is wrapped by Ensure's errors about a directory that is not
// the user's alone.
var ErrInsecure = errors.New("insecure directory")

// Error is Ensure's report of a directory it refuses.
type Error struct {
	Path    string // the directory refused
	Problem string // what is wrong with it, and what to do
}

func (e *Error) Error() string { return e.Path + " " + e.Problem }

// Unwrap makes errors.Is(err, ErrInsecure) hold.
func (e *Error) Unwrap() error { return ErrInsecure }

// Base returns the directory above dir that Ensure takes as given: the
// system's temporary directory ($TMPDIR, else /tmp) when dir lies inside
// it, since other users share it and every directory below it on the way
// to dir must then be the user's own (e.g. indexd-UID in
// /tmp/indexd-UID/state); else dir's parent, which belongs to the user
// ($HOME/.local/state, $XDG_RUNTIME_DIR) or to whoever chose the path.
func Base(dir string) string {
	tmp := filepath.Clean(os.TempDir())
	if dir != tmp && strings.HasPrefix(dir, strings.TrimSuffix(tmp, "/")+"/") {
		return tmp
	}
	return filepath.Dir(dir)
}

// Ensure makes dir, an absolute path, a private directory of the current
// user. Base(dir) is created (0700, with its parents) if missing and not
// checked; each directory below it down to dir is created 0700 if missing
// and then, whether made now or found, must be a directory and not a
// symbolic link, owned by the current user and not writable by its group
// or others. Otherwise Ensure returns an *Error (wrapping ErrInsecure)
// naming the directory and saying what to do.
func Ensure(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("privdir: %s is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	base := Base(dir)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	rel, err := filepath.Rel(base, dir)
	if err != nil {
		return err
	}
	p := base
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, name)
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := Check(p); err != nil {
			return err
		}
	}
	return nil
}

// Check reports whether dir (not following a symbolic link) is a directory
// owned by the current user that its group and others cannot write to.
func Check(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &Error{dir, "is a symbolic link; indexd keeps its files only in a real directory of its own: remove the link, or choose another directory"}
	case !fi.IsDir():
		return &Error{dir, "is not a directory: remove it, or choose another directory"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &Error{dir, "has no owner that can be read: choose another directory"}
	}
	if me := os.Getuid(); st.Uid != uint32(me) {
		return &Error{dir, fmt.Sprintf("is owned by uid %d, not by the current user (uid %d), so its owner could replace what indexd keeps there: remove it (as its owner or root), or choose another directory", st.Uid, me)}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &Error{dir, fmt.Sprintf("is writable by its group or others (mode %04o), who could replace what indexd keeps there; fix it with: chmod 700 %s", perm, dir)}
	}
	return nil
}

// OpenFile is os.OpenFile with O_NOFOLLOW (a symbolic link at name is an
// error, ELOOP, instead of being followed) and O_CLOEXEC: for the files
// indexd keeps in its private directories.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
}

// WriteFile is os.WriteFile through OpenFile: a symbolic link at name is
// not followed.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err1 := f.Close(); err1 != nil && err == nil {
		err = err1
	}
	return err
}

// ReadFile is os.ReadFile through OpenFile: a symbolic link at name is not
// followed.
func ReadFile(name string) ([]byte, error) {
	f, err := OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
