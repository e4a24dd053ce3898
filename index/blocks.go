package index

// Block filters: searching a large file without reading all of it.
//
// The index narrows a search to the files that hold the pattern's
// trigrams, but a large file dense in trigrams (a base64 fixture, a lock
// file, bundled JavaScript) holds almost every one, so it is a candidate
// for almost every pattern and reading it costs more than the rest of the
// answer (on GOROOT/src five such files, 4.7 MB, were read by every
// literal search); and a phrase's false candidates are mostly files of
// some size that hold its trigrams apart (`func main` read 6 MB of them,
// in files of 32 to 256 KiB, for its 1,000 matches in 3.8 MB). A
// BlockCache keeps, for such files a query has read, a filter per block
// of whole lines; a later scan of the file reads and searches only the
// blocks whose filter admits the pattern's trigram query.
//
// Which files, and when. A filter is built after the scan that read the
// file, not during it: hashing every trigram of a file costs many times
// reading and searching it (building the filters in the scan made a
// first `func main` limit 1000 on GOROOT/src take 17–18 ms instead of
// 4.8–5.2, and `func \w+Handler\(` 16 instead of 2.2). A scan that read
// a file of blockLargeFile bytes or more, or one of blockMinFile or more
// and found nothing in it, asks the cache for its filter (BlockQuery.Later,
// through grep.Blocks); the cache's builder goroutine reads the file again
// and builds it, for the queries that follow. Smaller files are always
// read whole: their filter would say little more than the index does.
//
// Blocks. A block is a run of whole lines: it starts where the previous
// one ended and ends after the first line break at or past blockBytes
// bytes from its start, or, sooner, after the first line break once its
// filter has blockFill bits set (the last block at the end of the file).
// The second rule keeps blocks short where the file is dense in
// trigrams: 16 KiB of base64 holds a good part of every trigram its
// alphabet can make (its filter 19% full, on GOROOT/src's base64
// fixture), so a literal's trigrams all occur in many blocks that do not
// hold the literal (xyzzy read 17 of that fixture's 96 blocks, none
// holding it; absent five-letter literals admit 39% of 16 KiB blocks of
// random base64 and 2.7% of those cut at blockFill). Source code rarely
// reaches blockFill within blockBytes. A file with a block over blockMax
// bytes (a line that long) gets no filter.
//
// Filters. A block's filter is a bitmap of blockBits bits, one hash of
// each ASCII-folded trigram of the bytes from two before the block's
// start to its end, so that a trigram holding the line break before its
// first line counts too. A match never spans a line break outside
// multiline mode, so the trigrams of a match lie in its line, and the
// line with its break on either side lies in one block's bytes: a block
// whose filter does not admit the query (the index's trigram query,
// evaluated with "holds trigram t" read as "t's bit is set", case folded
// as the index folds it) holds no match. A filter only says no too
// rarely (hash collisions make it admit more), never too often.
//
// Freshness. An entry is used only while the file's device, inode, size,
// mtime and ctime, taken by fstat on the descriptor being scanned, equal
// those taken before its filter was built; and a filter is built only
// from a file whose status is still the one the scan saw, whose mtime and
// ctime are older than blockRacyWindow at the start of its read, and
// kept only if the file's status did not change while it was read.
// Content changed since — its mtime put back or not — has a new ctime,
// which no user can set.
//
// Only plain searches use filters: not multiline, not invert_match, no
// context lines (those read lines outside the matching ones). The scan
// (package grep) reads a file through its filter by the grep.Blocks a
// query's BlockQuery implements; this file owns the filters, their
// trigram hashing and when they are built.
//
// Goroutines: a BlockCache runs at most one builder, started when a
// filter is asked for and none runs, ending when none is left to build
// (at most blockQueueMax wait); it builds only while no scan uses the
// cache. Close stops it and waits for it.

import (
	"bytes"
	"sync"
	"time"

	csindex "github.com/google/codesearch/index"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
)

// blockSizes are the sizes a BlockCache works with (the names above are
// their fields'), its racy window, and its tests' hooks: defaultBlockSizes
// for every cache but this package's tests', which shrink the sizes so
// that small files get filters (smallBlockSizes), and NewBlockCacheWith's.
type blockSizes struct {
	// minFile (blockMinFile): smaller files get no filter; from this
	// size, a file a scan read whole and found nothing in gets one built
	// after it.
	minFile int64
	// largeFile (blockLargeFile): from this size, a file gets a filter
	// after a scan that read it, whatever the scan found.
	largeFile int64
	// maxFile (blockMaxFile): larger files get no filter (building one
	// reads the file into memory).
	maxFile int64
	// bytes (blockBytes) is where a block's last line may end, at the
	// earliest.
	bytes int
	// fill (blockFill): a block ends with the line during which its
	// filter's set bits reach this many, if that comes before bytes.
	fill int
	// max (blockMax) bounds one block, so a block read stays bounded.
	max int
	// racyWindow (blockRacyWindow): a file changed this recently gets no
	// filter.
	racyWindow time.Duration

	// built, if set, is called (holding the cache's lock) with the
	// number of scans running each time the builder takes a file.
	built func(scans int)
	// read, if set, is called with each block a filtered scan is given
	// (BlockQuery.Admitted).
	read func(rel string, block int)
}

