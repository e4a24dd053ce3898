//go:build !linux

package rpc

import (
	"context"
	"errors"
	"os"
)

// dialUnix is supported on Linux only: the server's user cannot be
// checked here (see the server's SameUser), so no server is accepted.
func dialUnix(ctx context.Context, path string) (*os.File, error) {
	return nil, errors.New("rpc: peer credentials are not supported on this system")
}
