// Package peercred tells which user runs the process at the other end of
// a connected Unix socket, as the kernel recorded it when the connection
// was made: SO_PEERCRED on Linux, LOCAL_PEERCRED (struct xucred) on macOS
// and FreeBSD. The daemon accepts only its own user's clients, and a
// client only its own user's daemon (package rpc, rpc/server); on a
// system with neither, UID fails with errors.ErrUnsupported and no
// connection is accepted.
package peercred

import (
	"fmt"
	"os"
)

// SameUser returns nil when the peer of the connected Unix socket fd runs
// as the current user, else an error saying who it runs as or why that
// cannot be told.
func SameUser(fd int) error {
	uid, err := UID(fd)
	if err != nil {
		return err
	}
	if me := os.Getuid(); uid != uint32(me) {
		return fmt.Errorf("peercred: peer runs as uid %d, not %d", uid, me)
	}
	return nil
}
