// Package rooted opens files and directories beneath a workspace root
// without ever following a symbolic link: the one traversal primitive
// that the walk, the index build and updates, the watcher, Grep's scan
// and LS go through (docs/product.md, "The root is the boundary").
//
// # Guarantee
//
// Every name is root-relative and resolved by the kernel from a handle on
// the root directory, component by component, at the moment of the call.
// The call fails (ErrNotBeneath) if any component, the last included, is
// a symbolic link, and no component may be "..": what it opens is an
// entry reached through real directories under the root at that moment,
// never something a link points at. A directory swapped for a link to
// /elsewhere between a listing and an open (a rename, a git checkout, a
// renameat2 exchange loop) makes the open fail, not escape.
//
// The check and the open are one system call (openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, Linux 5.6+), or, where openat2 is
// unavailable, one openat with O_NOFOLLOW per component from the root's
// handle, each holding the previous component's descriptor. Either way
// there is no window between a check and an open of the same string.
//
// # Platforms
//
// The component walk is the portable primitive (POSIX openat, fstatat
// and O_NOFOLLOW): it is all macOS and FreeBSD use, and Linux uses it
// where openat2 is refused; ForceComponentWalk makes Linux use it for
// every call, so the tests run, on Linux, the code the other systems
// run (with O_PATH for the directories passed through, the one flag that
// differs). What is Linux's is in rooted_linux.go: openat2, O_PATH
// descriptors (a directory is passed through, and the root held, without
// the right to read it; elsewhere each is opened O_RDONLY, so a
// directory that may be searched but not read cannot be passed through,
// as with Go's os.Root), OpenPath, and statx for ID's birth time
// (elsewhere fstatat gives it, st_birthtime, on macOS and FreeBSD).
//
// # What it does not cover
//
// A directory opened beneath the root and then moved out of it keeps
// being listed through its descriptor: the listing is of a directory that
// was under the root when it was opened. Mount points under the root are
// crossed (they are part of the tree the user gave). The root itself is
// opened by its path with O_NOFOLLOW on the last component, so a root
// replaced by a symlink is refused rather than followed.
package rooted

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Errors a rooted call can end with, besides the system's own (ENOENT,
// EACCES, EMFILE …, wrapped in *os.PathError).
var (
	// ErrNotBeneath: a component of the name is a symbolic link (or not a
	// directory where one is needed), so the entry is not reachable
	// through real directories under the root.
	ErrNotBeneath = errors.New("rooted: path is not beneath the root through real directories")
	// ErrInvalidName: the name is absolute, holds a ".." component or a
	// NUL byte.
	ErrInvalidName = errors.New("rooted: invalid root-relative name")
)

// Root is a handle on a workspace root directory. It is safe for
// concurrent use; Close it when done.
type Root struct {
	fd   int
	path string
}

// Open opens the directory at path (absolute; the last component must
// not be a symlink) as a root.
func Open(path string) (*Root, error) {
	fd, err := openRetry(unix.AT_FDCWD, path, dirFlags)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			err = errors.Join(err, ErrNotBeneath)
		}
		return nil, &os.PathError{Op: "open root", Path: path, Err: err}
	}
	return &Root{fd: fd, path: path}, nil
}

// Path returns the path the root was opened by.
func (r *Root) Path() string { return r.path }

// Close releases the root's handle.
func (r *Root) Close() error {
	if r == nil || r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// OpenDir opens the directory at rel ("" or "." for the root) for
// reading its entries.
func (r *Root) OpenDir(rel string) (*os.File, error) {
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.abs(rel)), nil
}

// OpenFile opens the entry at rel read-only, non-blocking (a FIFO swapped
// in does not block; its read fails with EAGAIN) and returns the raw
// descriptor, which the caller closes.
func (r *Root) OpenFile(rel string) (int, error) {
	return r.open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC)
}

// Lstat returns the status of the entry at rel itself (a symlink is
// described, not followed) once every component before it has been
// reached through real directories.
func (r *Root) Lstat(rel string) (unix.Stat_t, error) {
	return r.lstat(rel) // rooted_linux.go, rooted_other.go
}

