//go:build linux

package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
)

// Directories created with files in them before their watch can exist
// (mkdir -p a/b/c, then files at every level, at once) are all found:
// each new directory is watched, then listed.
func TestMkdirPThenFiles(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "seed.txt", "seed\n")
	w, ix := start(t, root, Options{})
	for i := range 30 {
		base := fmt.Sprintf("m%d", i)
		mkdirs(t, root, base+"/b/c/d")
		var want []string
		for _, rel := range []string{base + "/f.txt", base + "/b/f.txt", base + "/b/c/f.txt", base + "/b/c/d/f.txt", base + "/b/c/d/g.txt"} {
			writeFile(t, root, rel, "token "+strings.ReplaceAll(rel, "/", "_")+"\n")
			want = append(want, rel)
		}
		syncNow(t, w)
		slices.Sort(want)
		if got := paths(ix, base); !slices.Equal(got, want) {
			t.Fatalf("after mkdir -p: got %q, want %q", got, want)
		}
		// The deepest directory is watched: a later write there is seen.
		writeFile(t, root, base+"/b/c/d/late.txt", "late\n")
		syncNow(t, w)
		if !has(ix, base+"/b/c/d/late.txt") {
			t.Fatalf("%s/b/c/d is not watched", base)
		}
	}
	if got := w.State().Dirs; got != 1+30*4 {
		t.Errorf("Dirs = %d, want %d", got, 1+30*4)
	}
}

// A directory renamed, moved out of the root and back, and deleted: the
// index follows the whole subtree, and so do the watches.
func TestDirRenameAndDelete(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	outside := tempRoot(t)
	for _, rel := range []string{"d/x/y/f1.txt", "d/x/y/f2.txt", "d/z/f3.txt", "keep/k.txt"} {
		writeFile(t, root, rel, "content of "+rel+"\n")
	}
	w, ix := startDB(t, root, Options{})
	dirs := w.State().Dirs // root, d, d/x, d/x/y, d/z, keep

	must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
	syncNow(t, w)
	if got := paths(ix, "d"); len(got) != 0 {
		t.Fatalf("after rename, d still holds %q", got)
	}
	if got, want := paths(ix, "e"), []string{"e/x/y/f1.txt", "e/x/y/f2.txt", "e/z/f3.txt"}; !slices.Equal(got, want) {
		t.Fatalf("after rename, e holds %q, want %q", got, want)
	}
	if got := w.State().Dirs; got != dirs {
		t.Errorf("Dirs = %d after rename, want %d", got, dirs)
	}
	// The watches moved with the directory and carry its new name.
	writeFile(t, root, "e/x/y/f1.txt", "renamedtoken\n")
	writeFile(t, root, "e/x/y/new.txt", "newtoken\n")
	syncNow(t, w)
	if !isCandidate(t, ix, "renamedtoken", "e/x/y/f1.txt") || !has(ix, "e/x/y/new.txt") || has(ix, "d/x/y/new.txt") {
		t.Fatalf("writes under the renamed directory not seen: %q", paths(ix, ""))
	}

	// Renamed away and a new directory made at the old name at once.
	must(t, os.Rename(filepath.Join(root, "e"), filepath.Join(root, "f")))
	writeFile(t, root, "e/again.txt", "again\n")
	writeFile(t, root, "f/x/y/f2.txt", "ftoken\n")
	syncNow(t, w)
	if got, want := paths(ix, "e"), []string{"e/again.txt"}; !slices.Equal(got, want) {
		t.Fatalf("e holds %q, want %q", got, want)
	}
	writeFile(t, root, "f/x/y/later.txt", "later\n")
	writeFile(t, root, "e/later.txt", "later\n")
	syncNow(t, w)
	if !has(ix, "f/x/y/later.txt") || !has(ix, "e/later.txt") || !isCandidate(t, ix, "ftoken", "f/x/y/f2.txt") {
		t.Fatalf("writes after rename-and-recreate not seen: %q", paths(ix, ""))
	}

	// Moved out of the root: gone; writes there are not ours any more.
	must(t, os.Rename(filepath.Join(root, "f"), filepath.Join(outside, "f")))
	syncNow(t, w)
	if got := paths(ix, "f"); len(got) != 0 {
		t.Fatalf("after moving out, f still holds %q", got)
	}
	writeFile(t, outside, "f/x/y/outside.txt", "outside\n")
	syncNow(t, w)
	if got := paths(ix, "f"); len(got) != 0 {
		t.Fatalf("a write outside the root reached the index: %q", got)
	}
	// And back in.
	must(t, os.Rename(filepath.Join(outside, "f"), filepath.Join(root, "g")))
	syncNow(t, w)
	writeFile(t, root, "g/x/y/back.txt", "back\n")
	syncNow(t, w)
	if got, want := paths(ix, "g"), []string{"g/x/y/back.txt", "g/x/y/f1.txt", "g/x/y/f2.txt", "g/x/y/later.txt", "g/x/y/new.txt", "g/x/y/outside.txt", "g/z/f3.txt"}; !slices.Equal(got, want) {
		t.Fatalf("after moving back in, g holds %q, want %q", got, want)
	}

	// Deleted: the subtree and its watches go.
	must(t, os.RemoveAll(filepath.Join(root, "g")))
	syncNow(t, w)
	if got := paths(ix, "g"); len(got) != 0 {
		t.Fatalf("after delete, g still holds %q", got)
	}
	if got, want := w.State().Dirs, 3; got != want { // root, keep, e
		t.Errorf("Dirs = %d after delete, want %d", got, want)
	}
	// A file replaced by a directory and back.
	must(t, os.Remove(filepath.Join(root, "keep/k.txt")))
	writeFile(t, root, "keep/k.txt/inner.txt", "inner\n")
	syncNow(t, w)
	if !has(ix, "keep/k.txt/inner.txt") || has(ix, "keep/k.txt") {
		t.Fatalf("file replaced by a directory: %q", paths(ix, "keep"))
	}
	must(t, os.RemoveAll(filepath.Join(root, "keep/k.txt")))
	writeFile(t, root, "keep/k.txt", "file again\n")
	syncNow(t, w)
	if got, want := paths(ix, "keep"), []string{"keep/k.txt"}; !slices.Equal(got, want) {
		t.Fatalf("directory replaced by a file: %q", got)
	}
}

