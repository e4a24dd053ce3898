package index_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// Grep's answers through block filters (blocks.go) equal the walk's:
// these tests answer through the query layer, with the filters' sizes
// shrunk (export_test.go) so that small files get them.

// medium makes every file from 1 KiB a medium one: its filter is built
// after a scan that found nothing in it, and only then.
var medium = index.SmallBlocks{LargeFile: 1 << 30}

// blockReads records the blocks filtered scans read, by file.
type blockReads struct {
	mu sync.Mutex
	m  map[string][]int
}

// smallCache returns a cache of block filters (1 MiB of them) that apply
// to the small files of a test (index.SmallBlockCache, tuned by o),
// closed when the test ends, and the record of the blocks its scans read.
func smallCache(t *testing.T, o index.SmallBlocks) (*index.BlockCache, *blockReads) {
	r := &blockReads{m: map[string][]int{}}
	o.Read = func(rel string, block int) {
		r.mu.Lock()
		r.m[rel] = append(r.m[rel], block)
		r.mu.Unlock()
	}
	c := index.SmallBlockCache(1<<20, o)
	t.Cleanup(c.Close)
	return c, r
}

func (r *blockReads) take() map[string][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	r.m = map[string][]int{}
	return m
}

// blockTree writes large files of random lines: words, a unique token per
// few lines, long lines, a BOM, no final line break, a NUL, a line over
// blockMax.
func blockTree(t *testing.T) string {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"alpha", "Beta", "gamma", "func", "main", "ſtar", "Kelvin", "KELVIN", "x=1", "(y)", "\t", "é"}
	line := func(i int) string {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		if i%7 == 0 {
			fmt.Fprintf(&b, "tok%04d", i)
		}
		if r.IntN(40) == 0 {
			b.WriteString(strings.Repeat("long", 100+r.IntN(200)))
		}
		return b.String()
	}
	file := func(n int, first string) string {
		var b strings.Builder
		b.WriteString(first)
		for i := range n {
			b.WriteString(line(i) + "\n")
		}
		return b.String()
	}
	files := map[string]string{
		"a.txt":          file(300, ""),
		"bom.txt":        file(200, "\uFEFF"),
		"nofinal.txt":    strings.TrimSuffix(file(150, ""), "\n"),
		"dir/b.go":       file(400, "package main\n"),
		"small.txt":      "tok0007 alpha\n",
		"bin.dat":        "\x00" + file(200, ""),
		"hugeline.txt":   file(50, "") + strings.Repeat("gamma ", 3000) + "tok9999\n" + file(50, ""),
		"dir/sub/c.json": file(250, "{\n"),
	}
	return testtree.Write(t, files)
}

// Grep through block filters gives the walk's answers, whole envelopes,
// for literals, anchors, folds, regexps and every output mode, the first
// time (reading the files whole, their filters built after) and the next
// (through the filters); and reads fewer blocks than the files hold.
func TestBlockFilteredGrepEqualsWalk(t *testing.T) {
	t.Parallel()
	passes := 2
	if testtree.RaceEnabled {
		passes = 1 // CI runs both without -race
	}
	testBlockFilteredGrepEqualsWalk(t, index.SmallBlocks{}, passes)
}

// The same with every file medium: each pass after the first searches
// through more filters, built since from the files a pass found nothing
// in.
func TestMediumBlockFilteredGrepEqualsWalk(t *testing.T) {
	t.Parallel()
	passes := 3
	if testtree.RaceEnabled {
		passes = 1 // CI runs the three without -race
	}
	testBlockFilteredGrepEqualsWalk(t, medium, passes)
}

func testBlockFilteredGrepEqualsWalk(t *testing.T, o index.SmallBlocks, passes int) {
	root := blockTree(t)
	walk, idx := buildTools(t, root)
	var built atomic.Int64
	o.Built = func(scans int) {
		if scans != 0 {
			t.Errorf("the builder took a file while %d scans ran", scans)
		}
		built.Add(1)
	}
	cache, reads := smallCache(t, o)
	idx.Searcher = query.Indexed{Index: idx.Searcher.(query.Indexed).Index, Blocks: cache}
	patterns := []string{"tok0007", "tok0210", "tok9999", "tok02", "^tok", "tok0014$", "^alpha", "gamma $",
		"Kelvin", "(?i)kelvin", "STAR", "ſtar", "\\bmain\\b", "func\\s+main", "x=1 \\(y\\)", "é", "alpha.*tok01",
		"longlonglong", "nomatchanywhere", "t.k0", "[a-z]+0\\d{3}"}
	for pass := range passes {
		cache.Settle()
		for _, pat := range patterns {
			for _, mode := range []string{"content", "files_with_matches", "count"} {
				for _, cs := range []bool{true, false} {
					args := jsonArgs("pattern", pat, "output_mode", mode, "case_sensitive", cs, "limit", 1000)
					diffEngines(t, walk, idx, "Grep", args)
				}
			}
		}
		if t.Failed() {
			t.Fatalf("pass %d differs", pass)
		}
	}
	if built.Load() == 0 {
		t.Error("no filter built")
	}
	reads.take()
	diffEngines(t, walk, idx, "Grep", jsonArgs("pattern", "tok0210", "case_sensitive", true))
	got := reads.take()
	if len(got["a.txt"]) == 0 || len(got["a.txt"]) > 2 {
		t.Errorf("tok0210 read blocks %v of a.txt, want its block (and at most one hash collision)", got["a.txt"])
	}
	if len(got["small.txt"]) > 0 || len(got["bin.dat"]) > 0 {
		t.Errorf("blocks read of a small or binary file: %v", got)
	}
}

