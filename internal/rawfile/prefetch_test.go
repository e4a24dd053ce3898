//go:build linux

package rawfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/internal/testtree"
)

// A prefetcher asks for files within its window past the readers'
// position only, waits for the readers to move on, and once they reach
// the end has taken every batch; Stop ends its goroutines however far
// they are.
func TestPrefetchStaysWithinItsWindow(t *testing.T) {
	root := oneFileRoot(t)

	const n = 4*prefetchWindow + 5
	var mu sync.Mutex
	reached, over := 0, []int(nil)
	asked := make(map[int]bool)
	p := StartPrefetch(root, 0, n, func(i int) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if i >= reached+prefetchWindow+prefetchBatch {
			over = append(over, i)
		}
		asked[i] = true
		return "f", true
	})
	// stalled waits until every goroutine waits for the readers or has
	// ended, the state a prefetcher reaches once its window is asked for.
	stalled := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			p.mu.Lock()
			idle := p.next >= min(p.n, p.reached+prefetchWindow) && p.waiting == p.started || p.next >= p.n
			p.mu.Unlock()
			if idle {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the prefetcher neither waited for the readers nor ended")
			}
			runtime.Gosched()
		}
	}
	for _, r := range []int{0, prefetchWindow / 2, 3 * prefetchWindow} {
		mu.Lock()
		reached = r
		mu.Unlock()
		p.Reached(r)
		stalled()
	}
	p.Stop()
	if len(over) > 0 {
		t.Fatalf("asked for files past the window: %v", over[:min(len(over), 5)])
	}
	if len(asked) == 0 {
		t.Fatal("asked for nothing")
	}

	// Stopped while it waits, or with nothing ever reached: it ends.
	q := StartPrefetch(root, 0, n, func(int) (string, bool) { return "f", true })
	q.Stop()

	// Too few files: no prefetcher, and a nil one is a no-op.
	if q := StartPrefetch(root, 0, prefetchMin-1, func(int) (string, bool) { return "f", true }); q != nil {
		q.Stop()
		t.Fatal("a prefetcher for fewer than prefetchMin files")
	}
	var none *Prefetcher
	none.Reached(3)
	none.Stop()
}

// oneFileRoot returns a root holding one file, "f", closed when the
// test ends.
func oneFileRoot(t *testing.T) *rooted.Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return testtree.Open(t, dir)
}

// After a batch of cached files the next warmSkip batches are left to
// the readers; after one with a file to wait for, the next is taken; and
// none the readers have passed.
func TestPrefetchSkipsAheadOfCachedFiles(t *testing.T) {
	p := &Prefetcher{n: 1 << 20}
	p.moved = sync.NewCond(&p.mu)
	if lo, ok := p.take(false); !ok || lo != 0 {
		t.Fatalf("first batch at %d, %v", lo, ok)
	}
	if lo, ok := p.take(true); !ok || lo != (1+warmSkip)*prefetchBatch {
		t.Fatalf("after a cached batch: %d, %v; want %d", lo, ok, (1+warmSkip)*prefetchBatch)
	}
	if lo, ok := p.take(false); !ok || lo != (2+warmSkip)*prefetchBatch {
		t.Fatalf("after a batch read ahead: %d, %v", lo, ok)
	}
	// Files the readers have passed are not taken, nor after a wait for
	// them to move on.
	p.Reached(5000)
	if lo, ok := p.take(false); !ok || lo != 5000 {
		t.Fatalf("after the readers reached 5000: %d, %v", lo, ok)
	}
	p.next = p.reached + prefetchWindow // the window is taken: take waits
	got := make(chan int)
	go func() { lo, _ := p.take(false); got <- lo }()
	for {
		p.mu.Lock()
		w := p.waiting
		p.mu.Unlock()
		if w == 1 {
			break
		}
		runtime.Gosched()
	}
	p.Reached(5000 + 3*prefetchWindow)
	if lo := <-got; lo != 5000+3*prefetchWindow {
		t.Fatalf("after waiting while the readers passed it: %d; want %d", lo, 5000+3*prefetchWindow)
	}
}

