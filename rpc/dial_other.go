//go:build !linux && !darwin && !freebsd

package rpc

import (
	"context"
	"errors"
	"os"
)

// dialUnix is supported on Linux, macOS and FreeBSD only: the server's
// user cannot be checked here (package peercred), so no server is
// accepted.
func dialUnix(ctx context.Context, path string, backlog func()) (*os.File, error) {
	return nil, errors.New("rpc: peer credentials are not supported on this system")
}
