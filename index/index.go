// Package index owns one workspace root's path table and trigram postings:
// what the walk would consider (hidden files included; never the contents
// of ignored subtrees, whose roots are recorded instead), persisted in
// bbolt with the base postings in a file beside it (see format.go for the
// on-disk format).
//
// The postings have two parts. The base is immutable and compact: sorted
// trigrams, each with a list of file ids, block-coded or (when dense) a
// bitmap, read in place from its mmap'd file (postings.go); a query drives
// each AND from its rarest list and seeks through the others by their
// skip entries or their bitmaps' words (bitmaps ANDed with one another a
// word at a time), so its cost follows the answer rather than the lists'
// lengths. Files read since the base was built (changed or new) are in
// the delta, each with its own sorted trigram set, found through
// bit-sliced signatures (deltaslices.go), and their base entries are
// stale and skipped. A query is answered from both; Compact folds the
// delta into a new base. So an update costs in proportion to the file
// changed, not to the index.
//
// A query is answered by one call (Candidates, candidates.go) whose
// options say what it is: Glob's listing by path (a directory, a prefix,
// the directories it may enter) or Grep's candidates by content (a
// trigram query, with phrases). Estimate bounds the candidates without
// listing them, and Visibility is the index's record of what a walk
// would not show (ignored and hidden entries).
//
// A query may ask for the candidates among the newest files only
// (CandidateOptions.Newer, with an mtime from Estimate): a bitmap of the
// files at or after an mtime, from the table's packed mtimes, joins the
// AND, leading it when it is the smallest of its children and tested
// second otherwise (withNewer), so a Grep that settles among the newest
// files costs little more than they do.
//
// Every posting, in the base and the delta, carries a mask: the eighths
// of the file that hold the lines the trigram occurs in, or, in a file
// over 1 MiB, the bytes that follow it (trigram.go, "Masks"). A query
// whose matches lie within one line drops the files where its trigrams,
// or the phrases its matches hold (CandidateOptions.Phrases), never share
// an eighth or never follow one another, and tells the caller the
// eighths where a match's line may start.
//
// The index also keeps, for the large files a Grep reads, block filters
// (blocks.go): a trigram filter per block of lines, so that a later scan
// reads only the blocks that may match.
//
// The index only narrows (docs/product.md, "Freshness"): a file whose trigrams
// are unknown (over MaxFileSize or MaxFileTrigrams, unreadable) is a candidate
// for every query, and candidates are always read live by the caller
// (in part, the eighths where CandidateLines places a match's line, only
// while the file's status is the one recorded).
//
// The index is never silently wrong about its own data either: a file
// that changed while nobody watched is found by its stat (size, mtime,
// ctime, inode, device; "racy" files re-read whatever their stat), and a
// saved DB is checked byte for byte on open (see format.go); one that fails
// is moved aside and rebuilt.
//
// # Caveats
//
// The index is as fresh as its last update: keeping it current is the
// watcher's job. Symlinks are recorded but never read; whether a link
// points to a file inside the root is checked live by the caller.
package index

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	csindex "github.com/google/codesearch/index"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// Flags describe a file's content as last read.
type Flags uint8

// File flags.
const (
	// Binary: a NUL byte in the first BinarySniff bytes; never a candidate.
	Binary Flags = 1 << iota
	// Unknown: trigrams not known; a candidate for every query.
	Unknown
	// Racy: the file's mtime or ctime was within RacyWindow of the moment
	// its stat was taken (or later), so it may have changed again within
	// the same timestamp tick after it was read, leaving its stat as
	// recorded. Revalidation re-reads it whatever its stat says (git's
	// "racily clean" entries).
	Racy
	// Denied, with Unknown: the file may not be read (rooted.Denied).
	// Unlike another unknown file it is trusted on its stat: a change of
	// its mode, owner or content changes its ctime, and every Grep reads
	// it anyway (and names it while it may not be read), so an unchanged
	// one is not read again by every update of its directory and every
	// restart.
	Denied
	// NextMasks: the file was larger than NextMasksFrom when read, or its
	// bytes read were not its size, and its masks are next masks, not
	// eighths (trigram.go, "Masks").
	NextMasks

	knownFlags = Binary | Unknown | Racy | Denied | NextMasks
)