// Events lost (dropped through the test hook), then an overflow injected:
// the root is Suspect while the reconcile runs and correct after it.
func TestOverflowReconciles(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for _, rel := range []string{"a/one.txt", "a/two.txt", "b/three.txt"} {
		writeFile(t, root, rel, "old "+rel+"\n")
	}
	var drop atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	opts := Options{
		onEvent: func(ev fsnotify.Event) bool {
			return !drop.Load() || strings.Contains(ev.Name, ignore.CookiePrefix)
		},
		beforeResync: func() {
			close(entered)
			<-release
		},
	}
	w, ix := startDB(t, root, opts)

	drop.Store(true)
	writeFile(t, root, "a/one.txt", "lostwrite\n")
	must(t, os.Remove(filepath.Join(root, "a/two.txt")))
	writeFile(t, root, "c/d/new.txt", "lostcreate\n")
	syncNow(t, w) // every event before the cookie was dropped
	drop.Store(false)
	if has(ix, "c/d/new.txt") || !has(ix, "a/two.txt") {
		t.Fatal("the hook did not drop the events; the test proves nothing")
	}

	w.fault(fsnotify.ErrEventOverflow)
	wait(t, entered, "the reconcile to begin")
	st := w.State()
	if !st.Suspect || st.Overflows != 1 {
		t.Errorf("during the reconcile: Suspect=%v Overflows=%d, want true, 1", st.Suspect, st.Overflows)
	}
	if got := st.Stale("a"); got != "index_stale" {
		t.Errorf("Stale during the reconcile = %q, want index_stale", got)
	}
	synced := make(chan error, 1)
	go func() { // a query waiting meanwhile is released by the reconcile
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		synced <- w.Sync(ctx)
	}()
	close(release)
	select {
	case err := <-synced:
		must(t, err)
	case <-time.After(deadline):
		t.Fatal("Sync during the reconcile never returned")
	}
	syncNow(t, w)
	if st := w.State(); st.Suspect || st.Reconciles < 2 || st.Stale("a") != "" {
		t.Errorf("after the reconcile: %+v", st)
	}
	if !has(ix, "c/d/new.txt") || has(ix, "a/two.txt") || !isCandidate(t, ix, "lostwrite", "a/one.txt") || !isCandidate(t, ix, "lostcreate", "c/d/new.txt") {
		t.Fatalf("index not repaired: %q", paths(ix, ""))
	}
	// The directory made while events were lost is watched now.
	writeFile(t, root, "c/d/after.txt", "after\n")
	syncNow(t, w)
	if !has(ix, "c/d/after.txt") {
		t.Fatal("c/d not watched after the reconcile")
	}
}

