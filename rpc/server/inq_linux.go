package server

import "golang.org/x/sys/unix"

// inqRequest is the ioctl that gives a socket's unread bytes: SIOCINQ.
const inqRequest = unix.SIOCINQ