// A file rewritten with the same size and its mtime put back, or replaced
// by another of the same size and mtime, is searched as it is now: its
// filter is rebuilt (a new ctime, a new inode), never trusted stale. The
// needle moves to another block each time, one a stale filter would skip
// (the index, with no watcher here, still proposes the file).
func TestBlockFilterFollowsContent(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "line %04d filler filler filler\n", i)
	}
	text := b.String()
	at := func(line int, word string) string { // word (9 bytes) in place of "line NNNN" of that line
		k := strings.Index(text, fmt.Sprintf("line %04d", line-1))
		return text[:k] + word + text[k+9:]
	}
	root := testtree.Write(t, map[string]string{"f.txt": at(301, "oldneedle")})
	_, idx := buildTools(t, root)
	cache, reads := smallCache(t, index.SmallBlocks{})
	idx.Searcher = query.Indexed{Index: idx.Searcher.(query.Indexed).Index, Blocks: cache}
	grep := func() []string {
		t.Helper()
		return matchLines(t, idx, jsonArgs("pattern", "needle", "case_sensitive", true))
	}
	// throughFilter greps once the builder has built what the last scan
	// asked for, and checks that the file was read through a filter.
	throughFilter := func(what string, want []string) {
		t.Helper()
		cache.Settle()
		equal(t, what+", through the filter", grep(), want)
		if len(reads.take()["f.txt"]) == 0 {
			t.Fatalf("%s: the large file was not read through its filter", what)
		}
	}
	equal(t, "first", grep(), []string{"f.txt:301: oldneedle filler filler filler"})
	throughFilter("first", []string{"f.txt:301: oldneedle filler filler filler"})
	p := filepath.Join(root, "f.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same mtime, the needle elsewhere.
	if err := os.WriteFile(p, []byte(at(51, "newneedle")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	equal(t, "after an in-place rewrite", grep(), []string{"f.txt:51: newneedle filler filler filler"})
	throughFilter("after an in-place rewrite", []string{"f.txt:51: newneedle filler filler filler"})
	// Replaced by rename: another inode, same size and mtime.
	tmp := filepath.Join(root, "g.tmp")
	if err := os.WriteFile(tmp, []byte(at(151, "renneedle")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	equal(t, "after a rename over", grep(), []string{"f.txt:151: renneedle filler filler filler"})
	throughFilter("after a rename over", []string{"f.txt:151: renneedle filler filler filler"})
}

// A file changed within the racy window gets no filter: it is read whole
// (and the answers are the walk's).
func TestBlockFilterNotForRacyFiles(t *testing.T) {
	t.Parallel()
	root := blockTree(t)
	walk, idx := buildTools(t, root)
	var taken atomic.Int64
	cache, reads := smallCache(t, index.SmallBlocks{Racy: time.Hour, Built: func(int) { taken.Add(1) }})
	idx.Searcher = query.Indexed{Index: idx.Searcher.(query.Indexed).Index, Blocks: cache}
	for range 2 {
		for _, pat := range []string{"tok0007", "(?i)kelvin"} {
			diffEngines(t, walk, idx, "Grep", jsonArgs("pattern", pat))
		}
		cache.Settle()
	}
	if got := reads.take(); len(got) > 0 {
		t.Errorf("blocks read through filters of files written just now: %v", got)
	}
	if held, _ := cache.Filters(); held > 0 {
		t.Errorf("filters kept for files written just now: %d", held)
	}
	if taken.Load() > 0 {
		t.Errorf("the builder read %d files written just now, for no filter", taken.Load())
	}
}

// A medium file read whole for no match gets its filter after the scan,
// from the builder, and later scans read only the blocks it admits; a
// medium file that matched gets none, nor one that changed since the
// scan saw it, nor any once the cache is closed.
func TestMediumBlockFilter(t *testing.T) {
	t.Parallel()
	// Both words in the last eighth of the file, so that its masks keep
	// it a candidate, but never in one block.
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "filler %03d\n", i)
	}
	for i := range 10 {
		fmt.Fprintf(&b, "needle golf %02d\n", i)
	}
	for i := range 30 { // more than a block: none holds both halves
		fmt.Fprintf(&b, "filler %03d\n", i)
	}
	for i := range 10 {
		fmt.Fprintf(&b, "the gamma %02d\n", i)
	}
	root := testtree.Write(t, map[string]string{"m.txt": b.String(), "m2.txt": b.String() + "one needle gamma here\n"})
	_, idx := buildTools(t, root)
	cache, reads := smallCache(t, medium)
	idx.Searcher = query.Indexed{Index: idx.Searcher.(query.Indexed).Index, Blocks: cache}
	grep := func(pat string) []string {
		t.Helper()
		lines := matchLines(t, idx, jsonArgs("pattern", pat, "case_sensitive", true))
		slices.Sort(lines) // the two files' order is their mtimes'
		return lines
	}
	stamp := func(rel string) *unix.Stat_t {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, rel), &st); err != nil {
			t.Fatal(err)
		}
		return &st
	}

	equal(t, "first", grep("needle gamma"), []string{"m2.txt:651: one needle gamma here"})
	cache.Settle()
	if !cache.HasFilter(root, "m.txt", stamp("m.txt")) {
		t.Fatal("no filter built for the file that did not match")
	}
	if cache.HasFilter(root, "m2.txt", stamp("m2.txt")) {
		t.Error("a filter built for the file that matched")
	}
	if got := reads.take(); len(got) > 0 {
		t.Errorf("blocks read through filters on the first scan: %v", got)
	}
	equal(t, "again", grep("needle gamma"), []string{"m2.txt:651: one needle gamma here"})
	if got := reads.take(); len(got["m.txt"]) > 0 {
		t.Errorf("m.txt's blocks %v read, none of which holds both words", got["m.txt"])
	}
	equal(t, "through the filter", grep("golf 07"), []string{"m.txt:608: needle golf 07", "m2.txt:608: needle golf 07"})
	if got := reads.take(); len(got["m.txt"]) == 0 {
		t.Error("m.txt not read through its filter")
	}

	// A stamp the file no longer has: nothing is built.
	stale := stamp("m2.txt")
	stale.Mtim.Nsec--
	cache.AskLater(root, "m2.txt", stale)
	cache.Settle()
	if held, _ := cache.Filters(); held != 1 {
		t.Errorf("%d filters after a stale request, want m.txt's only", held)
	}

	// Closed: nothing is queued or built.
	cache.Close()
	cache.AskLater(root, "m2.txt", stamp("m2.txt"))
	cache.Settle()
	if held, waiting := cache.Filters(); held != 1 || waiting != 0 {
		t.Errorf("after Close: %d filters, %d waiting", held, waiting)
	}
}

