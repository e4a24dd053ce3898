package index

import (
	"os"
	"time"
)

// Seams for the external tests (package index_test), which answer through
// the query layer and so cannot live in package index.

// SetLimits lowers the indexing limits (MaxFileSize, MaxFileTrigrams) and
// returns a function restoring them.
func SetLimits(size, trigrams int) (restore func()) {
	s, t := maxFileSize, maxFileTrigrams
	maxFileSize, maxFileTrigrams = size, trigrams
	return func() { maxFileSize, maxFileTrigrams = s, t }
}

// UnknownPaths returns the paths of the files flagged Unknown, sorted.
func (ix *Index) UnknownPaths() []string {
	var out []string
	ix.Files("", "", func(f *File) bool {
		if f.Flags&Unknown != 0 {
			out = append(out, f.Path)
		}
		return true
	})
	return out
}

// BoltPages returns the high-water mark (pages in use or free) and the
// page size of the bbolt file at path, as bbolt would read them.
func BoltPages(path string) (pages uint64, pageSize int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	bf := &boltFile{f: f, size: fi.Size()}
	m, err := bf.readMeta()
	return m.pgid, bf.pageSize, err
}

// SetClock makes the package's clock return at and returns a function
// restoring it.
func SetClock(at time.Time) (restore func()) {
	old := now
	now = func() time.Time { return at }
	return func() { now = old }
}
