package index

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/internal/rooted"
)

// phraseCandidates returns the sorted paths the index proposes for a
// regexp whose every match holds one of lits, and lies within one line
// unless multiline.
func phraseCandidates(t testing.TB, ix *Index, pattern string, multiline bool, lits ...string) []string {
	t.Helper()
	var bl [][]byte
	for _, l := range lits {
		bl = append(bl, []byte(l))
	}
	var out []string
	ix.Candidates(CandidateOptions{Content: trigramQuery(t, pattern), Phrases: NewPhrases(bl), OneLine: !multiline}, func(f *File) bool { out = append(out, f.Path); return true })
	slices.Sort(out)
	return out
}

// separated holds every trigram of "func main", but its first four and
// its last three in lines that start in eighths 0 and 7.
const separated = "func mx;\n" + "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n" + "x main\n"

// A file holding every trigram of a phrase, but not in one eighth of it,
// is no candidate for it when matches lie within one line, from the
// base, from the delta, after a compaction and after a reopen; one
// holding the phrase in any case is. A multiline match may span lines:
// every file holding the trigrams is a candidate.
func TestPhraseMasksDropSeparatedTrigrams(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{
		"a.txt": "func main() {}\n",
		"b.txt": separated,
		"c.txt": "FUNC MAIN\n",
	})
	expect := func(stage string, ix *Index, want, all []string) {
		t.Helper()
		for _, lit := range []string{"func main", "FUNC MAIN", "Func Main"} {
			if got := phraseCandidates(t, ix, "(?i)func main", false, lit); !slices.Equal(got, want) {
				t.Errorf("%s: candidates for phrase %q = %q, want %q", stage, lit, got, want)
			}
			if got := phraseCandidates(t, ix, "(?i)func main", true, lit); !slices.Equal(got, all) {
				t.Errorf("%s: multiline candidates for phrase %q = %q, want %q", stage, lit, got, all)
			}
		}
		// The phrase alone, under a query that does not ask for it.
		if got := phraseCandidates(t, ix, "(?i)func", false, "func main"); !slices.Equal(got, want) {
			t.Errorf("%s: candidates of func for phrase func main = %q, want %q", stage, got, want)
		}
		if got := phraseCandidates(t, ix, "(?i)func", false); !slices.Equal(got, all) {
			t.Errorf("%s: candidates of func without phrases = %q, want %q", stage, got, all)
		}
	}
	all := []string{"a.txt", "b.txt", "c.txt"}
	expect("base", ix, []string{"a.txt", "c.txt"}, all)
	writeFile(t, root, "a.txt", separated)
	writeFile(t, root, "b.txt", "x func main\n")
	if err := ix.Apply(context.Background(), []string{"a.txt", "b.txt"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	expect("delta", ix, []string{"b.txt", "c.txt"}, all)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	expect("compacted", ix, []string{"b.txt", "c.txt"}, all)
	ix2 := reopen(t, ix, db, root)
	expect("reopened", ix2, []string{"b.txt", "c.txt"}, all)
	// A phrase set filters only if every phrase can: one shorter than
	// three bytes (no trigram) keeps every file.
	if got := phraseCandidates(t, ix2, "(?i)func", false, "func main", "fu"); !slices.Equal(got, all) {
		t.Errorf("phrases with a short one: %q, want %q", got, all)
	}
}

// A file over NextMasksFrom (8 bytes here) carries next masks: a file
// holding every trigram of a phrase but never one after the other is no
// candidate for it, wherever its lines are, from the base, the delta,
// after a compaction and reopened (the kind is the file's flag, not the
// reopening index's threshold); one holding the phrase in any case is,
// told every eighth. A file of at most 8 bytes keeps line masks.
func TestNextMaskFiles(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		"a.txt": "func main() {}\n",
		"b.txt": "func mx; x main\n", // "c m" is followed by 'x', never by 'a'
		"c.txt": "FUNC MAIN\n",
		"d.txt": "x main\n", // 7 bytes: line masks
	})
	ix := mustBuildWith(t, root, knobsWith(func(k *knobs) {
		k.nextMasksFrom = 8
		k.now = clockAt(time.Now().Add(time.Hour)) // not Racy: eighths told as they are
	}))
	expect := func(stage string, ix *Index, want []string) {
		t.Helper()
		for _, lit := range []string{"func main", "FUNC MAIN", "Func Main"} {
			if got := phraseCandidates(t, ix, "(?i)func", false, lit); !slices.Equal(got, want) {
				t.Errorf("%s: candidates for phrase %q = %q, want %q", stage, lit, got, want)
			}
		}
		got := map[string]Eighths{}
		ix.CandidateLines(CandidateOptions{Content: trigramQuery(t, "(?i)main"), OneLine: true}, func(f *File, lines Eighths) bool {
			got[f.Path] = lines
			if next := f.Flags&NextMasks != 0; next != (f.Size > 8) {
				t.Errorf("%s: %s of %d bytes: next masks %v", stage, f.Path, f.Size, next)
			}
			return true
		})
		for p, lines := range got {
			if p != "d.txt" && lines != AllEighths {
				t.Errorf("%s: %s told eighths %08b, want all (next masks)", stage, p, lines)
			}
		}
		if got["d.txt"] != 1 {
			t.Errorf("%s: d.txt told eighths %08b, want 00000001", stage, got["d.txt"])
		}
	}
	expect("base", ix, []string{"a.txt", "c.txt"})
	writeFile(t, root, "a.txt", "func mx; x main\n")
	writeFile(t, root, "b.txt", "x func main\n")
	if err := ix.Apply(context.Background(), []string{"a.txt", "b.txt"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	expect("delta", ix, []string{"b.txt", "c.txt"})
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	expect("compacted", ix, []string{"b.txt", "c.txt"})
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix2 := reopen(t, ix, db, root)
	expect("reopened", ix2, []string{"b.txt", "c.txt"})
}

// A file whose bytes read are not its size as listed (it changed since
// its stat) gets next masks: a probe would take its eighths as eighths
// of the listed size.
func TestReadNotItsSizeGetsNextMasks(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"f.txt": "func main() {}\n"})
	rt, err := rooted.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	k := defaultKnobs()
	var r reader
	for _, c := range []struct {
		size int64
		want Flags
	}{{15, 0}, {14, NextMasks}, {16, NextMasks}, {0, NextMasks}} {
		tris, flags, _ := r.index(rt, "f.txt", c.size, &k)
		if flags != c.want || len(tris) == 0 {
			t.Errorf("listed %d bytes, read 15: flags %#x with %d trigrams, want %#x", c.size, flags, len(tris), c.want)
		}
	}
}

