package index

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"
)

// The mask filter against a line-by-line oracle, for synthetic
// trigram queries (AND/OR nesting, subs of one trigram, QAll and QNone
// subs, repeated trigrams) and phrases: a file holding a line whose
// trigrams satisfy the query and which holds one of the phrases must be
// kept, told the eighths of those lines, from the base (dense lists:
// bitmaps and bitmapAnd; sparse ones: blocks), with and without a newer
// bitmap leading, and from the delta; files with line masks and files
// with next masks.
func TestMaskFilterOracle(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(36, 3))
	alpha := "abAB\n"
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	files := map[string]string{}
	for i := range 400 {
		n := 3 + r.IntN(12)
		if i%10 == 0 {
			n = 60 + r.IntN(200)
		}
		files[fmt.Sprintf("f%03d.txt", i)] = gen(n)
	}
	root := writeTree(t, files)
	// The clock an hour ahead: no file is Racy, whose eighths are all
	// told (TestRacyFileAllEighths). Files over 150 bytes (some of the
	// long ones) carry next masks.
	ix := mustBuildWith(t, root, knobsWith(func(k *knobs) {
		k.now = clockAt(time.Now().Add(time.Hour))
		k.nextMasksFrom = 150
	}))
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var changed []string
	for i, p := range paths {
		if i%6 == 0 {
			files[p] = gen(3 + r.IntN(20))
			writeFile(t, root, p, files[p])
			changed = append(changed, p)
		}
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	tri := func() string {
		b := []byte{"ab"[r.IntN(2)], "ab"[r.IntN(2)], "ab"[r.IntN(2)]}
		return string(b)
	}
	var mk func(depth int) *csindex.Query
	mk = func(depth int) *csindex.Query {
		switch x := r.IntN(10); {
		case x == 0:
			return &csindex.Query{Op: csindex.QAll}
		case x == 1 && depth > 0:
			return &csindex.Query{Op: csindex.QNone}
		}
		q := &csindex.Query{Op: csindex.QAnd}
		if r.IntN(2) == 0 {
			q.Op = csindex.QOr
		}
		for range r.IntN(3) {
			q.Trigram = append(q.Trigram, tri())
		}
		if depth < 3 {
			for range r.IntN(3) {
				q.Sub = append(q.Sub, mk(depth+1))
			}
		}
		if len(q.Trigram)+len(q.Sub) == 0 {
			q.Trigram = []string{tri()}
		}
		return q
	}
	lineTris := func(line string) map[uint32]bool {
		m := map[uint32]bool{}
		l := strings.ToLower(line)
		for i := 0; i+3 <= len(l); i++ {
			m[uint32(l[i])<<16|uint32(l[i+1])<<8|uint32(l[i+2])] = true
		}
		return m
	}
	// mayMatch returns the eighths of c holding a line that may match.
	mayMatch := func(c string, q *csindex.Query, lits []string) (eighths Eighths) {
		start := 0
		for _, line := range strings.Split(c, "\n") {
			s := start
			start += len(line) + 1
			ts := lineTris(line)
			if !holds(q, func(t uint32) bool { return ts[t] }) {
				continue
			}
			ok := lits == nil
			for _, l := range lits {
				if strings.Contains(strings.ToLower(line), l) {
					ok = true
				}
			}
			if ok && s < len(c) {
				eighths |= 1 << EighthOf(int64(s), int64(len(c)))
			}
		}
		return eighths
	}
	dropped, tested, narrowed := 0, 0, 0
	check := func(stage string, ix *Index, n int) {
		for range n {
			q := mk(0)
			var lits []string
			var ph *Phrases
			if r.IntN(2) == 0 {
				for range 1 + r.IntN(2) {
					lits = append(lits, strings.ToLower(gen(4+r.IntN(3))))
				}
				var bl [][]byte
				for i, l := range lits {
					l = strings.ReplaceAll(l, "\n", "a")
					lits[i] = l
					bl = append(bl, []byte(l))
				}
				ph = NewPhrases(bl)
			}
			for _, newer := range []bool{false, true} {
				// Eighths told of the files of 0, 10 or 100 bytes and more.
				o := CandidateOptions{Content: q, Phrases: ph, OneLine: true, LinesFrom: []int64{0, 10, 100}[r.IntN(3)]}
				if newer {
					o.Newer, o.Since = true, math.MinInt64+1
				}
				got := map[string]Eighths{}
				ix.CandidateLines(o, func(f *File, lines Eighths) bool { got[f.Path] = lines; return true })
				// The same on 1 to 5 goroutines, each on its range of ids.
				parts := 1 + r.IntN(5)
				ix.k.evalParts = parts
				split := map[string]Eighths{}
				ix.CandidateLines(o, func(f *File, lines Eighths) bool { split[f.Path] = lines; return true })
				ix.k.evalParts = 0
				if !maps.Equal(split, got) {
					t.Fatalf("%s: query %v phrases %q (newer %v): %d candidates evaluated in %d parts, %d in one", stage, q, lits, newer, len(split), parts, len(got))
				}
				for _, p := range paths {
					lines, kept := got[p]
					if want := mayMatch(files[p], q, lits); want != 0 {
						tested++
						if !kept {
							t.Fatalf("%s: query %v phrases %q (newer %v): %s (%q) holds a line that may match; dropped", stage, q, lits, newer, p, files[p])
						}
						if want&^lines != 0 {
							t.Fatalf("%s: query %v phrases %q (newer %v, from %d): %s (%q) may match in eighths %08b, told %08b", stage, q, lits, newer, o.LinesFrom, p, files[p], want, lines)
						}
						if lines != AllEighths {
							narrowed++
						}
					} else if !kept {
						dropped++
					}
				}
			}
		}
	}
	check("base and delta", ix, 300)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted", ix, 200)
	t.Logf("%d kept as required (%d of them told some eighths, not all), %d dropped", tested, narrowed, dropped)
	if narrowed == 0 {
		t.Error("no candidate told some eighths only")
	}
}

// A Racy file (changed within the clock tick its stat was taken in, so
// its stat cannot vouch for what was read) is told every eighth: a
// caller that reads only the eighths told would trust that stat.
func TestRacyFileAllEighths(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("filler line\n", 100)
	root := writeTree(t, map[string]string{"a.txt": "needle here\n" + filler + filler + filler})
	q := &csindex.Query{Op: csindex.QAnd, Trigram: []string{"nee", "eed", "edl", "dle"}}
	o := CandidateOptions{Content: q, OneLine: true}
	for _, c := range []struct {
		name  string
		k     knobs
		racy  bool
		lines Eighths
	}{
		{"just written", defaultKnobs(), true, AllEighths},
		{"the clock an hour ahead", knobsWith(func(k *knobs) { k.now = clockAt(time.Now().Add(time.Hour)) }), false, 0b0001},
	} {
		ix := mustBuildWith(t, root, c.k)
		got, n := Eighths(0), 0
		ix.CandidateLines(o, func(f *File, lines Eighths) bool {
			if racy := f.Flags&Racy != 0; racy != c.racy {
				t.Errorf("%s: racy %v, want %v", c.name, racy, c.racy)
			}
			got, n = lines, n+1
			return true
		})
		if n != 1 || got != c.lines {
			t.Errorf("%s: %d candidates, eighths %08b; want 1, %08b", c.name, n, got, c.lines)
		}
	}
}
