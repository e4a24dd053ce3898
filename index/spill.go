package index

import (
	"fmt"
	"os"
	"path/filepath"
)

// Bounded-memory build (after codesearch's index/write.go). The builder
// collects lists for ascending file ids; once they hold more than the
// budget, they are written out as a run, a base file of their own (ids
// absolute), and the builder starts again empty. At the end the runs are
// merged trigram by trigram into the final base: run r holds only ids
// below those of run r+1, so a trigram's list is its runs' lists end to
// end. The final base of a build that spilled is itself a file in the
// spill directory, mapped and unlinked at once (the mapping keeps it: the
// page cache holds it, not the heap, and a crash leaves nothing behind);
// runs are unlinked once mapped too. So a build's heap holds the path
// table, one budget of lists and the reading batches, whatever the size
// of the tree.

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

// reset empties b for the next run.
func (b *postingBuilder) reset() {
	for _, t := range b.tris {
		b.slot[t] = 0
	}
	b.tris, b.lists, b.last, b.size = b.tris[:0], b.lists[:0], b.last[:0], 0
}

// tempBase writes a base with fill to a new file in s.dir, maps it and
// unlinks it.
func (s *spiller) tempBase(fill func(*postingWriter)) (postings, error) {
	dir, pattern := "", "indexd-build-*"
	if s.at != "" {
		dir, pattern = filepath.Split(s.at)
		pattern += buildInfix + "*"
	}
	f, err := os.CreateTemp(dir, pattern)
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
	fill := func(pw *postingWriter) { mergeRuns(s.runs, pw) }
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

// mergeRuns writes to pw the union of runs, each of whose ids are below
// those of the next.
func mergeRuns(runs []postings, pw *postingWriter) {
	next := make([]int, len(runs))
	var ids []uint32
	for {
		t, any := uint32(0), false
		for r := range runs {
			if next[r] < runs[r].n {
				if u := runs[r].trigram(next[r]); !any || u < t {
					t, any = u, true
				}
			}
		}
		if !any {
			return
		}
		ids = ids[:0]
		for r := range runs {
			if next[r] < runs[r].n && runs[r].trigram(next[r]) == t {
				ids = appendIDs(ids, runs[r].list(next[r]))
				next[r]++
			}
		}
		pw.add(t, ids)
	}
}
