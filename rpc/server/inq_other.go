//go:build !linux && !darwin && !freebsd

package server

import "net"

// queuedInput cannot tell the bytes waiting unread here: a client is
// heard only when its bytes are read.
func queuedInput(net.Conn) (int, bool) { return 0, false }
