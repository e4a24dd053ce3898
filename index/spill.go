package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Bounded-memory build (after codesearch's index/write.go). Each build
// worker reads its own files (chunks of ascending ids handed out in
// turn) and collects their lists in a builder of its own (builder.go),
// with its share of the budget; once the builder is full it is written
// out as a run, a base file of its own (ids absolute) whose lists carry
// no skip entries, and starts again empty. A worker's runs hold
// ascending ids: its run r holds only ids below those of its run r+1, so
// a trigram's list in one worker's runs is their lists end to end, and
// the workers' ids are disjoint. At the end the runs are merged trigram
// by trigram into the final base: per worker, the lists end to end, then
// the workers' lists merged by id. The merge runs on every core, each on
// its own range of trigrams (mergeRuns). The final base of a build that
// spilled beside a DB is that DB's next base file, synced, which Save
// names without copying it (a crash before the save leaves a base file
// no DB names, removed on open); without a DB it is a temporary file
// mapped and unlinked at once. Either way the page cache holds it, not
// the heap. Runs are unlinked once mapped, and the merge releases their
// pages as it reads them, so they do not count in the process's
// resident size either. So a build's memory is the path table and one
// budget of lists (arenas without pointers, which the collector does not
// scan), whatever the size of the tree. A build that spilled nothing
// merges its builders' lists in memory.

// DefaultBuildBudget is how many bytes of posting lists a build holds in
// memory (all its workers together) before spilling them to runs.
const DefaultBuildBudget = 64 << 20

// buildBudget is the budget in force; tests lower it to force runs.
var buildBudget = DefaultBuildBudget

// spiller spills builders' lists to runs named <at>.build-<random> (at
// "": indexd-build-<random> in the system's temporary directory) and
// merges them. A run is unlinked as soon as it is mapped; one left by a
// process killed in between is removed with the DB's other temporary
// files (removeTemps). Its spill is safe for concurrent use.
type spiller struct {
	at   string
	mu   sync.Mutex
	runs []run
}

// run is one spilled run: its lists, and the worker whose builder wrote
// it.
type run struct {
	p      postings
	worker int
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
	bw := spillBufs.Get().(*bufio.Writer)
	defer spillBufs.Put(bw)
	bw.Reset(f)
	pw := &postingWriter{w: bw}
	fill(pw)
	size, _, err := pw.finish()
	bw.Reset(nil)
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
	p, err := s.tempBase(b.writeRun)
	if err != nil {
		return fmt.Errorf("index: spilling a run: %w", err)
	}
	s.mu.Lock()
	s.runs = append(s.runs, run{p: p, worker: worker})
	s.mu.Unlock()
	b.reset()
	return nil
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
			p, err := parsePostings(pw.finishBytes())
			if err != nil {
				return newBase{}, 0, err
			}
			runs = append(runs, run{p: p, worker: w})
			builders[w] = nil // its memory can go
		}
		pw := newPostingWriter(nil)
		mergeRange(runs, pw, 0, 1<<24)
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
		s.runs[i].p.close()
	}
	s.runs = nil
}

// releaseStep is how many bytes of a run's mapping a merge reads past
// the last release before releasing them: what a merge keeps resident
// is about this much per run and part, and a build at a million files
// merges some forty runs in two parts.
const releaseStep = 64 << 10

// released tracks what a merge has released of one mapped run: the pages
// of lists and of table entries it has read, which it never reads again.
// Released, they leave the process's resident set (the page cache keeps
// them while the kernel has no better use for the memory), so that
// reading every run through its mapping does not grow the build's RSS by
// the size of the base.
type released struct{ lists, table int }

// release releases what p holds before the list and table entry of i.
func (r *released) release(p *postings, i int) {
	if p.unmap == nil {
		return
	}
	lists := p.tableOff
	if i < p.n {
		_, off := p.entry(i)
		lists = int(min(off, uint64(p.tableOff)))
	}
	drop := func(from *int, to int) {
		to &^= pageSize - 1
		if to-*from >= releaseStep {
			unix.Madvise(p.data[*from:to], unix.MADV_DONTNEED)
			*from = to
		}
	}
	drop(&r.lists, lists)
	drop(&r.table, p.tableOff+entrySize*i)
}

// start sets r for a merge that starts at the list and table entry of i
// of p: what lies before them is another part's, not to be released.
func (r *released) start(p *postings, i int) {
	r.lists = p.tableOff
	if i < p.n {
		_, off := p.entry(i)
		r.lists = int(min(off, uint64(p.tableOff)))
	}
	r.lists = (r.lists + pageSize - 1) &^ (pageSize - 1)
	r.table = (p.tableOff + entrySize*i + pageSize - 1) &^ (pageSize - 1)
}