// The prefetcher opens through the root like every reader: a link to a
// file outside the root (or in a directory link) is never opened, a FIFO
// does not block it, and what is not there or not a regular file is left
// to the reader. An inotify watch on the outside file sees no open.
func TestPrefetchNeverLeavesTheRoot(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, outside, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	for name, mk := range map[string]func(string) error{
		"link":    func(p string) error { return os.Symlink(secret, p) },
		"dirlink": func(p string) error { return os.Symlink(outside, p) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"sub":     func(p string) error { return os.Mkdir(p, 0o755) },
		"empty":   func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"file":    func(p string) error { return os.WriteFile(p, []byte("data\n"), 0o644) },
	} {
		if err := mk(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	root := testtree.Open(t, dir)
	names := []string{"file", "link", "dirlink/secret", "fifo", "sub", "empty", "missing", "../" + filepath.Base(outside) + "/secret"}
	fds := openFDs(t)
	const n = 8 * prefetchBatch // within the window: no Reached needed
	var mu sync.Mutex
	seen := 0
	// Every file taken for uncached: each is opened and asked for.
	p := startPrefetch(root, 0, n, func(i int) (string, bool) {
		mu.Lock()
		seen++
		mu.Unlock()
		return names[i%len(names)], true
	}, uncached)
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }() // every batch taken and asked for
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the prefetcher did not end: a prefetch blocked")
	}
	p.Stop()
	if seen == 0 {
		t.Fatal("asked for nothing")
	}
	var buf [4096]byte
	k, err := unix.Read(in, buf[:])
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		t.Fatal(err)
	}
	if k > 0 {
		t.Fatalf("a file outside the root was opened or read (%s)", events(buf[:k]))
	}
	if now := openFDs(t); now != fds {
		t.Fatalf("%d descriptors open after, %d before", now, fds)
	}
	if seen < n || p.started != prefetchers {
		t.Fatalf("asked for %d of %d files with %d goroutines; want all with %d", seen, n, p.started, prefetchers)
	}
}

// On a cached tree one goroutine probes the first file of a batch in
// warmSkip+1 and no other starts.
func TestPrefetchProbesACachedTreeSparsely(t *testing.T) {
	root := oneFileRoot(t)
	const n = prefetchWindow // within the window: no Reached needed
	const every = (warmSkip + 1) * prefetchBatch
	var mu sync.Mutex
	var asked []int
	p := startPrefetch(root, 0, n, func(i int) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, i)
		return "f", true
	}, cached)
	p.wg.Wait()
	p.Stop()
	if len(asked) != n/every || p.started != 1 {
		t.Fatalf("asked for %v with %d goroutines; want %d files with 1", asked, p.started, n/every)
	}
	for k, i := range asked {
		if i != k*every {
			t.Fatalf("asked for %v; want the first file of every %dth batch", asked, warmSkip+1)
		}
	}
}

// cached and uncached stand in for readNoWait: every file is taken for
// cached, or for not cached and asked for.
func cached(int, [][]byte) bool   { return true }
func uncached(int, [][]byte) bool { return false }

// events names the inotify events in b.
func events(b []byte) string {
	s := ""
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		s += fmt.Sprintf("mask %#x; ", ev.Mask)
		b = b[unix.SizeofInotifyEvent+int(ev.Len):]
	}
	return s
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es)
}

// Stop ends a goroutine within the file it is asking for, not at the end
// of its batch (on a cold disk each ask may wait for it).
func TestPrefetchStopsMidBatch(t *testing.T) {
	root := oneFileRoot(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	calls := 0
	p := startPrefetch(root, 0, 4*prefetchBatch, func(i int) (string, bool) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
		return "f", true
	}, uncached)
	<-entered
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	deadline := time.Now().Add(10 * time.Second)
	for !p.halt.Load() {
		if time.Now().After(deadline) {
			t.Fatal("Stop did not mark the prefetcher stopped")
		}
		runtime.Gosched()
	}
	close(release)
	<-stopped
	if calls != 1 {
		t.Fatalf("%d files looked at after Stop began; want the one in hand", calls-1)
	}
}
