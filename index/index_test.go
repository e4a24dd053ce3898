package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/internal/testtree"
)

// The fixture writers every test here uses.
var (
	writeTree = testtree.Write
	writeFile = testtree.File
)

func mustBuild(t testing.TB, root string) *Index {
	t.Helper()
	return mustBuildWith(t, root, defaultKnobs())
}

// mustBuildWith is mustBuild, the index made with k.
func mustBuildWith(t testing.TB, root string, k knobs) *Index {
	t.Helper()
	ix, err := build(context.Background(), root, nil, "", k)
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	return ix
}

// knobsWith returns the default knobs changed by edit.
func knobsWith(edit func(k *knobs)) knobs {
	k := defaultKnobs()
	edit(&k)
	return k
}

// clockAt returns a clock that always says at.
func clockAt(at time.Time) func() time.Time {
	return func() time.Time { return at }
}

// checkIndex is the consistency check run after every test's changes.
func checkIndex(t testing.TB, ix *Index) {
	t.Helper()
	if err := ix.Check(); err != nil {
		t.Fatalf("consistency check: %v", err)
	}
}

// trigramQuery returns the trigram query of a Perl-syntax regexp.
func trigramQuery(t testing.TB, pattern string) *csindex.Query {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return csindex.RegexpQuery(re)
}

// candidates returns the sorted paths the index proposes for a regexp.
func candidates(t testing.TB, ix *Index, pattern string) []string {
	t.Helper()
	var out []string
	ix.Candidates(CandidateOptions{Content: trigramQuery(t, pattern)}, func(f *File) bool {
		out = append(out, f.Path)
		return true
	})
	slices.Sort(out)
	return out
}

func paths(ix *Index) []string {
	var out []string
	ix.Candidates(CandidateOptions{}, func(f *File) bool { out = append(out, f.Path); return true })
	return out
}

// A NUL byte within the first BinarySniff bytes makes a file binary
// (never a candidate), one just past them does not, as Grep decides.
func TestBuildBinarySniff(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("a", BinarySniff-1)
	root := writeTree(t, map[string]string{
		"edge.dat": pad + "\x00 alpha\n",  // NUL at BinarySniff−1
		"past.dat": pad + "a\x00 alpha\n", // NUL at BinarySniff
		"text.txt": "alpha\n",
	})
	ix := mustBuild(t, root)
	if got, want := candidates(t, ix, `alpha`), []string{"past.dat", "text.txt"}; !slices.Equal(got, want) {
		t.Fatalf("alpha candidates: %q, want %q", got, want)
	}
}

func TestBuildTableAndCandidates(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{
		"a.go":                "package a\nfunc Alpha() {}\n",
		"b/b.go":              "package b\nfunc Beta() { alpha() }\n",
		"b/.hidden/h.txt":     "alpha hidden\n",
		"node_modules/x.js":   "alpha\n",
		"bin.dat":             "alpha\x00\x01",
		"c/short.txt":         "ab",
		".gitignore":          "*.log\n",
		"skip.log":            "alpha\n",
		"c/deep/er/file.md":   "# Alpha and omega\n",
		"c/deep/er/other.txt": "nothing\n",
	})
	ix := mustBuild(t, root)
	wantPaths := []string{".gitignore", "a.go", "b/.hidden/h.txt", "b/b.go", "bin.dat", "c/deep/er/file.md", "c/deep/er/other.txt", "c/short.txt", "skip.log"}
	if got := paths(ix); !slices.Equal(got, wantPaths) {
		t.Fatalf("paths:\n got %q\nwant %q", got, wantPaths)
	}
	if !ix.Visibility().Ignored("node_modules") || !ix.Visibility().Ignored("node_modules/x.js") || ix.Visibility().Ignored("b") {
		t.Fatal("Ignored: node_modules must be recorded as pruned, b must not")
	}
	// Lowercase trigrams: (?i) and case-sensitive queries narrow alike;
	// the binary file is never a candidate.
	want := []string{"a.go", "b/.hidden/h.txt", "b/b.go", "c/deep/er/file.md", "skip.log"}
	if got := candidates(t, ix, `(?i)alpha`); !slices.Equal(got, want) {
		t.Fatalf("(?i)alpha candidates:\n got %q\nwant %q", got, want)
	}
	if got := candidates(t, ix, `Alpha`); !slices.Equal(got, want) {
		t.Fatalf("Alpha candidates:\n got %q\nwant %q", got, want)
	}
	if got := candidates(t, ix, `zzzz`); len(got) != 0 {
		t.Fatalf("zzzz candidates: %q", got)
	}
}

