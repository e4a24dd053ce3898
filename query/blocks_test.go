package query

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"
	"golang.org/x/sys/unix"
)

// shrinkBlocks makes block filters apply to the small files of a test:
// files from 1 KiB, blocks of 256 bytes or fewer once 96 bits are set (so
// both rules cut blocks), no racy window (a filter is built from a file
// written a moment ago).
func shrinkBlocks(t *testing.T, racy time.Duration) {
	t.Helper()
	minF, largeF, maxF, size, fill, bmax, rw := blockMinFile, blockLargeFile, blockMaxFile, blockSize, blockFill, blockMax, blockRacyWindow
	blockMinFile, blockLargeFile, blockMaxFile, blockSize, blockFill, blockMax, blockRacyWindow = 1<<10, 1<<10, 1<<20, 256, 96, 8<<10, racy
	t.Cleanup(func() {
		blockMinFile, blockLargeFile, blockMaxFile, blockSize, blockFill, blockMax, blockRacyWindow = minF, largeF, maxF, size, fill, bmax, rw
		testHookBlockRead = nil
	})
}

// mediumBlocks makes every file from 1 KiB a medium one: its filter is
// built after a scan that found nothing in it, and only then.
func mediumBlocks(t *testing.T) {
	t.Helper()
	shrinkBlocks(t, 0)
	blockLargeFile = 1 << 30
}

// settle waits until the cache's builder has nothing left to do.
func (c *BlockCache) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.building {
		c.changed.Wait()
	}
}

// blockReads records the blocks filtered scans read, by file.
type blockReads struct {
	mu sync.Mutex
	m  map[string][]int
}

func watchBlockReads(t *testing.T) *blockReads {
	r := &blockReads{m: map[string][]int{}}
	testHookBlockRead = func(rel string, block int) {
		r.mu.Lock()
		r.m[rel] = append(r.m[rel], block)
		r.mu.Unlock()
	}
	t.Cleanup(func() { testHookBlockRead = nil })
	return r
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
	files := fsTree{
		"a.txt":          file(300, ""),
		"bom.txt":        file(200, "\uFEFF"),
		"nofinal.txt":    strings.TrimSuffix(file(150, ""), "\n"),
		"dir/b.go":       file(400, "package main\n"),
		"small.txt":      "tok0007 alpha\n",
		"bin.dat":        "\x00" + file(200, ""),
		"hugeline.txt":   file(50, "") + strings.Repeat("gamma ", 3000) + "tok9999\n" + file(50, ""),
		"dir/sub/c.json": file(250, "{\n"),
	}
	return newRoot(t, files)
}

// Grep through block filters gives the walk's answers, whole envelopes,
// for literals, anchors, folds, regexps and every output mode, the first
// time (reading the files whole, their filters built after) and the next
// (through the filters); and reads fewer blocks than the files hold.
func TestBlockFilteredGrepEqualsWalk(t *testing.T) {
	shrinkBlocks(t, 0)
	testBlockFilteredGrepEqualsWalk(t, 2)
}

// The same with every file medium: each pass after the first searches
// through more filters, built since from the files a pass found nothing
// in.
func TestMediumBlockFilteredGrepEqualsWalk(t *testing.T) {
	mediumBlocks(t)
	testBlockFilteredGrepEqualsWalk(t, 3)
}