var pageSize = os.Getpagesize()

// mergeRuns writes to pw the union of runs, sorted by worker, each of
// whose ids are below those of the next of its worker. The trigram space is cut into one part per core,
// of about equal bytes of lists; part 0 is merged straight into pw while
// the others are merged, each by its own goroutine, into an unlinked
// temporary file (in dir, "" for the system's), then appended to pw in
// order with their table entries shifted. The merge decodes and
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
	below := func(t uint32) (n int) { // bytes of lists of trigrams < t
		for r := range runs {
			rp := &runs[r].p
			if i := lowerBound(rp, t); i < rp.n {
				_, off := rp.entry(i)
				n += int(off)
			} else {
				n += rp.tableOff
			}
		}
		return n
	}
	total := below(1 << 24)
	cuts := make([]uint32, 0, p)
	for i := 1; i < p; i++ {
		want := total / p * i
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

// lowerBound returns the index of the first trigram of p not below t.
func lowerBound(p *postings, t uint32) int {
	lo, hi := 0, p.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.trigram(m) < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// mergeRange writes to pw the union of runs' lists of the trigrams in
// [lo, hi), releasing what it has read of each run's mapping. runs are
// sorted by worker: a trigram's ids from one worker are its runs' lists
// end to end, and the workers' ids, disjoint, are then merged.
func mergeRange(runs []run, pw *postingWriter, lo, hi uint32) {
	next := make([]int, len(runs))
	rel := make([]released, len(runs))
	for r := range runs {
		next[r] = lowerBound(&runs[r].p, lo)
		rel[r].start(&runs[r].p, next[r])
	}
	var ids, tmp []uint32
	var from [][]uint32 // per worker with ids for the trigram, its ids
	workers := 0
	for _, r := range runs {
		workers = max(workers, r.worker+1)
	}
	bufs := make([][]uint32, workers)
	for {
		t, any := uint32(0), false
		for r := range runs {
			if rp := &runs[r].p; next[r] < rp.n {
				if u := rp.trigram(next[r]); !any || u < t {
					t, any = u, true
				}
			}
		}
		if !any || t >= hi {
			return
		}
		from = from[:0]
		for r := 0; r < len(runs); {
			w := runs[r].worker
			buf := bufs[w][:0]
			for ; r < len(runs) && runs[r].worker == w; r++ {
				if rp := &runs[r].p; next[r] < rp.n && rp.trigram(next[r]) == t {
					buf = appendRunIDs(buf, rp.list(next[r]))
					next[r]++
					rel[r].release(rp, next[r])
				}
			}
			bufs[w] = buf
			if len(buf) > 0 {
				from = append(from, buf)
			}
		}
		ids, tmp = mergeIDs(ids[:0], tmp, from)
		pw.add(t, ids)
	}
}

// mergeIDs appends to dst the union of lists, each ascending, no id in
// two of them; tmp is scratch space, returned for reuse.
func mergeIDs(dst, tmp []uint32, lists [][]uint32) (out, scratch []uint32) {
	switch len(lists) {
	case 0:
		return dst, tmp
	case 1:
		return append(dst, lists[0]...), tmp
	}
	acc := append(tmp[:0], lists[0]...)
	for i, l := range lists[1:] {
		var m []uint32
		if i == len(lists)-2 {
			m = dst
		}
		m = merge2(m, acc, l)
		if i == len(lists)-2 {
			return m, acc
		}
		acc = m
	}
	panic("unreachable")
}

// merge2 appends to dst the union of a and b, both ascending.
func merge2(dst, a, b []uint32) []uint32 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			dst = append(dst, a[i])
			i++
		} else {
			dst = append(dst, b[j])
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// appendRunIDs appends the ids of b, a list of a run this build wrote
// (uvarint k, then the data: no skip entries), to dst: every id in one
// pass over the gaps.
func appendRunIDs(dst []uint32, b []byte) []uint32 {
	_, m := binary.Uvarint(b)
	if m <= 0 {
		return dst
	}
	b = b[m:]
	acc := uint32(0)
	for i := 0; i < len(b); {
		x := uint32(b[i])
		if x < 0x80 {
			i++
		} else {
			v, n := binary.Uvarint(b[i:])
			if n <= 0 {
				return dst
			}
			x, i = uint32(v), i+n
		}
		acc += x
		dst = append(dst, acc-1)
	}
	return dst
}
