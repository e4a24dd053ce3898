package server

import (
	"net"

	"github.com/indexd/indexd/internal/peercred"
)

// PeerUID returns the uid of the process at the other end of a Unix socket
// connection, as the kernel recorded it when the connection was made
// (package peercred).
func PeerUID(nc net.Conn) (uint32, error) {
	rc, err := syscallConn(nc)
	if err != nil {
		return 0, err
	}
	var uid uint32
	var uerr error
	if err := rc.Control(func(fd uintptr) { uid, uerr = peercred.UID(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, uerr
}

// SameUser accepts a connection only from a process running as the
// current user. It is the default Server.CheckPeer; rpc.Dial checks the
// server the same way, on its own descriptor.
func SameUser(nc net.Conn) error {
	rc, err := syscallConn(nc)
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = peercred.SameUser(int(fd)) }); err != nil {
		return err
	}
	return serr
}
