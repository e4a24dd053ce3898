package rpc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socket makes a Unix stream socket, non-blocking and close-on-exec.
// macOS has no SOCK_CLOEXEC: the flag is set under syscall.ForkLock, as
// package net does there, so that no child started meanwhile inherits it.
func socket() (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