func testBlockFilteredGrepEqualsWalk(t *testing.T, passes int) {
	root := blockTree(t)
	walk, idx := buildTools(t, root)
	var built atomic.Int64
	testHookBlockBuild = func(scans int) {
		if scans != 0 {
			t.Errorf("the builder took a file while %d scans ran", scans)
		}
		built.Add(1)
	}
	t.Cleanup(func() { testHookBlockBuild = nil }) // after cache.Close
	cache := NewBlockCache(1 << 20)
	t.Cleanup(cache.Close)
	idx.Searcher = Indexed{Index: idx.Searcher.(Indexed).Index, Blocks: cache}
	reads := watchBlockReads(t)
	patterns := []string{"tok0007", "tok0210", "tok9999", "tok02", "^tok", "tok0014$", "^alpha", "gamma $",
		"Kelvin", "(?i)kelvin", "STAR", "ſtar", "\\bmain\\b", "func\\s+main", "x=1 \\(y\\)", "é", "alpha.*tok01",
		"longlonglong", "nomatchanywhere", "t.k0", "[a-z]+0\\d{3}"}
	for pass := range passes {
		cache.settle()
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
	shrinkBlocks(t, 0)
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "line %04d filler filler filler\n", i)
	}
	text := b.String()
	at := func(line int, word string) string { // word (9 bytes) in place of "line NNNN" of that line
		k := strings.Index(text, fmt.Sprintf("line %04d", line-1))
		return text[:k] + word + text[k+9:]
	}
	root := newRoot(t, fsTree{"f.txt": at(301, "oldneedle")})
	_, idx := buildTools(t, root)
	cache := NewBlockCache(1 << 20)
	t.Cleanup(cache.Close)
	idx.Searcher = Indexed{Index: idx.Searcher.(Indexed).Index, Blocks: cache}
	reads := watchBlockReads(t)
	grep := func() []string {
		t.Helper()
		return run(t, idx, "Grep", jsonArgs("pattern", "needle", "case_sensitive", true)).matchLines()
	}
	// throughFilter greps once the builder has built what the last scan
	// asked for, and checks that the file was read through a filter.
	throughFilter := func(what string, want []string) {
		t.Helper()
		cache.settle()
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
	shrinkBlocks(t, time.Hour)
	root := blockTree(t)
	walk, idx := buildTools(t, root)
	var taken atomic.Int64
	testHookBlockBuild = func(int) { taken.Add(1) }
	t.Cleanup(func() { testHookBlockBuild = nil }) // after cache.Close
	cache := NewBlockCache(1 << 20)
	t.Cleanup(cache.Close)
	idx.Searcher = Indexed{Index: idx.Searcher.(Indexed).Index, Blocks: cache}
	reads := watchBlockReads(t)
	for range 2 {
		for _, pat := range []string{"tok0007", "(?i)kelvin"} {
			diffEngines(t, walk, idx, "Grep", jsonArgs("pattern", pat))
		}
		cache.settle()
	}
	if got := reads.take(); len(got) > 0 {
		t.Errorf("blocks read through filters of files written just now: %v", got)
	}
	if len(cache.files) > 0 {
		t.Errorf("filters kept for files written just now: %d", len(cache.files))
	}
	if taken.Load() > 0 {
		t.Errorf("the builder read %d files written just now, for no filter", taken.Load())
	}
}

// The cache keeps at most its bound, dropping the least recently used.
func TestBlockCacheBound(t *testing.T) {
	shrinkBlocks(t, 0)
	data := []byte(strings.Repeat("some line of text\n", 200))
	bf := buildBlockFilter(data, fileStamp{size: int64(len(data))})
	c := NewBlockCache(2*bf.bytes() + bf.bytes()/2)
	for i := range 5 {
		c.put(blockKey{"/r", fmt.Sprint(i)}, buildBlockFilter(data, fileStamp{size: int64(len(data))}))
		if i == 2 {
			c.get(blockKey{"/r", "1"}, fileStamp{size: int64(len(data))}) // 1 is now more recent than 2
		}
	}
	var kept []string
	for k := range c.files {
		kept = append(kept, k.rel)
	}
	if len(kept) != 2 || c.used > c.max {
		t.Fatalf("kept %v (%d bytes of %d), want 2 within the bound", kept, c.used, c.max)
	}
	if c.files[blockKey{"/r", "4"}] == nil {
		t.Errorf("the newest filter was dropped: kept %v", kept)
	}
}