// RacyWindow is how close to the moment it was looked at a file's mtime
// or ctime may be for its stat to prove nothing about a later change:
// more than a filesystem's timestamp tick (a few ms on ext4 and tmpfs, 1 s
// on some, 2 s on FAT) plus the lag of the kernel's coarse clock.
const RacyWindow = 2 * time.Second

// knobs are an index's clock and the sizes it works within. An index
// takes them when it is made (Build, Open, OpenOrBuild: defaultKnobs) and
// keeps them; this package's tests give theirs (buildWith, openWith,
// OpenOptions.knobs) to reach with a small tree what only a large one
// would, or to set the clock. They are read by whoever holds the index
// as a writer or reader would; a test that changes one of a live index
// does so while nothing else uses it.
type knobs struct {
	// now is the clock: the racy window's reference (racyFlag) and the
	// DB's write time.
	now func() time.Time
	// maxFileSize and maxFileTrigrams are the indexing limits
	// (MaxFileSize, MaxFileTrigrams): a file over either is Unknown.
	maxFileSize, maxFileTrigrams int
	// nextMasksFrom: a file read of more bytes gets next masks
	// (NextMasksFrom).
	nextMasksFrom int
	// buildBudget is how many bytes of postings a build holds in memory
	// before spilling them to runs (DefaultBuildBudget).
	buildBudget int
	// maxOpenRuns is how many runs a build keeps open at most
	// (openRunsLimit).
	maxOpenRuns func() int
	// commitChunk is how many changes a commit applies to memory per
	// hold of mu (defaultCommitChunk).
	commitChunk int
	// deferMax bounds the records deferred writes hold back
	// (defaultDeferMax).
	deferMax int
	// deltaMaxBytes bounds the delta's sets and signatures before a
	// compaction is due (defaultDeltaMaxBytes).
	deltaMaxBytes int64
	// compactAddBudget bounds the delta postings a compaction inverts
	// at a time (defaultCompactAddBudget).
	compactAddBudget int
	// evalParts, when not 0, is how many goroutines evaluate every
	// query's base, whatever its size (evalParts).
	evalParts int
	// partHook, when set, is called by each goroutine of an evaluation
	// in parts before it reads the base (a test cuts the base there).
	partHook func()
	// newerPart, when > 0, replaces newerPartMin.
	newerPart int
}

// defaultKnobs are the knobs of every index but this package's tests'.
func defaultKnobs() knobs {
	return knobs{
		now:              time.Now,
		maxFileSize:      MaxFileSize,
		maxFileTrigrams:  MaxFileTrigrams,
		nextMasksFrom:    NextMasksFrom,
		buildBudget:      DefaultBuildBudget,
		maxOpenRuns:      openRunsLimit,
		commitChunk:      defaultCommitChunk,
		deferMax:         defaultDeferMax,
		deltaMaxBytes:    defaultDeltaMaxBytes,
		compactAddBudget: defaultCompactAddBudget,
	}
}

// BinarySniff is how much of a file decides that it is binary (as Grep).
const BinarySniff = 8 << 10

// File is one entry of the path table.
type File struct {
	// Path is root-relative and slash separated.
	Path string
	// Size, ModTime and Ctime (Unix nanoseconds, clamped as tree.Nanos
	// does), Ino and Dev as last seen by lstat: revalidation re-reads a
	// file when any of them (or Mode) changed.
	Size    int64
	ModTime int64
	Ctime   int64
	Ino     uint64
	Dev     uint64
	// Mode holds the type bits: 0 for a regular file, fs.ModeSymlink.
	Mode  fs.FileMode
	Flags Flags
	// Hidden marks path components with a hidden, non-whitelisted name
	// (see tree.Entry.Hidden).
	Hidden uint64
}

// Progress reports a build's advance.
type Progress struct {
	Files, TotalFiles int
	Bytes, TotalBytes int64
	Elapsed, ETA      time.Duration
}

