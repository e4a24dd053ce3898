package server

import "golang.org/x/sys/unix"

// hangupDetectable says whether hungUp can tell a peer that closed the
// connection from one that only shut down its writing side.
const hangupDetectable = true

// hungUp reports whether the peer of the socket fd has closed it entirely
// (POLLHUP: both directions shut), as opposed to only its writing side
// (POLLRDHUP). It is a syscall.RawConn.Read callback: false means "wait
// for the next readiness event and ask again".
func hungUp(fd uintptr) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true // cannot watch it any more: assume the worst
		}
		return n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
	}
}
