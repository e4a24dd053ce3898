// Package testtree writes fixture trees for tests: files given as
// slash-separated paths and contents, under a temporary root; opens them
// as rooted roots; changes them under a running test (ExchangeLoop); and
// takes a child process's free descriptors (LeaveOneDescriptor).
package testtree

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
)

// Write creates files (root-relative slash path → contents) under a new
// temporary directory and returns its real path (t.TempDir may sit behind
// a symlink).
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		File(t, root, p, c)
	}
	return root
}

// File writes contents to the root-relative slash path rel, creating its
// directories.
func File(t testing.TB, root, rel, contents string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Chmod sets the mode of the root-relative slash path rel, failing the
// test on an error, and gives it mode 0o755 back when the test ends, so
// that a directory a test made unreadable can be removed with the test's
// temporary directory.
func Chmod(t testing.TB, root, rel string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o755) })
}

// Open opens dir as a rooted.Root, closed when the test ends.
func Open(t testing.TB, dir string) *rooted.Root {
	t.Helper()
	r, err := rooted.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Names lists the names in the directory dir, sorted.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// ExchangeLoop exchanges the entries a and b (absolute paths; typically a
// directory and a symlink to one outside the root) atomically (Linux's
// renameat2 RENAME_EXCHANGE, macOS's renamex_np RENAME_SWAP) in a loop on
// a goroutine of its own, until the returned stop is called; stop waits
// for the goroutine and returns how many exchanges it made. Where the
// system has no atomic exchange (FreeBSD) the test is skipped.
func ExchangeLoop(t testing.TB, a, b string) (stop func() int64) {
	t.Helper()
	if exchange == nil {
		t.Skip("testtree: no atomic exchange of two names on this system")
	}
	done := make(chan struct{})
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := exchange(a, b); err != nil {
				t.Errorf("exchange %s %s: %v", a, b, err)
				return
			}
			n.Add(1)
			runtime.Gosched()
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return n.Load()
	}
}

// SetNoFile sets the process's RLIMIT_NOFILE, soft and hard, to limit.
func SetNoFile(limit uint64) error {
	var lim unix.Rlimit
	setCur(&lim, limit)
	lim.Max = lim.Cur
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
}

// LeaveOneDescriptor, for a child process that tests running out of file
// descriptors, lowers its RLIMIT_NOFILE to limit and takes every free
// descriptor below it but one (opening /dev/null until EMFILE). release
// closes what it took.
func LeaveOneDescriptor(limit uint64) (release func(), err error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil, err
	}
	setCur(&lim, limit)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil, err
	}
	var held []int
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			break // EMFILE: every number below the limit is taken
		}
		held = append(held, fd)
	}
	if len(held) == 0 {
		return nil, errors.New("testtree: no descriptor to free")
	}
	unix.Close(held[len(held)-1])
	return func() {
		for _, fd := range held[:len(held)-1] {
			unix.Close(fd)
		}
	}, nil
}
