package grep

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// probeCase is a file and a pattern: the lines of the file with where
// they start, and which of them match.
type probeCase struct {
	data    []byte
	starts  []int64 // each line's first byte (a BOM not part of the first)
	matched []bool
	long    bool // a line runs more than probeTail past an eighth's end
}

func newProbeCase(data []byte, re *regexp.Regexp) probeCase {
	c := probeCase{data: data}
	body, off := data, int64(0)
	if bytes.HasPrefix(body, utf8BOM) {
		body, off = body[len(utf8BOM):], int64(len(utf8BOM))
	}
	for s := 0; s < len(body) || s == 0; {
		e := bytes.IndexByte(body[s:], '\n')
		if e < 0 {
			e = len(body)
		} else {
			e += s
		}
		start := off + int64(s)
		if s == 0 {
			start = 0 // the line the BOM is in front of starts the file
		}
		c.starts = append(c.starts, start)
		c.matched = append(c.matched, re.Match(body[s:e]))
		if e-s > probeTail/2 {
			c.long = true
		}
		if e == len(body) {
			break
		}
		s = e + 1
	}
	return c
}

// hits returns the matching lines, and those that start in the eighths
// q of the file.
func (c probeCase) hits(q uint8) (all, in int) {
	n := int64(len(c.data))
	for i, s := range c.starts {
		if !c.matched[i] {
			continue
		}
		all++
		if s < n && q&(1<<(8*uint64(s)/uint64(n))) != 0 {
			in++
		}
	}
	return all, in
}

// stampOf is the index's record of the file at path.
func stampOf(t *testing.T, path string) (File, Stamp) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return File{ModTime: tree.Nanos(st.Mtim.Unix()), Size: st.Size},
		Stamp{Ctime: tree.Nanos(st.Ctim.Unix()), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}
}

// probeScanner returns a new directory and a scanner of files beneath it.
func probeScanner(t *testing.T) (string, *fileScanner) {
	t.Helper()
	root := t.TempDir()
	rt, err := rooted.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return root, &fileScanner{root: rt}
}

// probeSets are the sets of eighths the probe tests try: each alone,
// neighbours, apart, and all but one.
var probeSets = []uint8{
	0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
	0x03, 0x0C, 0x18, 0x30, 0xC0, 0x81, 0x42, 0x55, 0xAA, 0x0F, 0xF0, 0x7F, 0xFE,
}

