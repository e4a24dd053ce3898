//go:build linux

package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// A Sync made while the watcher is caught up makes no cookie, and a Sync
// right after a change sees it, however the change races the pipeline
// (new files, new directories, removals, in a loop).
func TestSyncCaughtUp(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	writeFile(t, root, "a.txt", "alpha\n")
	w, ix := start(t, root, Options{})
	syncNow(t, w)
	before := w.State().Cookies
	for i := range 300 {
		rel := fmt.Sprintf("d%d/f%d.txt", i%7, i)
		if i%5 == 0 {
			rel = fmt.Sprintf("n%d/deep/f%d.txt", i, i) // a new directory: watched, then listed
		}
		writeFile(t, root, rel, fmt.Sprintf("token%d\n", i))
		syncNow(t, w)
		if !has(ix, rel) {
			t.Fatalf("round %d: %s written before Sync is not in the index", i, rel)
		}
		if i%3 == 0 {
			must(t, os.Remove(filepath.Join(root, rel)))
			syncNow(t, w)
			if has(ix, rel) {
				t.Fatalf("round %d: %s removed before Sync is still in the index", i, rel)
			}
		}
	}
	t.Logf("%d Syncs made %d cookies", 400, w.State().Cookies-before)
	waitCaughtUp(t, w)
	quiet := w.State().Cookies
	for range 20 {
		syncNow(t, w)
	}
	if made := w.State().Cookies - quiet; made != 0 {
		t.Errorf("20 Syncs on a quiet tree made %d cookies", made)
	}
}

// waitCaughtUp waits until the watcher has nothing left to apply.
func waitCaughtUp(t *testing.T, w *Watcher) {
	t.Helper()
	for end := time.Now().Add(deadline); !w.caughtUp(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the watcher never caught up")
		}
	}
}

// A change whose events are somewhere in the pipeline — read from the
// kernel but not yet sent, sent but not yet recorded by the drain, taken
// by the processor but not yet applied — is not caught up with: Sync
// waits for it (here, until its deadline, since the stage is held), and
// sees it once the stage goes on.
func TestSyncWaitsForEveryStage(t *testing.T) {
	t.Parallel()
	for _, stage := range []string{"read", "drain", "batch"} {
		t.Run(stage, func(t *testing.T) {
			root := tempRoot(t)
			writeFile(t, root, "a.txt", "alpha\n")
			var armed atomic.Bool
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			hold := func() {
				if armed.Load() {
					once.Do(func() { close(entered) })
					<-release
				}
			}
			var opts Options
			switch stage {
			case "read":
				opts.onRead = hold
			case "drain":
				opts.onEvent = func(fsnotify.Event) bool { hold(); return true }
			case "batch":
				opts.onBatch = func(map[string]fsnotify.Op) { hold() }
			}
			w, ix := start(t, root, opts)
			waitCaughtUp(t, w)
			armed.Store(true)
			writeFile(t, root, "b.txt", "QuokkaNeedle\n")
			wait(t, entered, "the "+stage+" stage to hold b.txt's events")
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err := w.Sync(ctx)
			cancel()
			if !errors.Is(err, ErrSyncTimeout) {
				t.Errorf("Sync while b.txt's events are held in the %s stage = %v, want ErrSyncTimeout", stage, err)
			}
			if has(ix, "b.txt") {
				t.Fatal("b.txt is in the index: the hook held nothing; the test proves nothing")
			}
			armed.Store(false)
			close(release)
			syncNow(t, w)
			if !has(ix, "b.txt") {
				t.Error("b.txt not in the index once the stage went on")
			}
		})
	}
}
