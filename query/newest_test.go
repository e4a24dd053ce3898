package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// A Grep of dense candidates looks for its answer among the newest files
// first (newestFirst): whatever prefix answers, the answer is the whole
// query's. The fixture's mtimes tie in runs of 16, so the prefixes' mtimes
// fall on ties, or (as unpacked from an archive) nearly all tie, so the
// prefixes cut the tied files by path; most files hold the pattern, some
// twice; some were
// changed since the build (the index's delta), to the newest mtime or
// one older than every other; limits fall on either side of what each
// prefix holds; include and glob filters, context lines, multiline and
// inverted patterns too. The test fails if no Grep was answered from a
// prefix of at most half the candidates (it would prove nothing).
func TestNewestFirstSameAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range mtimeSchemes(40) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for i := range 640 {
				body := fmt.Sprintf("line %d\n", i)
				switch {
				case i%5 == 0:
					body += "nothing here\n"
				case i%3 == 0:
					body += "a needle\nanother needle\n"
				default:
					body += "one needle\n"
				}
				files[fmt.Sprintf("d%d/f%03d.txt", i%4, i)] = body
			}
			root := testtree.Write(t, files)
			base := time.Now().Add(-time.Hour)
			for i := range 640 {
				setMtime(t, root, fmt.Sprintf("d%d/f%03d.txt", i%4, i), base.Add(c.mtime(i)))
			}
			walk, idx := buildTools(t, root)
			// Files read since the build are in the index's delta: some tied
			// with the newest files of the base, among them by path, the others
			// older than every file.
			var changed []string
			for i := 0; i < 640; i += 7 {
				rel := fmt.Sprintf("d%d/f%03d.txt", i%4, i)
				if err := os.WriteFile(filepath.Join(root, rel), []byte("a needle, rewritten\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mt := base.Add(-time.Second) // older than every other
				if i%4 == 3 {
					mt = base.Add(c.newest) // tied with the newest, in the same directory
				}
				setMtime(t, root, rel, mt)
				changed = append(changed, rel)
			}
			if err := idx.Searcher.(Indexed).Index.(*index.Index).Apply(context.Background(), changed); err != nil {
				t.Fatal(err)
			}
			candidates := func(tools *Tools, args string) int {
				e := tools.Run(context.Background(), tool.Grep, ".", json.RawMessage(args))
				if e.Status == envelope.StatusError {
					t.Fatalf("%s: %s", args, e.Text)
				}
				return *e.Stats.(*envelope.GrepStats).Candidates
			}
			// The same index, the newest files tried first whatever the tree's
			// size.
			newest := *idx
			s := idx.Searcher.(Indexed)
			s.newestFrom = 1
			newest.Searcher = s
			fromPrefix := 0
			limits := []int{1, 3, 10, 17, 50, 200, 1000}
			if testtree.RaceEnabled {
				limits = []int{1, 17, 1000} // CI runs all seven without -race
			}
			for i, pat := range []string{`needle`, `(?i)NEEDLE`, `ne+dle`, `\w+`, `^a needle$`, `needle\nanother`, `line`} {
				extra := []string{"", `"include":"*[13579].txt",`, "", `"context":1,`, `"glob":["!**/f1*"],`, `"multiline":true,`, `"invert_match":true,`}[i]
				for _, dir := range []string{".", "d1"} {
					for _, mode := range []string{"content", "files_with_matches", "count"} {
						for _, limit := range limits {
							args := fmt.Sprintf(`{%s"pattern":%q,"path":%q,"output_mode":%q,"limit":%d,"timeout_ms":60000}`, extra, pat, dir, mode, limit)
							all := candidates(idx, args)
							diffEngines(t, walk, &newest, tool.Grep, args)
							if candidates(&newest, args) <= all/2 { // a prefix of at most half the candidates
								fromPrefix++
							}
						}
					}
				}
			}
			if fromPrefix == 0 {
				t.Fatal("no Grep was answered from the newest files")
			}
			t.Logf("%d Greps answered from the newest files", fromPrefix)

		})
	}
}