// A real kernel queue overflow: the drain is held up while more events
// than fs.inotify.max_queued_events happen.
func TestKernelOverflow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes tens of thousands of files")
	}
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip(err)
	}
	var maxQueued int
	fmt.Sscan(string(data), &maxQueued)
	if maxQueued > 1<<16 {
		t.Skipf("max_queued_events = %d: too many files to write", maxQueued)
	}
	root := tempRoot(t)
	mkdirs(t, root, "burst")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w, ix := start(t, root, Options{onEvent: func(fsnotify.Event) bool {
		once.Do(func() {
			close(held)
			<-release
		})
		return true
	}})
	// Each new file makes two events (create, modify); beyond the kernel
	// queue, fsnotify holds one read (up to 4096) and the channel buffer.
	n := (maxQueued+2*eventBuffer+4096)/2 + 1000
	writeFile(t, root, "burst/first.txt", "first\n")
	wait(t, held, "the drain to take the first event")
	for i := range n {
		writeFile(t, root, fmt.Sprintf("burst/f%05d.txt", i), fmt.Sprintf("burst token%05d\n", i))
	}
	close(release)
	syncNow(t, w)
	if st := w.State(); st.Overflows == 0 {
		t.Fatalf("no overflow after %d files (max_queued_events %d): %+v", n, maxQueued, st)
	}
	if got := len(paths(ix, "burst")); got != n+1 {
		t.Fatalf("burst holds %d files, want %d", got, n+1)
	}
}

// The watch limit (ENOSPC from the AddWatch seam after N directories)
// leaves exactly the subtrees it hit unwatched, listed in State; the rest
// still updates; freed watches are used again.
func TestWatchLimit(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for _, rel := range []string{"a/x/f.txt", "a/y/f.txt", "b/x/f.txt", "b/f.txt", "c/x/deep/f.txt", "d/f.txt"} {
		writeFile(t, root, rel, "content "+rel+"\n")
	}
	var mu sync.Mutex
	limit, added := 5, 0
	log := &testLogger{t: t}
	opts := Options{
		MaxWatches: 6,
		Logger:     slogNew(log),
		AddWatch: func(path string, add func(string) error) error {
			mu.Lock()
			defer mu.Unlock()
			if added >= limit {
				return fmt.Errorf("inotify_add_watch %s: %w", path, syscall.ENOSPC)
			}
			added++
			return add(path)
		},
	}
	w, ix := startDB(t, root, opts)
	// Walk order: root, a, a/x, a/y, b | b/x, c, d fail.
	st := w.State()
	if want := []string{"b/x", "c", "d"}; !slices.Equal(st.Unwatched, want) {
		t.Fatalf("Unwatched = %q, want %q", st.Unwatched, want)
	}
	if st.Dirs != 5 {
		t.Errorf("Dirs = %d, want 5", st.Dirs)
	}
	for dir, want := range map[string]envelope.FallbackReason{".": "watch_limit", "a": "", "a/x": "", "b": "watch_limit", "b/x": "watch_limit", "c/x/deep": "watch_limit", "d": "watch_limit"} {
		if got := st.Stale(dir); got != want {
			t.Errorf("Stale(%q) = %q, want %q", dir, got, want)
		}
	}
	if !log.logged("nearing the inotify watch limit") || !log.logged("watch limit reached") {
		t.Errorf("no watch limit warnings: %q", log.msgs)
	}
	// Watched parts update; unwatched ones do not (that is what State
	// reports, and why queries there use the walk).
	writeFile(t, root, "a/x/new.txt", "new\n")
	writeFile(t, root, "b/new.txt", "new\n")
	writeFile(t, root, "b/x/new.txt", "new\n")
	syncNow(t, w)
	if !has(ix, "a/x/new.txt") || !has(ix, "b/new.txt") {
		t.Fatal("a write in a watched directory was missed")
	}
	if has(ix, "b/x/new.txt") {
		t.Fatal("an unwatched directory was updated: the seam did not bite")
	}
	// Watches freed (a deleted) and the limit raised: the unwatched
	// subtrees are watched and brought up to date.
	mu.Lock()
	limit = 1 << 30
	mu.Unlock()
	must(t, os.RemoveAll(filepath.Join(root, "a")))
	syncNow(t, w)
	st = w.State()
	if len(st.Unwatched) != 0 || st.Dirs != 7 {
		t.Fatalf("after freeing watches: Unwatched=%q Dirs=%d, want none and 7", st.Unwatched, st.Dirs)
	}
	if !has(ix, "b/x/new.txt") {
		t.Fatal("a subtree watched again was not reconciled")
	}
	writeFile(t, root, "c/x/deep/later.txt", "later\n")
	syncNow(t, w)
	if !has(ix, "c/x/deep/later.txt") {
		t.Fatal("c/x/deep not watched after the retry")
	}
}

