//go:build !freebsd

package testtree

import "golang.org/x/sys/unix"

// setCur sets l's soft limit.
func setCur(l *unix.Rlimit, v uint64) { l.Cur = v }
