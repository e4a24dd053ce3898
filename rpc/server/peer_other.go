//go:build !linux

package server

import (
	"errors"
	"net"
)

// PeerUID is supported on Linux only.
func PeerUID(nc net.Conn) (uint32, error) {
	return 0, errors.New("rpc: peer credentials are not supported on this system")
}

// SameUser accepts a connection only from a process running as the
// current user. On this system the peer cannot be identified, so it
// rejects every connection; use a Server.CheckPeer of your own.
func SameUser(nc net.Conn) error {
	_, err := PeerUID(nc)
	return err
}

const hangupDetectable = false

func hungUp(fd uintptr) bool { return true }
