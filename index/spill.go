package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Bounded-memory build (after codesearch's index/write.go). Each build
// worker reads its own files (chunks of ascending ids handed out in
// turn, as the walk lists them) and collects their postings in a builder
// of its own (builder.go), with its share of the budget; once the
// builder is full, its postings are sorted by trigram and written out as
// a run, a base file of its own (ids absolute) whose lists carry no skip
// entries, and it starts again empty. A worker's runs hold
// ascending ids: its run r holds only ids below those of its run r+1, so
// a trigram's list in one worker's runs is their lists end to end, and
// the workers' ids are disjoint. A worker whose runs pass its share of
// the descriptors a build may hold (openRunsLimit) folds them into one
// run. At the end the runs are merged trigram
// by trigram into the final base: per worker, the lists end to end, then
// the workers' lists merged by id. The merge runs on every core, each on
// its own range of trigrams (mergeRuns). The final base of a build that
// spilled beside a DB is that DB's next base file, synced, which Save
// names without copying it (a crash before the save leaves a base file
// no DB names, removed on open); without a DB it is a temporary file
// mapped and unlinked at once. Either way the page cache holds it, not
// the heap. Runs are unlinked as soon as they are created and read with
// pread through small buffers (never mapped), so they do not count in
// the process's resident size either. So a build's memory is the path
// table and one budget of postings (arrays without pointers, which the
// collector does not scan), whatever the size of the tree. A build that
// spilled nothing merges its builders' lists in memory.

// DefaultBuildBudget is how many bytes of postings a build holds in
// memory (all its workers together, 16 bytes a posting with the space to
// sort them) before spilling them to runs.
const DefaultBuildBudget = 64 << 20

// spiller spills builders' lists to runs named <at>.build-<random> (at
// "": indexd-build-<random> in the system's temporary directory) and
// merges them. A run is unlinked as soon as it is created; one left by a
// process killed in between is removed with the DB's other temporary
// files (removeTemps). Its spill is safe for concurrent use.
type spiller struct {
	at      string
	workers int // how many builders spill (0: one)
	// maxOpenRuns is how many runs the build keeps open at most
	// (openRunsLimit; nil: that).
	maxOpenRuns func() int
	mu          sync.Mutex
	runs        []run
}

// openRunsLimit is how many runs a build keeps open at most (each holds
// a descriptor until the merge): a quarter of the descriptors the process
// may open. A worker past its share folds its runs into one (fold). At
// a million files on two cores a build spills some 500 runs; eight
// cores would spill four times as many, in smaller runs.
func openRunsLimit() int {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return 256
	}
	return int(max(16, min(l.Cur/4, 1<<16)))
}

// run is one spilled run, in the base format but for its lists' skip
// entries: read with pread (a mapping would be charged to the process's
// resident set a large page-cache folio at a time, megabytes per run on
// a recent kernel, whatever the merge releases), through r, its file
// (unlinked; f, to close) or its bytes in memory; its footer's table
// offset and count; and the worker whose builder wrote it.
type run struct {
	r        io.ReaderAt
	f        *os.File // nil for a run in memory
	tableOff int64
	n        int
	worker   int
}

// openRun reads the footer of the run of size bytes in r.
func openRun(r io.ReaderAt, size int64) (run, error) {
	var foot [footerSize]byte
	if size < footerSize {
		return run{}, fmt.Errorf("%w: run of %d bytes", ErrCorrupt, size)
	}
	if _, err := r.ReadAt(foot[:], size-footerSize); err != nil {
		return run{}, err
	}
	off, n := binary.BigEndian.Uint64(foot[:]), binary.BigEndian.Uint32(foot[8:])
	if string(foot[12:]) != baseMagic || off > uint64(size-footerSize) || uint64(n)*entrySize != uint64(size-footerSize)-off {
		return run{}, fmt.Errorf("%w: run footer", ErrCorrupt)
	}
	return run{r: r, tableOff: int64(off), n: int(n)}, nil
}

// entry returns the trigram and list offset of table entry i of r.
func (r *run) entry(i int) (t uint32, off int64, err error) {
	var e [entrySize]byte
	if _, err := r.r.ReadAt(e[:], r.tableOff+entrySize*int64(i)); err != nil {
		return 0, 0, err
	}
	t, o := decodeEntry(e[:])
	return t, int64(o), nil
}