// Index is the path table and postings of one root. Its methods are safe
// for concurrent use.
//
// Locking. Writers (commit, Compact, Save, Close) serialise on wmu and do
// their slow work there: reading files, building a new base to the side,
// bbolt transactions and their fsyncs. They take mu, which readers share,
// only to apply an already prepared change to memory (O(change), and a
// large one a chunk of files at a time: defaultCommitChunk) or to swap
// in a new base, so a query never waits for an fsync, a compaction, a save or a
// whole burst of changes. The memory is updated before the DB: a query
// sees a change as soon as it is applied; a crash before its transaction
// commits loses it from the DB only, and the next open's revalidation
// reads it again. The holder of wmu may read the fields below without
// mu, since only it changes them (written aside: Flush sets it under mu
// alone).
//
// Every DB transaction runs under dbmu, taken after wmu. Flush, which
// writes what deferred commits left pending (pending.go), lets wmu go
// once it holds dbmu: the next change is applied while its transaction
// and fsync run.
type Index struct {
	root string
	k    knobs // set when the index is made, then only read

	wmu  sync.Mutex // serialises writers; held across DB transactions but Flush's
	dbmu sync.Mutex // serialises DB transactions and the DB's replacement; taken after wmu
	cmu  sync.Mutex // serialises compactions (Compact builds without wmu)
	// compacting is set while Compact runs (for Stats).
	compacting atomic.Bool
	// compactTouched collects the ids changed while a compaction builds
	// its base aside (nil when none does): they stay stale after the swap.
	compactTouched map[uint32]bool
	// Test hooks, called (when set) inside each DB write transaction (an
	// error fails it), between a compaction's build and its swap, and
	// between the chunks of a commit (with wmu held, mu not).
	hookInTx         func() error
	hookCompactBuilt func()
	hookCommitChunk  func()

	mu      sync.RWMutex        // guards the fields below against readers; writers also hold wmu
	files   []File              // by id; a removed file has Path == ""
	paths   int64               // the files' path bytes, summed (Stats)
	mtimes  []int64             // by id, each file's ModTime (0 when free), packed for a since filter
	nexts   idSet               // the ids of the files flagged NextMasks, packed for the mask filter (maskFilter.test)
	free    []uint32            // ids of removed files, for reuse
	order   []uint32            // live ids sorted by path: the path → id lookup (lookup)
	adding  map[string]uint32   // ids a change put and has not yet placed in order (insertOrdered)
	hidden  []uint32            // live ids whose own name is hidden (File.HiddenName), sorted by path
	base    postings            // immutable between compactions
	gen     uint64              // the base file's generation (0: in memory)
	stale   map[uint32]bool     // ids whose base postings are out of date
	delta   map[uint32][]uint32 // id -> sorted packed postings (trigram.go), files read since base
	dsl     *deltaSlices        // the delta's signatures, bit-sliced (setDelta, dropDelta)
	unknown map[uint32]bool     // live ids flagged Unknown
	ignored []Skipped           // entries pruned by ignore rules and hidden directories, sorted by path
	plain   []bool              // by index of ignored: !HiddenPath of its path (setIgnored)
	db      *bolt.DB            // nil until Save or Open
	path    string              // the DB's path, once db is set
	runs    int                 // runs the build spilled (0: built in memory)
	// built is the base a spilled build wrote as the next base file of
	// the DB at builtFor, which Save names instead of copying it ("":
	// none).
	built    newBase
	builtFor string
	pending  pendingWrites // changes in memory, not yet in the DB (pending.go)
	// deferWrites: commits leave their writes pending for Flush
	// (DeferWrites).
	deferWrites bool
	// written is when the index was last written (Unix ns; meta "written"
	// in the DB): a file whose mtime is not older is racy.
	written int64
	// deltaBytes is what the delta's sets and signatures hold, in bytes
	// (deltaSize of each), under mu: kept by setDelta, dropDelta and
	// Compact's swap.
	deltaBytes int64
}

// Root returns the index's root.
func (ix *Index) Root() string { return ix.root }

// Build walks root (absolute, symlink-free) and indexes it, using all
// cores, reporting progress (if not nil) about every 100 ms.
func Build(ctx context.Context, root string, progress func(Progress)) (*Index, error) {
	return build(ctx, root, progress, "", defaultKnobs())
}

