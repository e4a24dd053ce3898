package rooted

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory to pass through or hold (the root, each
// component of a walk, the directory of a name to stat or remove): an
// O_PATH descriptor names it without the right to read it, so a
// directory that may be searched but not read is passed through.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// useOpenat2 is cleared the first time openat2 proves unavailable, and
// by ForceComponentWalk.
var useOpenat2 atomic.Bool

func init() { useOpenat2.Store(true) }

// ForceComponentWalk makes every Root resolve names one openat per
// component, and stat an entry through its directory, as on kernels
// without openat2 and on every other system; tests use it to exercise
// that path. It returns a function restoring the previous mode.
func ForceComponentWalk() (restore func()) {
	prev := useOpenat2.Swap(false)
	return func() { useOpenat2.Store(prev) }
}

// resolve opens rel (clean) beneath dirfd with flags: by openat2 while
// the kernel has it, else one component at a time.
func resolve(dirfd int, rel string, flags int) (int, error) {
	if !useOpenat2.Load() {
		return openEach(dirfd, rel, flags)
	}
	fd, err := openat2(dirfd, rel, flags)
	if err == unix.ENOSYS {
		// No openat2 here (an old kernel, or a seccomp filter that
		// refuses it): walk the components ourselves from now on.
		useOpenat2.Store(false)
		fd, err = openEach(dirfd, rel, flags)
	}
	return fd, err
}

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

func openat2(dirfd int, rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	for range 16 {
		fd, err := unix.Openat2(dirfd, rel, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue // EAGAIN: a concurrent rename made the kernel unsure; retry
		}
		return fd, err
	}
	return -1, unix.EAGAIN
}

// lstat is Lstat: while names are resolved by openat2, the entry itself
// opened O_PATH in that one call (a final link is opened, not followed),
// then fstat; else as on other systems (lstatAt).
func (r *Root) lstat(rel string) (unix.Stat_t, error) {
	if !useOpenat2.Load() {
		return r.lstatAt(rel)
	}
	var st unix.Stat_t
	fd, err := r.open(rel, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return st, &os.PathError{Op: "fstat", Path: r.abs(rel), Err: err}
	}
	return st, nil
}

// OpenPath opens the entry at rel itself as an O_PATH descriptor, which
// the caller closes: nothing is read through it and no device or FIFO is
// opened, but it names the entry's inode, for fstat and for an inotify
// watch added through /proc/self/fd. Linux only.
func (r *Root) OpenPath(rel string) (int, error) {
	return r.open(rel, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC)
}

// idAt is ID by statx, which gives the birth time where the file system
// records it: of path beneath dirfd, or of dirfd itself when path is "".
func idAt(dirfd int, path string) (id ID, isDir bool, err error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if path == "" {
		flags = unix.AT_EMPTY_PATH
	}
	var sx unix.Statx_t
	if err := unix.Statx(dirfd, path, flags, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &sx); err != nil {
		return ID{}, false, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	id = ID{Dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), Ino: sx.Ino}
	if sx.Mask&unix.STATX_BTIME != 0 {
		id.Birth = sx.Btime.Sec*1e9 + int64(sx.Btime.Nsec)
	}
	isDir = uint32(sx.Mode)&unix.S_IFMT == unix.S_IFDIR
	if isDir {
		id.Gen = generation(dirfd, path, sx.Ino)
	}
	return id, isDir, nil
}

// fsIocGetVersion is FS_IOC_GETVERSION, _IOR('v', 1, long), as the
// architectures Go builds for on Linux but mips and ppc encode it.
const fsIocGetVersion = 2<<30 | uint(unsafe.Sizeof(int(0)))<<16 | 'v'<<8 | 1

// generation returns the inode generation (FS_IOC_GETVERSION: ext4, xfs
// and btrfs draw a new one when they allocate an inode) of the directory
// at path beneath dirfd (dirfd itself when path is ""), if it is still
// the inode ino; 0 when it cannot be told. A directory deleted and made
// again may get the old one's inode number and, within one tick of the
// kernel's coarse clock, its birth time: the generation tells them
// apart.
func generation(dirfd int, path string, ino uint64) uint32 {
	if path == "" {
		path = "."
	}
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Ino != ino {
		return 0
	}
	gen, err := unix.IoctlGetUint32(fd, fsIocGetVersion)
	if err != nil {
		return 0
	}
	return gen
}