// Files that defeat the trigram step are still candidates (or indexed
// exactly), never lost.
func TestDefeatingFilesAreFound(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 20 MB file")
	}
	r := rand.New(rand.NewPCG(7, 7))
	long := strings.Repeat("x", 100<<10) + "NEEDLE_LONGLINE" + strings.Repeat("y", 10) + "\n"
	var many strings.Builder
	for many.Len() < 400<<10 {
		fmt.Fprintf(&many, "%c%c%c ", 'a'+r.IntN(26), 'A'+r.IntN(26), '0'+r.IntN(10))
	}
	many.WriteString("NEEDLE_MANY\n")
	big := strings.Repeat("lorem ipsum dolor sit amet\n", 20<<20/27) + "NEEDLE_BIG\n"
	root := writeTree(t, map[string]string{
		"long.txt":    long,
		"many.txt":    many.String(),
		"big.txt":     big,
		"invalid.txt": "\xff\xfe NEEDLE_UTF8 \xc3\x28\n",
	})
	ix := mustBuild(t, root)
	for pat, file := range map[string]string{"NEEDLE_LONGLINE": "long.txt", "NEEDLE_MANY": "many.txt", "NEEDLE_BIG": "big.txt", "NEEDLE_UTF8": "invalid.txt"} {
		if got := candidates(t, ix, pat); !slices.Contains(got, file) {
			t.Errorf("%s: %s not a candidate (got %q)", pat, file, got)
		}
	}
}

// Property: for random contents and random patterns, the candidate set
// always holds every file the regexp matches.
func TestCandidatesNeverLoseAMatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 99))
	alpha := "abcABC xyz\n_("
	files := map[string]string{}
	for i := range 60 {
		var b strings.Builder
		for range 20 + r.IntN(200) {
			b.WriteByte(alpha[r.IntN(len(alpha))])
		}
		files[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = b.String()
	}
	root := writeTree(t, files)
	ix := mustBuild(t, root)
	atoms := []string{"a", "b", "c", "A", "x", "yz", "ab", "abc", "bca", "[ab]", ".", "\\s", "(a|B)", "c+", "x?", "_\\("}
	for range 400 {
		var p strings.Builder
		for range 1 + r.IntN(4) {
			p.WriteString(atoms[r.IntN(len(atoms))])
		}
		pat := p.String()
		if r.IntN(3) == 0 {
			pat = "(?i)" + pat
		}
		re := regexp.MustCompile(pat)
		got := candidates(t, ix, pat)
		for name, c := range files {
			if re.MatchString(c) && !slices.Contains(got, name) {
				t.Fatalf("pattern %q matches %s but it is not a candidate", pat, name)
			}
		}
	}
}

func TestSaveOpenRoundTrip(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.go": "package alpha\n", "b/c.txt": "gamma delta\n", ".ignore": "skip/\n", "skip/s.txt": "gamma\n"})
	ix := mustBuild(t, root)
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	ix2 := reopen(t, ix, db, root)
	if !slices.Equal(paths(ix2), paths(ix)) || !ix2.Visibility().Ignored("skip") {
		t.Fatalf("reopened table differs: %q", paths(ix2))
	}
	if got := candidates(t, ix2, "gamma"); !slices.Equal(got, []string{"b/c.txt"}) {
		t.Fatalf("reopened candidates: %q", got)
	}
	if _, err := Open(db, root+"x"); err == nil {
		t.Fatal("Open with another root must fail")
	}
}