// buildTools indexes root and returns the walk's tools and the index's.
func buildTools(t testing.TB, root string) (walk, idx *query.Tools) {
	t.Helper()
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tools(t, root, ix)
}

// jsonArgs builds an args object from key/value pairs.
func jsonArgs(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// matchLines runs a Grep and renders its matches as "file:line: text".
func matchLines(t testing.TB, tools *query.Tools, args string) []string {
	t.Helper()
	out := []string{}
	for _, m := range run(t, tools, tool.Grep, args).Data.(*envelope.GrepData).Matches {
		out = append(out, fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Text))
	}
	return out
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

// comparableEnvelope runs the query and returns its envelope in the
// form two engines' answers compare equal in (envelopetest.EngineNeutral).
func comparableEnvelope(t *testing.T, tools *query.Tools, tool, args string) map[string]any {
	t.Helper()
	return envelopetest.EngineNeutral(t, tools.Run(context.Background(), tool, ".", json.RawMessage(args)))
}

// diffEngines fails when the index's answer differs from the walk's.
func diffEngines(t *testing.T, walk, idx *query.Tools, tool, args string) {
	t.Helper()
	w := comparableEnvelope(t, walk, tool, args)
	i := comparableEnvelope(t, idx, tool, args)
	if !reflect.DeepEqual(w, i) {
		wb, _ := json.MarshalIndent(w, "", " ")
		ib, _ := json.MarshalIndent(i, "", " ")
		t.Errorf("%s %s: index differs from walk\nwalk:  %.3000s\nindex: %.3000s", tool, args, wb, ib)
	}
}