// listsBelow returns the index of r's first trigram not below t and the
// offset of its list (the table's offset if none).
func (r *run) listsBelow(t uint32) (i int, off int64, err error) {
	lo, hi := 0, r.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		u, _, err := r.entry(m)
		if err != nil {
			return 0, 0, err
		}
		if u < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == r.n {
		return lo, r.tableOff, nil
	}
	_, off, err = r.entry(lo)
	return lo, off, err
}

// close closes the run's file.
func (r *run) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// runCursor reads one run's lists in trigram order from entry i on,
// sequentially, through two small buffers: one over the table, one over
// the lists.
type runCursor struct {
	run       *run
	i         int // the current entry, while !done
	done      bool
	t         uint32 // its trigram
	off, end  int64  // its list's bounds
	nt        uint32 // the next entry's trigram, when i+1 < n
	tab, list *bufio.Reader
	buf       []byte
	err       error
}

// runBuffer is the size of each of a run cursor's two buffers.
const runBuffer = 16 << 10

// newRunCursor returns a cursor on r's entries from the first whose
// trigram is not below lo.
func newRunCursor(r *run, lo uint32) *runCursor {
	c := &runCursor{run: r}
	i, off, err := r.listsBelow(lo)
	if err != nil || i >= r.n {
		c.done, c.err = true, err
		return c
	}
	c.i = i
	c.tab = bufio.NewReaderSize(io.NewSectionReader(r.r, r.tableOff+entrySize*int64(i), entrySize*int64(r.n-i)), runBuffer)
	c.list = bufio.NewReaderSize(io.NewSectionReader(r.r, off, r.tableOff-off), runBuffer)
	var e [entrySize]byte
	if _, err := io.ReadFull(c.tab, e[:]); err != nil {
		c.done, c.err = true, err
		return c
	}
	t, eoff := decodeEntry(e[:])
	c.t, c.off = t, int64(eoff)
	c.lookahead()
	return c
}

// lookahead reads the next entry, for where the current list ends.
func (c *runCursor) lookahead() {
	c.end = c.run.tableOff
	if c.i+1 < c.run.n {
		var e [entrySize]byte
		if _, err := io.ReadFull(c.tab, e[:]); err != nil {
			c.done, c.err = true, err
			return
		}
		t, off := decodeEntry(e[:])
		c.nt, c.end = t, int64(off)
	}
	if c.end < c.off || c.end > c.run.tableOff {
		c.done, c.err = true, fmt.Errorf("%w: run table offsets", ErrCorrupt)
	}
}

// take returns the current list (valid until the next call) and moves
// to the next entry.
func (c *runCursor) take() []byte {
	n := int(c.end - c.off)
	if cap(c.buf) < n {
		c.buf = make([]byte, n+n/4)
	}
	b := c.buf[:n]
	if _, err := io.ReadFull(c.list, b); err != nil {
		c.done, c.err = true, err
		return nil
	}
	if c.i++; c.i >= c.run.n {
		c.done = true
		return b
	}
	c.t, c.off = c.nt, c.end
	c.lookahead()
	return b
}

// buildInfix names a build's spilled files: <db>.build-<random>.
const buildInfix = ".build-"

// tempBase writes a base with fill to a new file in s.dir, maps it and
// unlinks it.
func (s *spiller) tempBase(fill func(*postingWriter)) (postings, error) {
	f, err := os.CreateTemp(s.temp())
	if err != nil {
		return postings{}, err
	}
	name := f.Name()
	defer os.Remove(name)
	pw := newPostingWriter(f)
	fill(pw)
	size, _, err := pw.finish()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return postings{}, err
	}
	return mapFile(name, size)
}

// spillBufs holds the write buffers of runs, so that a build that
// spills a hundred runs does not leave a hundred buffers to collect.
var spillBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

// temp returns the directory and pattern of the build's temporary files.
func (s *spiller) temp() (dir, pattern string) {
	if s.at == "" {
		return "", "indexd-build-*"
	}
	dir, pattern = filepath.Split(s.at)
	return dir, pattern + buildInfix + "*"
}

