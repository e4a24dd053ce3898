package grep

import (
	"bytes"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rawfile"
)

// Blocks lets a scan read a large file in part: only the blocks of it
// (runs of whole lines) that may hold a match. Outside multiline mode a
// match never spans a line break, so a block that holds none of what
// every match needs holds no match, and the others, each searched on its
// own, give the file's answer. Package index keeps such filters
// (index.BlockCache: a trigram filter per block, built after a scan that
// read the file whole, used only while the file's status is the one it
// was built from) and hands a query its view of them. Implementations
// are safe for concurrent use.
type Blocks interface {
	// Scanning counts a scan that reads through the filters in (+1) and
	// out (-1): filters are built while none runs.
	Scanning(delta int)
	// Worth reports whether a file of size bytes (as listed) may have a
	// filter; a smaller one is read whole without asking.
	Worth(size int64) bool
	// Admitted calls fn, in the file's order, with each block of the
	// file rel (whose status, taken on the descriptor being read, is st)
	// that may hold a match: its bytes [start, end) and the number of its
	// first line, until fn returns false. It reports false, and calls fn
	// never, when it holds no filter of the file as it is now.
	Admitted(rel string, st unix.Stat_t, fn func(start, end int64, line int) bool) bool
	// Later tells that a scan read the file rel (status st) whole, after
	// Admitted had no filter of it, and whether the file held a match: a
	// filter may be built for the scans that follow.
	Later(rel string, st unix.Stat_t, found bool)
}

// scanBlocks scans f (open as file) through its block filter, the blocks
// it admits read with pread. ok is false if s.Blocks has no filter of the
// file as it is now: the caller scans it whole, from its start
// (scanBlocks reads with pread only), and st.laterStat is its status, to
// offer the file to Later after that scan.
func (fs *fileScanner) scanBlocks(st *fileState, f File, file *rawfile.File) (ok bool) {
	sys, err := file.Stat()
	if err != nil {
		return false
	}
	filtered := st.s.Blocks.Admitted(f.Rel, sys, func(start, end int64, line int) bool {
		if st.cancelled() {
			return false
		}
		n := int(end - start)
		if cap(fs.chunk) < n {
			fs.chunk = make([]byte, 0, max(n, 2*st.sz.Chunk))
		}
		got, err := file.ReadFullAt(fs.chunk[:n], start)
		if err != nil {
			st.h.fault = true
			return false
		}
		buf := fs.chunk[:got]
		if start == 0 && bytes.HasPrefix(buf, utf8BOM) {
			buf = buf[len(utf8BOM):]
		}
		st.line = line
		st.region(buf, true)
		return !st.full && !st.interrupted
	})
	if !filtered {
		st.later, st.laterStat = true, sys
		return false
	}
	st.h.read = true
	return true
}
