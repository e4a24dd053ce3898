//go:build !linux

package server

// hangupDetectable is false: without POLLRDHUP (macOS, FreeBSD) a peer
// that closed the connection cannot be told from one that only shut down
// its writing side, so the end of a client's input counts as a hang-up.
const hangupDetectable = false

func hungUp(fd uintptr) bool { return true }