// A file scanned with the index's eighths is searched in the lines
// starting in them only, and found clean when none of those matches,
// even when lines elsewhere do (what the index vouches for); when one of
// them matches, the matches reported are those of the lines starting in
// the eighths, with their numbers, unless a line runs on too far to
// resolve them (then the file is read whole: every match). The
// eighths' bounds are the index's (index.EighthOf): a line starting at
// ⌈e·n/8⌉ is eighth e's, one starting a byte before is eighth e-1's.
// A file whose status is not the one indexed is read whole.
func TestProbeEighths(t *testing.T) {
	t.Parallel()
	root, fs := probeScanner(t)
	r := rand.New(rand.NewPCG(36, 2))
	words := []string{"foo", "bar", "foo bar", "x", "  ", "é", "\xff", "k", "\u212a", "\r"}
	patterns := []string{"foo bar", "^foo", "bar$", `\bx\b`, "(?i)kfoo", "é.*bar", "^$"}
	sz := tinySizes(64, 1<<16, 1<<20)
	path := filepath.Join(root, "f.txt")
	proved, whole, resolved := 0, 0, 0
	for i := range 400 {
		var b []byte
		pattern := patterns[r.IntN(len(patterns))]
		switch i % 7 {
		case 0: // a BOM is not part of the first line
			b = append(b, utf8BOM...)
		case 1:
			b, pattern = append(b, utf8BOM...), "^foo"
			b = append(b, "foo"...)
		}
		for range 4 + r.IntN(60) {
			n := r.IntN(8)
			switch r.IntN(40) {
			case 0:
				n = probeTail // a line longer than the probe reads past its eighth
			case 1, 2:
				n = probeLine/2 + r.IntN(probeTail/8) // read on past probeLine
			}
			for range n {
				b = append(b, words[r.IntN(len(words))]...)
			}
			b = append(b, '\n')
		}
		if r.IntN(3) == 0 {
			b = b[:len(b)-1] // no final line break
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, stamp := stampOf(t, path)
		f.Rel, f.Indexed = "f.txt", stamp
		m, err := CompileMatcher(pattern, MatchOptions{CaseSensitive: true})
		if err != nil {
			t.Fatal(err)
		}
		c := newProbeCase(b, regexp.MustCompile(pattern))
		s := &Search{Root: root, Matcher: m, Mode: ModeCount, Limit: 1000, Sizes: sz}
		for _, q := range probeSets {
			f.Eighths = q
			all, in := c.hits(q)
			h := fs.scan(context.Background(), s, f, -1)
			switch {
			case in > 0 && h.count != in && !(c.long && h.count == all):
				t.Fatalf("%q in %q, eighths %08b: %d lines found, want the %d starting in the eighths (of %d)", pattern, b, q, h.count, in, all)
			case in > 0 && h.count == in && in != all:
				resolved++
				c.checkLines(t, fs, s, f, pattern)
			case in == 0 && h.count != 0 && (all == 0 || !c.long):
				t.Fatalf("%q in %q, eighths %08b: %d lines found, want none (the file read whole, not probed)", pattern, b, q, h.count)
			case in == 0 && h.count != 0:
				whole++ // a long line: read whole, rightly
			case in == 0 && all > 0:
				proved++
			}
			if !h.read {
				t.Fatalf("%q, eighths %08b: not counted as read", pattern, q)
			}
		}
		// Not as indexed: read whole.
		if all, _ := c.hits(0); all > 0 {
			for _, g := range []File{
				{Rel: f.Rel, Size: f.Size, ModTime: f.ModTime + 1, Indexed: stamp},
				{Rel: f.Rel, Size: f.Size, ModTime: f.ModTime, Indexed: Stamp{Ctime: stamp.Ctime - 1, Ino: stamp.Ino, Dev: stamp.Dev}},
				{Rel: f.Rel, Size: f.Size, ModTime: f.ModTime, Indexed: Stamp{Ctime: stamp.Ctime, Ino: stamp.Ino + 1, Dev: stamp.Dev}},
				{Rel: f.Rel, Size: f.Size + 1, ModTime: f.ModTime, Indexed: stamp},
			} {
				for _, q := range probeSets {
					g.Eighths = q
					if h := fs.scan(context.Background(), s, g, -1); h.count != all {
						t.Fatalf("%q in %q, stamp %+v not the file's, eighths %08b: %d lines, want %d", pattern, b, g, q, h.count, all)
					}
				}
			}
		}
	}
	t.Logf("%d probes proved a file clean that has matches elsewhere; %d resolved a file that has; %d read whole for a long line", proved, resolved, whole)
	if proved < 1000 || resolved < 1000 {
		t.Errorf("only %d probes proved a file clean, %d resolved one with matches elsewhere", proved, resolved)
	}
}

// checkLines checks a content search of c's file f (probed through
// f.Eighths) against the whole file's: the same lines, numbers and
// texts, less those starting outside the eighths; and, with at most 1
// or 2 matches a file, the first of those.
func (c probeCase) checkLines(t *testing.T, fs *fileScanner, s *Search, f File, pattern string) {
	t.Helper()
	cs := *s
	cs.Mode = ModeContent
	whole := f
	whole.Eighths = 0xFF // not probed
	var want []Match
	n := int64(len(c.data))
	for _, m := range fs.scan(context.Background(), &cs, whole, -1).matches {
		if f.Eighths&(1<<(8*uint64(c.starts[m.Line-1])/uint64(n))) != 0 {
			want = append(want, m)
		}
	}
	for _, maxHits := range []int{-1, 1, 2} {
		w := want
		if maxHits >= 0 {
			w = want[:min(len(want), maxHits)]
		}
		got := fs.scan(context.Background(), &cs, f, maxHits).matches
		if !slices.EqualFunc(got, w, func(a, b Match) bool { return a.Line == b.Line && a.Text == b.Text }) {
			t.Fatalf("%q in %q, eighths %08b, at most %d a file: lines %+v, want %+v", pattern, c.data, f.Eighths, maxHits, got, w)
		}
	}
}

// The eighths' bounds, byte by byte: a file of lines of one byte each
// ("a\n" …), the match at every line in turn, probed with each single
// eighth. The probe finds the line exactly when it starts in that
// eighth by the index's rule, 8s/n.
func TestProbeBounds(t *testing.T) {
	t.Parallel()
	root, fs := probeScanner(t)
	m, err := CompileMatcher("b", MatchOptions{CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &Search{Root: root, Matcher: m, Mode: ModeCount, Limit: 10, Sizes: tinySizes(64, 1<<16, 1<<20)}
	path := filepath.Join(root, "f.txt")
	for _, lines := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 23} {
		for _, width := range []int{1, 2, 3} { // "a\n", "aa\n", "aaa\n"
			for at := range lines {
				var b []byte
				for i := range lines {
					c := byte('a')
					if i == at {
						c = 'b'
					}
					b = append(b, bytes.Repeat([]byte{c}, width)...)
					b = append(b, '\n')
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				f, stamp := stampOf(t, path)
				f.Rel, f.Indexed = "f.txt", stamp
				start, n := int64(at*(width+1)), int64(len(b))
				want := int(8 * start / n)
				for q := range 8 {
					f.Eighths = 1 << q
					got := fs.scan(context.Background(), s, f, -1).count
					if (got == 1) != (q == want) {
						t.Errorf("%d lines of %d bytes, the match at byte %d of %d (eighth %d): probed in eighth %d, %d found",
							lines, width+1, start, n, want, q, got)
					}
				}
			}
		}
	}
}

// A file rewritten in place at the same size while it is probed, between
// its two spans, its match moved from the span not yet read to the one
// already read: the probe takes the status again after its last span,
// finds it moved, and the file is read whole. (Sizes.Check, which the
// scan calls between its pieces of work, is the writer.)
func TestProbeTornRewrite(t *testing.T) {
	t.Parallel()
	root, fs := probeScanner(t)
	filler := strings.Repeat("filler line\n", 100)
	was := filler + filler + "needle here\n" + filler // the match in eighth 5
	now := "needle here\n" + filler + filler + filler // in eighth 0, the same size
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, []byte(was), 0o644); err != nil {
		t.Fatal(err)
	}
	f, stamp := stampOf(t, path)
	f.Rel, f.Indexed, f.Eighths = "f.txt", stamp, 1<<0|1<<5
	m, err := CompileMatcher("needle", MatchOptions{CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	sz := *tinySizes(1<<10, 1<<16, 1<<20)
	rewritten := false
	sz.Check = func() {
		if !rewritten {
			rewritten = true
			if err := os.WriteFile(path, []byte(now), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	s := &Search{Root: root, Matcher: m, Mode: ModeCount, Limit: 10, Sizes: &sz}
	h := fs.scan(context.Background(), s, f, -1)
	if !rewritten {
		t.Fatal("the scan never looked at its context: no rewrite")
	}
	if h.count != 1 {
		t.Errorf("%d matches, want 1: the file held one before the rewrite and after it", h.count)
	}
}

// A probe that finds a match in a file resolves it whatever the scan's
// sizes: with chunks smaller than the 8 KiB sniffed for a NUL, the
// buffer resolve reads into once fell short of that (a slice out of
// range).
func TestResolveSmallChunks(t *testing.T) {
	t.Parallel()
	root, fs := probeScanner(t)
	b := []byte("needle\n")
	for len(b) < 12000 {
		b = append(b, strings.Repeat("x", 98)+"\n"...)
	}
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, stamp := stampOf(t, path)
	f.Rel, f.Indexed, f.Eighths = "f.txt", stamp, 0x01
	m, err := CompileMatcher("needle", MatchOptions{CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1000, 3000, 4096, 1 << 16} {
		s := &Search{Root: root, Matcher: m, Mode: ModeContent, Limit: 10, Sizes: tinySizes(64, chunk, 1<<20)}
		h := fs.scan(context.Background(), s, f, -1)
		if len(h.matches) != 1 || h.matches[0].Line != 1 || h.matches[0].Text != "needle" {
			t.Errorf("chunk %d: %+v, want needle on line 1", chunk, h.matches)
		}
	}
}
