package query

import (
	"context"
	"fmt"
	"maps"
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

// The index's mask filter (outside multiline mode, the query's trigrams
// and the matcher's required literals in one eighth) never drops a file
// the pattern matches: random contents, short files and long ones (whose
// eighths differ) with long lines, and patterns built from their
// pieces: one literal, two on one line, alternations, case-sensitive and
// not, with the folds beyond ASCII (k and the Kelvin sign, s and the long
// s, é and É) and invalid UTF-8; multiline patterns across lines with
// the masks off, as the query path asks. From the base and the delta,
// after a compaction, and reopened from disk; and the index's whole
// answers stay the walk's. The filter must also drop files, or it is not
// tested.
func TestMaskFilterKeepsEveryMatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	alpha := []string{"func", " ", "main", "Handler", "(", "\n", "k", "K", "\u212a", "s", "S", "\u017f", "é", "É", "\xff", "ab", "x", "_"}
	gen := pieces(r, alpha)
	long := func() string { // long, with a line of a few thousand bytes
		return gen(200+r.IntN(400)) + strings.ReplaceAll(gen(400), "\n", " ") + gen(200+r.IntN(400))
	}
	files := fsTree{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = gen(5 + r.IntN(60))
	}
	for i := range 8 {
		files[fmt.Sprintf("long/l%d.txt", i)] = long()
	}
	root := newRoot(t, files)
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	var changed []string // some read again: their postings are in the delta
	for i := 0; i < 60; i += 3 {
		p := fmt.Sprintf("d%d/f%02d.txt", i%3, i)
		files[p] = gen(5 + r.IntN(60))
		changed = append(changed, p)
	}
	files["long/l0.txt"], files["long/l1.txt"] = long(), long()
	changed = append(changed, "long/l0.txt", "long/l1.txt")
	rewrite(t, ix, root, files, changed)
	paths := slices.Sorted(maps.Keys(files))
	piece := func() string {
		for {
			c := files[paths[r.IntN(len(paths))]]
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
	quote := regexp.QuoteMeta
	droppedPhrases, droppedLines, tested := 0, 0, 0 // by the phrases beyond the query's trigrams; by those
	candidates := func(ix *index.Index, o index.CandidateOptions) (got []string) {
		ix.Candidates(o, func(f *index.File) bool { got = append(got, f.Path); return true })
		return got
	}
	stage := func(name string, ix *index.Index, tools *Tools, n int) {
		for i := range n {
			var pat string
			multiline := false
			switch r.IntN(8) {
			case 0:
				pat = quote(piece())
			case 1:
				pat = quote(flip(piece()))
			case 2:
				pat = quote(piece()) + `\w*`
			case 3:
				pat = `\w+` + quote(piece())
			case 4:
				pat = "(" + quote(piece()) + "|" + quote(flip(piece())) + ")"
			case 5:
				pat = quote(piece()) + ".*" + quote(piece())
			case 6:
				pat = quote(piece()) + `\W*` + quote(flip(piece())) + ".*" + quote(piece())
			default:
				pat, multiline = "(?s)"+quote(piece())+".*"+quote(piece()), true
			}
			cs := r.IntN(2) == 0
			m, e := grep.CompileMatcher(pat, grep.MatchOptions{CaseSensitive: cs, Multiline: multiline})
			if e != nil {
				t.Fatalf("%q: %v", pat, e)
			}
			re := regexp.MustCompile(m.Syntax().String()) // what the matcher runs
			q := csindex.RegexpQuery(m.Syntax())
			ph := index.NewPhrases(m.Literals())
			got := candidates(ix, index.CandidateOptions{Content: q, Phrases: ph, OneLine: !multiline})
			lined := candidates(ix, index.CandidateOptions{Content: q, OneLine: !multiline})
			all := candidates(ix, index.CandidateOptions{Content: q})
			droppedLines += len(all) - len(lined)
			droppedPhrases += len(lined) - len(got)
			for _, p := range paths {
				if re.MatchString(files[p]) {
					tested++
					if !slices.Contains(got, p) {
						t.Fatalf("%s: pattern %q (case-sensitive %v, multiline %v, literals %q) matches %s (%q), which is not a candidate", name, pat, cs, multiline, m.Literals(), p, files[p])
					}
				}
			}
			if i%10 == 0 {
				diffEngines(t, walk, tools, tool.Grep, jsonArgs("pattern", pat, "case_sensitive", cs, "multiline", multiline, "output_mode", "content"))
			}
		}
	}
	stage("base and delta", ix, idx, 600)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	stage("compacted", ix, idx, 200)
	db := filepath.Join(t.TempDir(), "index.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := index.Open(db, idx.WS.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	stage("reopened", reopened, &Tools{WS: idx.WS, Searcher: Indexed{Index: reopened}}, 200)
	if droppedLines == 0 || tested == 0 {
		t.Fatalf("dropped %d candidates by the query's trigrams, %d more by the phrases, %d matching files: the filter is not exercised", droppedLines, droppedPhrases, tested)
	}
	t.Logf("%d candidates dropped by the query's trigrams, %d more by the phrases, %d matching files kept", droppedLines, droppedPhrases, tested)
}

// pieces returns a generator of texts of n pieces drawn from alpha.
func pieces(r *rand.Rand, alpha []string) func(n int) string {
	return func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
}

// rewrite writes the files changed (their new contents in files) under
// root and applies them to ix: their postings go to its delta.
func rewrite(t *testing.T, ix *index.Index, root string, files fsTree, changed []string) {
	t.Helper()
	for _, p := range changed {
		if err := os.WriteFile(filepath.Join(root, p), []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
}
