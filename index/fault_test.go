package index_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// Fault injection: a small DB damaged page by page (the file truncated at
// each page; each page zeroed; one byte of each page flipped) always
// opens in process without a panic, and every answer afterwards equals
// the walk's, whether the damage was found (the DB rebuilt) or harmless
// (a free page, the older meta page).
func TestDamagedDBPageByPage(t *testing.T) {
	ctx := context.Background()
	words := []string{"alpha", "beta", "gamma", "delta", "omega", "needle", "haystack", "Kappa"}
	r := rand.New(rand.NewPCG(5, 5))
	files := map[string]string{
		".ignore":    "skip/\n*.log\n",
		"skip/x.txt": "needle in an ignored directory\n",
		"x.log":      "needle in an ignored file\n",
		"bin.dat":    "needle\x00binary\n",
		"tiny.txt":   "ab",
	}
	for i := range 160 {
		var b bytes.Buffer
		fmt.Fprintf(&b, "file %d says", i)
		for range 3 + r.IntN(12) {
			b.WriteString(" " + words[r.IntN(len(words))])
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%6, i)] = b.String() + "\n"
	}
	root := testtree.Write(t, files)
	old := time.Now().Add(-time.Hour)
	for p := range files {
		setTimes(t, root, p, old)
	}
	pristine := filepath.Join(t.TempDir(), "ix.db")
	ix, _, err := index.OpenOrBuild(ctx, pristine, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Updates after the save, so that "delta", "stale" and "ignored" hold
	// records written by incremental transactions.
	testtree.File(t, root, "d1/f001.txt", "file 1 CHANGED needle\n")
	testtree.File(t, root, "d2/new.txt", "a new needle\n")
	testtree.File(t, root, "d3/new.log", "ignored needle\n")
	os.Remove(filepath.Join(root, "d4/f004.txt"))
	if err := ix.Apply(ctx, []string{"d1/f001.txt", "d2", "d3/new.log", "d4/f004.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	pages, ps, err := index.BoltPages(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if pages < 16 || int64(pages)*int64(ps) > int64(len(good)) {
		t.Fatalf("fixture: %d pages of %d bytes in a %d-byte file", pages, ps, len(good))
	}
	greps := []string{"needle", `file 1\d\b`, "says (alpha|omega)", "(?i)changed", "kappa beta"}
	want := [][]string{nil, nil, nil, {"d1/f001.txt:1:file 1 CHANGED needle"}, nil}
	globs := []string{"**/*.txt", "d3/*", "**/new*"}
	sameAnswers(t, "undamaged", root, mustOpen(t, ctx, pristine, root, nil, false), greps, want, globs)

	dir := t.TempDir()
	db := filepath.Join(dir, "ix.db")
	rebuilt := map[bool]int{}
	gogc := debug.SetGCPercent(100)
	debug.SetGCPercent(gogc)
	trial := func(name string, data []byte) {
		for _, n := range testtree.Names(t, dir) {
			os.Remove(filepath.Join(dir, n))
		}
		if err := os.WriteFile(db, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, rb, err := index.OpenOrBuild(ctx, db, root, nil)
		if err != nil {
			t.Fatalf("%s: OpenOrBuild: %v", name, err)
		}
		if got := debug.SetGCPercent(gogc); got != gogc {
			t.Fatalf("%s: GOGC %d after the open, want %d (a reopen left the collector paused)", name, got, gogc)
		}
		rebuilt[rb]++
		if err := ix.Check(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameAnswers(t, name, root, ix, greps, want, globs)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for p := range int(pages) + 2 {
		page := good[p*ps : (p+1)*ps]
		trial(fmt.Sprintf("truncated at page %d", p), good[:p*ps])
		damaged := bytes.Clone(good)
		clear(damaged[p*ps : (p+1)*ps])
		if !bytes.Equal(page, damaged[p*ps:(p+1)*ps]) {
			trial(fmt.Sprintf("page %d zeroed", p), damaged)
		}
		damaged = bytes.Clone(good)
		damaged[p*ps+r.IntN(ps)] ^= byte(1 + r.IntN(255))
		trial(fmt.Sprintf("page %d: one byte changed", p), damaged)
	}
	// Random damage anywhere: a few bytes changed, a run zeroed, a cut at
	// any length. INDEXD_CORRUPT_TRIALS sets how many (default 150; 30
	// under -race, as CI runs the 150 without it).
	extra := 150
	if testtree.RaceEnabled {
		extra = 30
	}
	if s := os.Getenv("INDEXD_CORRUPT_TRIALS"); s != "" {
		extra, _ = strconv.Atoi(s)
	}
	for i := range extra {
		damaged := bytes.Clone(good)
		switch i % 3 {
		case 0:
			for range 1 + r.IntN(8) {
				damaged[r.IntN(len(damaged))] ^= byte(1 + r.IntN(255))
			}
		case 1:
			at := r.IntN(len(damaged))
			clear(damaged[at:min(len(damaged), at+1+r.IntN(512))])
		case 2:
			damaged = damaged[:r.IntN(len(damaged))]
		}
		trial(fmt.Sprintf("random damage %d", i), damaged)
	}
	t.Logf("%d pages of %d bytes, %d random: %d trials reopened the DB, %d rebuilt it", pages, ps, extra, rebuilt[false], rebuilt[true])
}

// mustOpen opens the DB at path with OpenOrBuild and opts (nil: none)
// and checks whether it was rebuilt; the index is closed when the test
// ends.
func mustOpen(t *testing.T, ctx context.Context, path, root string, opts *index.OpenOptions, rebuilt bool) *index.Index {
	t.Helper()
	ix, rb, err := index.OpenOrBuild(ctx, path, root, opts)
	if err != nil || rb != rebuilt {
		t.Fatalf("OpenOrBuild %s: rebuilt=%v err=%v", path, rb, err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}
