package testtree

import "golang.org/x/sys/unix"

// exchange swaps the entries at the absolute paths a and b atomically.
var exchange = func(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}