// build is Build, spilling runs (see spill.go) beside the DB at spillAt
// ("" for the system's temporary directory), the index made with k.
func build(ctx context.Context, root string, progress func(Progress), spillAt string, k knobs) (*Index, error) {
	t0 := k.now().UnixNano()
	ix := newIndex(root, k)
	var ignored []Skipped
	// The walk lists the files in id order and hands them to the build's
	// workers a chunk at a time, so that reading starts with the first
	// chunk rather than once the whole tree is listed (at a million
	// files the listing took 3 s of a 33 s build).
	walk := func(ctx context.Context, send func([]walkedFile), listed func(total int64)) error {
		var total int64
		ch := chunker{send: send}
		_, err := tree.Walk(ctx, root, "", ignore.Open(root), tree.Options{
			IncludeHidden: true,
			Info:          true,
			OnSkip: func(s tree.Skip) {
				if !s.Hidden {
					ignored = append(ignored, skippedOf(s))
				}
			},
			OnHiddenDir: func(rel string) {
				ignored = append(ignored, Skipped{Path: rel, IsDir: true, Hidden: true})
			},
		}, func(e tree.Entry) error {
			if len(ix.files)%4096 == 0 {
				pacer.check() // the walk's listings are garbage once consumed
			}
			ix.files = append(ix.files, fileFromEntry(e))
			ix.mtimes = append(ix.mtimes, ix.files[len(ix.files)-1].ModTime)
			ix.paths += int64(len(e.Rel))
			if e.Type.IsRegular() {
				total += e.Size
			}
			ch.add(walkedFile{path: e.Rel, size: e.Size, regular: e.Type.IsRegular()})
			return nil
		})
		if err != nil {
			return err
		}
		ch.end(func() { listed(total) })
		return nil
	}
	if err := ix.buildPostings(ctx, walk, progress, spillAt); err != nil {
		return nil, err
	}
	ix.setIgnored(mergeSkipped(ignored))
	ix.reorder()
	for i := range ix.files {
		ix.files[i].Flags |= racyFlag(&ix.files[i], t0)
	}
	ix.written = ix.k.now().UnixNano()
	return ix, nil
}

// skippedOf is the record of a walk's skip.
func skippedOf(s tree.Skip) Skipped {
	return Skipped{Path: s.Rel, IsDir: s.IsDir, Default: s.Default, Denied: s.Denied}
}

