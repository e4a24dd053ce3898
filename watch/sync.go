package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/rooted"
)

// cookie is one sync barrier, shared by the Sync callers that joined it.
type cookie struct {
	name     string
	done     chan struct{} // closed when finished
	err      error         // set before done closes
	waiters  int           // callers still waiting; guarded by syncMu
	finished bool          // guarded by syncMu
}

// cookieSeq numbers cookies process-wide, so that two watchers of one root
// never make the same name.
var cookieSeq atomic.Uint64

var cookiePID = strconv.Itoa(os.Getpid())

func newCookie() *cookie {
	return &cookie{
		name: ignore.CookiePrefix + cookiePID + "-" + strconv.FormatUint(cookieSeq.Add(1), 10),
		done: make(chan struct{}),
	}
}

// Sync returns once every change made to the tree before it was called is
// in the index (read your writes), for the parts of the tree that are
// watched: a query then reads the index, falling back to the walk where
// State says the index cannot be trusted (see State.Stale). It fails with
// ErrSyncTimeout when ctx ends first (the daemon allows 2 s), ErrRootGone
// when the root was deleted or moved, ErrSyncUnavailable when no cookie
// can be made, ErrClosed after Close.
//
// Before the watcher is Ready, Sync waits for the initial reconcile.
func (w *Watcher) Sync(ctx context.Context) error {
	if err := w.checkRoot(); err != nil {
		return err
	}
	if w.caughtUp() {
		return nil
	}
	w.syncMu.Lock()
	if w.stopErr != nil {
		err := w.stopErr
		w.syncMu.Unlock()
		return err
	}
	if w.cookieDir == "" {
		w.syncMu.Unlock()
		return ErrSyncUnavailable
	}
	var c *cookie
	launch := false
	if w.inflight == nil {
		c = newCookie()
		w.inflight = c
		w.pending[c.name] = c
		launch = true
	} else {
		if w.next == nil {
			w.next = newCookie()
		}
		c = w.next
	}
	c.waiters++
	w.syncMu.Unlock()
	if launch {
		w.launch(c)
	}
	select {
	case <-c.done:
		return c.err
	case <-w.done:
		select {
		case <-c.done:
			return c.err
		default:
		}
		w.syncMu.Lock()
		defer w.syncMu.Unlock()
		return w.stopErr
	case <-ctx.Done():
		select {
		case <-c.done:
			return c.err
		default:
		}
		w.leave(c)
		return fmt.Errorf("%w: %w", ErrSyncTimeout, context.Cause(ctx))
	}
}

