package grep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// Tests of the engine that answer through the query layer's tools, the
// engine's sizes shrunk (export_test.go) where small files must cross
// its boundaries.

// newTools opens a workspace at root and returns its walk-engine tools.
func newTools(t testing.TB, root string) *query.Tools {
	t.Helper()
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return query.NewDirect(ws)
}

// setup writes files under a new root and returns its walk-engine tools.
func setup(t testing.TB, files map[string]string) *query.Tools {
	t.Helper()
	return newTools(t, testtree.Write(t, files))
}

// setMtime sets a fixture file's modification time.
func setMtime(t testing.TB, root, rel string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), mt, mt); err != nil {
		t.Fatal(err)
	}
}

// result is a Grep's envelope, its data at hand.
type result struct {
	*envelope.Envelope
	Data *envelope.GrepData
}

// run calls tool with args (JSON) at the root of tools' workspace.
func run(t testing.TB, tools *query.Tools, tool, args string) result {
	t.Helper()
	e := tools.Run(context.Background(), tool, ".", json.RawMessage(args))
	d, _ := e.Data.(*envelope.GrepData)
	if d == nil {
		t.Fatalf("%s %s: data %T", tool, args, e.Data)
	}
	return result{e, d}
}

// matchLines renders the matches as "file:line: text".
func (r result) matchLines() []string {
	out := []string{}
	for _, m := range r.Data.Matches {
		out = append(out, fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Text))
	}
	return out
}

// wantStatus fails unless the answer's status is status.
func wantStatus(t testing.TB, r result, status envelope.Status) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %s, want %s: %s", r.Status, status, r.Text)
	}
}

// equal fails with what differs when got != want.
func equal[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// A Grep with timeout_ms 200 over a 64 MiB file that the pattern makes
// slow answers with a timeout, not after the whole file: one huge line
// (searched through the context-checking reader) and 64 MiB of short
// lines (searched in windows).
func TestGrepTimeoutHoldsOnHugeFiles(t *testing.T) {
	const size = 64 << 20
	for _, tc := range []struct {
		name string
		unit string
	}{
		{"one line", "a"},
		{"short lines", strings.Repeat("a", 63) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testtree.Write(t, nil)
			grep.WriteRepeated(t, filepath.Join(root, "big.txt"), []byte(tc.unit), size)
			tools := newTools(t, root)
			base := runtime.NumGoroutine()
			ch := make(chan *envelope.Envelope, 1)
			go func() {
				ch <- tools.Run(context.Background(), tool.Grep, ".", []byte(`{"pattern":"`+grep.SlowPattern+`","timeout_ms":200}`))
			}()
			var e *envelope.Envelope
			select {
			case e = <-ch:
			case <-time.After(grep.Generous):
				t.Fatalf("no answer within %v of a 200 ms timeout", grep.Generous)
			}
			if e.Status != envelope.StatusError || e.Error == nil || e.Error.Code != envelope.CodeTimeout {
				t.Errorf("status %s, error %+v; want a TIMEOUT error", e.Status, e.Error)
			}
			if d, ok := e.Data.(*envelope.GrepData); !ok || d.AbortedReason != envelope.AbortTimeout {
				t.Errorf("data %+v; want aborted_reason timeout", e.Data)
			}
			// Nothing keeps scanning after the answer.
			grep.WaitGoroutines(t, base)
		})
	}
}

// Lines far longer than MaxLineBytes, streamed from the file (longer than
// a chunk): found, numbered, cut for display, with context on both sides.
func TestGrepStreamedLongLines(t *testing.T) {
	t.Parallel()
	sizes := grep.TinySizes(256, 4096, 1<<20)
	long := strings.Repeat("é", 3000) + "needle" + strings.Repeat("z", 3000)
	tools := setup(t, map[string]string{"f.txt": "one\n" + long + "\nthree\n" + strings.Repeat("q", 9000) + "\nfive needle\n"})
	tools.GrepSizes = sizes
	r := run(t, tools, tool.Grep, `{"pattern":"needle","context":1}`)
	wantStatus(t, r, "success")
	cut := strings.Repeat("é", grep.MaxLineBytes/2) + grep.LineCutMark
	equal(t, "matches", r.Data.Matches, []envelope.GrepMatch{
		{File: "f.txt", Line: 2, Text: cut, Before: []string{"one"}, After: []string{"three"}},
		{File: "f.txt", Line: 5, Text: "five needle", Before: []string{strings.Repeat("q", grep.MaxLineBytes) + grep.LineCutMark}},
	})
	// The literal only in the seam between two reads of a streamed line.
	seam := strings.Repeat("x", 4096-3) + "needle" + strings.Repeat("x", 5000)
	tools = setup(t, map[string]string{"g.txt": seam + "\n"})
	tools.GrepSizes = sizes
	r = run(t, tools, tool.Grep, `{"pattern":"needle","output_mode":"count"}`)
	equal(t, "counts", r.Data.Counts, []envelope.FileCount{{File: "g.txt", Count: 1}})
}