// defaultBlockSizes are the block filters' sizes (never written).
var defaultBlockSizes = blockSizes{
	minFile:    32 << 10,
	largeFile:  256 << 10,
	maxFile:    16 << 20,
	bytes:      16 << 10,
	fill:       blockBits / 8,
	max:        1 << 20,
	racyWindow: RacyWindow,
}

// blockBits is the number of bits of one block's filter, 2^blockLog.
const (
	blockLog  = 15
	blockBits = 1 << blockLog
)

// blockQueueMax bounds the files waiting for a filter to be built.
const blockQueueMax = 1024

// DefaultBlockCacheBytes bounds the filters a daemon keeps (a quarter of
// the bytes of the files they describe for source code, up to as many for
// files dense in trigrams, whose blocks are shorter).
const DefaultBlockCacheBytes = 32 << 20

// BlockCache holds the block filters of files of blockMinFile bytes and
// more, for the scans of index-backed Greps (a query's view: Query), and
// builds them (later). One cache serves every root of a process. It is
// safe for concurrent use. The zero value is not usable; see
// NewBlockCache.
type BlockCache struct {
	max int64      // bytes of filters kept at most
	sz  blockSizes // set when made, then only read

	mu    sync.Mutex
	used  int64
	tick  uint64
	files map[blockKey]*blockFilter

	// The files waiting for the builder (later), and its state.
	queue    []blockJob
	queued   map[blockKey]bool
	building bool       // the builder runs
	closed   bool       // Close was called: nothing more is built
	scans    int        // scans using the cache now: the builder waits for none
	changed  *sync.Cond // broadcast (on mu) when building, closed or scans change
}

// blockJob is a filter to build: the file as a scan saw it.
type blockJob struct {
	key   blockKey
	stamp fileStamp
}

// NewBlockCache returns a cache keeping at most maxBytes of filters; the
// least recently used go first.
func NewBlockCache(maxBytes int64) *BlockCache {
	return newBlockCache(maxBytes, defaultBlockSizes)
}

// BlockCacheOptions change what NewBlockCacheWith's cache takes from
// NewBlockCache's.
type BlockCacheOptions struct {
	// NoRacyWindow builds the filter of a file however recently it
	// changed (tests of what a cache does with files they have just
	// written; by default a file changed within RacyWindow gets none).
	NoRacyWindow bool
}

// NewBlockCacheWith is NewBlockCache with o.
func NewBlockCacheWith(maxBytes int64, o BlockCacheOptions) *BlockCache {
	sz := defaultBlockSizes
	if o.NoRacyWindow {
		sz.racyWindow = 0
	}
	return newBlockCache(maxBytes, sz)
}

// newBlockCache is NewBlockCache with the sizes sz.
func newBlockCache(maxBytes int64, sz blockSizes) *BlockCache {
	c := &BlockCache{max: maxBytes, sz: sz, files: make(map[blockKey]*blockFilter), queued: make(map[blockKey]bool)}
	c.changed = sync.NewCond(&c.mu)
	return c
}

// Close stops the builder, drops the files waiting for it and waits for
// it to end. The cache still answers (get, put) after Close.
func (c *BlockCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.queue = nil
	clear(c.queued)
	c.changed.Broadcast()
	for c.building {
		c.changed.Wait()
	}
}

// scanning counts a scan that uses the cache in (+1) or out (-1): the
// builder builds while none runs, so that a query does not share the
// processors with the filters its own misses asked for.
func (c *BlockCache) scanning(delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scans += delta
	if c.scans == 0 {
		c.changed.Broadcast()
	}
}

// later asks for a filter of the file k stamped s, to be built by the
// builder, unless the cache has one, is closed, or has too many waiting,
// or the file changed too recently to get one (it would be read again
// for nothing: a log being written would be, after every scan).
func (c *BlockCache) later(k blockKey, s fileStamp) {
	if c.racyStamp(s) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.queued[k] || len(c.queue) >= blockQueueMax {
		return
	}
	if bf := c.files[k]; bf != nil && bf.stamp == s {
		return
	}
	c.queue = append(c.queue, blockJob{k, s})
	c.queued[k] = true
	if !c.building {
		c.building = true
		go c.build()
	}
}

