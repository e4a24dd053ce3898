//go:build !linux

package rawfile

// prefetchSupported: no probe of the page cache here (see Prefetcher),
// so StartPrefetch starts nothing.
const prefetchSupported = false

// readNoWait is never called (prefetchSupported is false).
func readNoWait(fd int, iov [][]byte) bool { return true }

// willNeed is never called (prefetchSupported is false).
func willNeed(fd int, n int64) {}