// mergeSkipped sorts the records of one walk (or one update) by path and
// makes each path's one record. A walk that includes hidden names records
// a hidden directory it may not list twice, by its name (OnHiddenDir) and
// as Denied: the record is both. Otherwise the later record wins (an
// update's walk comes after its first look at the paths it names, and
// the rules may have changed in between). It reuses ign's array.
func mergeSkipped(ign []Skipped) []Skipped {
	slices.SortStableFunc(ign, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	hiddenDir := Skipped{IsDir: true, Hidden: true}
	deniedDir := Skipped{IsDir: true, Denied: true}
	out := ign[:0]
	for _, s := range ign {
		n := len(out)
		if n == 0 || out[n-1].Path != s.Path {
			out = append(out, s)
			continue
		}
		o := &out[n-1]
		a, b := *o, s
		a.Path, b.Path = "", ""
		if a == hiddenDir && b == deniedDir || a == deniedDir && b == hiddenDir {
			o.Hidden, o.Denied = true, true
			continue
		}
		*o = s
	}
	return out
}

// fileFromEntry is the table entry of a walked file (flags not yet known).
func fileFromEntry(e tree.Entry) File {
	return File{Path: e.Rel, Size: e.Size, ModTime: e.ModTime, Ctime: e.Ctime, Ino: e.Ino, Dev: e.Dev, Mode: e.Type, Hidden: e.Hidden}
}

// fileFromStat is the table entry of the file at rel as lstat(2) saw it
// (flags and hiddenness not yet known). Mode holds the type bits only.
func fileFromStat(rel string, st *unix.Stat_t) File {
	return File{
		Path:    rel,
		Size:    st.Size,
		ModTime: tree.Nanos(st.Mtim.Unix()),
		Ctime:   tree.Nanos(st.Ctim.Unix()),
		Ino:     st.Ino,
		Dev:     uint64(st.Dev),
		Mode:    tree.StatType(uint32(st.Mode)),
	}
}

// racyFlag returns Racy for a regular file whose mtime or ctime is not
// older than RacyWindow before t0 (Unix ns), the moment before its stat
// was taken: a change made after it was read may have left its stat as
// recorded.
func racyFlag(f *File, t0 int64) Flags {
	if !f.Mode.IsRegular() {
		return 0
	}
	if bound := t0 - int64(RacyWindow); f.ModTime >= bound || f.Ctime >= bound {
		return Racy
	}
	return 0
}

func newIndex(root string, k knobs) *Index {
	return &Index{
		root:    root,
		k:       k,
		base:    emptyPostings(),
		adding:  make(map[string]uint32),
		stale:   make(map[uint32]bool),
		delta:   make(map[uint32][]uint32),
		dsl:     newDeltaSlices(),
		unknown: make(map[uint32]bool),
	}
}

// reorder rebuilds the path-sorted id list. Caller holds mu (or owns ix).
func (ix *Index) reorder() {
	ix.order = ix.order[:0]
	for id := range ix.files {
		if ix.files[id].Path != "" {
			ix.order = append(ix.order, uint32(id))
		}
	}
	slices.SortFunc(ix.order, ix.pathCmp)
	ix.hidden = ix.hidden[:0]
	for _, id := range ix.order {
		if ix.files[id].HiddenName() {
			ix.hidden = append(ix.hidden, id)
		}
	}
}

// buildChunk is how many consecutive ids a build worker takes at a time.
const buildChunk = 256

// maxKeptBuffer is the largest read buffer a build worker keeps for the
// next file: a tree's few large files do not pin their size per worker.
const maxKeptBuffer = 1 << 20

// pathCmp orders two ids of the table by path.
func (ix *Index) pathCmp(a, b uint32) int { return strings.Compare(ix.files[a].Path, ix.files[b].Path) }

// lookup returns the id of the live file at path p: a binary search of
// the order (at a million files, a map from path to id held 57 MB of the
// 200 MB table, and every collection marked it), or an id the change
// being applied has put and not yet placed (adding). Caller holds mu.
func (ix *Index) lookup(p string) (uint32, bool) {
	if i, ok := slices.BinarySearchFunc(ix.order, p, ix.pathSearch); ok {
		return ix.order[i], true
	}
	id, ok := ix.adding[p]
	return id, ok
}

// pathSearch compares an id's path to p, for binary searches by path.
func (ix *Index) pathSearch(id uint32, p string) int { return strings.Compare(ix.files[id].Path, p) }

// walkedFile is what a build worker needs of a walked file.
type walkedFile struct {
	path    string
	size    int64
	regular bool
}

// chunker cuts the walk's files into chunks of buildChunk for send, and
// holds the last full chunk back until the next file or the end: at the
// end, listed runs before the last files are sent, so that the totals
// go out while they are still to be read, however fast the workers were
// (and progress is reported before the build is over).
type chunker struct {
	send        func([]walkedFile)
	held, chunk []walkedFile // held: the last full chunk, not yet sent
}

// add adds the next file.
func (c *chunker) add(f walkedFile) {
	c.chunk = append(c.chunk, f)
	if len(c.chunk) == buildChunk {
		if c.held != nil {
			c.send(c.held)
		}
		c.held, c.chunk = c.chunk, nil
	}
}

// end runs listed, then sends what is left.
func (c *chunker) end(listed func()) {
	listed()
	for _, files := range [][]walkedFile{c.held, c.chunk} {
		if len(files) > 0 {
			c.send(files)
		}
	}
}

// walkedChunk is buildChunk files of the walk (fewer in the last) from
// id lo on, and the flags the worker that reads them finds.
type walkedChunk struct {
	lo    int
	files []walkedFile
	flags []Flags
}

// buildPostings reads every regular file and builds the base postings,
// while walk lists the files into the table: walk calls send with the
// next files in id order, buildChunk at a time, and listed with the
// bytes of the regular files once it has listed them all, before it
// sends the last chunk (its ctx is cancelled when a worker fails). Each
// worker (one per core) takes chunks in turn, reads and extracts their
// files and adds their trigrams to a builder of its own (so no goroutine
// adds every file's trigrams and no batch waits for its slowest file),
// spilling it as a run when it holds its share of the budget; the runs
// and what the builders still hold are then merged (spill.go). The
// workers never touch the table, which the walk grows: the flags they
// find are set once both are done. Progress is reported once the walk
// has listed every file (until then the totals are unknown), at once
// and then as chunks end. The pacer keeps the garbage in check
// (pacer.go).
//
// Goroutines: buildPostings owns the workers; they end when the walk is
// over and they have taken every chunk it sent, and buildPostings waits
// for them before it merges.
func (ix *Index) buildPostings(ctx context.Context, walk func(ctx context.Context, send func([]walkedFile), listed func(total int64)) error, progress func(Progress), spillAt string) error {
	root, err := rooted.Open(ix.root)
	if err != nil {
		return err
	}
	defer root.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, runtime.GOMAXPROCS(0))
	sp := &spiller{at: spillAt, workers: workers, maxOpenRuns: ix.k.maxOpenRuns}
	defer sp.close()
	builders := make([]*postingBuilder, workers)
	unknown := make([][]uint32, workers)
	errs := make([]error, workers)
	chunks := make(chan *walkedChunk, 2*workers)
	// Progress: files and bytes done, reported by the worker that ends a
	// chunk when 100 ms have passed since the last report (and at the
	// first chunk's end after the walk, and the last's).
	var (
		pmu                  sync.Mutex
		doneFiles, doneBytes int64
		totalFiles           int // 0 while the walk goes on
		totalBytes           int64
		lastReport           time.Time
		start                = time.Now()
		taken                atomic.Int64 // the files of the chunks the workers have taken
		pf                   atomic.Pointer[rawfile.Prefetcher]
	)
	report := func(files int, bytes int64) {
		pmu.Lock()
		defer pmu.Unlock()
		doneFiles += int64(files)
		doneBytes += bytes
		if progress == nil || totalFiles == 0 || time.Since(lastReport) <= 100*time.Millisecond && doneFiles < int64(totalFiles) {
			return
		}
		lastReport = time.Now()
		p := Progress{Files: int(doneFiles), TotalFiles: totalFiles, Bytes: doneBytes, TotalBytes: totalBytes, Elapsed: time.Since(start)}
		if doneBytes > 0 {
			p.ETA = time.Duration(float64(p.Elapsed) * float64(totalBytes-doneBytes) / float64(doneBytes))
		}
		progress(p)
	}
	var wg sync.WaitGroup
	for w := range workers {
		b := newBuilder(ix.k.buildBudget / workers)
		builders[w] = b
		wg.Go(func() {
			var rd reader
			spill := func() error { return sp.spill(w, b) }
			for c := range chunks {
				taken.Add(int64(len(c.files)))
				pf.Load().Reached(c.lo)
				if wctx.Err() != nil {
					continue // the build is over: cancelled, or failed
				}
				var bytes int64
				for i, f := range c.files {
					if errs[w] != nil {
						break
					}
					bytes += f.size
					if !f.regular {
						continue
					}
					id := uint32(c.lo + i)
					tris, flags, _ := rd.index(root, f.path, f.size, &ix.k)
					rd.rd.Release(maxKeptBuffer) // a large file's buffer goes (its trigrams are the set's)
					// A file gone since the walk stays Unknown (a
					// candidate for every query, read live, so never
					// wrong) until the watcher's event removes it.
					c.flags[i] = flags
					if flags&Unknown != 0 {
						unknown[w] = append(unknown[w], id)
					}
					// A failure ends the build: the walk stops (its ctx),
					// and the chunks it has sent are drained, so that it
					// never waits for a worker.
					if errs[w] = b.add(id, tris, spill); errs[w] != nil {
						cancel()
					}
				}
				c.files = nil // the paths are the table's; the chunk's copy can go
				report(len(c.flags), bytes)
				pacer.check()
			}
		})
	}
	var done []*walkedChunk
	werr := walk(wctx, func(files []walkedFile) {
		c := &walkedChunk{lo: len(done) * buildChunk, files: files, flags: make([]Flags, len(files))}
		done = append(done, c)
		chunks <- c
	}, func(total int64) {
		// The table is complete: the files not yet taken are read
		// ahead of the workers (a cold page cache would otherwise have
		// the disk serve two reads at a time); what the prefetcher reads
		// of the table, the walk no longer writes. The totals are
		// reported at once: a chunk at least is still to be read.
		pmu.Lock()
		totalFiles, totalBytes = len(ix.files), total
		pmu.Unlock()
		pf.Store(rawfile.StartPrefetch(root, int(taken.Load()), len(ix.files), func(i int) (string, bool) {
			f := &ix.files[i]
			return f.Path, f.Mode.IsRegular()
		}))
		report(0, 0)
	})
	if werr != nil {
		cancel()
	}
	close(chunks)
	wg.Wait()
	pf.Load().Stop()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if err := errors.Join(errs...); err != nil {
		return err // a worker's (the walk stopped for it)
	}
	if werr != nil {
		return werr
	}
	for _, c := range done {
		for i, fl := range c.flags {
			ix.files[c.lo+i].Flags = fl
			ix.nexts.set(uint32(c.lo+i), fl&NextMasks != 0)
		}
	}
	for _, ids := range unknown {
		for _, id := range ids {
			ix.unknown[id] = true
		}
	}
	nb, runs, err := sp.merge(builders)
	if err != nil {
		return err
	}
	ix.base = nb.p
	if nb.p.unmap != nil { // spilled
		ix.runs = runs
	}
	if nb.gen != 0 {
		ix.built, ix.builtFor = nb, spillAt
	}
	return nil
}