// build is the builder: it builds the queued filters in order, each
// while no scan runs, and ends when none is left or the cache is closed.
// A file no longer as the scan saw it (another stamp) is left alone: a
// later scan asks again.
func (c *BlockCache) build() {
	var (
		root *rooted.Root
		buf  []byte
	)
	defer func() {
		if root != nil {
			root.Close()
		}
		c.mu.Lock()
		c.building = false
		c.changed.Broadcast()
		c.mu.Unlock()
	}()
	for {
		c.mu.Lock()
		for c.scans > 0 && !c.closed {
			c.changed.Wait()
		}
		if c.closed || len(c.queue) == 0 {
			c.queue = nil
			c.mu.Unlock()
			return
		}
		if c.sz.built != nil {
			c.sz.built(c.scans)
		}
		j := c.queue[0]
		c.queue = c.queue[1:]
		delete(c.queued, j.key)
		c.mu.Unlock()
		if root == nil || root.Path() != j.key.root {
			if root != nil {
				root.Close()
			}
			var err error
			if root, err = rooted.Open(j.key.root); err != nil {
				root = nil
				continue
			}
		}
		file, err := rawfile.Open(root, j.key.rel)
		if err != nil {
			continue
		}
		var bf *blockFilter
		if st, err := file.Stat(); err == nil && stampOf(&st) == j.stamp {
			bf = c.buildFilter(file, j.stamp, &buf)
		}
		file.Close()
		if bf != nil {
			c.put(j.key, bf)
		}
	}
}

// blockKey names a file: its root and root-relative path.
type blockKey struct{ root, rel string }

// fileStamp is what must not change for a filter to stay valid.
type fileStamp struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

