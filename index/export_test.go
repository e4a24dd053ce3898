package index

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Seams for the external tests (package index_test), which answer through
// the query layer and so cannot live in package index.

// LimitsOptions returns OpenOptions whose index takes size and trigrams
// for its indexing limits (MaxFileSize, MaxFileTrigrams).
func LimitsOptions(size, trigrams int) *OpenOptions {
	k := defaultKnobs()
	k.maxFileSize, k.maxFileTrigrams = size, trigrams
	return &OpenOptions{knobs: &k}
}

// UnknownPaths returns the paths of the files flagged Unknown, sorted.
func (ix *Index) UnknownPaths() []string {
	var out []string
	ix.Candidates(CandidateOptions{}, func(f *File) bool {
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

// ClockOptions returns OpenOptions whose index's clock always says at.
func ClockOptions(at time.Time) *OpenOptions {
	k := defaultKnobs()
	k.now = func() time.Time { return at }
	return &OpenOptions{knobs: &k}
}

// smallBlockSizes make block filters apply to the small files of a test:
// files from 1 KiB, blocks of 256 bytes or fewer once 96 bits are set (so
// both rules cut blocks), the racy window racy (0: a filter is built from
// a file written a moment ago).
func smallBlockSizes(racy time.Duration) blockSizes {
	return blockSizes{minFile: 1 << 10, largeFile: 1 << 10, maxFile: 1 << 20, bytes: 256, fill: 96, max: 8 << 10, racyWindow: racy}
}

// SmallBlocks tune a SmallBlockCache: its racy window (0: a filter is
// built from a file written a moment ago), the size from which a file
// gets a filter after any scan that read it (0: 1 KiB, the smallest that
// gets one), and its hooks: Built is called, with the number of scans
// running, each time the builder takes a file, Read with each block a
// filtered scan is given.
type SmallBlocks struct {
	Racy      time.Duration
	LargeFile int64
	Built     func(scans int)
	Read      func(rel string, block int)
}

// SmallBlockCache returns a cache keeping at most maxBytes of filters,
// whose sizes make the small files of a test get filters
// (smallBlockSizes), tuned by o.
func SmallBlockCache(maxBytes int64, o SmallBlocks) *BlockCache {
	sz := smallBlockSizes(o.Racy)
	if o.LargeFile > 0 {
		sz.largeFile = o.LargeFile
	}
	sz.built, sz.read = o.Built, o.Read
	return newBlockCache(maxBytes, sz)
}

// Settle waits until the cache's builder has nothing left to do.
func (c *BlockCache) Settle() { c.settle() }

// Filters returns how many filters the cache holds, and how many files
// wait for the builder.
func (c *BlockCache) Filters() (held, waiting int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files), len(c.queue)
}

// HasFilter reports whether the cache holds a filter of root/rel for the
// status st.
func (c *BlockCache) HasFilter(root, rel string, st *unix.Stat_t) bool {
	return c.get(blockKey{root, rel}, stampOf(st)) != nil
}

// AskLater asks for a filter of root/rel with the status st (which the
// file may no longer have).
func (c *BlockCache) AskLater(root, rel string, st *unix.Stat_t) {
	c.later(blockKey{root, rel}, stampOf(st))
}
