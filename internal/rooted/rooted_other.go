//go:build !linux

package rooted

import (
	"os"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory to pass through or hold (the root, each
// component of a walk, the directory of a name to stat or remove). There
// is no O_PATH: it is opened for reading, as Go's os.Root opens one, so
// a directory that may be searched but not read cannot be passed through.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// ForceComponentWalk is for tests (on Linux it selects the component
// walk): names are always resolved one component at a time here. The
// returned function does nothing.
func ForceComponentWalk() (restore func()) { return func() {} }

// resolve opens rel (clean) beneath dirfd with flags, one component at a
// time: there is no openat2.
func resolve(dirfd int, rel string, flags int) (int, error) {
	return openEach(dirfd, rel, flags)
}

// lstat is Lstat: through the entry's directory (lstatAt).
func (r *Root) lstat(rel string) (unix.Stat_t, error) { return r.lstatAt(rel) }

// idAt is ID by fstatat (fstat when path is ""), whose st_birthtime
// macOS and FreeBSD fill in where the file system records one (APFS,
// HFS+, UFS2, ZFS); 0 or less means it does not.
func idAt(dirfd int, path string) (id ID, isDir bool, err error) {
	var st unix.Stat_t
	if path == "" {
		err = unix.Fstat(dirfd, &st)
	} else {
		err = unix.Fstatat(dirfd, path, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return ID{}, false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	id = ID{Dev: uint64(st.Dev), Ino: st.Ino}
	if st.Btim.Sec > 0 {
		id.Birth = st.Btim.Sec*1e9 + int64(st.Btim.Nsec)
	}
	return id, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}