// A file dense in trigrams (base64) gets short blocks whose filters stay
// sparse, so a literal it does not hold admits few of them; every
// block is a run of whole lines with its first line's number.
func TestBlockFilterSparseOnDenseFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	for b.Len() < 256<<10 {
		for range 76 {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		b.WriteByte('\n')
	}
	data := []byte(b.String())
	bf := buildBlockFilter(data, fileStamp{})
	n := len(bf.starts) - 1
	if n < 2 {
		t.Fatalf("%d blocks", n)
	}
	for i := range n {
		from, to := int(bf.starts[i]), int(bf.starts[i+1])
		if from > 0 && data[from-1] != '\n' || data[to-1] != '\n' {
			t.Fatalf("block %d [%d,%d) is not a run of whole lines", i, from, to)
		}
		if want := 1 + strings.Count(string(data[:from]), "\n"); bf.lines[i] != want {
			t.Fatalf("block %d starts at line %d, want %d", i, bf.lines[i], want)
		}
		set := 0
		for _, w := range bf.bits[i*blockWords : (i+1)*blockWords] {
			set += bits.OnesCount64(w)
		}
		if set > blockFill+77 || to-from >= blockSize {
			t.Fatalf("block %d: %d bytes, %d bits set: not cut by its filter's fill (%d)", i, to-from, set, blockFill)
		}
	}
	admitted, tried := 0, 0
	for _, lit := range []string{"xyzzy", "qzxjv", "Quokka", "kqzvw", "ZZtop", "wvuts"} {
		if strings.Contains(strings.ToLower(string(data)), strings.ToLower(lit)) {
			continue
		}
		m, err := CompileMatcher(lit, MatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q := csindex.RegexpQuery(m.Syntax())
		for i := range n {
			if admits(q, bf.bits[i*blockWords:(i+1)*blockWords]) {
				admitted++
			}
		}
		tried += n
	}
	// Blocks of 16 KiB of this data admit 39% of the time (37 of 96).
	if tried == 0 || admitted*10 > tried {
		t.Errorf("absent literals admitted %d of %d blocks", admitted, tried)
	}
}

// A medium file read whole for no match gets its filter after the scan,
// from the builder, and later scans read only the blocks it admits; a
// medium file that matched gets none, nor one that changed since the
// scan saw it, nor any once the cache is closed.
func TestMediumBlockFilter(t *testing.T) {
	mediumBlocks(t)
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "needle golf %02d\n", i)
	}
	for i := range 30 { // more than a block: none holds both halves
		fmt.Fprintf(&b, "filler %02d\n", i)
	}
	for i := range 60 {
		fmt.Fprintf(&b, "the gamma %02d\n", i)
	}
	root := newRoot(t, fsTree{"m.txt": b.String(), "m2.txt": b.String() + "one needle gamma here\n"})
	_, idx := buildTools(t, root)
	cache := NewBlockCache(1 << 20)
	t.Cleanup(cache.Close)
	idx.Searcher = Indexed{Index: idx.Searcher.(Indexed).Index, Blocks: cache}
	reads := watchBlockReads(t)
	grep := func(pat string) []string {
		t.Helper()
		lines := run(t, idx, "Grep", jsonArgs("pattern", pat, "case_sensitive", true)).matchLines()
		slices.Sort(lines) // the two files' order is their mtimes'
		return lines
	}
	stamp := func(rel string) fileStamp {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, rel), &st); err != nil {
			t.Fatal(err)
		}
		return stampOf(&st)
	}

	equal(t, "first", grep("needle gamma"), []string{"m2.txt:151: one needle gamma here"})
	cache.settle()
	if cache.get(blockKey{root, "m.txt"}, stamp("m.txt")) == nil {
		t.Fatal("no filter built for the file that did not match")
	}
	if cache.get(blockKey{root, "m2.txt"}, stamp("m2.txt")) != nil {
		t.Error("a filter built for the file that matched")
	}
	if got := reads.take(); len(got) > 0 {
		t.Errorf("blocks read through filters on the first scan: %v", got)
	}
	equal(t, "again", grep("needle gamma"), []string{"m2.txt:151: one needle gamma here"})
	if got := reads.take(); len(got["m.txt"]) > 0 {
		t.Errorf("m.txt's blocks %v read, none of which holds both words", got["m.txt"])
	}
	equal(t, "through the filter", grep("golf 07"), []string{"m.txt:8: needle golf 07", "m2.txt:8: needle golf 07"})
	if got := reads.take(); len(got["m.txt"]) == 0 {
		t.Error("m.txt not read through its filter")
	}

	// A stamp the file no longer has: nothing is built.
	stale := stamp("m2.txt")
	stale.mtime--
	cache.later(blockKey{root, "m2.txt"}, stale)
	cache.settle()
	if len(cache.files) != 1 {
		t.Errorf("%d filters after a stale request, want m.txt's only", len(cache.files))
	}

	// Closed: nothing is queued or built.
	cache.Close()
	cache.later(blockKey{root, "m2.txt"}, stamp("m2.txt"))
	cache.settle()
	if len(cache.files) != 1 || len(cache.queue) != 0 {
		t.Errorf("after Close: %d filters, %d waiting", len(cache.files), len(cache.queue))
	}
}