func TestCorruptOrOldDBIsRebuilt(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.txt": "needle\n"})
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := os.WriteFile(db, []byte("not a bbolt file at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, nil)
	if err != nil || !rebuilt {
		t.Fatalf("OpenOrBuild over garbage: rebuilt=%v err=%v", rebuilt, err)
	}
	ix.Close()
	ix, rebuilt, err = OpenOrBuild(context.Background(), db, root, nil)
	if err != nil || rebuilt {
		t.Fatalf("second OpenOrBuild: rebuilt=%v err=%v", rebuilt, err)
	}
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("candidates: %q", got)
	}
	ix.Close()
}

// Incremental updates of N files give the same answers as a fresh build,
// before and after compaction, and after a reopen.
func TestIncrementalEqualsFreshBuild(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha", "beta", "gamma", "delta", "Epsilon", "zeta", "eta", "theta"}
	content := func() string {
		var b strings.Builder
		for range 5 + r.IntN(30) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String() + "\n"
	}
	files := map[string]string{}
	for i := range 80 {
		files[fmt.Sprintf("p%d/q%d/f%d.txt", i%4, i%7, i)] = content()
	}
	root := writeTree(t, files)
	ix := mustBuild(t, root)
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	var changed []string
	for i := range 40 {
		p := fmt.Sprintf("p%d/q%d/f%d.txt", i%4, i%7, i*2)
		switch i % 4 {
		case 0:
			os.Remove(filepath.Join(root, p))
		default:
			writeFile(t, root, p, content()+fmt.Sprintf("token%d", i))
		}
		changed = append(changed, p)
	}
	writeFile(t, root, "new/dir/n.txt", "theta token99\n")
	changed = append(changed, "new")
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	compare := func(stage string, got *Index) {
		fresh := mustBuild(t, root)
		if !slices.Equal(paths(got), paths(fresh)) {
			t.Fatalf("%s: paths differ:\n got %q\nwant %q", stage, paths(got), paths(fresh))
		}
		for _, q := range append(words, "token1", "token99", "(?i)EPSILON", "alpha beta", "nothing here") {
			if g, w := candidates(t, got, q), candidates(t, fresh, q); !slices.Equal(g, w) {
				t.Fatalf("%s: candidates for %q differ:\n got %q\nwant %q", stage, q, g, w)
			}
		}
		// Phrases test the masks, which must be as a fresh build's.
		for _, q := range []string{"alpha beta", "eta theta", "a zeta", "theta token", "ta g"} {
			if g, w := phraseCandidates(t, got, "(?i)"+q, false, q), phraseCandidates(t, fresh, "(?i)"+q, false, q); !slices.Equal(g, w) {
				t.Fatalf("%s: candidates for phrase %q differ:\n got %q\nwant %q", stage, q, g, w)
			}
		}
	}
	compare("after Apply", ix)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	compare("after Compact", ix)
	if err := ix.RemoveTree("p1"); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(root, "p1"))
	compare("after RemoveTree", ix)
	ix.Close()
	ix2, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix2)
	compare("after reopen", ix2)
	ix2.Close()
}

func TestMain(m *testing.M) {
	if os.Getenv("INDEX_CRASH_CHILD") != "" {
		crashChild()
		return
	}
	if os.Getenv("INDEX_FSIZE_CHILD") != "" {
		fsizeChild()
		return
	}
	if os.Getenv("INDEX_NOFILE_CHILD") != "" {
		nofileChild()
		return
	}
	testtree.QuickChildExit()
	os.Exit(m.Run())
}