// reader holds one goroutine's buffers for reading and extracting.
type reader struct {
	rd  rawfile.Reader
	set trigramSet
}

// index reads the file at rel beneath root and returns its trigrams and
// flags; gone reports a file no longer there as listed (deleted, or a
// component of its path now a link: see rooted.Gone). A file that cannot
// be read for another reason is flagged Unknown and kept: one this process
// may not read (rooted.Denied) is still a name Glob lists, and a candidate
// every Grep reads again, which reports it. The trigrams are valid until
// the next call.
func (r *reader) index(root *rooted.Root, rel string, size int64, k *knobs) (tris []uint32, flags Flags, gone bool) {
	data, err := r.rd.Read(root, rel, size, k.maxFileSize)
	if err != nil {
		if rooted.Denied(err) {
			return nil, Unknown | Denied, false
		}
		return nil, Unknown, rooted.Gone(err)
	}
	if bytes.IndexByte(data[:min(len(data), BinarySniff)], 0) >= 0 { // vectorised, as slices.Contains is not
		return nil, Binary, false
	}
	// Eighths are of the bytes read, and a probe takes them as eighths of
	// the recorded size: a file whose read does not match it (changed
	// since its stat, or a file system whose sizes are not its contents)
	// gets next masks, which say nothing of where its lines are.
	next := len(data) > k.nextMasksFrom || int64(len(data)) != size
	tris, ok := r.set.extract(data, k.maxFileTrigrams, next)
	if !ok {
		return nil, Unknown, false
	}
	if next {
		flags = NextMasks
	}
	return tris, flags, false
}

