package peercred

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// UID returns the user id of the peer of the connected Unix socket fd
// (SO_PEERCRED).
func UID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("peercred: SO_PEERCRED: %w", err)
	}
	return cred.Uid, nil
}