// caughtUp reports whether every change made to the watched tree before
// the call is in the index already, so that Sync needs no cookie: the
// kernel queues no event and no read's events are still being sent (so
// every event of a change made before the call has been sent: inotify
// queues it before the change's system call returns), the drain has
// recorded every event sent, and the processor, ready, has finished every
// batch it took, with nothing left to take and no whole-tree reconcile
// asked for. False says nothing: Sync makes a cookie.
func (w *Watcher) caughtUp() bool {
	if w.opts.cookiesOnly {
		return false
	}
	sent, ok := w.fsw.quiet()
	if !ok {
		return false
	}
	select {
	case <-w.done:
		return false
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.Ready && !w.st.Suspect && !w.rootGone && !w.busy && w.recorded >= sent &&
		len(w.dirty) == 0 && len(w.rules) == 0 && len(w.indexes) == 0 && !w.inputsStale && len(w.seen) == 0 && w.resyncs == w.taken
}

// checkRoot fails with ErrRootGone (and stops the watcher) when the root
// no longer is the directory Start was given: deleted, or moved with one
// of its ancestors, which makes no event, or deleted and made again (by
// its birth time when the new one got the old one's inode number) before
// the deletion's event is read (it waits for every descriptor of the
// directory to close: a query's scan may hold one).
func (w *Watcher) checkRoot() error {
	id, _, err := rooted.IDOf(w.root)
	switch {
	case err == nil && id == w.id:
		return nil
	case err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("watch: root %s: %w", w.root, err) // cannot tell; not proof it is gone
	}
	w.mu.Lock()
	w.rootGone = true
	w.mu.Unlock()
	w.signal()
	return ErrRootGone
}

// launch creates and removes c's file. A failure finishes c with it.
func (w *Watcher) launch(c *cookie) {
	w.syncMu.Lock()
	dir, fallback := w.cookieDir, w.cookieFallback
	w.syncMu.Unlock()
	err := w.makeCookie(dir, c.name)
	if err != nil && fallback != "" && fallback != dir {
		// .git went away (the processor will notice): use the root.
		err = w.makeCookie(fallback, c.name)
	}
	if err != nil {
		w.finish(c, fmt.Errorf("%w: %w", ErrSyncUnavailable, err))
		return
	}
	w.mu.Lock()
	w.st.Cookies++
	w.mu.Unlock()
}

// makeCookie creates and removes the cookie name in dir (the root or its
// .git), beneath the root: never through a .git swapped for a link.
func (w *Watcher) makeCookie(dir, name string) error {
	if dir == "" {
		return errors.New("no cookie directory")
	}
	r, err := rooted.Open(w.root)
	if err != nil {
		return err
	}
	defer r.Close()
	rel, _ := w.relOf(filepath.Join(dir, name))
	if err := r.CreateExclusive(rel); err != nil {
		return err
	}
	_ = r.Remove(rel) // the create event is what counts; a sweep by another Start may remove it first
	return nil
}

// cookieSeen is called by the drain when a cookie's create event arrives:
// the processor releases it after applying everything received before.
func (w *Watcher) cookieSeen(name string) {
	w.syncMu.Lock()
	c := w.pending[name]
	w.syncMu.Unlock()
	if c == nil {
		return // another process's, abandoned, or already released
	}
	w.mu.Lock()
	w.seen = append(w.seen, c)
	w.mu.Unlock()
	w.signal()
}

// finish releases c's callers with err (nil: the barrier was reached) and
// starts the next cookie if callers joined it meanwhile.
func (w *Watcher) finish(c *cookie, err error) {
	w.syncMu.Lock()
	next := w.finishLocked(c, err)
	w.syncMu.Unlock()
	if next != nil {
		w.launch(next)
	}
}

// finishLocked does finish's bookkeeping and returns the cookie to launch,
// if any. Caller holds syncMu.
func (w *Watcher) finishLocked(c *cookie, err error) *cookie {
	if c.finished {
		return nil
	}
	c.finished = true
	c.err = err
	close(c.done)
	delete(w.pending, c.name)
	if w.next == c {
		w.next = nil
	}
	if w.inflight != c {
		return nil
	}
	w.inflight = nil
	if w.next == nil || w.stopErr != nil {
		return nil
	}
	w.inflight, w.next = w.next, nil
	w.pending[w.inflight.name] = w.inflight
	return w.inflight
}

// leave is called by a Sync caller whose ctx ended. The last caller to
// leave a cookie abandons it, so that a cookie whose event never comes
// cannot hold up later callers.
func (w *Watcher) leave(c *cookie) {
	w.syncMu.Lock()
	c.waiters--
	var next *cookie
	if c.waiters == 0 {
		next = w.finishLocked(c, ErrSyncTimeout)
	}
	w.syncMu.Unlock()
	if next != nil {
		w.launch(next)
	}
}

// seal returns the cookies whose callers have all called Sync by now, and
// closes them to new callers: a whole-tree reconcile beginning now covers
// their writes, so it may release them when it ends. The one in flight
// takes no new callers anyway; the next one is detached, and later callers
// start a new one.
func (w *Watcher) seal() []*cookie {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	var out []*cookie
	for _, c := range []*cookie{w.inflight, w.next} {
		if c != nil {
			out = append(out, c)
		}
	}
	w.next = nil
	return out
}