// Ignore files edited to ignore and un-ignore directories and files: the
// index (and its record of ignored entries) and the watches follow.
func TestIgnoreFileChanges(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	mkdirs(t, root, ".git")
	for _, rel := range []string{"gen/a.txt", "gen/sub/b.txt", "src/c.txt", "src/out/o.txt", ".gitignore"} {
		writeFile(t, root, rel, "content "+rel+"\n")
	}
	w, ix := startDB(t, root, Options{})
	dirs := w.State().Dirs // root, gen, gen/sub, src, src/out

	// The root's .gitignore ignores gen/.
	writeFile(t, root, ".gitignore", "gen/\n")
	syncNow(t, w)
	if got := paths(ix, "gen"); len(got) != 0 || !ix.Visibility().Ignored("gen") {
		t.Fatalf("gen/ ignored: index holds %q, Ignored=%v", got, ix.Visibility().Ignored("gen"))
	}
	if got := w.State().Dirs; got != dirs-2 {
		t.Errorf("Dirs = %d with gen/ ignored, want %d", got, dirs-2)
	}
	writeFile(t, root, "gen/new.txt", "new\n")
	syncNow(t, w)
	if has(ix, "gen/new.txt") {
		t.Fatal("a file in an ignored directory was indexed")
	}
	// Un-ignored.
	writeFile(t, root, ".gitignore", "# nothing\n")
	syncNow(t, w)
	if got, want := paths(ix, "gen"), []string{"gen/a.txt", "gen/new.txt", "gen/sub/b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("gen/ un-ignored: index holds %q, want %q", got, want)
	}
	writeFile(t, root, "gen/sub/later.txt", "later\n")
	syncNow(t, w)
	if !has(ix, "gen/sub/later.txt") || w.State().Dirs != dirs {
		t.Fatalf("gen/sub not watched again (Dirs %d, want %d)", w.State().Dirs, dirs)
	}

	// A nested .gitignore, and a .ignore for files.
	writeFile(t, root, "src/.gitignore", "out/\n")
	writeFile(t, root, "src/.ignore", "*.tmp\n")
	syncNow(t, w)
	if has(ix, "src/out/o.txt") || !ix.Visibility().Ignored("src/out") {
		t.Fatal("src/out/ not ignored by src/.gitignore")
	}
	for i := range 5 { // an ignored file written again and again
		writeFile(t, root, "src/x.tmp", fmt.Sprintf("tmp %d\n", i))
		syncNow(t, w)
	}
	if has(ix, "src/x.tmp") || !ix.Visibility().Ignored("src/x.tmp") {
		t.Fatal("src/x.tmp indexed, or its ignored record lost")
	}
	must(t, os.Remove(filepath.Join(root, "src/.gitignore")))
	syncNow(t, w)
	if !has(ix, "src/out/o.txt") {
		t.Fatal("src/out/ not back after src/.gitignore was removed")
	}

	// Default-ignored directories are neither indexed nor watched.
	before := w.State().Dirs
	writeFile(t, root, "node_modules/pkg/index.js", "js\n")
	writeFile(t, root, "src/__pycache__/m.pyc", "pyc\n")
	syncNow(t, w)
	if has(ix, "node_modules/pkg/index.js") || !ix.Visibility().Ignored("node_modules") || !ix.Visibility().Ignored("src/__pycache__") {
		t.Fatal("a default-ignored directory was indexed, or not recorded")
	}
	if got := w.State().Dirs; got != before {
		t.Errorf("Dirs = %d after default-ignored directories appeared, want %d", got, before)
	}

	// Without .git the .gitignore files stop applying (the root's rules
	// changed): gen/ would be back even if listed.
	writeFile(t, root, ".gitignore", "gen/\n")
	syncNow(t, w)
	must(t, os.RemoveAll(filepath.Join(root, ".git")))
	syncNow(t, w)
	if !has(ix, "gen/a.txt") {
		t.Fatal(".gitignore still applied outside a repository")
	}
}

// The root deleted, renamed, or moved with its parent: State says so,
// Sync fails with ErrRootGone, the watcher stops.
func TestRootGone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		event bool // whether an event reports it (else Sync notices)
		do    func(parent, root string) error
	}{
		{"deleted", true, func(_, root string) error { return os.RemoveAll(root) }},
		{"renamed", true, func(parent, root string) error { return os.Rename(root, filepath.Join(parent, "elsewhere")) }},
		{"parent renamed", false, func(parent, _ string) error {
			return os.Rename(parent, parent+"-moved")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(tempRoot(t), "p")
			root := filepath.Join(parent, "root")
			writeFile(t, root, "a/f.txt", "f\n")
			w, _ := start(t, root, Options{})
			syncNow(t, w)
			must(t, tc.do(parent, root))
			if tc.event {
				wait(t, w.Done(), "the watcher to stop")
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			if err := w.Sync(ctx); !errors.Is(err, ErrRootGone) {
				t.Fatalf("Sync = %v, want ErrRootGone", err)
			}
			wait(t, w.Done(), "the watcher to stop")
			if st := w.State(); !st.RootGone || st.Stale(".") != "index_stale" {
				t.Fatalf("State = %+v, want RootGone", st)
			}
		})
	}
}