// lstatAt is Lstat the portable way: the entry's directory opened
// beneath the root, then fstatat of its name, not following a link.
func (r *Root) lstatAt(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	c, err := clean(rel)
	if err != nil {
		return st, &os.PathError{Op: "lstat", Path: r.abs(rel), Err: err}
	}
	if c == "." {
		if err := unix.Fstat(r.fd, &st); err != nil {
			return st, &os.PathError{Op: "fstat", Path: r.path, Err: err}
		}
		return st, nil
	}
	dir, name := Split(c)
	dfd := r.fd
	if dir != "" {
		fd, err := r.openParent(dir)
		if err != nil {
			return st, err
		}
		defer unix.Close(fd)
		dfd = fd
	}
	if err := fstatatRetry(dfd, name, &st); err != nil {
		return st, &os.PathError{Op: "lstat", Path: r.abs(rel), Err: err}
	}
	return st, nil
}

func fstatatRetry(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

// ID identifies a directory (or any entry) while it exists: its device,
// inode number and birth time. A directory deleted and made again at
// once may get the same inode number (ext4 hands it out again), never
// the same birth time unless both births fall within one tick of the
// kernel's coarse clock (a few milliseconds: seen in tests), and on
// Linux, for a directory, not the same inode generation where the file
// system draws one (Gen). Birth and Gen are 0 where they cannot be told:
// then the rest alone tells.
type ID struct {
	Dev, Ino uint64
	Birth    int64  // Unix nanoseconds
	Gen      uint32 // a directory's inode generation, where Linux tells it (0: not known)
}

// IDOf returns the ID of the entry at path itself (a final symlink is
// not followed) and whether it is a directory.
func IDOf(path string) (id ID, isDir bool, err error) {
	return idAt(unix.AT_FDCWD, path)
}

// ID returns the ID of the root directory the handle holds.
func (r *Root) ID() (ID, error) {
	id, _, err := idAt(r.fd, "")
	return id, err
}

// openParent opens the directory dir beneath the root to reach a name
// in it. A link or a file at dir (ENOTDIR: O_PATH opens a final link
// itself, then finds it no directory) is ErrNotBeneath, as it is where
// dir's components are walked one at a time.
func (r *Root) openParent(dir string) (int, error) {
	fd, err := r.open(dir, dirFlags)
	if errors.Is(err, unix.ENOTDIR) {
		err = errors.Join(err, ErrNotBeneath)
	}
	return fd, err
}

// open resolves rel beneath the root and opens it with flags.
func (r *Root) open(rel string, flags int) (int, error) {
	fd, err := openBeneath(r.fd, rel, flags)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: r.abs(rel), Err: err}
	}
	return fd, nil
}

// ReadFile reads the regular file at rel beneath the open directory dir
// (rel resolved as a Root resolves it), up to limit bytes; a longer file
// is an error. Rule files (.gitignore, .git/info/exclude) are read this
// way, through the directory the walk holds open.
func ReadFile(dir *os.File, rel string, limit int) ([]byte, error) {
	fd, err := openBeneath(int(dir.Fd()), rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir.Name() + "/" + rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir.Name()+"/"+rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: unix.EINVAL}
	}
	if st.Size > int64(limit) {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: unix.EFBIG}
	}
	data := make([]byte, 0, st.Size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data) > limit {
			return nil, &os.PathError{Op: "read", Path: f.Name(), Err: unix.EFBIG}
		}
		if err != nil || n == 0 {
			return data, nil
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// OpenRegular opens the regular file at rel beneath the open directory
// dir (rel resolved as a Root resolves it) for reading, and returns it
// with its status; anything but a regular file is refused (EINVAL). A
// file too large to read into memory at once (a git index) is read this
// way, through the directory the walk holds open.
func OpenRegular(dir *os.File, rel string) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := openBeneath(int(dir.Fd()), rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, st, &os.PathError{Op: "open", Path: dir.Name() + "/" + rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir.Name()+"/"+rel)
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, st, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, st, &os.PathError{Op: "open", Path: f.Name(), Err: unix.EINVAL}
	}
	return f, st, nil
}

// Exists reports whether dir holds an entry named name (a single
// component; a symlink counts as an entry).
func Exists(dir *os.File, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// openBeneath resolves rel beneath dirfd and opens it with flags.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	rel, err := clean(rel)
	if err != nil {
		return -1, err
	}
	fd, err := resolve(dirfd, rel, flags)
	if err != nil {
		if err == unix.ELOOP || err == unix.EXDEV {
			return -1, errors.Join(err, ErrNotBeneath)
		}
		return -1, err
	}
	return fd, nil
}

