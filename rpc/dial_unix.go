//go:build linux || darwin || freebsd

package rpc

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/peercred"
)

// dialUnix connects a Unix stream socket to the server at path and checks
// that the server runs as the current user (package peercred). The socket is
// made here rather than with package net, which the query client does not
// link: it is non-blocking and close-on-exec, and the returned file reads
// and writes it through the runtime's poller, deadlines included.
//
// A server whose backlog is full refuses a non-blocking connect with
// EAGAIN on Linux; dialUnix then tries again, backing off, until ctx is
// done, as a blocking connect would wait for room. (macOS and FreeBSD
// refuse it with ECONNREFUSED, as if no server listened.) It calls
// backlog, if set, each time before it waits.
func dialUnix(ctx context.Context, path string, backlog func()) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, dialError(path, err)
	}
	fd, err := socket()
	if err != nil {
		return nil, dialError(path, os.NewSyscallError("socket", err))
	}
	sa := &unix.SockaddrUnix{Name: path}
	var t *time.Timer
	delay := 100 * time.Microsecond
	for {
		err = unix.Connect(fd, sa)
		if err == unix.EINTR {
			continue
		}
		if err != unix.EAGAIN {
			break
		}
		if backlog != nil {
			backlog()
		}
		if t == nil {
			t = time.NewTimer(delay)
			defer t.Stop()
		} else {
			t.Reset(delay)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			unix.Close(fd)
			return nil, dialError(path, ctx.Err())
		}
		delay = min(2*delay, 10*time.Millisecond)
	}
	if err != nil {
		unix.Close(fd)
		return nil, dialError(path, os.NewSyscallError("connect", err))
	}
	if err := peercred.SameUser(fd); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rpc: the daemon's socket: %w", err)
	}
	return os.NewFile(uintptr(fd), "unix:"+path), nil
}

// dialError says which socket a failed connection was for, as package
// net would ("dial unix PATH: connect: ...").
func dialError(path string, err error) error {
	return fmt.Errorf("dial unix %s: %w", path, err)
}
