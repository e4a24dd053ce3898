//go:build linux || darwin || freebsd

package server

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// queuedInput returns how many bytes wait unread in the connection's
// receive queue (inqRequest), and whether it could tell.
func queuedInput(nc net.Conn) (int, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), inqRequest) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
