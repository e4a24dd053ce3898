package index

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csindex "github.com/google/codesearch/index"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/testtree"
)

// Tests of the block filters and their cache. Grep's answers through
// them, against the walk's, are in blockanswers_test.go.

// generous bounds how long a test waits for what is due at once:
// reaching it is a failure, never a measurement.
const generous = 10 * time.Second

// settle waits until the cache's builder has nothing left to do.
func (c *BlockCache) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.building {
		c.changed.Wait()
	}
}

// The cache keeps at most its bound, dropping the least recently used.
func TestBlockCacheBound(t *testing.T) {
	t.Parallel()
	sz := smallBlockSizes(0)
	data := []byte(strings.Repeat("some line of text\n", 200))
	bf := buildBlockFilter(data, fileStamp{size: int64(len(data))}, &sz)
	c := newBlockCache(2*bf.bytes()+bf.bytes()/2, sz)
	for i := range 5 {
		c.put(blockKey{"/r", fmt.Sprint(i)}, buildBlockFilter(data, fileStamp{size: int64(len(data))}, &sz))
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
	t.Parallel()
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
	sz := defaultBlockSizes
	bf := buildBlockFilter(data, fileStamp{}, &sz)
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
		if set > sz.fill+77 || to-from >= sz.bytes {
			t.Fatalf("block %d: %d bytes, %d bits set: not cut by its filter's fill (%d)", i, to-from, set, sz.fill)
		}
	}
	admitted, tried := 0, 0
	for _, lit := range []string{"xyzzy", "qzxjv", "Quokka", "kqzvw", "ZZtop", "wvuts"} {
		if strings.Contains(strings.ToLower(string(data)), strings.ToLower(lit)) {
			continue
		}
		m, err := grep.CompileMatcher(lit, grep.MatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q := csindex.RegexpQuery(m.Syntax())
		for i := range n {
			if blockAdmits(q, bf.bits[i*blockWords:(i+1)*blockWords]) {
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

// Close stops a builder that waits for the scans to end, drops what
// waits for it and returns; nothing is built after.
func TestBlockCacheCloseStopsWaitingBuilder(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("some line of text\n", 200)
	root := testtree.Write(t, map[string]string{"a.txt": body, "b.txt": body})
	c := newBlockCache(1<<20, smallBlockSizes(0))
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
	t.Parallel()
	sz := smallBlockSizes(0)
	var a, b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&a, "alpha line %04d of the first version\n", i)
		fmt.Fprintf(&b, "other line %04d, the second one, longer\n", i)
	}
	versions := []string{a.String(), b.String()}
	root := testtree.Write(t, map[string]string{"f.txt": versions[0]})
	p := filepath.Join(root, "f.txt")
	// ofPrefix reports whether bf is the filter of some version's first
	// bf.stamp.size bytes.
	ofPrefix := func(bf *blockFilter) bool {
		for _, v := range versions {
			if n := int(bf.stamp.size); n <= len(v) {
				w := buildBlockFilter([]byte(v[:n]), fileStamp{}, &sz)
				if slices.Equal(bf.starts, w.starts) && slices.Equal(bf.lines, w.lines) && slices.Equal(bf.bits, w.bits) {
					return true
				}
			}
		}
		return false
	}
	c := newBlockCache(1<<20, sz)
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
