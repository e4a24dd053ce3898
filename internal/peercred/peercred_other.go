//go:build !linux && !darwin && !freebsd

package peercred

import (
	"errors"
	"fmt"
)

// UID cannot tell the peer's user on this system.
func UID(fd int) (uint32, error) {
	return 0, fmt.Errorf("peercred: peer credentials on this system: %w", errors.ErrUnsupported)
}
