package index

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Bounded-memory build (after codesearch's index/write.go). The builder
// collects lists for ascending file ids; once they hold more than the
// budget, they are written out as a run, a base file of their own (ids
// absolute), and the builder starts again empty. At the end the runs are
// merged trigram by trigram into the final base: run r holds only ids
// below those of run r+1, so a trigram's list is its runs' lists end to
// end; the merge runs on every core, each on its own range of trigrams
// (mergeRuns). The final base of a build that spilled beside a DB is that
// DB's next base file, synced, which Save names without copying it (a
// crash before the save leaves a base file no DB names, removed on open);
// without a DB it is a temporary file mapped and unlinked at once. Either
// way the page cache holds it, not the heap. Runs are unlinked once
// mapped, and the merge releases their pages as it reads them, so they do
// not count in the process's resident size either. So a build's memory
// is the path table, one budget of lists and the reading batches,
// whatever the size of the tree.

// DefaultBuildBudget is how many bytes of posting lists a build holds in
// memory before spilling them to a run.
const DefaultBuildBudget = 64 << 20

// buildBudget is the budget in force; tests lower it to force runs.
var buildBudget = DefaultBuildBudget

// spiller spills a builder's lists to runs named <at>.build-<random>
// (at "": indexd-build-<random> in the system's temporary directory) and
// merges them. A run is unlinked as soon as it is mapped; one left by a
// process killed in between is removed with the DB's other temporary
// files (removeTemps).
type spiller struct {
	at   string
	runs []postings
}

// buildInfix names a build's spilled files: <db>.build-<random>.
const buildInfix = ".build-"

// full reports whether b holds more than the budget.
func (b *postingBuilder) full() bool {
	return b.size+16*len(b.tris) > buildBudget
}

// reset empties b for the next run, keeping its lists' buffers.
func (b *postingBuilder) reset() {
	for _, t := range b.tris {
		b.slot[t] = 0
	}
	b.tris, b.lists, b.size = b.tris[:0], b.lists[:0], 0
}

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

// temp returns the directory and pattern of the build's temporary files.
func (s *spiller) temp() (dir, pattern string) {
	if s.at == "" {
		return "", "indexd-build-*"
	}
	dir, pattern = filepath.Split(s.at)
	return dir, pattern + buildInfix + "*"
}

// spill writes b's lists as a run and resets b.
func (s *spiller) spill(b *postingBuilder) error {
	p, err := s.tempBase(b.finish)
	if err != nil {
		return fmt.Errorf("index: spilling a run: %w", err)
	}
	s.runs = append(s.runs, p)
	b.reset()
	return nil
}

// merge spills what b still holds and merges every run into the final
// base, releasing the runs. With a DB path (s.at), the final base is that
// DB's next base file (synced; Save names it, and open removes it if no
// DB ever does), so that saving the build copies nothing; without, it is
// a temporary file mapped and unlinked at once (gen 0).
func (s *spiller) merge(b *postingBuilder) (newBase, error) {
	defer s.close()
	if err := s.spill(b); err != nil {
		return newBase{}, err
	}
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
		return newBase{}, fmt.Errorf("index: merging runs: %w", err)
	}
	return nb, nil
}

// close releases the runs.
func (s *spiller) close() {
	for i := range s.runs {
		s.runs[i].close()
	}
	s.runs = nil
}

// releaseStep is how many bytes of a run's mapping a merge reads past
// the last release before releasing them.
const releaseStep = 4 << 20

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

// mergeRuns writes to pw the union of runs, each of whose ids are below
// those of the next. The trigram space is cut into one part per core,
// of about equal bytes of lists; part 0 is merged straight into pw while
// the others are merged, each by its own goroutine, into an unlinked
// temporary file (in dir, "" for the system's), then appended to pw in
// order with their table entries shifted. The merge decodes and
// re-encodes every id: spread over the cores, it is no longer a phase
// where one core works and the others wait.
func mergeRuns(runs []postings, pw *postingWriter, dir, pattern string) {
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
func splitRuns(runs []postings, p int) []uint32 {
	below := func(t uint32) (n int) { // bytes of lists of trigrams < t
		for r := range runs {
			if i := lowerBound(&runs[r], t); i < runs[r].n {
				_, off := runs[r].entry(i)
				n += int(off)
			} else {
				n += runs[r].tableOff
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
// [lo, hi), releasing what it has read of each run's mapping.
func mergeRange(runs []postings, pw *postingWriter, lo, hi uint32) {
	next := make([]int, len(runs))
	rel := make([]released, len(runs))
	for r := range runs {
		next[r] = lowerBound(&runs[r], lo)
		rel[r].start(&runs[r], next[r])
	}
	var ids []uint32
	var masks []byte
	for k := 0; ; k++ {
		if k%1024 == 0 {
			for r := range runs {
				rel[r].release(&runs[r], next[r])
			}
		}
		t, any := uint32(0), false
		for r := range runs {
			if next[r] < runs[r].n {
				if u := runs[r].trigram(next[r]); !any || u < t {
					t, any = u, true
				}
			}
		}
		if !any || t >= hi {
			return
		}
		ids, masks = ids[:0], masks[:0]
		for r := range runs {
			if next[r] < runs[r].n && runs[r].trigram(next[r]) == t {
				ids, masks = appendRunIDs(ids, masks, runs[r].list(next[r]))
				next[r]++
			}
		}
		pw.add(t, ids, masks)
	}
}

// appendRunIDs appends the ids of b, a list of a run this build wrote, to
// dst and their next masks to masks: every id in one pass over the data,
// the skip entries passed over.
func appendRunIDs(dst []uint32, masks []byte, b []byte) ([]uint32, []byte) {
	k, m := binary.Uvarint(b)
	if m <= 0 {
		return dst, masks
	}
	b = b[m:]
	if nb := (k + blockSize - 1) / blockSize; nb > 1 {
		if uint64(len(b)) < 8*nb {
			return dst, masks
		}
		b = b[8*nb:]
	}
	acc := uint32(0)
	for i := 0; i+1 < len(b); i++ {
		x := uint32(b[i])
		if x < 0x80 {
			i++
		} else {
			v, n := binary.Uvarint(b[i:])
			if n <= 0 || i+n >= len(b) {
				return dst, masks
			}
			x, i = uint32(v), i+n
		}
		acc += x
		dst, masks = append(dst, acc-1), append(masks, b[i])
	}
	return dst, masks
}