// Close stops every goroutine the watcher started and closes every
// descriptor; Sync then fails with ErrClosed.
func TestCloseLeavesNothing(t *testing.T) {
	root := tempRoot(t)
	writeFile(t, root, "a/b/f.txt", "f\n")
	ix, err := index.Build(context.Background(), root, nil)
	must(t, err)
	goroutines, fds := settledGoroutines(0), openFDs(t)

	w, err := Start(context.Background(), root, ix, Options{Logger: slogNew(&testLogger{t: t})})
	must(t, err)
	wait(t, w.Ready(), "ready")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			writeFile(t, root, fmt.Sprintf("a/b/g%d.txt", i), "g\n")
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			if err := w.Sync(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if running := settledGoroutines(0); running <= goroutines {
		t.Fatalf("no goroutines while running (%d, before %d): the count proves nothing", running, goroutines)
	}
	must(t, w.Close())
	must(t, w.Close())
	if got := settledGoroutines(goroutines); got > goroutines {
		t.Errorf("%d goroutines after Close, %d before", got, goroutines)
	}
	if got := openFDs(t); got != fds {
		t.Errorf("%d open descriptors after Close, %d before", got, fds)
	}
	if err := w.Sync(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close = %v, want ErrClosed", err)
	}
	wait(t, w.Done(), "Done after Close")
}

// Sync callers waiting at the same time share cookies; a cookie whose
// event never comes times out without holding up later callers.
func TestSyncCoalescesAndTimesOut(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "f.txt", "f\n")
	var dropCookies atomic.Bool
	w, _ := start(t, root, Options{cookiesOnly: true, onEvent: func(ev fsnotify.Event) bool {
		return !(dropCookies.Load() && strings.Contains(ev.Name, ignore.CookiePrefix))
	}})
	before := w.State().Cookies
	const callers, rounds = 32, 10
	for range rounds {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				if err := w.Sync(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	made := w.State().Cookies - before
	t.Logf("%d Sync calls made %d cookies", callers*rounds, made)
	if made >= callers*rounds/2 {
		t.Errorf("%d Sync calls made %d cookies: not coalesced", callers*rounds, made)
	}

	dropCookies.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.Sync(ctx)
	if !errors.Is(err, ErrSyncTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sync with its cookie lost = %v, want ErrSyncTimeout", err)
	}
	dropCookies.Store(false)
	syncNow(t, w)
}

// Cookie files never reach the index, wherever they are made, even when a
// walk of the root runs while they exist; leftovers are removed at Start.
func TestCookiesNeverIndexed(t *testing.T) {
	t.Parallel()
	for _, git := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", git), func(t *testing.T) {
			root := tempRoot(t)
			writeFile(t, root, "a/f.txt", "f\n")
			leftovers := []string{ignore.CookiePrefix + "1-1"}
			if git {
				mkdirs(t, root, ".git")
				leftovers = append(leftovers, ".git/"+ignore.CookiePrefix+"1-2")
			}
			for _, l := range leftovers {
				writeFile(t, root, l, "")
			}
			var mu sync.Mutex
			var cookieDirs []string
			w, ix := start(t, root, Options{onEvent: func(ev fsnotify.Event) bool {
				if strings.Contains(ev.Name, ignore.CookiePrefix+cookiePID+"-") {
					mu.Lock()
					cookieDirs = append(cookieDirs, filepath.Dir(ev.Name))
					mu.Unlock()
				}
				return true
			}})
			for _, l := range leftovers {
				if _, err := os.Lstat(filepath.Join(root, l)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("leftover cookie %s not removed: %v", l, err)
				}
			}
			// Rewrite the root's .ignore (a walk of the whole root) while
			// cookies come and go.
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Go(func() {
					for j := range 25 {
						if i == 0 {
							writeFile(t, root, ".ignore", fmt.Sprintf("# %d\n", j))
						}
						ctx, cancel := context.WithTimeout(context.Background(), deadline)
						if err := w.Sync(ctx); err != nil {
							t.Error(err)
						}
						cancel()
					}
				})
			}
			wg.Wait()
			// A file with the reserved prefix that stays (not one of
			// ours): its events are dropped, and a walk of the root that
			// lists it does not keep it.
			stray := ignore.CookiePrefix + "stray"
			writeFile(t, root, stray, "")
			writeFile(t, root, ".ignore", "# walk the root\n")
			syncNow(t, w)
			if has(ix, stray) {
				t.Errorf("%s in the index", stray)
			}
			must(t, os.Remove(filepath.Join(root, stray)))
			syncNow(t, w)
			ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
				if strings.Contains(f.Path, ignore.CookiePrefix) {
					t.Errorf("cookie %s in the index", f.Path)
				}
				return true
			})
			want := root
			if git {
				want = filepath.Join(root, ".git")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range cookieDirs {
				if d != want {
					t.Fatalf("cookie made in %s, want %s", d, want)
				}
			}
		})
	}
}