// Apply on a path that is now ignored records it as a build would, and a
// path that changed type (file <-> directory) ends up as the tree has it.
// Hidden directories are recorded as a build records them, those holding
// no file included, and their records go with them.
func TestApplyIgnoredAndTypeChanges(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{".ignore": "*.tmp\n", "a": "file a\n", "d/x.txt": "x\n", "keep.txt": "k\n",
		".old/f.txt": "gone soon\n", "s/.kept/g.txt": "stays\n"})
	ix := mustBuild(t, root)
	os.RemoveAll(filepath.Join(root, ".old"))
	for _, d := range []string{".empty", "s/.new/.inner", "s/.kept/.sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, root, "new.tmp", "ignored\n")
	os.Remove(filepath.Join(root, "a"))
	writeFile(t, root, "a/inner.txt", "now a directory\n")
	os.RemoveAll(filepath.Join(root, "d"))
	writeFile(t, root, "d", "now a file\n")
	if err := ix.Apply(context.Background(), []string{"new.tmp", "a", "d", ".old", ".empty", "s/.new", "s/.kept/.sub"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	fresh := mustBuild(t, root)
	if !slices.Equal(paths(ix), paths(fresh)) {
		t.Fatalf("paths:\n got %q\nwant %q", paths(ix), paths(fresh))
	}
	if !ix.Visibility().Ignored("new.tmp") {
		t.Fatal("new.tmp is ignored but not recorded as such")
	}
	var got, want []Skipped
	ix.Visibility().Skipped("", func(s Skipped, _ bool) { got = append(got, s) })
	fresh.Visibility().Skipped("", func(s Skipped, _ bool) { want = append(want, s) })
	if !slices.Equal(got, want) {
		t.Fatalf("records:\n got %v\nwant %v", got, want)
	}
	wantRecs := []Skipped{{Path: ".empty", IsDir: true, Hidden: true}, {Path: "new.tmp"}, {Path: "s/.kept", IsDir: true, Hidden: true},
		{Path: "s/.kept/.sub", IsDir: true, Hidden: true}, {Path: "s/.new", IsDir: true, Hidden: true}, {Path: "s/.new/.inner", IsDir: true, Hidden: true}}
	if !slices.Equal(got, wantRecs) {
		t.Fatalf("records:\n got %v\nwant %v", got, wantRecs)
	}
}

// hiddenNames returns the paths Visibility.HiddenFiles reports under dir.
func hiddenNames(ix *Index, dir string) []string {
	var out []string
	ix.Visibility().HiddenFiles(dir, func(f *File) bool { out = append(out, f.Path); return true })
	return out
}

// Changes adding few or many paths at once, and removing files and whole
// directories, keep the path order and the hidden-name list as a fresh
// build has them (Check verifies both), through batches on either side
// of insertOrdered's one-by-one bound.
func TestBatchedChangesKeepOrderAndHiddenList(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	names := []string{"a.go", ".env", "b.txt", ".hidden.go", "z.md", "_x"}
	dirs := []string{"", "d/", "d/e/", ".cfg/", "m/.n/", "q/"}
	root := writeTree(t, map[string]string{"d/keep.go": "k\n", ".top": "t\n", "q/.inner": "i\n"})
	ix := mustBuild(t, root)
	live := map[string]bool{"d/keep.go": true, ".top": true, "q/.inner": true}
	for round := range 40 {
		var changed []string
		for range []int{1, 3, 7, 8, 9, 40}[round%6] {
			p := fmt.Sprintf("%s%s%d", dirs[r.IntN(len(dirs))], names[r.IntN(len(names))], r.IntN(200))
			writeFile(t, root, p, "x\n")
			live[p] = true
			changed = append(changed, p)
		}
		if round%3 == 2 { // remove a whole directory, or one file
			gone := dirs[1+r.IntN(len(dirs)-1)]
			if round%2 == 0 {
				for p := range live {
					gone = p
					break
				}
			}
			os.RemoveAll(filepath.Join(root, gone))
			for p := range live {
				// A directory's files go with it; a file's name may be
				// the prefix of another's (f1, f13) that stays.
				if p == gone || strings.HasSuffix(gone, "/") && strings.HasPrefix(p, gone) {
					delete(live, p)
				}
			}
			changed = append(changed, strings.TrimSuffix(gone, "/"))
		}
		if err := ix.Apply(context.Background(), changed); err != nil {
			t.Fatal(err)
		}
		checkIndex(t, ix)
		fresh := mustBuild(t, root)
		if g, w := paths(ix), paths(fresh); !slices.Equal(g, w) {
			t.Fatalf("round %d: paths\n got %q\nwant %q", round, g, w)
		}
		for _, dir := range []string{"", "d", "m", ".cfg", "q"} {
			if g, w := hiddenNames(ix, dir), hiddenNames(fresh, dir); !slices.Equal(g, w) {
				t.Fatalf("round %d: hidden under %q\n got %q\nwant %q", round, dir, g, w)
			}
		}
		fresh.Close()
	}
	want := []string{}
	for p := range live {
		if strings.HasPrefix(filepath.Base(p), ".") {
			want = append(want, p)
		}
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(a, b) })
	if g := hiddenNames(ix, ""); !slices.Equal(g, want) {
		t.Fatalf("hidden names\n got %q\nwant %q", g, want)
	}
	ix.Close()
}

// The delta's bit-sliced signatures admit, for any query, every file
// whose set satisfies it (a query must never skip a file that holds its
// trigrams), through slots added, freed and reused; they stay exactly
// their sets' columns (check); and a file of few trigrams is admitted
// for a trigram it lacks about as often as its column's density says.
func TestDeltaSlices(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	d := newDeltaSlices()
	sets := map[uint32][]uint32{}
	newSet := func(n int) []uint32 {
		seen := map[uint32]bool{}
		var tris []uint32
		for len(tris) < n {
			tri := r.Uint32() & 0xFFFFFF
			if r.IntN(4) == 0 {
				tri = uint32(r.IntN(64)) // a few trigrams many sets share
			}
			if !seen[tri] {
				seen[tri] = true
				tris = append(tris, tri<<8|uint32(r.IntN(256)))
			}
		}
		slices.SortFunc(tris, func(a, b uint32) int { return cmp.Compare(packedTri(a), packedTri(b)) })
		return tris
	}
	tri := func() string {
		v := uint32(r.IntN(64))
		if r.IntN(3) == 0 {
			v = r.Uint32() & 0xFFFFFF
		}
		return string([]byte{byte(v >> 16), byte(v >> 8), byte(v)})
	}
	for round := range 400 {
		id := uint32(r.IntN(300))
		if old, ok := sets[id]; ok && r.IntN(2) == 0 {
			d.remove(id, old)
			delete(sets, id)
		} else {
			if ok {
				d.remove(id, old)
			}
			sets[id] = newSet([]int{0, 1, 5, 40, 300, 2000}[r.IntN(6)])
			d.add(id, sets[id])
		}
		if err := d.check(sets); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for range 5 {
			q := &csindex.Query{Op: csindex.QAnd, Trigram: []string{tri(), tri()}}
			if r.IntN(2) == 0 {
				q = &csindex.Query{Op: csindex.QOr, Trigram: []string{tri()}, Sub: []*csindex.Query{q}}
			}
			admitted := map[uint32]bool{}
			d.each(q, func(id uint32) { admitted[id] = true })
			for id, tris := range sets {
				if matchSet(q, tris) && !admitted[id] {
					t.Fatalf("round %d: %v skips file %d, whose set holds it", round, q, id)
				}
			}
			for id := range admitted {
				if _, ok := sets[id]; !ok {
					t.Fatalf("round %d: %v admits file %d, not in the delta", round, q, id)
				}
			}
		}
	}
	// A file of 300 trigrams sets about 7% of its column.
	has := func(d *deltaSlices, s, tri uint32) bool { return d.rows[sliceRow(tri)][s/64]&(1<<(s%64)) != 0 }
	d = newDeltaSlices()
	d.add(1, newSet(300))
	admitted := 0
	for range 10000 {
		if has(d, 0, r.Uint32()&0xFFFFFF|1<<23) {
			admitted++
		}
	}
	if admitted > 1000 {
		t.Errorf("a file of 300 trigrams admits %d of 10000 trigrams it lacks", admitted)
	}
}

// The slices' check finds every bit that is not its set's: one set in a
// used slot's column or cleared from it, one set in a free slot's column
// or past the last slot.
func TestDeltaSlicesCheckFindsFlippedBits(t *testing.T) {
	t.Parallel()
	tris := func(ts ...uint32) []uint32 {
		var out []uint32
		for _, tr := range ts {
			out = append(out, tr<<8)
		}
		slices.SortFunc(out, func(a, b uint32) int { return cmp.Compare(packedTri(a), packedTri(b)) })
		return out
	}
	sets := map[uint32][]uint32{7: tris(0x616263, 0x626364), 9: tris(0x787978)}
	rows := map[uint32]bool{}
	for _, set := range sets {
		for _, v := range set {
			rows[sliceRow(packedTri(v))] = true
		}
	}
	var absent uint32 // a trigram whose row none of the sets sets
	for rows[sliceRow(absent)] {
		absent++
	}
	fresh := func() *deltaSlices {
		d := newDeltaSlices()
		d.add(7, sets[7])
		d.add(8, tris(0x6a6b6c))
		d.add(9, sets[9])
		d.remove(8, tris(0x6a6b6c)) // slot 1 free
		if err := d.check(sets); err != nil {
			t.Fatalf("the undamaged slices: %v", err)
		}
		return d
	}
	flip := func(d *deltaSlices, s, row uint32) { d.rows[row][s/64] ^= 1 << (s % 64) }
	for name, damage := range map[string]func(d *deltaSlices){
		"a bit added to a used slot":     func(d *deltaSlices) { flip(d, 0, sliceRow(absent)) },
		"a bit cleared from a used slot": func(d *deltaSlices) { flip(d, 2, sliceRow(0x787978)) },
		"a bit in a free slot":           func(d *deltaSlices) { flip(d, 1, sliceRow(0x616263)) },
		"a bit past the last slot":       func(d *deltaSlices) { flip(d, 63, sliceRow(0x616263)) },
	} {
		d := fresh()
		damage(d)
		if err := d.check(sets); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: check says %v, want ErrCorrupt", name, err)
		}
	}
}

