package grep

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/internal/testtree"
)

// generous bounds how long a deadline test waits for an answer that is due
// within its timeout plus a little: reaching it is a failure (the scan
// ignored its context), never a measurement.
const generous = 10 * time.Second

// hugeLine writes a file of n bytes of 'a' and no line break at rel under
// root.
func hugeLine(t testing.TB, root, rel string, n int) {
	t.Helper()
	writeRepeated(t, filepath.Join(root, rel), []byte("a"), n)
}

// writeRepeated writes unit repeated to n bytes (n a multiple of its
// length) to path.
func writeRepeated(t testing.TB, path string, unit []byte, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat(unit, (1<<20)/len(unit))
	for left := n; left > 0; left -= len(block) {
		if _, err := f.Write(block[:min(left, len(block))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// slowPattern costs the regexp engine hundreds of nanoseconds per byte of
// 'a's, and its best prefilter literal ("a") is everywhere, so a search
// that ignores its context takes tens of seconds over 64 MiB.
const slowPattern = `a[a-z]{1,30}[a-z]{1,30}z`

// waitGoroutines waits until no more goroutines run than base.
func waitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(generous)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, baseline %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// scanOne builds a search for pattern (case-insensitive, multiline or
// not, 100 lines in content mode, with sizes sz) beneath root and scans
// the one file rel with ctx.
func scanOne(ctx context.Context, t testing.TB, root, rel, pattern string, multiline bool, sz *Sizes) Result {
	t.Helper()
	m, err := CompileMatcher(pattern, MatchOptions{Multiline: multiline})
	if err != nil {
		t.Fatal(err)
	}
	s := &Search{Root: root, Matcher: m, Mode: ModeContent, Limit: 100, Sizes: sz}
	fi, err := os.Stat(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return Scan(ctx, s, []File{{Rel: rel, ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}})
}

// Cancelling the context in the middle of a file (one huge line, short
// lines, a multiline search) makes Scan return at once with a timeout and
// no result from that file.
func TestScanCancelMidFile(t *testing.T) {
	root := testtree.Write(t, nil)
	hugeLine(t, root, "line.txt", 64<<20)
	writeRepeated(t, filepath.Join(root, "lines.txt"), []byte(strings.Repeat("a", 63)+"\n"), 64<<20)
	for _, tc := range []struct {
		rel, pattern string
		multiline    bool
	}{
		{"line.txt", slowPattern, false},
		{"lines.txt", slowPattern, false},
		{"lines.txt", `a[a-z]{1,30}[a-z]{1,30}[\s\S]z`, true},
	} {
		t.Run(fmt.Sprintf("%s %s multiline=%v", tc.rel, tc.pattern, tc.multiline), func(t *testing.T) {
			base := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel at the third look at the context: the file is being
			// scanned by then.
			var checks atomic.Int32
			sz := defaultSizes
			sz.Check = func() {
				if checks.Add(1) == 3 {
					cancel()
				}
			}
			ch := make(chan Result, 1)
			go func() { ch <- scanOne(ctx, t, root, tc.rel, tc.pattern, tc.multiline, &sz) }()
			var res Result
			select {
			case res = <-ch:
			case <-time.After(generous):
				t.Fatalf("Scan did not return within %v of its cancellation", generous)
			}
			if checks.Load() < 3 {
				t.Fatalf("Scan returned after %d looks at its context, before it was cancelled", checks.Load())
			}
			if res.Abort != Timeout || len(res.Matches) != 0 || res.FilesScanned != 0 {
				t.Errorf("result after cancel: abort %v, %d matches, %d files scanned; want a timeout and nothing",
					res.Abort, len(res.Matches), res.FilesScanned)
			}
			waitGoroutines(t, base)
		})
	}
}

// tinySizes are scanning sizes so small that small files cross every
// boundary: windows, chunks, lines longer than both, context checks.
func tinySizes(window, chunk, multiline int) *Sizes {
	return &Sizes{Window: window, Chunk: chunk, Multiline: multiline, CheckEvery: 3}
}

// refScan is the scan of a whole file in memory as Grep did it before
// files were read in chunks: one Matcher.Scan over all of it.
func refScan(q *Search, rel string, data []byte, max int) fileHit {
	h := fileHit{read: true}
	if bytes.IndexByte(data[:min(len(data), BinarySniffBytes)], 0) >= 0 {
		h.binary = true
		return h
	}
	content := q.Mode == ModeContent
	line, last := 1, 0
	var sc Scanner
	q.Matcher.Scan(&sc, data, func(s, e int) bool {
		line += bytes.Count(data[last:s], []byte{'\n'})
		last = s
		h.count++
		if content {
			m := Match{File: rel, Line: line, Text: lineText(data[s:e])}
			if q.Before > 0 {
				m.Before = linesBefore(data, s, q.Before)
			}
			if q.After > 0 {
				m.After = linesAfter(data, e, q.After)
			}
			h.matches = append(h.matches, m)
		}
		return max < 0 || h.count < max
	})
	return h
}

// randomContent returns a file of random lines: short ones, long ones
// (longer than a window or a chunk), empty ones, CRLF ends, non-ASCII and
// invalid UTF-8, with or without a final line break.
func randomContent(r *rand.Rand, long int) []byte {
	pieces := []string{"a", "b", "ab", "A", "B", "é", "É", "x", "\xff", " ", "\r", "foo", "FOO", "k", "K", "\u212a"}
	var b []byte
	for range r.IntN(40) {
		n := r.IntN(6)
		if r.IntN(4) == 0 {
			n = long/2 + r.IntN(2*long)
		}
		for range n {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		if r.IntN(5) == 0 {
			b = append(b, '\r')
		}
		b = append(b, '\n')
	}
	if r.IntN(2) == 0 {
		for range r.IntN(2 * long) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
	}
	return b
}

// The chunked scan (windows, chunks, streamed lines, context across them)
// finds exactly what one Matcher.Scan over the whole file finds, in every
// output mode, with every limit and context, case-sensitive or not.
func TestChunkedScanMatchesWholeFile(t *testing.T) {
	t.Parallel()
	for _, sz := range []struct{ window, chunk int }{{8, 24}, {1, 5}, {64, 16}, {3, 700}} {
		t.Run(fmt.Sprintf("window %d chunk %d", sz.window, sz.chunk), func(t *testing.T) {
			t.Parallel()
			testChunkedScan(t, sz.window, sz.chunk)
		})
	}
}

func testChunkedScan(t *testing.T, window, chunk int) {
	sizes := tinySizes(window, chunk, 1<<20)
	root := testtree.Write(t, nil)
	rt, err := rooted.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	patterns := []string{
		"a", "ab", "foo", "b$", "^a", `\Aa`, `b\z`, "^$", "^", "x*", "a.*b", "[^a]b", "é", "k", `\bab\b`,
		"(a|b)+x", "a[a-z]{1,3}b", `\x{fffd}`, "foo|ab", "o{2}",
	}
	r := rand.New(rand.NewPCG(uint64(window), uint64(chunk)))
	fs := &fileScanner{root: rt}
	// Each pattern is compiled once for each set of options it comes
	// with: compiling it again for every case found nothing new and was
	// a sixth of the test's time.
	type compiled struct {
		pattern                  string
		caseSensitive, multiline bool
	}
	matchers := map[compiled]*Matcher{}
	iters := 3000
	if testing.Short() {
		iters = 500
	}
	for i := range iters {
		data := randomContent(r, 48)
		if err := os.WriteFile(filepath.Join(root, "f.txt"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		pattern := patterns[r.IntN(len(patterns))]
		p := struct {
			Pattern                  string
			CaseSensitive, Multiline bool
			Limit                    int
			Mode                     Mode
			Before, After            int
		}{
			Pattern:       pattern,
			CaseSensitive: r.IntN(2) == 0,
			Multiline:     r.IntN(6) == 0,
			Limit:         1 + r.IntN(8),
			Mode:          []Mode{ModeContent, ModeContent, ModeFiles, ModeCount}[r.IntN(4)],
			Before:        r.IntN(4),
			After:         r.IntN(4),
		}
		if p.Multiline && r.IntN(2) == 0 {
			pattern = `b\s+a`
			p.Pattern = pattern
		}
		key := compiled{pattern, p.CaseSensitive, p.Multiline}
		m := matchers[key]
		if m == nil {
			var err error
			if m, err = CompileMatcher(pattern, MatchOptions{CaseSensitive: p.CaseSensitive, Multiline: p.Multiline}); err != nil {
				t.Fatal(err)
			}
			matchers[key] = m
		}
		q := &Search{Root: root, Matcher: m, Mode: p.Mode, Limit: p.Limit, Before: p.Before, After: p.After, Sizes: sizes}
		max := p.Limit + 1
		switch p.Mode {
		case ModeFiles:
			max = 1
		case ModeCount:
			max = -1
		}
		// A size hint of 0 as well as the true size: the first read may
		// stop anywhere.
		hint := int64(len(data))
		if r.IntN(2) == 0 {
			hint = 0
		}
		got := fs.scan(context.Background(), q, File{Rel: "f.txt", Size: hint}, max)
		fs.release()
		fs.root = rt
		want := refScan(q, "f.txt", data, max)
		if got.count != want.count || got.binary != want.binary || got.fault || got.interrupted || got.cut ||
			!slices.EqualFunc(got.matches, want.matches, matchEqual) {
			t.Fatalf("case %d: pattern %q params %+v on %q:\n got  %d %+v\n want %d %+v", i, pattern, p, data, got.count, got.matches, want.count, want.matches)
		}
	}
}

func matchEqual(a, b Match) bool {
	return a.File == b.File && a.Line == b.Line && a.Text == b.Text && slices.Equal(a.Before, b.Before) && slices.Equal(a.After, b.After)
}