func TestStateStale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		st   State
		dir  string
		want envelope.FallbackReason
	}{
		{State{}, ".", "index_building"},
		{State{Ready: true}, ".", ""},
		{State{Ready: true, Suspect: true}, "a", "index_stale"},
		{State{Ready: true, RootGone: true}, "a", "index_stale"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, ".", "watch_limit"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "", "watch_limit"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "a", "watch_limit"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "a/b", "watch_limit"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "a/b/c", "watch_limit"},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "a/bc", ""},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "ab", ""},
		{State{Ready: true, Unwatched: []string{"a/b"}}, "c", ""},
		{State{Ready: true, Unwatched: []string{"."}}, "c", "watch_limit"},
	} {
		if got := tc.st.Stale(tc.dir); got != tc.want {
			t.Errorf("%+v.Stale(%q) = %q, want %q", tc.st, tc.dir, got, tc.want)
		}
	}
}

func TestStartRejects(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "f.txt", "f\n")
	ix, err := index.Build(context.Background(), root, nil)
	must(t, err)
	for _, r := range []string{"relative", root + "/", root + "/f.txt", root + "/missing"} {
		if w, err := Start(context.Background(), r, ix, Options{}); err == nil {
			w.Close()
			t.Errorf("Start(%q) succeeded", r)
		}
	}
}

// "mv a b; mkdir a" again and again: fsnotify drops the watch at a's path
// when it reads the move, possibly after the new a was watched; both
// directories must stay watched under their own names.
func TestRenameThenRecreate(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a/x/f.txt", "f\n")
	w, ix := start(t, root, Options{})
	for i := range 40 {
		b := fmt.Sprintf("b%d", i)
		must(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, b)))
		writeFile(t, root, "a/x/f.txt", fmt.Sprintf("round %d\n", i))
		writeFile(t, root, b+"/x/moved.txt", "moved\n")
		syncNow(t, w)
		writeFile(t, root, "a/x/later.txt", "later\n")
		writeFile(t, root, b+"/x/later.txt", "later\n")
		syncNow(t, w)
		for _, p := range []string{"a/x/f.txt", "a/x/later.txt", b + "/x/f.txt", b + "/x/moved.txt", b + "/x/later.txt"} {
			if !has(ix, p) {
				t.Fatalf("round %d: %s missing; index: %q", i, p, paths(ix, ""))
			}
		}
		must(t, os.Remove(filepath.Join(root, "a/x/later.txt")))
	}
	if got, want := w.State().Dirs, 1+2*41; got != want {
		t.Errorf("Dirs = %d, want %d", got, want)
	}
}

// Sync right after Start waits for the initial reconcile, which catches
// what changed between the index's build and the watches.
func TestSyncBeforeReady(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a/old.txt", "old\n")
	ix, err := index.Build(context.Background(), root, nil)
	must(t, err)
	writeFile(t, root, "a/between.txt", "between\n") // after the build, before the watch
	must(t, os.Remove(filepath.Join(root, "a/old.txt")))
	w, err := Start(context.Background(), root, ix, Options{Logger: slogNew(&testLogger{t: t})})
	must(t, err)
	defer w.Close()
	writeFile(t, root, "a/after.txt", "after\n")
	syncNow(t, w)
	if !w.State().Ready {
		t.Error("Sync returned before the watcher was ready")
	}
	if got, want := paths(ix, "a"), []string{"a/after.txt", "a/between.txt"}; !slices.Equal(got, want) {
		t.Fatalf("index holds %q, want %q", got, want)
	}
}

// A panic while applying a batch does not kill the watcher: the batch is
// logged as failed, the whole tree is reconciled, the Sync caller waiting
// on it is released, and the index is right afterwards.
func TestPanicInBatchRecovers(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a/one.txt", "one\n")
	var armed atomic.Bool
	log := &testLogger{t: t}
	w, ix := start(t, root, Options{
		Logger: slog.New(log),
		onBatch: func(paths map[string]fsnotify.Op) {
			if _, ok := paths["a/two.txt"]; ok && armed.CompareAndSwap(true, false) {
				panic("injected")
			}
		},
	})
	armed.Store(true)
	writeFile(t, root, "a/two.txt", "two\n")
	syncNow(t, w)
	if armed.Load() {
		t.Fatal("the hook never ran; the test proves nothing")
	}
	if !has(ix, "a/two.txt") {
		t.Fatal("a/two.txt is not in the index after the panic's reconcile")
	}
	select {
	case <-w.Done():
		t.Fatal("the watcher stopped after a panic")
	default:
	}
	if !log.logged("panic while applying events") {
		t.Fatal("the panic was not logged")
	}
	writeFile(t, root, "a/three.txt", "three\n")
	syncNow(t, w)
	if !has(ix, "a/three.txt") {
		t.Fatal("the watcher stopped applying events after the panic")
	}
}