// Close stops a builder that waits for the scans to end, drops what
// waits for it and returns; nothing is built after.
func TestBlockCacheCloseStopsWaitingBuilder(t *testing.T) {
	shrinkBlocks(t, 0)
	body := strings.Repeat("some line of text\n", 200)
	root := newRoot(t, fsTree{"a.txt": body, "b.txt": body})
	c := NewBlockCache(1 << 20)
	c.scanning(1) // a scan runs: the builder waits for it
	for _, rel := range []string{"a.txt", "b.txt"} {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, rel), &st); err != nil {
			t.Fatal(err)
		}
		c.later(blockKey{root, rel}, stampOf(&st))
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(generous):
		t.Fatal("Close did not return while the builder waited for a scan")
	}
	c.scanning(-1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.building || len(c.queue) > 0 || len(c.queued) > 0 || len(c.files) > 0 {
		t.Errorf("after Close: building %v, %d waiting, %d queued, %d filters", c.building, len(c.queue), len(c.queued), len(c.files))
	}
}

// A file rewritten over and over while the builder reads it gets a
// filter of bytes it held under the stamp the filter carries, or none,
// never of a read that caught it changing: each filter the cache holds
// is, byte for byte, that of the first stamp.size bytes of one version
// (a rewrite truncates the file and writes the new version, so its
// states are the growing prefixes of the versions). With the racy
// window at zero, as here, those passing states get filters too; in the
// daemon no filter is built from a file changed in the last two seconds,
// longer than a write takes and than a tick of the file system's clock,
// within which two states may share an mtime and ctime.
func TestBlockFilterBuiltWhileRewritten(t *testing.T) {
	shrinkBlocks(t, 0)
	var a, b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&a, "alpha line %04d of the first version\n", i)
		fmt.Fprintf(&b, "other line %04d, the second one, longer\n", i)
	}
	versions := []string{a.String(), b.String()}
	root := newRoot(t, fsTree{"f.txt": versions[0]})
	p := filepath.Join(root, "f.txt")
	// ofPrefix reports whether bf is the filter of some version's first
	// bf.stamp.size bytes.
	ofPrefix := func(bf *blockFilter) bool {
		for _, v := range versions {
			if n := int(bf.stamp.size); n <= len(v) {
				w := buildBlockFilter([]byte(v[:n]), fileStamp{})
				if slices.Equal(bf.starts, w.starts) && slices.Equal(bf.lines, w.lines) && slices.Equal(bf.bits, w.bits) {
					return true
				}
			}
		}
		return false
	}
	c := NewBlockCache(1 << 20)
	t.Cleanup(c.Close)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(p, []byte(versions[i%2]), 0o644)
		}
	}()
	key := blockKey{root, "f.txt"}
	built := 0
	for range 1000 {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		c.later(key, stampOf(&st))
		c.settle()
		c.mu.Lock()
		bf := c.files[key]
		delete(c.files, key)
		c.used = 0
		c.mu.Unlock()
		if bf == nil {
			continue
		}
		built++
		if !ofPrefix(bf) {
			t.Fatalf("a filter of bytes the file did not hold (%d blocks, stamped size %d)", len(bf.starts)-1, bf.stamp.size)
		}
	}
	close(stop)
	<-stopped
	t.Logf("%d filters built of 1000 asked for", built)
}
