package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
)

// A scan past scanPrefetchAfter files reads ahead of its workers, and
// the prefetcher places files in Grep's order as the workers do: the
// answer is the newest files first, exactly, whether the scan stops at
// its limit or reads every candidate; and a scan cut short by its
// deadline leaves no goroutine behind, the prefetcher's included.
func TestScanReadingAheadKeepsTheOrder(t *testing.T) {
	const n = 3*scanPrefetchAfter + 17
	root := newRoot(t, nil)
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
	for _, limit := range []int{scanPrefetchAfter + 500, n} {
		r := run(t, tools, ToolGrep, fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","limit":%d}`, limit))
		status := envelope.StatusSuccess
		if limit < n {
			status = envelope.StatusPartial // truncated
		}
		if r.Status != string(status) || r.Data.Truncated != (limit < n) {
			t.Fatalf("limit %d: status %s, truncated %v: %s", limit, r.Status, r.Data.Truncated, r.Text)
		}
		equal(t, fmt.Sprintf("files, limit %d", limit), r.Data.Files, want[:limit])
	}

	// Cut short by its deadline, wherever it lands (before or after the
	// prefetcher started): nothing keeps running.
	g := runtime.NumGoroutine()
	for _, ms := range []int{1, 2, 5} {
		_ = tools.Run(context.Background(), ToolGrep, ".", []byte(fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","limit":100000,"timeout_ms":%d}`, ms)))
	}
	waitGoroutines(t, g)
}