// A directory and a link to an outside directory exchanged in a loop
// (renameat2 RENAME_EXCHANGE) under a running watcher: the watcher never
// dies (fsnotify's path-keyed table panicked here), never watches or
// indexes through the link, and once the loop stops the index equals a
// fresh build (checked at cleanup).
func TestExchangeLoopWatcher(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	out := tempRoot(t)
	writeFile(t, out, "secret.txt", "OUTSIDE\n")
	writeFile(t, out, "sub/deep.txt", "OUTSIDE\n")
	writeFile(t, root, "d/inside.txt", "inside\n")
	writeFile(t, root, "d/sub/deep.txt", "inside\n")
	must(t, os.Symlink(out, filepath.Join(root, "l")))
	w, ix := start(t, root, Options{})
	for i := range 2000 {
		if err := unix.Renameat2(unix.AT_FDCWD, root+"/d", unix.AT_FDCWD, root+"/l", unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
				if strings.HasSuffix(f.Path, "secret.txt") {
					t.Errorf("exchange %d: the index holds %s", i, f.Path)
				}
				return true
			})
		}
	}
	syncNow(t, w)
	select {
	case <-w.Done():
		t.Fatal("the watcher stopped")
	default:
	}
}

// Close returns while the notifier holds events nobody will receive (the
// drain has stopped): its reader stops sending when Close begins.
func TestNotifierCloseWithUnreadEvents(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	n, err := newNotifier(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if err := n.Add(dir, root); err != nil {
		t.Fatal(err)
	}
	for i := range 50 { // far more events than the channel holds
		writeFile(t, root, fmt.Sprintf("f%d", i), "x")
	}
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return: the reader is stuck sending")
	}
}

// The watcher is the index's only writer, compactions included: after a
// burst that outgrows the base, it compacts once idle, and the index
// still equals a fresh build (checked at cleanup).
func TestWatcherCompacts(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	for i := range 1100 {
		writeFile(t, root, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("file %d\n", i))
	}
	w, ix := start(t, root, Options{})
	for i := range 1100 {
		writeFile(t, root, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("changed file %d\n", i))
	}
	syncNow(t, w)
	end := time.Now().Add(deadline)
	for ix.NeedsCompact() {
		if time.Now().After(end) {
			t.Fatal("the watcher never compacted the index")
		}
		syncNow(t, w) // another batch, then the idle point where it compacts
	}
}

// A synced query does not wait for the DB: Sync returns, and the change
// answers, while the batch's transaction is held before its commit (its
// fsync). Without the batch's writes deferred past its sync barriers,
// Sync would wait for the held transaction and the test time out.
func TestSyncNotBlockedByTheTransaction(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a.txt", "alpha\n")
	w, ix := startDB(t, root, Options{})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ix.SetWriteHook(func() error {
		once.Do(func() { close(entered) })
		<-release
		return nil
	})
	writeFile(t, root, "b.txt", "QuokkaNeedle\n")
	synced := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		synced <- w.Sync(ctx)
	}()
	select {
	case err := <-synced:
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
	case <-time.After(deadline):
		close(release)
		t.Fatal("Sync waited for the batch's DB transaction")
	}
	if got, want := candidates(t, ix, "QuokkaNeedle"), []string{"b.txt"}; !slices.Equal(got, want) {
		t.Errorf("candidates once synced = %q, want %q", got, want)
	}
	wait(t, entered, "the batch's transaction") // written all the same
	close(release)
	ix.SetWriteHook(nil)
	// The cleanup reopens the DB and compares it with a fresh build.
}

// A batch whose transaction fails (a full disk) is not lost: the watcher
// logs it, reconciles, and a later transaction writes what the failed
// one held, so the DB reopened at cleanup equals a fresh build.
func TestFailedTransactionWrittenLater(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a.txt", "alpha\n")
	log := &testLogger{t: t}
	w, ix := startDB(t, root, Options{Logger: slog.New(log)})
	var failing atomic.Bool
	failing.Store(true)
	failed := make(chan struct{})
	ix.SetWriteHook(func() error {
		if failing.CompareAndSwap(true, false) {
			close(failed)
			return syscall.ENOSPC
		}
		return nil
	})
	writeFile(t, root, "b.txt", "beta\n")
	must(t, os.Remove(filepath.Join(root, "a.txt")))
	syncNow(t, w)
	wait(t, failed, "the batch's transaction")
	// The failure reaches the watcher as the transaction returns; each
	// Sync after it waits for the reconcile it asks for.
	for end := time.Now().Add(deadline); !log.logged("index update failed"); {
		if time.Now().After(end) {
			t.Fatal("the failed transaction was not logged")
		}
		syncNow(t, w)
	}
	syncNow(t, w)
	if st := w.State(); st.Suspect {
		t.Errorf("still suspect after the reconcile: %+v", st)
	}
	ix.SetWriteHook(nil)
}