// A listing by path with Enter visits exactly the files one without does
// whose directories (below dir) Enter all lets in, in path order, asking
// about each directory once; names that sort around "/" ("a.b", "a0",
// "a-") sit next to the directories passed over.
func TestCandidatesEntering(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, p := range []string{
		"a.go", "a-x/f", "a/b/c/d.go", "a/b/c.go", "a/b0", "a/b.x/f", "a/b/z/y.go", "a0/f", "a.b/f",
		"b/a/f", "b/b/f", "b/f", "ba/f", "c/d/e/f/g.go", "c/d/e/h.go", "c/d0/f", "z",
	} {
		files[p] = p + "\n"
	}
	ix := mustBuild(t, writeTree(t, files))
	dirsOf := func(rel string) (ds []string) {
		for i, c := range rel {
			if c == '/' {
				ds = append(ds, rel[:i])
			}
		}
		return ds
	}
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		dir := []string{"", ".", "a", "a/b", "b", "c/d"}[r.IntN(6)]
		prefix := []string{"", "b/", "d/", "a", "e/"}[r.IntN(5)]
		refuse := map[string]bool{}
		for _, d := range []string{"a", "a/b", "a/b/c", "a/b/z", "b", "b/a", "c", "c/d", "c/d/e", "e", "e/f", "b/c", "z"} {
			refuse[d] = r.IntN(3) == 0
		}
		base := dirPrefix(dir)
		var want []string
		ix.Candidates(CandidateOptions{Dir: dir, Prefix: prefix}, func(f *File) bool {
			for _, d := range dirsOf(f.Path[len(base):]) {
				if refuse[d] {
					return true
				}
			}
			want = append(want, f.Path)
			return true
		})
		var got []string
		asked := map[string]int{}
		ix.Candidates(CandidateOptions{Dir: dir, Prefix: prefix, Enter: func(sub string) bool { asked[sub]++; return !refuse[sub] }}, func(f *File) bool {
			got = append(got, f.Path)
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: dir %q prefix %q refusing %v: got %q, want %q", trial, dir, prefix, refuse, got, want)
		}
		for d, n := range asked {
			if n != 1 {
				t.Fatalf("trial %d: asked about %q %d times", trial, d, n)
			}
		}
		// Stopping early stops.
		n := 0
		ix.Candidates(CandidateOptions{Dir: dir, Prefix: prefix, Enter: func(sub string) bool { return !refuse[sub] }}, func(*File) bool { n++; return n < 2 })
		if n > 2 || len(want) >= 2 && n != 2 {
			t.Fatalf("trial %d: fn called %d times after returning false", trial, n)
		}
	}
}

