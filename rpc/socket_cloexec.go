//go:build linux || freebsd

package rpc

import "golang.org/x/sys/unix"

// socket makes a Unix stream socket, non-blocking and close-on-exec in
// the one call.
func socket() (int, error) {
	return unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}
