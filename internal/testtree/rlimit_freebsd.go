package testtree

import "golang.org/x/sys/unix"

// setCur sets l's soft limit (a signed field on FreeBSD).
func setCur(l *unix.Rlimit, v uint64) { l.Cur = int64(v) }