// A listing with Newer and ThenOlder visits the files one by path does,
// the ones at Since or later first, then the others in path order, and
// stops when told.
func TestCandidatesNewerFirst(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	names := []string{"a.go", "a/b/c.go", "a/b/d.go", "a/x.go", "b/y.go", "b/z/w.go", "c.go", "d/e.go"}
	for _, p := range names {
		files[p] = p + "\n"
	}
	root := writeTree(t, files)
	since := time.Now().Add(-time.Hour)
	newer := map[string]bool{"a/b/d.go": true, "b/z/w.go": true, "d/e.go": true}
	for _, p := range names {
		mt := since.Add(-24 * time.Hour)
		if newer[p] {
			mt = since.Add(time.Minute)
		}
		if err := os.Chtimes(filepath.Join(root, p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ix := mustBuild(t, root)
	for _, c := range []struct {
		dir, prefix string
		refuse      string
		stopAfter   int
		want        []string
	}{
		{"", "", "", -1, []string{"a/b/d.go", "b/z/w.go", "d/e.go", "a.go", "a/b/c.go", "a/x.go", "b/y.go", "c.go"}},
		{"", "", "a/b", -1, []string{"a/b/d.go", "b/z/w.go", "d/e.go", "a.go", "a/x.go", "b/y.go", "c.go"}},
		{"a", "", "", -1, []string{"a/b/d.go", "a/b/c.go", "a/x.go"}},
		{"", "b/", "", -1, []string{"b/z/w.go", "b/y.go"}},
		{"", "", "", 4, []string{"a/b/d.go", "b/z/w.go", "d/e.go", "a.go"}},
		{"", "", "", 2, []string{"a/b/d.go", "b/z/w.go"}},
	} {
		var got []string
		o := CandidateOptions{Dir: c.dir, Prefix: c.prefix, Enter: func(sub string) bool { return sub != c.refuse },
			Newer: true, Since: since.UnixNano(), ThenOlder: true}
		ix.Candidates(o, func(f *File) bool {
			if isNewer := f.ModTime >= o.Since; isNewer != newer[f.Path] {
				t.Errorf("%+v: %s newer=%v", c, f.Path, isNewer)
			}
			got = append(got, f.Path)
			return len(got) != c.stopAfter
		})
		// The newer files come in id order: compare them as a set.
		n := 0
		for n < len(got) && newer[got[n]] {
			n++
		}
		slices.Sort(got[:n])
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %q, want %q", c, got, c.want)
		}
	}
	// A file whose mtime is Since itself is a newer one.
	var tied []string
	ix.Candidates(CandidateOptions{Newer: true, Since: since.Add(time.Minute).UnixNano()}, func(f *File) bool {
		tied = append(tied, f.Path)
		return true
	})
	if slices.Sort(tied); !slices.Equal(tied, []string{"a/b/d.go", "b/z/w.go", "d/e.go"}) {
		t.Errorf("newer at their own mtime: %q", tied)
	}
}

// A listing by content stops when fn says so, as a listing by path does,
// whether its files come from the base or the delta.
func TestCandidatesByContentStop(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("f%02d.txt", i)] = "a needle here\n"
	}
	root := writeTree(t, files)
	ix := mustBuild(t, root)
	testtree.File(t, root, "f00.txt", "a needle changed\n") // into the delta
	testtree.File(t, root, "new.txt", "a needle added\n")
	if err := ix.Apply(context.Background(), []string{"f00.txt", "new.txt"}); err != nil {
		t.Fatal(err)
	}
	o := CandidateOptions{Content: trigramQuery(t, "needle")}
	all := 0
	ix.Candidates(o, func(*File) bool { all++; return true })
	if all != 21 {
		t.Fatalf("%d candidates, want 21", all)
	}
	for stop := 1; stop <= all; stop++ {
		n := 0
		ix.Candidates(o, func(*File) bool { n++; return n < stop })
		if n != stop {
			t.Errorf("fn said stop at %d, called %d times", stop, n)
		}
	}
}