// spill writes worker's builder b as a run and resets b.
func (s *spiller) spill(worker int, b *postingBuilder) error {
	r, err := s.tempRun(b.writeRun)
	if err != nil {
		return fmt.Errorf("index: spilling a run: %w", err)
	}
	r.worker = worker
	s.mu.Lock()
	s.runs = append(s.runs, r)
	mine := 0
	for i := range s.runs {
		if s.runs[i].worker == worker {
			mine++
		}
	}
	s.mu.Unlock()
	b.reset()
	limit := s.maxOpenRuns
	if limit == nil {
		limit = openRunsLimit
	}
	if mine > max(2, limit()/max(1, s.workers)) {
		if err := s.fold(worker); err != nil {
			return fmt.Errorf("index: folding runs: %w", err)
		}
	}
	return nil
}

// fold merges worker's runs into one run, which takes their place: the
// worker's lists end to end, trigram by trigram, as the final merge
// would read them. Only the worker itself adds runs of its own, so none
// is added meanwhile.
func (s *spiller) fold(worker int) error {
	s.mu.Lock()
	var mine []run
	kept := s.runs[:0:0]
	for _, r := range s.runs {
		if r.worker == worker {
			mine = append(mine, r)
		} else {
			kept = append(kept, r)
		}
	}
	s.runs = kept
	s.mu.Unlock()
	defer func() {
		for i := range mine {
			mine[i].close()
		}
	}()
	r, err := s.tempRun(func(pw *postingWriter) {
		pw.runs = true
		mergeRange(mine, pw, 0, 1<<24)
	})
	if err != nil {
		return err
	}
	r.worker = worker
	s.mu.Lock()
	s.runs = append(s.runs, r)
	s.mu.Unlock()
	return nil
}

// tempRun writes a run with fill to a new file in s.dir, unlinked at
// once and kept open.
func (s *spiller) tempRun(fill func(*postingWriter)) (run, error) {
	f, err := os.CreateTemp(s.temp())
	if err != nil {
		return run{}, err
	}
	os.Remove(f.Name())
	bw := spillBufs.Get().(*bufio.Writer)
	defer spillBufs.Put(bw)
	bw.Reset(f)
	pw := &postingWriter{w: bw}
	fill(pw)
	size, _, err := pw.finish()
	bw.Reset(nil)
	var r run
	if err == nil {
		r, err = openRun(f, size)
	}
	if err != nil {
		f.Close()
		return run{}, err
	}
	r.f = f
	return r, nil
}

// merge merges every run and what the builders (one per worker, by
// worker) still hold into the final base, releasing the runs. When
// nothing was spilled, the builders' lists are merged in memory into a
// base in memory (gen 0). Otherwise what they hold is spilled too; with
// a DB path (s.at), the final base is that DB's next base file (synced;
// Save names it, and open removes it if no DB ever does), so that saving
// the build copies nothing; without, it is a temporary file mapped and
// unlinked at once (gen 0). It returns the base and how many runs it
// merged.
func (s *spiller) merge(builders []*postingBuilder) (newBase, int, error) {
	defer s.close()
	if len(s.runs) == 0 {
		var runs []run
		for w, b := range builders {
			if b.empty() {
				continue
			}
			pw := newPostingWriter(nil)
			b.writeRun(pw)
			data := pw.finishBytes()
			r, err := openRun(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				return newBase{}, 0, err
			}
			r.worker = w
			runs = append(runs, r)
			builders[w] = nil // its memory can go
		}
		pw := newPostingWriter(nil)
		mergeRange(runs, pw, 0, 1<<24)
		if pw.err != nil {
			return newBase{}, 0, pw.err
		}
		p, err := parsePostings(pw.finishBytes())
		return newBase{p: p}, len(runs), err
	}
	for w, b := range builders {
		if !b.empty() {
			if err := s.spill(w, b); err != nil {
				return newBase{}, 0, err
			}
		}
		builders[w] = nil // its memory can go before the merge's
	}
	pacer.check()
	// A worker's runs in the order it wrote them, the workers in turn.
	slices.SortStableFunc(s.runs, func(a, b run) int { return a.worker - b.worker })
	dir, pattern := s.temp()
	fill := func(pw *postingWriter) { mergeRuns(s.runs, pw, dir, pattern) }
	var nb newBase
	var err error
	if s.at != "" {
		nb, err = writeNewBase(s.at, fill)
	} else {
		nb.p, err = s.tempBase(fill)
	}
	if err != nil {
		return newBase{}, 0, fmt.Errorf("index: merging runs: %w", err)
	}
	return nb, len(s.runs), nil
}