// Len returns the number of files in the table.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.order)
}

// evalBaseSafe is evalBase, with a fault reading the mapped base (its
// file truncated under it) taken as "every file may match": candidates
// are read live, so that is slow but never wrong.
func (ix *Index) evalBaseSafe(q *csindex.Query, ph *Phrases, ls lineScope, nw newer, pre string) (ids []uint32, lines []uint8, all bool) {
	ok := true
	if !readBase(func() { ids, lines, all, ok = ix.evalBase(q, ph, ls, nw, pre) }) || !ok {
		return nil, nil, true
	}
	return ids, lines, all
}

// readBase runs fn, which reads the mapped base, and reports false when a
// fault reading it (its file truncated under it) cut fn short.
func readBase(fn func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fn()
	return true
}

// normalizeQuery rewrites q for the lowercase index: trigrams lowercased
// and deduplicated, and so are its subqueries. A case-insensitive pattern makes codesearch list every
// case variant of each trigram (up to eight), which all name the same
// posting list here.
func normalizeQuery(q *csindex.Query) *csindex.Query {
	out := &csindex.Query{Op: q.Op}
	for _, t := range q.Trigram {
		l := string([]byte{lower[t[0]], lower[t[1]], lower[t[2]]})
		if !slices.Contains(out.Trigram, l) {
			out.Trigram = append(out.Trigram, l)
		}
	}
	var seen map[string]bool
	for _, s := range q.Sub {
		n := normalizeQuery(s)
		if len(q.Sub) > 1 {
			// Case variants that differ only in case are one sub here.
			if seen == nil {
				seen = map[string]bool{}
			}
			k := n.String()
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out.Sub = append(out.Sub, n)
	}
	return out
}

// evalBase evaluates q against the base postings: the ids that may match,
// ascending, or all=true when q constrains nothing; only the ids whose
// masks allow a match (maskFilter: when ls.oneLine, q's trigrams and one
// of the phrases ph, when not nil, in one eighth, or, in a file with next
// masks, that phrase's trigrams following one another); only
// the ids of files nw selects (see newerMask for pre). lines, when not
// nil, holds each id's eighths that may hold a match's line
// (maskFilter.test); nil means all of every file. It streams the query
// (see stream): it allocates in proportion to the answer, not to the
// lists. A query whose leading list is long is evaluated on every
// processor, each on its own range of ids (evalParts), by goroutines
// that end before it returns; ok is false when one of them could not
// read the mapped base (readBase).
func (ix *Index) evalBase(q *csindex.Query, ph *Phrases, ls lineScope, nw newer, pre string) (ids []uint32, lines []uint8, all, ok bool) {
	var newerIDs []uint64
	// open returns a stream of q's ids (nil: none; all: q constrains
	// nothing) and the mask filter reading their masks: the state of one
	// evaluation.
	open := func() (s idStream, f *maskFilter, all bool) {
		var shared map[uint32]*cursor
		if ph != nil || ls.oneLine {
			shared = map[uint32]*cursor{}
		}
		s, all = ix.streamShared(q, shared)
		if all || s == nil {
			return nil, nil, all
		}
		if newerIDs != nil {
			// The newer files join the AND: leading it when fewest, the
			// query's lists are sought at their ids only (a dense list is
			// not walked id by id to be told by mtime); else tested
			// second, they turn away most of the leader's ids before any
			// list is sought.
			s = withNewer(s, newMaskStream(newerIDs))
		}
		return s, newMaskFilter(q, ph, ls, &ix.base, shared, ix.files, ix.nexts), false
	}
	if !nw.all() {
		newerIDs = ix.newerMask(nw, pre)
	}
	s0, f0, all := open()
	if all || s0 == nil {
		return nil, nil, all, true
	}
	parts := ix.k.evalParts
	if parts == 0 {
		parts = evalParts(s0.size())
	}
	if parts == 1 {
		ids, lines = evalRange(s0, f0, 0, math.MaxUint32)
		return ids, lines, false, true
	}
	type part struct {
		ids   []uint32
		lines []uint8
		ok    bool
	}
	res := make([]part, parts)
	bound := uint64(len(ix.files))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := uint32(uint64(p)*bound/uint64(parts)), uint32(uint64(p+1)*bound/uint64(parts))
		if p == parts-1 {
			hi = math.MaxUint32 // ids past the table are not files (eachCandidate), but read as before
		}
		wg.Go(func() {
			r := &res[p]
			r.ok = readBase(func() {
				if ix.k.partHook != nil {
					ix.k.partHook()
				}
				s, f := s0, f0
				if p > 0 {
					s, f, _ = open()
					s.seek(lo)
				}
				r.ids, r.lines = evalRange(s, f, lo, hi)
			})
		})
	}
	wg.Wait()
	for _, r := range res {
		if !r.ok {
			return nil, nil, false, false
		}
		// Every part has a filter or none: lines stay aligned with ids.
		ids, lines = append(ids, r.ids...), append(lines, r.lines...)
	}
	return ids, lines, false, true
}