// A multiline search reads at most its maximum (shrunk here) of of a file: a larger
// one is searched in its beginning and the answer says so (partial, also
// when nothing was found).
func TestGrepMultilineSizeLimit(t *testing.T) {
	t.Parallel()
	tools := setup(t, map[string]string{"f.txt": "ab\ncd\n" + strings.Repeat("x", 200) + "\nab\ncd\n"})
	tools.GrepSizes = grep.TinySizes(64, 256, 100)
	r := run(t, tools, tool.Grep, `{"pattern":"b\\ncd","multiline":true}`)
	wantStatus(t, r, "partial")
	equal(t, "matches", r.matchLines(), []string{"f.txt:1: ab\ncd"})
	if r.Data.AbortedReason != envelope.AbortSizeLimit || !strings.Contains(r.Text, "[Partial: a file was too large to search whole in multiline mode") {
		t.Errorf("aborted %q, text %q", r.Data.AbortedReason, r.Text)
	}
	r = run(t, tools, tool.Grep, `{"pattern":"zz\\nq","multiline":true}`)
	wantStatus(t, r, "partial")
	if r.Data.AbortedReason != envelope.AbortSizeLimit || r.Error != nil {
		t.Errorf("nothing found: aborted %q, error %+v", r.Data.AbortedReason, r.Error)
	}
}

// A scan past grep.ScanPrefetchAfter files reads ahead of its workers, and
// the prefetcher places files in Grep's order as the workers do: the
// answer is the newest files first, exactly, whether the scan stops at
// its limit or reads every candidate; and a scan cut short by its
// deadline leaves no goroutine behind, the prefetcher's included.
func TestScanReadingAheadKeepsTheOrder(t *testing.T) {
	const n = 3*grep.ScanPrefetchAfter + 17
	root := testtree.Write(t, nil)
	base := time.Now().Add(-time.Hour)
	mtime := make(map[string]time.Time, n)
	for i := range n {
		rel := fmt.Sprintf("d%02d/f%04d.txt", i%37, i)
		abs := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte("a needle here\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i*7919%n) * time.Second) // a permutation of the ids
		setMtime(t, root, rel, mt)
		mtime[rel] = mt
	}
	want := make([]string, 0, n)
	for rel := range mtime {
		want = append(want, rel)
	}
	slices.SortFunc(want, func(a, b string) int { return mtime[b].Compare(mtime[a]) })

	tools := newTools(t, root)
	tools.Unlimited = true // limits past 1000, as the command line's
	for _, limit := range []int{grep.ScanPrefetchAfter + 500, n} {
		r := run(t, tools, tool.Grep, fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","limit":%d}`, limit))
		status := envelope.StatusSuccess
		if limit < n {
			status = envelope.StatusPartial // truncated
		}
		if r.Status != status || r.Data.Truncated != (limit < n) {
			t.Fatalf("limit %d: status %s, truncated %v: %s", limit, r.Status, r.Data.Truncated, r.Text)
		}
		equal(t, fmt.Sprintf("files, limit %d", limit), r.Data.Files, want[:limit])
	}

	// Cut short by its deadline, wherever it lands (before or after the
	// prefetcher started): nothing keeps running.
	g := runtime.NumGoroutine()
	for _, ms := range []int{1, 2, 5} {
		_ = tools.Run(context.Background(), tool.Grep, ".", []byte(fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","limit":100000,"timeout_ms":%d}`, ms)))
	}
	grep.WaitGoroutines(t, g)
}