// A compaction whose transaction fails (a full disk while it rewrites
// the delta) is reported like a failed batch — logged, the root suspect,
// a reconcile — and the watcher goes on: once the disk has room, a later
// compaction folds the delta, and the DB reopened at cleanup equals a
// fresh build.
func TestFailedCompactionReportedAndRetried(t *testing.T) {
	t.Parallel()
	w, ix, log, full := failCompaction(t)
	if !log.logged(syscall.ENOSPC.Error()) {
		t.Error("the failure was logged without its cause")
	}
	full.Store(false)
	for end := time.Now().Add(deadline); ; {
		syncNow(t, w) // the burst applied, then the idle point where it compacts
		if !ix.NeedsCompact() && !ix.Stats().Compacting && !w.State().Suspect {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no compaction once the disk had room: %+v, %+v", ix.Stats(), w.State())
		}
	}
	if got := candidates(t, ix, "changed file 1099"); !slices.Equal(got, []string{"d9/f1099.txt"}) {
		t.Errorf("after the compaction: candidates = %q", got)
	}
}

// failCompaction starts a watcher of 1,100 files whose disk is full
// while a compaction runs (full, until the caller clears it), rewrites
// them all and syncs until the failed compaction is logged. The write
// hook is removed at cleanup.
func failCompaction(t *testing.T) (w *Watcher, ix *index.Index, log *testLogger, full *atomic.Bool) {
	t.Helper()
	root := tempRoot(t)
	for i := range 1100 {
		writeFile(t, root, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("file %d\n", i))
	}
	log = &testLogger{t: t}
	w, ix = startDB(t, root, Options{Logger: slog.New(log)})
	full = new(atomic.Bool)
	full.Store(true)
	ix.SetWriteHook(func() error {
		if full.Load() && ix.Stats().Compacting {
			return syscall.ENOSPC
		}
		return nil
	})
	t.Cleanup(func() { ix.SetWriteHook(nil) })
	for i := range 1100 {
		writeFile(t, root, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("changed file %d\n", i))
	}
	for end := time.Now().Add(deadline); !log.logged("index update failed"); {
		if time.Now().After(end) {
			t.Fatal("the failed compaction was not logged")
		}
		syncNow(t, w) // another batch, then the idle point where it compacts
	}
	return w, ix, log, full
}

// A compaction that failed (a full disk) is retried after its backoff
// with nothing else happening: no event, no Sync. Only the processor's
// own timer can wake it then; before it had one, the retry waited for
// the next event.
func TestFailedCompactionRetriedWithoutEvents(t *testing.T) {
	t.Parallel()
	w, ix, _, full := failCompaction(t)
	full.Store(false) // room again; from here on nothing touches the tree or the watcher
	// The failure also made the root suspect and the watcher reconcile
	// the whole tree (its own work, no event): the changes are in once
	// that is done, not merely once nothing is left to compact.
	for end := time.Now().Add(deadline); ix.NeedsCompact() || ix.Stats().Compacting || w.State().Suspect; runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("no compaction %v after the disk had room, with no event to wake the watcher: %+v, %+v", deadline, ix.Stats(), w.State())
		}
	}
	if got := candidates(t, ix, "changed file 1099"); !slices.Equal(got, []string{"d9/f1099.txt"}) {
		t.Errorf("after the compaction: candidates = %q", got)
	}
}

// compactBackoff: a second after the first failure, doubled after each
// one in a row, never more than a minute.
func TestCompactBackoff(t *testing.T) {
	for _, c := range []struct {
		n    int32
		want time.Duration
	}{{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {6, 32 * time.Second}, {7, time.Minute}, {8, time.Minute}, {1 << 30, time.Minute}} {
		if got := compactBackoff(c.n); got != c.want {
			t.Errorf("compactBackoff(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// An index that needs a compaction when the watcher starts (changes a
// restart's catch-up read) is compacted without waiting for an event.
func TestWatcherCompactsAtStart(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	var names []string
	for i := range 1100 {
		names = append(names, fmt.Sprintf("d%d/f%d.txt", i%10, i))
		writeFile(t, root, names[i], fmt.Sprintf("file %d\n", i))
	}
	ix, err := index.Build(context.Background(), root, nil)
	must(t, err)
	for i, n := range names {
		writeFile(t, root, n, fmt.Sprintf("changed file %d\n", i))
	}
	must(t, ix.Apply(context.Background(), names))
	if !ix.NeedsCompact() {
		t.Fatal("the index needs no compaction; the test proves nothing")
	}
	w, err := Start(context.Background(), root, ix, Options{Logger: slog.New(&testLogger{t: t})})
	must(t, err)
	defer w.Close()
	wait(t, w.Ready(), "the watcher's initial reconcile")
	for end := time.Now().Add(deadline); ix.NeedsCompact(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatal("the watcher never compacted the index it started with")
		}
	}
	if got := candidates(t, ix, "changed file 1099"); !slices.Equal(got, []string{"d9/f1099.txt"}) {
		t.Errorf("after the compaction: candidates = %q", got)
	}
}
