package server

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// PeerUID returns the uid of the process at the other end of a Unix socket
// connection, as the kernel recorded it when the connection was made
// (SO_PEERCRED).
func PeerUID(nc net.Conn) (uint32, error) {
	rc, err := syscallConn(nc)
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("rpc: peer credentials: %w", cerr)
	}
	return cred.Uid, nil
}

// SameUser accepts a connection only from a process running as the
// current user. It is the default Server.CheckPeer; rpc.Dial checks the
// server the same way, on its own descriptor.
func SameUser(nc net.Conn) error {
	uid, err := PeerUID(nc)
	if err != nil {
		return err
	}
	if me := os.Getuid(); uid != uint32(me) {
		return fmt.Errorf("rpc: peer runs as uid %d, not %d", uid, me)
	}
	return nil
}

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
