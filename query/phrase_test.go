package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/tool"
)

// The index's phrase filter (next masks, fed the matcher's required
// literals) never drops a file the pattern matches: random contents and
// patterns built from their pieces, case-sensitive and not, with the
// folds beyond ASCII (k and the Kelvin sign, s and the long s, é and É)
// and invalid UTF-8, from the base and from the delta; and the index's
// whole answers stay the walk's. The filter must also drop files, or it
// is not tested.
func TestPhraseFilterKeepsEveryMatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	alpha := []string{"func", " ", "main", "Handler", "(", "\n", "k", "K", "\u212a", "s", "S", "\u017f", "é", "É", "\xff", "ab", "x", "_"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	files := fsTree{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = gen(5 + r.IntN(60))
	}
	root := newRoot(t, files)
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	var changed []string // a third read again: their postings are in the delta
	for i := 0; i < 60; i += 3 {
		p := fmt.Sprintf("d%d/f%02d.txt", i%3, i)
		files[p] = gen(5 + r.IntN(60))
		if err := os.WriteFile(filepath.Join(root, p), []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, p)
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	piece := func() string {
		for {
			i := r.IntN(60)
			c := files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)]
			j := r.IntN(len(c))
			p := c[j:min(len(c), j+4+r.IntN(8))]
			if utf8.ValidString(p) && !strings.Contains(p, "\n") {
				return p
			}
		}
	}
	flip := func(s string) string { // some letters' case changed
		b := []rune(s)
		for i, c := range b {
			if r.IntN(3) == 0 {
				if u := strings.ToUpper(string(c)); u != string(c) {
					b[i] = []rune(u)[0]
				} else {
					b[i] = []rune(strings.ToLower(string(c)))[0]
				}
			}
		}
		return string(b)
	}
	dropped, tested := 0, 0
	for n := range 600 {
		var pat string
		switch r.IntN(5) {
		case 0:
			pat = regexp.QuoteMeta(piece())
		case 1:
			pat = regexp.QuoteMeta(flip(piece()))
		case 2:
			pat = regexp.QuoteMeta(piece()) + `\w*`
		case 3:
			pat = `\w+` + regexp.QuoteMeta(piece())
		default:
			pat = "(" + regexp.QuoteMeta(piece()) + "|" + regexp.QuoteMeta(flip(piece())) + ")"
		}
		cs := r.IntN(2) == 0
		m, e := grep.CompileMatcher(pat, grep.MatchOptions{CaseSensitive: cs})
		if e != nil {
			t.Fatalf("%q: %v", pat, e)
		}
		re := regexp.MustCompile(m.Syntax().String()) // what the matcher runs
		q := csindex.RegexpQuery(m.Syntax())
		var got, all []string
		ix.Candidates(index.CandidateOptions{Content: q, Phrases: index.NewPhrases(m.Literals())}, func(f *index.File) bool { got = append(got, f.Path); return true })
		ix.Candidates(index.CandidateOptions{Content: q}, func(f *index.File) bool { all = append(all, f.Path); return true })
		dropped += len(all) - len(got)
		for p, c := range files {
			if re.MatchString(c) {
				tested++
				if !slices.Contains(got, p) {
					t.Fatalf("pattern %q (case-sensitive %v, literals %q) matches %s (%q), which is not a candidate", pat, cs, m.Literals(), p, c)
				}
			}
		}
		if n%10 == 0 {
			diffEngines(t, walk, idx, tool.Grep, jsonArgs("pattern", pat, "case_sensitive", cs, "output_mode", "content"))
		}
	}
	if dropped == 0 || tested == 0 {
		t.Fatalf("dropped %d candidates, %d matching files: the filter is not exercised", dropped, tested)
	}
	t.Logf("%d candidates dropped, %d matching files kept", dropped, tested)
}