// close releases the runs.
func (s *spiller) close() {
	for i := range s.runs {
		s.runs[i].close()
	}
	s.runs = nil
}

// mergeRuns writes to pw the union of runs, sorted by worker, each of
// whose ids are below those of its worker's next. The trigram space is
// cut into one part per core, of about equal bytes of lists; part 0 is
// merged straight into pw while the others are merged, each by its own
// goroutine, into an unlinked temporary file (in dir, "" for the
// system's), then appended to pw in order with their table entries
// shifted. The merge decodes and
// re-encodes every id: spread over the cores, it is no longer a phase
// where one core works and the others wait.
func mergeRuns(runs []run, pw *postingWriter, dir, pattern string) {
	cuts := splitRuns(runs, runtime.GOMAXPROCS(0))
	parts := make([]*partFile, len(cuts)-1)
	var wg sync.WaitGroup
	for i := range parts {
		part := &partFile{}
		parts[i] = part
		wg.Go(func() {
			part.f, part.err = os.CreateTemp(dir, pattern)
			if part.err != nil {
				return
			}
			os.Remove(part.f.Name())
			part.pw = newPostingWriter(part.f)
			mergeRange(runs, part.pw, cuts[i], cuts[i+1])
			part.err = part.pw.flush()
		})
	}
	mergeRange(runs, pw, 0, cuts[0])
	wg.Wait()
	for _, part := range parts {
		if part.f != nil {
			defer part.f.Close()
		}
		if part.err == nil {
			part.err = pw.appendPart(part.f, part.pw)
		}
		if part.err != nil && pw.err == nil {
			pw.err = part.err
		}
	}
}

// partFile is one part of a parallel merge: its lists in f, its table in
// pw.
type partFile struct {
	f   *os.File
	pw  *postingWriter
	err error
}

// splitRuns returns p cut points in the trigram space, the last 1<<24,
// such that the runs' lists below each cut grow by about 1/p of their
// bytes from one to the next: part i holds trigrams in [cuts[i-1],
// cuts[i]).
func splitRuns(runs []run, p int) []uint32 {
	below := func(t uint32) (n int64) { // bytes of lists of trigrams < t
		for r := range runs {
			if _, off, err := runs[r].listsBelow(t); err == nil {
				n += off
			}
		}
		return n
	}
	total := below(1 << 24)
	cuts := make([]uint32, 0, p)
	for i := 1; i < p; i++ {
		want := total / int64(p) * int64(i)
		lo, hi := uint32(0), uint32(1<<24)
		for lo < hi {
			m := (lo + hi) / 2
			if below(m) < want {
				lo = m + 1
			} else {
				hi = m
			}
		}
		cuts = append(cuts, lo)
	}
	return append(cuts, 1<<24)
}

// mergeRange writes to pw the union of runs' lists of the trigrams in
// [lo, hi), reading each run from its first such trigram on. runs are
// sorted by worker: a trigram's ids from one worker are its runs' lists
// end to end, and the workers' ids, disjoint, are then merged. A run
// that cannot be read is pw's error.
func mergeRange(runs []run, pw *postingWriter, lo, hi uint32) {
	cs := make([]*runCursor, len(runs))
	for r := range runs {
		cs[r] = newRunCursor(&runs[r], lo)
	}
	defer func() {
		for _, c := range cs {
			if c.err != nil && pw.err == nil {
				pw.err = fmt.Errorf("index: reading a run: %w", c.err)
			}
		}
	}()
	var out, tmp postingList
	var from []*postingList // per worker with ids for the trigram, its postings
	workers := 0
	for _, r := range runs {
		workers = max(workers, r.worker+1)
	}
	bufs := make([]postingList, workers)
	merged := 0 // postings since the pacer last looked
	for k := 1; ; k++ {
		if k%4096 == 0 || merged >= mergeCheckPostings {
			pacer.check()
			merged = 0
		}
		t, any := uint32(0), false
		for _, c := range cs {
			if !c.done && (!any || c.t < t) {
				t, any = c.t, true
			}
		}
		if !any || t >= hi {
			return
		}
		from = from[:0]
		for r := 0; r < len(runs); {
			w := runs[r].worker
			buf := &bufs[w]
			buf.reset()
			for ; r < len(runs) && runs[r].worker == w; r++ {
				if c := cs[r]; !c.done && c.t == t {
					buf.ids, buf.masks = appendRunIDs(buf.ids, buf.masks, c.take())
				}
			}
			if len(buf.ids) > 0 {
				from = append(from, buf)
			}
		}
		mergeLists(&out, &tmp, from)
		pw.add(t, out.ids, out.masks)
		merged += len(out.ids)
	}
}