// evalRange returns the ids of s in [lo, hi) that f keeps (all, when f is
// nil), and their eighths (nil when f is nil).
func evalRange(s idStream, f *maskFilter, lo, hi uint32) (ids []uint32, lines []uint8) {
	for t, ok := s.at(); ok && t < hi; t, ok = s.at() {
		if t >= lo {
			if f == nil {
				ids = append(ids, t)
			} else if l := f.keep(t); l != 0 {
				ids, lines = append(ids, t), append(lines, l)
			}
		}
		s.next()
	}
	return ids, lines
}

// evalParMin is the least bound of a query's ids (the length of the list
// that leads it) for which its base is evaluated on more than one
// processor: below it the goroutines cost more than they share.
const evalParMin = 16 << 10

// evalParts is how many goroutines evaluate a query whose ids number at
// most bound: one per processor (at most four), one below evalParMin.
func evalParts(bound int) int {
	if bound < evalParMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), 4, bound/evalParMin))
}

// HiddenName reports whether the file's own name is hidden (its last
// component's bit in Hidden; a hidden verdict needs a name starting with
// ".", which tells past the 63rd component, where the mask's bits are
// shared).
func (f *File) HiddenName() bool {
	return f.Hidden&ownBit(f.Path) != 0 && strings.HasPrefix(path.Base(f.Path), ".")
}

// ownBit is the bit of rel's last component in a hidden mask
// (File.Hidden, ignore.PathVerdict.Hidden).
func ownBit(rel string) uint64 { return 1 << min(strings.Count(rel, "/"), 63) }

func ancestorsAndSelf(rel string) []string {
	if rel == "" || rel == "." {
		return nil
	}
	var out []string
	for i := range len(rel) {
		if rel[i] == '/' {
			out = append(out, rel[:i])
		}
	}
	return append(out, rel)
}
