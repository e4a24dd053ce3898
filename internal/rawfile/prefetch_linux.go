package rawfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// prefetchSupported: the kernel tells a cached page from one that is not
// (preadv2 RWF_NOWAIT) and reads ahead on request (posix_fadvise).
const prefetchSupported = true

// readNoWait reports whether the first page of the regular file open as
// fd is cached, by a one-byte read into iov that fails rather than wait
// for the disk; false also where that cannot be told (a kernel or file
// system without RWF_NOWAIT), so that the file is asked for.
func readNoWait(fd int, iov [][]byte) bool {
	_, err := unix.Preadv2(fd, iov, 0, unix.RWF_NOWAIT)
	switch {
	case err == nil:
		return true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return false
	}
	return true // another error: the reader will meet it
}

// willNeed asks the kernel to read the first n bytes of the file open as
// fd ahead, and returns at once.
func willNeed(fd int, n int64) {
	unix.Fadvise(fd, 0, n, unix.FADV_WILLNEED)
}
