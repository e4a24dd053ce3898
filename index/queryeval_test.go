package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/internal/testtree"
)

// eagerEval is the reference: every list decoded, ANDs intersected and
// ORs merged whole.
func eagerEval(p *postings, q *csindex.Query) (ids []uint32, all bool) {
	switch q.Op {
	case csindex.QAll:
		return nil, true
	case csindex.QNone:
		return nil, false
	}
	var sets [][]uint32
	for _, t := range q.Trigram {
		sets = append(sets, appendIDs(nil, p.lookup(queryTrigram(t))))
	}
	for _, s := range q.Sub {
		l, sall := eagerEval(p, s)
		if sall {
			if q.Op == csindex.QOr {
				return nil, true
			}
			continue
		}
		sets = append(sets, l)
	}
	if len(sets) == 0 {
		return nil, q.Op == csindex.QAnd
	}
	out := sets[0]
	for _, s := range sets[1:] {
		var next []uint32
		for _, id := range s {
			_, in := slices.BinarySearch(out, id)
			if in && q.Op == csindex.QAnd {
				next = append(next, id)
			}
		}
		if q.Op == csindex.QOr {
			next = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(out), s...))))
		}
		out = next
	}
	return out, false
}

// The streamed evaluation of random nested AND/OR queries (over trigrams
// with long, short and no lists) equals the eager one.
func TestStreamEqualsEager(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var w postingWriter
	const nids = 3000
	tris := []string{"aaa", "bbb", "ccc", "ddd", "eee", "fff", "ggg", "zzz"}
	for i, tr := range tris[:len(tris)-1] { // "zzz" has no list
		var ids []uint32
		for id := range uint32(nids) {
			if r.IntN(1<<i+1) == 0 {
				ids = append(ids, id)
			}
		}
		w.add(queryTrigram(tr), ids, make([]byte, len(ids)))
	}
	p, err := parsePostings(w.finishBytes())
	if err != nil {
		t.Fatal(err)
	}
	// The table's length bounds the ids an evaluation in parts splits.
	ix := &Index{base: p, files: make([]File, nids)}
	var gen func(depth int) *csindex.Query
	gen = func(depth int) *csindex.Query {
		switch r.IntN(12) {
		case 0:
			return &csindex.Query{Op: csindex.QAll}
		case 1:
			return &csindex.Query{Op: csindex.QNone}
		}
		q := &csindex.Query{Op: csindex.QAnd}
		if r.IntN(2) == 0 {
			q.Op = csindex.QOr
		}
		for range r.IntN(4) {
			q.Trigram = append(q.Trigram, tris[r.IntN(len(tris))])
		}
		if depth < 3 {
			for range r.IntN(3) {
				q.Sub = append(q.Sub, gen(depth+1))
			}
		}
		return q
	}
	queries := 3000
	if testtree.RaceEnabled {
		queries = 600 // CI runs the 3,000 without -race
	}
	for i := range queries {
		q := gen(0)
		want, wall := eagerEval(&ix.base, q)
		ix.k.evalParts = []int{0, 1, 2, 3, 7}[i%5] // 0: by the lead list's length
		got, _, all, ok := ix.evalBase(q, nil, lineScope{}, newer{since: math.MinInt64}, "")
		if !ok || all != wall || !all && !slices.Equal(got, want) {
			t.Fatalf("query %d %v in %d parts: got %d ids (all=%v, ok=%v), want %d (all=%v)", i, q, ix.k.evalParts, len(got), all, ok, len(want), wall)
		}
	}
	// Seeking through a stream lands where the eager answer says.
	q := &csindex.Query{Op: csindex.QAnd, Trigram: []string{"aaa"}, Sub: []*csindex.Query{{Op: csindex.QOr, Trigram: []string{"bbb", "ccc"}}}}
	want, _ := eagerEval(&ix.base, q)
	s, _ := ix.stream(q)
	for _, t0 := range []uint32{0, 5, 100, 1000, 2999, 3000} {
		s.seek(t0)
		j, _ := slices.BinarySearch(want, t0)
		got, ok := s.at()
		if ok != (j < len(want)) || ok && got != want[j] {
			t.Fatalf("seek %d: at %d, %v; want %s", t0, got, ok, fmt.Sprint(want[j:min(j+1, len(want))]))
		}
	}
}

