package testtree

import "golang.org/x/sys/unix"

// exchange swaps the entries at the absolute paths a and b atomically.
var exchange = func(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
