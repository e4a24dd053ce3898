package rawfile

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
)

// Reading ahead of a cold page cache.
//
// A reader that opens and reads files one after another waits for the
// disk on every file whose pages are not cached, and a build or a burst
// has only as many readers as processors: the disk sees two requests at
// a time. A Prefetcher asks the kernel to start reading the files ahead
// of their readers, from a few goroutines of its own, each doing per
// file an open, an fstat, a one-byte read that fails rather than wait
// when the file's first page is not cached (preadv2 RWF_NOWAIT), and for
// such a file posix_fadvise(WILLNEED), which queues the reads and
// returns; the readers then find the pages cached or on their way.
// Measured on a 200k-file tree (1.2 GB) whose page cache was dropped:
// two goroutines reading every file, 9.0 s alone and 3.1 s with four
// goroutines asking up to 512 files ahead; the index build of that tree,
// 22.1-22.3 s alone and 8.6 s with its files asked up to 2048 ahead
// (8.4-9.2 s at 8192, so no further), 6.6-6.9 s either way when warm.
//
// What is asked of one file is bounded (prefetchFileMax), so that the
// window, counted in files, stays within what a page cache keeps.
//
// A warm tree costs a probe, not the read-ahead, and one goroutine: the
// first file of a batch that can be probed stands for it, and when it is cached the batch
// and the next warmSkip are left to the readers, so a cached tree pays
// one probe per (warmSkip+1)·prefetchBatch files. The first file found
// not cached starts the other goroutines.
//
// Linux only (prefetch_linux.go): other systems have no RWF_NOWAIT probe,
// and there StartPrefetch starts nothing, so readers wait for the disk
// file by file (macOS's fcntl F_RDADVISE and FreeBSD's posix_fadvise
// could ask ahead, without a probe; not done).
//
// The prefetcher opens files through the root like every reader (no
// symlink followed, nothing outside the root opened), reads one byte of
// a regular file only, and changes nothing: a file it cannot open or that
// is not regular is left to the reader, who reports it as usual.

// Prefetch tuning.
const (
	prefetchers    = 4                 // goroutines
	prefetchWindow = 2048              // files past the readers' position, at most
	prefetchBatch  = 32                // files a goroutine takes at a time
	warmSkip       = 31                // batches left unprobed after a cached one
	prefetchMin    = 2 * prefetchBatch // fewer files: no prefetcher
	// prefetchFileMax bounds what is asked of one file: the window is
	// counted in files, and 2048 large files asked whole could be more
	// than the page cache keeps (the kernel's own read-ahead follows a
	// reader past it).
	prefetchFileMax = 256 << 10
)

// Prefetcher reads ahead of readers that take files 0 … n−1 roughly in
// order and report their position with Reached. Its goroutines are its
// own: Stop ends them and waits for them, and must be called.
type Prefetcher struct {
	root  *rooted.Root
	n     int
	path  func(i int) (rel string, ok bool)
	probe func(fd int, iov [][]byte) bool // readNoWait, or a test's stand-in

	mu      sync.Mutex
	moved   *sync.Cond
	reached int // the readers have taken the files below
	next    int // the next file a goroutine takes
	waiting int // goroutines waiting for the readers
	started int // goroutines started
	stopped bool
	halt    atomic.Bool // stopped, for the goroutines between files
	wg      sync.WaitGroup
}

// StartPrefetch starts reading ahead of the readers of files from … n−1
// beneath root (the readers have taken those below from), the first
// prefetchFileMax bytes of each.
// path(i) returns file i's root-relative path, or ok=false for an entry
// that will not be read (a directory, a symlink); it is called from the
// prefetcher's goroutines while the readers run, so what it reads must
// not change until Stop returns.
//
// For fewer than prefetchMin files it starts nothing and returns nil (a
// valid Prefetcher that does nothing): their readers wait for no more
// than a few reads. So it does on systems but Linux.
func StartPrefetch(root *rooted.Root, from, n int, path func(i int) (rel string, ok bool)) *Prefetcher {
	return startPrefetch(root, from, n, path, readNoWait)
}

// startPrefetch is StartPrefetch with probe telling whether a file's
// first page is cached (readNoWait; this package's tests have every file
// taken for cached, or for uncached).
func startPrefetch(root *rooted.Root, from, n int, path func(i int) (rel string, ok bool), probe func(fd int, iov [][]byte) bool) *Prefetcher {
	if n-from < prefetchMin || !prefetchSupported {
		return nil
	}
	p := &Prefetcher{root: root, n: n, path: path, probe: probe, reached: from, next: from}
	p.moved = sync.NewCond(&p.mu)
	p.started = 1
	p.wg.Go(p.run)
	return p
}

// spawn starts the other goroutines, once a file not cached is found.
func (p *Prefetcher) spawn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.started < prefetchers && !p.stopped; p.started++ {
		p.wg.Go(p.run)
	}
}

// Reached reports that the readers have taken every file below i. A nil
// Prefetcher (none started) ignores it.
func (p *Prefetcher) Reached(i int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i > p.reached {
		p.reached = i
		if p.waiting > 0 {
			p.moved.Broadcast()
		}
	}
}

// Stop ends the prefetcher's goroutines and waits for them, each within
// the file it is asking for; a nil Prefetcher has none.
func (p *Prefetcher) Stop() {
	if p == nil {
		return
	}
	p.halt.Store(true)
	p.mu.Lock()
	p.stopped = true
	p.moved.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// take returns the next batch's first file, or false once every file
// has been taken or the prefetcher stopped; after a batch whose files
// were all cached (warm), it first skips warmSkip batches, and it never
// takes a file the readers have passed.
func (p *Prefetcher) take(warm bool) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if warm {
		p.next += warmSkip * prefetchBatch
	}
	for {
		p.next = max(p.next, p.reached) // the readers may have passed it while this waited
		if p.stopped || p.next >= p.n || p.next < p.reached+prefetchWindow {
			break
		}
		p.waiting++
		p.moved.Wait()
		p.waiting--
	}
	if p.stopped || p.next >= p.n {
		return 0, false
	}
	lo := p.next
	p.next += prefetchBatch
	return lo, true
}

func (p *Prefetcher) run() {
	var one [1]byte
	iov := [][]byte{one[:]}
	warm := false
	for {
		lo, ok := p.take(warm)
		if !ok {
			return
		}
		// The batch's first file that can be probed stands for it:
		// cached, the batch is taken for cached; not, every file of it
		// is asked for, and the other goroutines start if they have not.
		// A batch with no such file counts as cached.
		warm = true
		for i := lo; i < min(lo+prefetchBatch, p.n) && !p.halt.Load(); i++ {
			rel, ok := p.path(i)
			if !ok {
				continue
			}
			cached, probed := p.ask(rel, iov)
			if warm && cached && probed {
				break
			}
			if warm && !cached {
				warm = false
				p.spawn()
			}
		}
	}
}

// ask asks the kernel to read the file at rel ahead unless its first
// page is cached, and reports whether it was; probed is false for a
// file that could not be probed (gone, not regular, empty), which says
// nothing of the cache.
func (p *Prefetcher) ask(rel string, iov [][]byte) (cached, probed bool) {
	fd, err := p.root.OpenFile(rel)
	if err != nil {
		return true, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size == 0 {
		return true, false
	}
	if p.probe(fd, iov) {
		return true, true
	}
	willNeed(fd, min(st.Size, prefetchFileMax))
	return false, true
}