// openEach opens rel one component at a time from dirfd, each
// intermediate component with O_NOFOLLOW|O_DIRECTORY, the last with flags.
func openEach(dirfd int, rel string, flags int) (int, error) {
	if rel == "." {
		return openRetry(dirfd, ".", flags)
	}
	cur := dirfd
	for {
		name, rest, more := strings.Cut(rel, "/")
		if !more {
			fd, err := openRetry(cur, name, flags|unix.O_NOFOLLOW)
			if cur != dirfd {
				unix.Close(cur)
			}
			return fd, err
		}
		next, err := openRetry(cur, name, dirFlags)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			if err == unix.ENOTDIR {
				err = unix.ELOOP // a link (or a file) where a directory must be
			}
			return -1, err
		}
		cur, rel = next, rest
	}
}

// openRetry is openat, again after EINTR. FreeBSD refuses a final
// link under O_NOFOLLOW with EMLINK where POSIX says ELOOP (as Go's
// os.Root notes): it is ELOOP here.
func openRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		switch err {
		case unix.EINTR:
			continue
		case unix.EMLINK:
			err = unix.ELOOP
		}
		return fd, err
	}
}

// clean checks a root-relative, slash-separated name and returns it in
// the form the kernel is given: "." for the root. Leading and trailing
// slashes are dropped; a NUL byte, an empty component (two slashes) or a
// "." or ".." component is refused. It runs on every open, so it looks
// for the NUL and from slash to slash with the vectorised IndexByte, not
// a byte at a time, and allocates nothing unless it refuses.
func clean(rel string) (string, error) {
	for len(rel) > 0 && rel[0] == '/' {
		rel = rel[1:]
	}
	for len(rel) > 0 && rel[len(rel)-1] == '/' {
		rel = rel[:len(rel)-1]
	}
	if rel == "" || rel == "." {
		return ".", nil
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return rel, ErrInvalidName // whatever else is wrong with it
	}
	for rest := rel; ; {
		i := strings.IndexByte(rest, '/')
		c := rest
		if i >= 0 {
			c = rest[:i]
		}
		if len(c) <= 2 && (c == "" || c == "." || c == "..") {
			return rel, fmt.Errorf("%w: %q", ErrInvalidName, rel)
		}
		if i < 0 {
			return rel, nil
		}
		rest = rest[i+1:]
	}
}

func (r *Root) abs(rel string) string {
	if rel == "" || rel == "." {
		return r.path
	}
	return r.path + "/" + rel
}

// Split cuts rel (slashes around it trimmed) into its parent ("" at the
// top) and its last name.
func Split(rel string) (dir, name string) {
	rel = strings.Trim(rel, "/")
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// Gone reports whether err, from opening or reading an entry that a
// listing showed, means the entry is no longer there as listed: deleted,
// or replaced by a link, a directory or a special file. Nothing was lost
// by skipping it. Any other error may hide data and must be reported:
// Denied, or a fault (out of descriptors, out of memory, an I/O error).
func Gone(err error) bool {
	return errors.Is(err, ErrNotBeneath) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ENXIO) ||
		errors.Is(err, unix.ELOOP)
}

// Denied reports whether err means the entry is there but this process
// may not open or list it (EACCES, EPERM): what it holds is missing from
// any answer, which must name it. Unlike a fault it lasts until its
// permissions change (a change a watcher of its directory is told of).
func Denied(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// CreateExclusive creates an empty file at rel (which must not exist)
// beneath the root, mode 0600, and closes it.
func (r *Root) CreateExclusive(rel string) error {
	fd, err := r.open(rel, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// Remove removes the file (not a directory) at rel beneath the root.
func (r *Root) Remove(rel string) error {
	dir, name := Split(rel)
	if name == "" {
		return &os.PathError{Op: "remove", Path: r.abs(rel), Err: unix.EINVAL}
	}
	dfd := r.fd // a name at the top is unlinked from the root itself
	if dir != "" {
		fd, err := r.openParent(dir)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		dfd = fd
	}
	if err := unix.Unlinkat(dfd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: r.abs(rel), Err: err}
	}
	return nil
}