// Greps answered from the newest files while the index takes updates
// (files rewritten with new mtimes between and during the prefixes):
// every answer is an answer, each line it shows holds the pattern, and
// the race detector sees the prefixes' reused hits and the updates; once
// the writes stop, the answers are the walk's.
func TestNewestFirstDuringUpdates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		files  int
		every  int // one file in every holds the needle
		limits []int
	}{
		{"dense", 640, 1, []int{1, 5, 40, 300}},
		// One literal in a ninth of the files: sparse, tried newest
		// first up to limit 6 (sparsePrefix).
		{"sparse", 4096, 9, []int{1, 3, 6, 40}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for i := range c.files {
				body := fmt.Sprintf("row %d\n", i)
				if i%c.every == 0 {
					body += "one needle\n"
				}
				files[fmt.Sprintf("d%d/f%04d.txt", i%4, i)] = body
			}
			root := testtree.Write(t, files)
			walk, idx := buildTools(t, root)
			ix := idx.Searcher.(Indexed).Index.(*index.Index)
			s := idx.Searcher.(Indexed)
			s.newestFrom = 1 // the newest files first, whatever the tree's size
			counter := &newerCounter{Index: ix}
			s.Index = counter
			idx.Searcher = s
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			var written []string // the writer's, read once done is received
			go func() {
				for i := 0; ctx.Err() == nil; i++ {
					rel := fmt.Sprintf("d%d/f%04d.txt", i%4, (i*37)%c.files)
					body := fmt.Sprintf("row %d rewritten\nneedle twice needle\n", i)
					if i%3 == 0 {
						body = "no longer\n"
					}
					if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
						done <- err
						return
					}
					written = append(written, rel)
					if err := ix.Apply(ctx, []string{rel}); err != nil && ctx.Err() == nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for i := range 200 {
				args := fmt.Sprintf(`{"pattern":"needle","limit":%d,"timeout_ms":60000}`, c.limits[i%len(c.limits)])
				e := idx.Run(context.Background(), tool.Grep, ".", json.RawMessage(args))
				if e.Status == envelope.StatusError {
					t.Fatalf("%s: %s", args, e.Text)
				}
				for _, m := range e.Data.(*envelope.GrepData).Matches {
					if !strings.Contains(m.Text, "needle") {
						t.Fatalf("%s: %s:%d shows %q", args, m.File, m.Line, m.Text)
					}
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if counter.n == 0 {
				t.Fatal("no Grep tried the newest files first")
			}
			// Once the files stand still (the last write's Apply may have
			// been cut short by the cancel), the answers are the walk's.
			if err := ix.Apply(context.Background(), written); err != nil {
				t.Fatal(err)
			}
			for _, limit := range c.limits {
				diffEngines(t, walk, idx, tool.Grep, fmt.Sprintf(`{"pattern":"needle","limit":%d,"timeout_ms":60000}`, limit))
			}
		})
	}
}

// Glob with sort "recent" passes over the files older than the window
// once limit+1 of them are hits (Indexed.Glob): its answers equal the
// walk's, with old links that do not count (pointing outside the root)
// among the first old hits, and limits on either side of the old files.
func TestGlobRecentSameAnswers(t *testing.T) {
	t.Parallel()
	outside := testtree.Write(t, map[string]string{"secret.go": "x\n"})
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%02d.go", i%3, i)] = "x\n"
	}
	root := testtree.Write(t, files)
	old, recent := time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	for i := range 60 {
		mt := old.Add(time.Duration(i) * time.Second)
		if i%7 == 3 {
			mt = recent.Add(time.Duration(i) * time.Second)
		}
		setMtime(t, root, fmt.Sprintf("d%d/f%02d.go", i%3, i), mt)
	}
	for i, target := range []string{filepath.Join(outside, "secret.go"), filepath.Join(outside, "secret.go"), filepath.Join(root, "d0/f00.go")} {
		link := filepath.Join(root, fmt.Sprintf("d0/a%d.go", i))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		ts := []unix.Timespec{unix.NsecToTimespec(old.UnixNano()), unix.NsecToTimespec(old.UnixNano())}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, link, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	walk, idx := buildTools(t, root)
	for _, limit := range []int{1, 2, 3, 5, 9, 10, 11, 50, 200} {
		for _, extra := range []string{`"pattern":"**/*.go"`, `"pattern":"**/*.go","path":"d0"`, `"pattern":"d1/*.go"`, `"pattern":"**/f[1-3]*.go"`, `"pattern":"**/f0[0-2].go"`} {
			args := fmt.Sprintf(`{%s,"sort":"recent","limit":%d}`, extra, limit)
			if e := idx.Run(context.Background(), tool.Glob, ".", json.RawMessage(args)); e.Status == envelope.StatusError {
				t.Fatalf("%s: %s", args, e.Text)
			}
			diffEngines(t, walk, idx, tool.Glob, args)
		}
	}
}

// The first prefix holds the newest 1/64 of the files, or fewer for a
// Grep that needs few results: 8 files a result, 1024 at least.
func TestFirstPrefix(t *testing.T) {
	for _, c := range []struct{ files, need, want int }{
		{640, 2, 10},                   // a small tree: its 1/64
		{65536, 1001, 1024},            // 1/64 is the least
		{944742, 1001, 8008},           // a million files, limit 1000
		{944742, 101, 1024},            // limit 100: the least
		{944742, 1 << 20, 944742 / 64}, // a large need: 1/64
		{944742, 1 << 62, 944742 / 64}, // one that would overflow
	} {
		if got := firstPrefix(c.files, c.need); got != c.want {
			t.Errorf("firstPrefix(%d, %d) = %d, want %d", c.files, c.need, got, c.want)
		}
	}
}

// A Grep whose candidates are sparse (its trigram bound under an eighth
// of the files) but many times its need tries the newest files first
// too (sparsePrefix), and answers as the walk does: 4,096 files, one in
// 11 holding the needle (some twice), some rewritten since the build
// (the index's delta) to the newest mtime or one older than every other;
// mtimes spread, or nearly all tied (the prefixes cut them by path);
// limits on either side of newestFirstSparse, where the bound no longer
// holds 64 times the need and the candidates are taken all at once; a
// literal no line holds though its trigrams share files ("needle!":
// every prefix falls short, then all); patterns that are not one
// literal, never tried newest first.
func TestNewestFirstSparse(t *testing.T) {
	t.Parallel()
	for _, c := range mtimeSchemes(97) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testNewestFirstSparse(t, c.mtime, c.newest)
		})
	}
}