// The masks of a file are exactly the eighths of the lines each
// trigram's occurrences end in, or, as next masks, the bins of the bytes
// that follow them (every bin at the end), as a direct computation over
// random contents finds them, including non-ASCII, invalid UTF-8 and
// line breaks anywhere.
func TestExtractMasks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	alpha := []byte("aAbB kK_(\n\xe2\x84\xaa\xc5\xbf\xff")
	var s trigramSet
	for k := range 600 {
		next := k%2 == 1
		data := make([]byte, r.IntN(60))
		for i := range data {
			data[i] = alpha[r.IntN(len(alpha))]
		}
		want := map[uint32]uint8{}
		for i := 0; i+3 <= len(data); i++ {
			tr := uint32(lower[data[i]])<<16 | uint32(lower[data[i+1]])<<8 | uint32(lower[data[i+2]])
			switch {
			case !next:
				start := bytes.LastIndexByte(data[:i+2], '\n') + 1 // the line of the last byte
				want[tr] |= 1 << (8 * start / len(data))
			case i+3 < len(data):
				want[tr] |= 1 << nextBin[lower[data[i+3]]]
			default:
				want[tr] = 0xFF
			}
		}
		got, ok := s.extract(data, MaxFileTrigrams, next)
		if !ok || len(got) != len(want) {
			t.Fatalf("%q: %d postings (ok %v), want %d", data, len(got), ok, len(want))
		}
		for _, v := range got {
			if m, ok := want[packedTri(v)]; !ok || m != uint8(v) {
				t.Fatalf("%q (next %v): trigram %06x mask %#x, want %#x (present %v)", data, next, packedTri(v), uint8(v), m, ok)
			}
		}
	}
}

// Phrase filtering never drops a file holding a phrase (under ASCII case
// folding) in a line, from the base or the delta, for random contents
// and phrases, by line masks and by next masks; and it drops some that
// hold every trigram but not the phrase.
func TestPhraseFilterNeverDropsAHolder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	alpha := []string{"a", "b", "A", "B", " ", "ab", "ba", "\n", "k", "\u212a", "s", "\u017f", "\xff"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	files := map[string]string{}
	for i := range 80 {
		files[fmt.Sprintf("f%02d.txt", i)] = gen(10 + r.IntN(80))
	}
	// Files over 100 bytes carry next masks.
	root := writeTree(t, files)
	ix := mustBuildWith(t, root, knobsWith(func(k *knobs) { k.nextMasksFrom = 100 }))
	defer ix.Close()
	// Half the files read again: their postings come from the delta.
	var changed []string
	for i := 0; i < 80; i += 2 {
		p := fmt.Sprintf("f%02d.txt", i)
		files[p] = gen(10 + r.IntN(80))
		writeFile(t, root, p, files[p])
		changed = append(changed, p)
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	dropped := 0
	for range 500 {
		var lits []string
		for range 1 + r.IntN(2) {
			lit := gen(2 + r.IntN(4))
			if r.IntN(2) == 0 { // a piece of a file: often held
				c := files[fmt.Sprintf("f%02d.txt", r.IntN(80))]
				i := r.IntN(len(c))
				lit = c[i:min(len(c), i+4+r.IntN(5))]
			}
			lits = append(lits, lit)
		}
		if slices.ContainsFunc(lits, func(l string) bool { return len(l) < 3 || strings.Contains(l, "\n") }) {
			continue // a phrase with a line break is no one line's
		}
		// The trigram query of the phrases: any of them, each all its
		// trigrams (as codesearch plans a literal alternation).
		q := &csindex.Query{Op: csindex.QOr}
		var bl [][]byte
		for _, l := range lits {
			and := &csindex.Query{Op: csindex.QAnd}
			for i := 0; i+3 <= len(l); i++ {
				and.Trigram = append(and.Trigram, l[i:i+3])
			}
			q.Sub = append(q.Sub, and)
			bl = append(bl, []byte(l))
		}
		var got, nofilter []string
		ix.Candidates(CandidateOptions{Content: q, Phrases: NewPhrases(bl), OneLine: true}, func(f *File) bool { got = append(got, f.Path); return true })
		ix.Candidates(CandidateOptions{Content: q}, func(f *File) bool { nofilter = append(nofilter, f.Path); return true })
		dropped += len(nofilter) - len(got)
		for p, c := range files {
			for _, l := range lits {
				if strings.Contains(asciiLower(c), asciiLower(l)) && !slices.Contains(got, p) {
					t.Fatalf("%s (%q) holds phrase %q but is not a candidate for %q", p, c, l, lits)
				}
			}
		}
	}
	if dropped == 0 {
		t.Fatal("the phrase filter never dropped a file")
	}
	t.Logf("%d candidates dropped over the queries", dropped)
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower[c]
	}
	return string(b)
}