func stampOf(st *unix.Stat_t) fileStamp {
	return fileStamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// blockFilter is one file's filter. A file found unfit for one (a block
// over blockSizes.max, or binary) has an entry with no blocks, so it is
// not read again for nothing while unchanged.
type blockFilter struct {
	stamp  fileStamp
	starts []int64  // block i holds bytes [starts[i], starts[i+1]); the last entry is the size
	lines  []int    // the number of block i's first line
	bits   []uint64 // block i's filter: bits[i*blockWords : (i+1)*blockWords]
	used   uint64   // the cache's tick when last used
}

const blockWords = blockBits / 64

func (bf *blockFilter) bytes() int64 {
	return int64(len(bf.bits))*8 + int64(len(bf.starts))*8 + int64(len(bf.lines))*8 + 64
}

// get returns the filter of root/rel if it has this stamp.
func (c *BlockCache) get(k blockKey, s fileStamp) *blockFilter {
	c.mu.Lock()
	defer c.mu.Unlock()
	bf := c.files[k]
	if bf == nil || bf.stamp != s {
		return nil
	}
	c.tick++
	bf.used = c.tick
	return bf
}

// put stores bf for k, dropping the least recently used filters past the
// bound.
func (c *BlockCache) put(k blockKey, bf *blockFilter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.files[k]; old != nil {
		c.used -= old.bytes()
	}
	c.tick++
	bf.used = c.tick
	c.files[k] = bf
	c.used += bf.bytes()
	for c.used > c.max && len(c.files) > 0 {
		var oldest blockKey
		first := true
		for k, f := range c.files {
			if first || f.used < c.files[oldest].used {
				oldest, first = k, false
			}
		}
		c.used -= c.files[oldest].bytes()
		delete(c.files, oldest)
	}
}

// blockHash is the bit of the ASCII-folded trigram t (24 bits) in a
// block's filter.
func blockHash(t uint32) uint32 { return trigramHash(t, blockLog) }

// buildBlockFilter computes the filter of data, the whole file stamped s,
// with the sizes sz, or one with no blocks if the file is unfit.
func buildBlockFilter(data []byte, s fileStamp, sz *blockSizes) *blockFilter {
	bf := &blockFilter{stamp: s}
	if bytes.IndexByte(data[:min(len(data), BinarySniff)], 0) >= 0 {
		return bf
	}
	var starts []int64
	var lines []int
	var bits []uint64
	line := 1
	for start := 0; start < len(data); {
		starts = append(starts, int64(start))
		lines = append(lines, line)
		bits = append(bits, make([]uint64, blockWords)...)
		w := bits[len(bits)-blockWords:]
		// The block's trigrams begin two bytes before it (t holds the
		// last two bytes read); end is where it ends; set counts the
		// bits its filter has set so far.
		t := uint32(0)
		for q := max(0, start-2); q < start; q++ {
			t = t<<8 | uint32(lower[data[q]])
		}
		end, set := len(data), 0
		for p := start; p < len(data); p++ {
			c := data[p]
			t = (t<<8 | uint32(lower[c])) & 0xFFFFFF
			if p >= 2 {
				h := blockHash(t)
				if m := uint64(1) << (h & 63); w[h>>6]&m == 0 {
					w[h>>6] |= m
					set++
				}
			}
			if p+1-start > sz.max {
				return &blockFilter{stamp: s}
			}
			if c == '\n' {
				line++
				if p+1-start >= sz.bytes || set >= sz.fill {
					end = p + 1
					break
				}
			}
		}
		start = end
	}
	starts = append(starts, int64(len(data)))
	bf.starts, bf.lines, bf.bits = starts, lines, bits
	return bf
}

// blockAdmits reports whether a block with filter w may hold a match of the
// trigram query q.
func blockAdmits(q *csindex.Query, w []uint64) bool {
	return holds(q, func(t uint32) bool {
		h := blockHash(t)
		return w[h>>6]&(1<<(h&63)) != 0
	})
}

// BlockQuery is a BlockCache as one Grep over one root sees it: the
// filters of the root's files, and the trigram query of the Grep's
// pattern, which decides which blocks may hold a match. It implements
// grep.Blocks.
type BlockQuery struct {
	c    *BlockCache
	root string
	q    *csindex.Query
}

// Query returns the cache's view for a Grep over root (absolute, the
// files named beneath it) whose pattern's trigram query is q.
func (c *BlockCache) Query(root string, q *csindex.Query) *BlockQuery {
	return &BlockQuery{c: c, root: root, q: q}
}

// Scanning counts a scan that reads through the filters in (+1) or out
// (-1): the builder builds while none runs, so that a query does not
// share the processors with the filters its own misses asked for.
func (b *BlockQuery) Scanning(delta int) { b.c.scanning(delta) }

// Worth reports whether a file of size bytes may have a filter: smaller
// files are always read whole.
func (b *BlockQuery) Worth(size int64) bool { return size >= b.c.sz.minFile }

// Admitted calls fn with the blocks of the file rel (status st) whose
// filter admits the query, in order, until fn returns false; false, and
// fn never called, when the cache holds no filter of the file with that
// status, or only the entry of a file unfit for one.
func (b *BlockQuery) Admitted(rel string, st unix.Stat_t, fn func(start, end int64, line int) bool) bool {
	stamp := stampOf(&st)
	if sz := &b.c.sz; stamp.size < sz.minFile || stamp.size > sz.maxFile {
		return false
	}
	bf := b.c.get(blockKey{b.root, rel}, stamp)
	if bf == nil || len(bf.starts) == 0 {
		return false
	}
	for i := range len(bf.starts) - 1 {
		if !blockAdmits(b.q, bf.bits[i*blockWords:(i+1)*blockWords]) {
			continue
		}
		if b.c.sz.read != nil {
			b.c.sz.read(rel, i)
		}
		if !fn(bf.starts[i], bf.starts[i+1], bf.lines[i]) {
			break
		}
	}
	return true
}

// Later asks for a filter of the file rel (status st), which a scan read
// whole without one and found a match in or not (found): for a file of
// blockLargeFile bytes or more whatever it found, for a medium one
// (blockMinFile or more) only when it found nothing. See later.
func (b *BlockQuery) Later(rel string, st unix.Stat_t, found bool) {
	stamp := stampOf(&st)
	if sz := &b.c.sz; stamp.size < sz.minFile || stamp.size > sz.maxFile || found && stamp.size < sz.largeFile {
		return
	}
	b.c.later(blockKey{b.root, rel}, stamp)
}

// buildFilter reads the whole file (stamped stamp) into *chunk, grown as
// needed, and builds its filter, or returns nil if the file is too new to
// trust its status, or changed while read.
func (c *BlockCache) buildFilter(file *rawfile.File, stamp fileStamp, chunk *[]byte) *blockFilter {
	if c.racyStamp(stamp) {
		return nil
	}
	n := int(stamp.size)
	if cap(*chunk) < n {
		*chunk = make([]byte, 0, n)
	}
	buf := (*chunk)[:n]
	got, err := file.ReadFullAt(buf, 0)
	if err != nil || got != n {
		return nil
	}
	if after, err := file.Stat(); err != nil || stampOf(&after) != stamp {
		return nil
	}
	return buildBlockFilter(buf, stamp, &c.sz)
}

// racyStamp reports whether a file stamped s changed within the cache's
// racy window: too recently to trust its status, so it gets no filter.
func (c *BlockCache) racyStamp(s fileStamp) bool {
	bound := time.Now().Add(-c.sz.racyWindow).UnixNano()
	return s.mtime >= bound || s.ctime >= bound
}