func testNewestFirstSparse(t *testing.T, mtime func(i int) time.Duration, newestMtime time.Duration) {
	const n = 4096
	files := map[string]string{}
	for i := range n {
		body := fmt.Sprintf("row %d\n", i)
		if i%7 == 0 {
			body += "battle!\n"
		}
		switch {
		case i%33 == 0:
			body += "a needle\nanother needle\n"
		case i%11 == 0:
			body += "one needle\n"
		}
		files[fmt.Sprintf("d%d/f%04d.txt", i%8, i)] = body
	}
	root := testtree.Write(t, files)
	base := time.Now().Add(-time.Hour)
	for i := range n {
		setMtime(t, root, fmt.Sprintf("d%d/f%04d.txt", i%8, i), base.Add(mtime(i)))
	}
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	var changed []string
	for i := 5; i < n; i += 64 {
		rel := fmt.Sprintf("d%d/f%04d.txt", i%8, i)
		if err := os.WriteFile(filepath.Join(root, rel), []byte("a needle, rewritten\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(-time.Second)
		if i%3 == 0 {
			mt = base.Add(newestMtime) // tied with the newest
		}
		setMtime(t, root, rel, mt)
		changed = append(changed, rel)
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	counter := &newerCounter{Index: ix}
	s := idx.Searcher.(Indexed)
	s.newestFrom = 1
	s.Index = counter
	newest := *idx
	newest.Searcher = s
	literal := map[string]bool{`needle`: true, `(?i)NEEDLE`: true, `needle!`: true}
	fromPrefix := 0
	for _, pat := range []string{`needle`, `(?i)NEEDLE`, `needle!`, `ne+dle`, `(one|a) needle`, `row.*needle`} {
		e := ix.Estimate(index.CandidateOptions{Content: trigramQueryOf(t, pat)}, 0)
		if e.All || e.Bound >= e.Files/8 || e.Bound/newestFirstSparse < 2 {
			t.Fatalf("fixture: %s: bound %d of %d files is not sparse with room for limit 1", pat, e.Bound, e.Files)
		}
		sparseMost := e.Bound/newestFirstSparse - 1 // the largest limit tried newest first
		limits := []int{1, sparseMost, sparseMost + 1, 100}
		if !literal[pat] {
			sparseMost, limits = 0, []int{1, 5, 100} // never
		}
		for _, mode := range []string{"content", "files_with_matches", "count"} {
			for _, limit := range limits {
				args := fmt.Sprintf(`{"pattern":%q,"output_mode":%q,"limit":%d,"timeout_ms":60000}`, pat, mode, limit)
				counter.n = 0
				diffEngines(t, walk, &newest, tool.Grep, args)
				if prefixed := counter.n > 0; prefixed != (limit <= sparseMost) {
					t.Errorf("%s: newest files first %v, want %v (bound %d)", args, prefixed, !prefixed, e.Bound)
				}
				if limit <= sparseMost && grepCandidates(t, &newest, args) < grepCandidates(t, idx, args) {
					fromPrefix++
				}
			}
		}
	}
	if fromPrefix == 0 {
		t.Fatal("no Grep was answered from a prefix of the candidates")
	}
}

// grepCandidates runs a Grep and returns its candidates statistic.
func grepCandidates(t *testing.T, tools *Tools, args string) int {
	t.Helper()
	e := tools.Run(context.Background(), tool.Grep, ".", json.RawMessage(args))
	if e.Status == envelope.StatusError {
		t.Fatalf("%s: %s", args, e.Text)
	}
	return *e.Stats.(*envelope.GrepStats).Candidates
}

// mtimeScheme is a shape of the mtimes a newest-first test gives its
// files: mtime(i) is file i's after the test's base, newest the newest.
type mtimeScheme struct {
	name   string
	mtime  func(i int) time.Duration
	newest time.Duration
}

// mtimeSchemes are the two shapes: spread over period seconds, or, as
// unpacked from an archive, all but a few files at one mtime, so that
// the prefixes cut the tied ones by path (Extent.SincePath).
func mtimeSchemes(period int) []mtimeScheme {
	return []mtimeScheme{
		{"spread", func(i int) time.Duration { return time.Duration((i*37)%period) * time.Second }, time.Duration(period-1) * time.Second},
		{"tied", func(i int) time.Duration { return time.Duration(min(i%97, 1)) * time.Second }, time.Second},
	}
}

// newerCounter counts the listings of the newest files (a prefix).
type newerCounter struct {
	Index
	n int
}

func (c *newerCounter) CandidateLines(o index.CandidateOptions, fn func(f *index.File, lines index.Eighths) bool) {
	if o.Newer {
		c.n++
	}
	c.Index.CandidateLines(o, fn)
}

// The first prefix of a sparse Grep: 16 files a result at the density of
// its trigram bound, taken only for one literal whose bound is 64 times
// the need.
func TestNewestFirstDecision(t *testing.T) {
	for _, c := range []struct {
		name               string
		files, bound, need int
		all                bool
		literals           int // in the pattern
		want               int
	}{
		{"small tree", 20000, 19000, 1001, false, 1, 0},
		{"no trigram", 944742, 0, 1001, true, 0, 8008},
		{"dense", 944742, 320609, 1001, false, 1, 8008},
		{"func main at 1M", 944742, 80737, 1001, false, 1, 16 * 1001 * 944742 / 80737},
		{"limit 100", 944742, 80737, 101, false, 1, 16 * 101 * 944742 / 80737},
		{"64 times the need", 944742, 64 * 1001, 1001, false, 1, 944742 / 4},
		{"under 64 times", 944742, 64*1001 - 1, 1001, false, 1, 0},
		{"rare", 944742, 5, 1001, false, 1, 0},
		{"two literals", 944742, 80737, 1001, false, 2, 0},
	} {
		s := Indexed{Index: estimateOnly{index.Extent{Files: c.files, Bound: c.bound, All: c.all}}}
		k, all := s.newestFirst(nil, c.literals == 1, ".", c.need)
		if k != c.want || all != c.files {
			t.Errorf("%s: newestFirst = %d of %d, want %d of %d", c.name, k, all, c.want, c.files)
		}
		if k > all/newestFirstMost {
			t.Errorf("%s: a first prefix of %d files, over a quarter of %d", c.name, k, all)
		}
	}
}

// estimateOnly is an Index that only estimates.
type estimateOnly struct{ e index.Extent }

func (x estimateOnly) CandidateLines(index.CandidateOptions, func(*index.File, index.Eighths) bool) {}
func (x estimateOnly) Estimate(index.CandidateOptions, int) index.Extent                            { return x.e }
func (x estimateOnly) Visibility() index.Visibility                                                 { return index.Visibility{} }

// trigramQueryOf is the trigram query of a regular expression.
func trigramQueryOf(t *testing.T, pattern string) *csindex.Query {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return trigramQuery(re)
}
