//go:build darwin || freebsd

package server

// inqRequest is the ioctl that gives a socket's unread bytes: FIONREAD
// of <sys/filio.h>, _IOR('f', 127, int) on macOS and FreeBSD, which
// golang.org/x/sys/unix does not define there.
const inqRequest = 0x4004667f
