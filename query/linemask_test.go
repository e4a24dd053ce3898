package query

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/tool"
)

// Adversarial line-mask inputs. Short files (3..12 bytes: every
// byte its own eighth or nearly), files starting with "\n" or a BOM,
// CRLF, lines straddling eighth boundaries, Kelvin / long s, invalid
// UTF-8, and patterns with anchors, classes, optional parts and
// alternatives whose trigram queries carry QAll/QNone subtrees.
func TestLineMasksAdversarial(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(36, 1))
	alpha := []string{"ab", "c", "abc", "\n", "\r\n", "\r", "k", "K", "\u212a", "s", "\u017f", "S", "\xff", "\xe2\x84", "x", " ", "d", "ef"}
	gen := pieces(r, alpha)
	files := fsTree{}
	for i := range 150 {
		var c string
		switch i % 5 {
		case 0:
			c = gen(1 + r.IntN(4)) // tiny
		case 1:
			c = "\n" + gen(2+r.IntN(10))
		case 2:
			c = "\xef\xbb\xbf" + gen(2+r.IntN(10))
		default:
			c = gen(3 + r.IntN(40))
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%3, i)] = c
	}
	root := newRoot(t, files)
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	var changed []string
	for i := 0; i < 150; i += 4 {
		p := fmt.Sprintf("d%d/f%03d.txt", i%3, i)
		files[p] = gen(1 + r.IntN(30))
		changed = append(changed, p)
	}
	rewrite(t, ix, root, files, changed)
	paths := slices.Sorted(maps.Keys(files))
	piece := func() string {
		for {
			c := files[paths[r.IntN(len(paths))]]
			if len(c) < 3 {
				continue
			}
			j := r.IntN(len(c))
			p := c[j:min(len(c), j+3+r.IntN(5))]
			if utf8.ValidString(p) && !strings.ContainsAny(p, "\n") && p != "" {
				return p
			}
		}
	}
	fixed := []string{`^abc`, `abc$`, `^abc$`, `^$`, `(?i)kab`, `(?i)sss`, `(?i)kkk`, `a.c`, `[a-c]{3}`, `abc|x+`, `(abc)?def`, `\babc\b`,
		`abc\s*def`, `\x{FFFD}abc`, `.abc`, `(?i)ÉAB`, `c\rd`, `c\r$`, `^\r`, `abc.*abc`, `(abc|d)(ef|x)`, `ab(c|\w*)ef`, `[^a]bc`, `\Aab`, `bc\z`,
		`(?i)\x{212a}ab`, `(?i)\x{17f}ab`, `abcabc`, `ab[^\n]c`, `(?:abc){2,}`, `x?abc`, `(abc|)x`}
	quote := regexp.QuoteMeta
	oracle := func(re *regexp.Regexp, c string) bool {
		b := []byte(c)
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		if bytes.IndexByte(b, 0) >= 0 {
			return false
		}
		return re.Match(b)
	}
	tested, dropped := 0, 0
	stage := func(name string, ix *index.Index, tools *Tools, n int) {
		for i := range n {
			var pat string
			if i < len(fixed) {
				pat = fixed[i]
			} else {
				switch r.IntN(6) {
				case 0:
					pat = quote(piece())
				case 1:
					pat = "(?i)" + quote(piece())
				case 2:
					pat = quote(piece()) + ".*" + quote(piece())
				case 3:
					pat = "^" + quote(piece())
				case 4:
					pat = "(" + quote(piece()) + "|" + quote(piece()) + ")" + quote(piece())
				default:
					pat = quote(piece()) + `\s?` + quote(piece()) + "$"
				}
			}
			for _, cs := range []bool{true, false} {
				m, e := grep.CompileMatcher(pat, grep.MatchOptions{CaseSensitive: cs})
				if e != nil {
					continue
				}
				re := regexp.MustCompile(m.Syntax().String())
				q := trigramQuery(m.Syntax())
				ph := index.NewPhrases(m.Literals())
				var got, all []string
				ix.Candidates(index.CandidateOptions{Content: q, Phrases: ph, OneLine: true}, func(f *index.File) bool { got = append(got, f.Path); return true })
				ix.Candidates(index.CandidateOptions{Content: q}, func(f *index.File) bool { all = append(all, f.Path); return true })
				dropped += len(all) - len(got)
				for _, p := range paths {
					if oracle(re, files[p]) {
						tested++
						if !slices.Contains(got, p) {
							inAll := slices.Contains(all, p)
							t.Errorf("%s: pattern %q (cs %v, query %v, literals %q) matches %s (%q), not a candidate (trigram-only candidate: %v)", name, pat, cs, q, m.Literals(), p, files[p], inAll)
						}
					}
				}
				if i%7 == 0 {
					diffEngines(t, walk, tools, tool.Grep, jsonArgs("pattern", pat, "case_sensitive", cs, "output_mode", "content"))
				}
			}
		}
	}
	stage("base and delta", ix, idx, 400)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	stage("compacted", ix, idx, 100)
	t.Logf("%d matching files tested, %d dropped by masks", tested, dropped)
}

// A file rewritten after it was indexed, its size and mtime put back and
// its match moved to another eighth, with no watcher to tell the index:
// the index still lists it, placing the match where it was. The probe
// (grep/probe.go) sees the new ctime and reads the file whole, so the
// match is found where it now is, as the walk finds it.
func TestProbeStaleEighths(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("filler line\n", 200)
	was := "needle here\n" + filler + filler + filler
	now := filler + filler + filler + "needle here\n"
	root := newRoot(t, fsTree{"a.txt": was, "b.txt": filler + "needle\n"})
	walk, idx := buildTools(t, root)
	path := filepath.Join(root, "a.txt")
	before, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	ctime := func() int64 {
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ctim.Nano()
	}
	was0 := ctime()
	// Rewritten until its ctime differs from the indexed one (a rewrite in
	// the same clock tick keeps it: the index could not tell either).
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, c := range []string{now, was, now} {
			if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		if ctime() != was0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ctime never moved")
		}
	}
	r := run(t, idx, tool.Grep, `{"pattern":"needle here","case_sensitive":true}`)
	if got, want := r.matchLines(), []string{"a.txt:601: needle here"}; !slices.Equal(got, want) {
		t.Errorf("index: %q, want %q", got, want)
	}
	diffEngines(t, walk, idx, tool.Grep, `{"pattern":"needle here","case_sensitive":true}`)
}
