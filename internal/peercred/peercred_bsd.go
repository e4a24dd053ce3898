//go:build darwin || freebsd

package peercred

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION of <sys/ucred.h> (0 on macOS and
// FreeBSD), which golang.org/x/sys/unix does not define.
const xucredVersion = 0

// UID returns the user id of the peer of the connected Unix socket fd
// (LOCAL_PEERCRED: the effective uid of the process that connected, or
// that listened, when the connection was made).
func UID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("peercred: LOCAL_PEERCRED: %w", err)
	}
	if cred.Version != xucredVersion {
		return 0, fmt.Errorf("peercred: LOCAL_PEERCRED: xucred version %d, want %d", cred.Version, xucredVersion)
	}
	return cred.Uid, nil
}