// An AND of bitmap-form lists, walked by next and by seeks of random
// reach, stands on exactly the ids every list holds, and places each
// list's cursor, when asked, on that id with the id's own next mask
// (what a phrase filter sharing the cursors reads).
func TestBitmapAndPlacesCursors(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	const nids = 5000
	var w postingWriter
	tris := []string{"aaa", "bbb", "ccc", "ddd"}
	masks := make([]map[uint32]uint8, len(tris))
	for i, tr := range tris {
		var ids []uint32
		var ms []byte
		masks[i] = map[uint32]uint8{}
		for id := range uint32(nids - 64*i) { // lists of different word counts
			if r.IntN(4) != 0 || id%640 < 70 { // dense, with runs of full words
				m := uint8(r.IntN(16))
				ids, ms = append(ids, id), append(ms, m)
				masks[i][id] = m
			}
		}
		w.add(queryTrigram(tr), ids, ms)
	}
	p, err := parsePostings(w.finishBytes())
	if err != nil {
		t.Fatal(err)
	}
	ix := &Index{base: p}
	q := &csindex.Query{Op: csindex.QAnd, Trigram: tris}
	want, _ := eagerEval(&ix.base, q)
	for round := range 200 {
		s, _ := ix.stream(q)
		b, ok := s.(*bitmapAnd)
		if !ok {
			t.Fatalf("the AND of %d bitmaps is a %T", len(tris), s)
		}
		j := 0
		for id, ok := b.at(); ok; id, ok = b.at() {
			if j >= len(want) || id != want[j] {
				t.Fatalf("round %d: at %d, want %v", round, id, want[j:min(j+1, len(want))])
			}
			for i, c := range b.cs {
				b.place(c)
				if c.cur != id || c.mask != masks[i][id] {
					t.Fatalf("round %d: list %d's cursor at %d mask %d, want %d mask %d", round, i, c.cur, c.mask, id, masks[i][id])
				}
			}
			if round > 0 && r.IntN(3) == 0 {
				to := id + 1 + uint32(r.IntN(200*round))
				b.seek(to)
				j, _ = slices.BinarySearch(want, to)
			} else {
				b.next()
				j++
			}
		}
		if j < len(want) {
			t.Fatalf("round %d: ended before %d", round, want[j])
		}
	}
}

// A base file cut short under an open index (a full disk, another
// process) faults when its pages are read: a query then takes every
// regular file as a candidate (candidates are read live, so slow but
// never wrong) instead of crashing, with or without a newest-files
// filter, and the bound a Grep plans with says the query constrains
// nothing.
func TestBaseTruncatedUnderQueries(t *testing.T) {
	t.Parallel()
	ix, db := openSavedFixture(t)
	q := trigramQuery(t, "needle")
	candidates := func(since int64) []string {
		var got []string
		o := CandidateOptions{Content: q, Phrases: NewPhrases([][]byte{[]byte("needle")}), Newer: since != math.MinInt64, Since: since}
		ix.Candidates(o, func(f *File) bool { got = append(got, f.Path); return true })
		slices.Sort(got)
		return got
	}
	if got, want := candidates(math.MinInt64), []string{"a.txt", "b/c.txt", "b/d.go", "e/f/g/h.txt", "new.txt"}; !slices.Equal(got, want) {
		t.Fatalf("candidates before: %q, want %q", got, want)
	}
	withBase(t, db, func(b string) error { return os.Truncate(b, 0) })
	ix.k.evalParts = 3 // the base evaluated on three goroutines, each reading it
	all := []string{".ignore", "a.txt", "b/c.txt", "b/d.go", "e/f/g/h.txt", "new.txt", "tiny.txt"}
	if got := candidates(math.MinInt64); !slices.Equal(got, all) {
		t.Errorf("candidates after the base was cut: %q, want every regular file %q", got, all)
	}
	// The two files changed since the save (in the delta) are the newest.
	if got, want := candidates(ix.Estimate(CandidateOptions{}, 1).Since), []string{"a.txt", "new.txt"}; !slices.Equal(got, want) {
		t.Errorf("newest candidates after the base was cut: %q, want %q", got, want)
	}
	if e := ix.Estimate(CandidateOptions{Content: q}, 0); !e.All || e.Files != 8 {
		t.Errorf("bound after the base was cut: %d files, unconstrained %v; want 8, true", e.Files, e.All)
	}
}

// A base cut while the goroutines of an evaluation in parts read it
// faults in them, not in the caller: each recovers (a fault there
// without its own guard would end the process), and the query names
// every regular file.
func TestBaseTruncatedUnderParts(t *testing.T) {
	t.Parallel()
	ix, db := openSavedFixture(t)
	var cut sync.Once
	ix.k.evalParts = 3
	ix.k.partHook = func() { cut.Do(func() { withBase(t, db, func(b string) error { return os.Truncate(b, 0) }) }) }
	var got []string
	o := CandidateOptions{Content: trigramQuery(t, "needle"), Phrases: NewPhrases([][]byte{[]byte("needle")}), OneLine: true}
	ix.Candidates(o, func(f *File) bool { got = append(got, f.Path); return true })
	slices.Sort(got)
	if all := []string{".ignore", "a.txt", "b/c.txt", "b/d.go", "e/f/g/h.txt", "new.txt", "tiny.txt"}; !slices.Equal(got, all) {
		t.Errorf("candidates with the base cut under the parts: %q, want every regular file %q", got, all)
	}
}

// openSavedFixture opens the index of savedFixture's DB, closed when the
// test ends, and returns it with the DB's path.
func openSavedFixture(t *testing.T) (*Index, string) {
	t.Helper()
	root, db := savedFixture(t)
	ix, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, db
}