// mergeCheckPostings bounds the postings mergeRange merges between two
// looks of the pacer, beside every 4096 lists: the buffers it reuses
// grow, by doubling, to the longest list, and the lists of a tree's most
// common trigrams (runs of spaces and tabs, first in trigram order) hold
// nearly every file. At a million files their growth left some 150 MB of
// garbage before the 4096th list, the build's peak.
const mergeCheckPostings = 1 << 20

// postingList is a list's ids, ascending, and their masks.
type postingList struct {
	ids   []uint32
	masks []byte
}

func (l *postingList) reset() { l.ids, l.masks = l.ids[:0], l.masks[:0] }

// mergeLists sets out to the union of lists, each ascending, no id in
// two of them; tmp is scratch space.
func mergeLists(out, tmp *postingList, lists []*postingList) {
	out.reset()
	switch len(lists) {
	case 0:
		return
	case 1:
		out.ids, out.masks = append(out.ids, lists[0].ids...), append(out.masks, lists[0].masks...)
		return
	}
	// Merge pairwise, the union so far in tmp, the next into out.
	tmp.reset()
	tmp.ids, tmp.masks = append(tmp.ids, lists[0].ids...), append(tmp.masks, lists[0].masks...)
	for i, l := range lists[1:] {
		out.reset()
		merge2(out, tmp, l)
		if i < len(lists)-2 {
			*out, *tmp = *tmp, *out
		}
	}
}

// merge2 appends to dst the union of a and b, both ascending; of an id
// in both (never, where they are used: a build's workers' ids are
// disjoint, and a compaction's delta ids are all stale, so not kept from
// the base) a's posting is kept.
//
// It copies runs: a build's workers take files in chunks of buildChunk
// ids, so a list's ids come in stretches from one worker, and an
// element-by-element merge (an append for each, a branch that goes one
// way or the other at random) was a quarter of the runs' merge.
func merge2(dst, a, b *postingList) {
	k := len(dst.ids)
	dst.ids = slices.Grow(dst.ids, len(a.ids)+len(b.ids))[:k+len(a.ids)+len(b.ids)]
	dst.masks = slices.Grow(dst.masks, len(a.ids)+len(b.ids))[:k+len(a.ids)+len(b.ids)]
	run := func(l *postingList, from, to int) {
		copy(dst.masks[k:], l.masks[from:to])
		k += copy(dst.ids[k:], l.ids[from:to])
	}
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		switch x, y := a.ids[i], b.ids[j]; {
		case x < y:
			e := i + 1
			for e < len(a.ids) && a.ids[e] < y {
				e++
			}
			run(a, i, e)
			i = e
		case x > y:
			e := j + 1
			for e < len(b.ids) && b.ids[e] < x {
				e++
			}
			run(b, j, e)
			j = e
		default:
			run(a, i, i+1)
			i, j = i+1, j+1
		}
	}
	run(a, i, len(a.ids))
	run(b, j, len(b.ids))
	dst.ids, dst.masks = dst.ids[:k], dst.masks[:k]
}

// appendRunIDs appends the ids of b, a list of a run this build wrote
// (uvarint k, then each id's uvarint gap and mask byte: builder.go), to
// dst and their masks to masks: every id in one pass over the data.
func appendRunIDs(dst []uint32, masks []byte, b []byte) ([]uint32, []byte) {
	_, m := binary.Uvarint(b)
	if m <= 0 {
		return dst, masks
	}
	b = b[m:]
	acc := uint32(0)
	for i := 0; i+1 < len(b); i++ {
		v := uint64(b[i])
		if v >= 0x80 {
			var n int
			if v, n = binary.Uvarint(b[i:]); n <= 0 || i+n >= len(b) {
				return dst, masks
			}
			i += n - 1
		}
		i++
		acc += uint32(v)
		dst, masks = append(dst, acc-1), append(masks, b[i])
	}
	return dst, masks
}
