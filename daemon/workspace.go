package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/watch"
)

// workspace is one root: its index and the goroutine that builds and
// keeps it. Queries read its state under mu and never wait for it.
type workspace struct {
	d    *daemon
	root string // the real root (absolute, symlinks resolved): the registry key
	db   string // its DB file

	// ctx is the workspace's life, a child of the daemon's: forget and
	// the daemon's stop cancel it, which stops the build and the loop of
	// the workspace goroutine.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the workspace goroutine (one build attempt at a time)
	nudge  chan struct{}  // one slot: a query found the Freshener stopped (is the root back?)

	queries atomic.Int64 // tool queries answered for this root

	mu       sync.Mutex // guards the fields below
	state    string
	phase    string
	attempt  chan struct{}    // closed when the current build attempt ends (ready or error)
	ix       *index.Index     // set once ready; owned by the workspace goroutine
	fresh    Freshener        // set once ready; owned by the workspace goroutine
	journal  *journal.Journal // the Freshener's, if it keeps one (Journaled); set once ready
	progress index.Progress
	started  time.Time     // when the current attempt began
	readyIn  time.Duration // how long it took to become ready
	reopened bool          // the saved index was reopened, not rebuilt
	lastErr  string        // why the last attempt failed, or a later fault
	// id identifies the directory at the root's path when the ready
	// index's Freshener started: the directory it describes.
	id rooted.ID
}

func newWorkspace(d *daemon, root string) *workspace {
	ctx, cancel := context.WithCancel(d.ctx)
	return &workspace{
		d:      d,
		root:   root,
		db:     d.dbPath(root),
		ctx:    ctx,
		cancel: cancel,
		nudge:  make(chan struct{}, 1),
	}
}

// startLocked begins a build attempt: from new, or again after a
// failure. The caller holds w.mu, and no attempt is running. Without a
// watcher (Config.NoWatcher) there is none: the root is unwatched from
// the start, no goroutine runs for it, and every query walks.
func (w *workspace) startLocked() {
	w.state, w.phase, w.lastErr = rpc.StateBuilding, "", ""
	w.progress, w.reopened = index.Progress{}, false
	w.started = time.Now()
	w.attempt = make(chan struct{})
	if w.d.cfg.NoWatcher {
		w.state = rpc.StateUnwatched
		close(w.attempt)
		return
	}
	w.wg.Go(w.run)
}

// retry starts a new build attempt if the last one failed and had begun
// before since (an attempt the asking request started itself is not
// retried: its failure is the answer). It reports whether it did.
func (w *workspace) retry(since time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != rpc.StateError || w.ctx.Err() != nil || !w.started.Before(since) {
		return false
	}
	w.wg.Wait() // the failed attempt's goroutine is returning, if not gone
	w.startLocked()
	return true
}

// stop cancels the workspace's context. Under mu, so that retry, which
// checks the context under mu, never starts an attempt after it.
func (w *workspace) stop() {
	w.mu.Lock()
	w.cancel()
	w.mu.Unlock()
}

// close stops the workspace goroutine and waits for it; the goroutine
// closes the index and the Freshener on its way out.
func (w *workspace) close() {
	w.stop()
	w.wg.Wait()
}

// run is the workspace goroutine: it serves the root's index until the
// workspace's context ends, serving it afresh each time the root turns
// out to have been replaced.
func (w *workspace) run() {
	for w.serve() {
		w.d.log.Warn("root replaced by another directory; rebuilding its index", "root", w.root)
	}
}

// serve opens (or builds) the index, starts its Freshener (which alone
// updates and compacts the index from then on) and publishes both, until
// the workspace's context ends. It owns the index and the Freshener and
// closes them when it returns. It reports true when the Freshener stopped
// because the root was replaced (deleted and made again, or swapped for
// another directory) and a directory is there now: the index describes
// something else, so run serves again from a new attempt. A root that is
// simply gone stays stale (queries walk, "index_stale") until a query
// finds it back.
func (w *workspace) serve() (again bool) {
	ix, fresh, id, err := w.open()
	if err != nil {
		w.fail(err)
		return false
	}
	defer func() {
		if err := fresh.Close(); err != nil {
			w.d.log.Warn("closing the freshener", "root", w.root, "err", err)
		}
		if err := ix.Close(); err != nil {
			w.d.log.Warn("closing the index", "root", w.root, "err", err)
		}
	}()
	// A build's scratch memory (some 170 MB for $GOROOT/src, against a
	// 16 MB index) and a reopen's (the walk of the catch-up) are garbage
	// now: hand them back to the system before the root is ready, so that
	// the daemon's resident size once ready is what it keeps (a client
	// that waited for ready and then looks must not see the scratch).
	debug.FreeOSMemory()
	if w.d.cfg.TuneCollector {
		tuneCollector() // the collection just run measured what is live
	}
	w.mu.Lock()
	w.state, w.phase = rpc.StateReady, ""
	w.ix, w.fresh = ix, fresh
	w.id = id
	if jf, ok := fresh.(Journaled); ok {
		w.journal = jf.Journal()
	}
	w.readyIn = time.Since(w.started)
	reopened, took := w.reopened, w.readyIn
	close(w.attempt)
	w.mu.Unlock()
	w.d.log.Info("root ready", "root", w.root, "files", ix.Len(), "reopened", reopened, "took", took.Round(time.Millisecond))

	freshDone := fresh.Done()
	stopped := false // the Freshener stopped on its own: the root vanished
	for {
		select {
		case <-w.ctx.Done():
			return false
		case <-w.nudge:
			// A query or status put the root back to building (it found
			// the directory replaced), or the root is back.
			if w.retired(ix) || stopped && !gone(w.root) {
				w.retire(ix)
				return true
			}
		case <-freshDone:
			freshDone, stopped = nil, true
			if w.ctx.Err() == nil && (w.retired(ix) || !gone(w.root)) {
				w.retire(ix)
				return true
			}
			w.d.log.Warn("the index is no longer kept current", "root", w.root)
			w.setErr(errors.New("the index is no longer kept current (root moved or deleted?)"))
		}
	}
}

// retire puts the workspace back to building for a new attempt by the
// same goroutine, unless ix, the index it served, is retired already:
// queries wait for the new attempt (first contact) or walk
// ("index_building") from now on, status says building, index --wait
// waits for the new attempt, and none gets the index being closed.
func (w *workspace) retire(ix *index.Index) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ix != ix || w.state != rpc.StateReady {
		return
	}
	w.state, w.phase, w.lastErr = rpc.StateBuilding, "", ""
	w.ix, w.fresh, w.journal = nil, nil, nil
	w.progress, w.reopened = index.Progress{}, false
	w.started = time.Now()
	w.attempt = make(chan struct{})
}

// retired reports whether ix is no longer the index served (retire).
func (w *workspace) retired(ix *index.Index) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ix != ix
}

// noticeReplaced retires the ready index (retire) when the directory at
// the root's path is not the one it describes, and wakes the workspace
// goroutine to serve the new one; it reports whether it did. The
// directory is another when its identity (device, inode and birth time:
// rooted.ID) differs from the one recorded when the index's Freshener
// started, when the Freshener
// stopped (it stops when its root goes), or when rootGone says the
// Freshener found it gone (its barrier failed with watch.ErrRootGone).
// A root with no
// directory at its path is left as it is (dropGone drops it). Queries,
// status and index call it, so that none answers from the index of a
// directory that was replaced before the call, nor says it ready,
// whether or not the Freshener has noticed yet.
func (w *workspace) noticeReplaced(rootGone bool) bool {
	id, isDir, err := rooted.IDOf(w.root)
	if err != nil || !isDir {
		return false
	}
	w.mu.Lock()
	ix, fresh := w.ix, w.fresh
	replaced := w.state == rpc.StateReady && (rootGone || id != w.id || stopped(fresh))
	w.mu.Unlock()
	if !replaced {
		return false
	}
	w.d.log.Info("root replaced by another directory; indexing it afresh", "root", w.root)
	w.retire(ix)
	select {
	case w.nudge <- struct{}{}:
	default:
	}
	return true
}

// stopped reports whether fresh has stopped on its own (Done closed).
func stopped(fresh Freshener) bool {
	if fresh == nil {
		return false
	}
	select {
	case <-fresh.Done():
		return true
	default:
		return false
	}
}

// open opens or builds the index and starts its Freshener, returning once
// the Freshener is ready, with the identity of the directory at the
// root's path when the Freshener started. A Freshener that stops before
// it is ready while a directory is at the root's path (the root was
// replaced meanwhile) is started again on a new open of the index.
func (w *workspace) open() (*index.Index, Freshener, rooted.ID, error) {
	for {
		ix, fresh, id, err := w.openOnce()
		if !errors.Is(err, errStoppedEarly) || gone(w.root) || w.ctx.Err() != nil {
			return ix, fresh, id, err
		}
		w.d.log.Warn("root replaced while it was being indexed; indexing it again", "root", w.root)
	}
}

// errStoppedEarly: the Freshener stopped before it was ready.
var errStoppedEarly = errors.New("keeping the index current: stopped before it was ready")

// openOnce is one attempt of open.
func (w *workspace) openOnce() (*index.Index, Freshener, rooted.ID, error) {
	if h := w.d.cfg.hooks; h != nil && h.beforeOpen != nil {
		if err := h.beforeOpen(w.ctx, w.root); err != nil {
			return nil, nil, rooted.ID{}, err
		}
	}
	ix, reopened, err := w.openOrBuild()
	if err != nil {
		return nil, nil, rooted.ID{}, err
	}
	w.mu.Lock()
	w.reopened = reopened
	w.mu.Unlock()
	w.setPhase(rpc.PhaseCatchUp)
	// Taken before the Freshener starts: a directory replaced after this
	// is one the index may not describe (noticeReplaced).
	id, _, _ := rooted.IDOf(w.root) // none: noticeReplaced finds any directory there another
	fresh, err := w.d.cfg.NewFreshener(w.ctx, w.root, ix, w.d.log.With("root", w.root))
	if err != nil {
		ix.Close()
		return nil, nil, rooted.ID{}, fmt.Errorf("keeping the index current: %w", err)
	}
	select {
	case <-fresh.Ready():
		return ix, fresh, id, nil
	case <-fresh.Done():
		err = errStoppedEarly
	case <-w.ctx.Done():
		err = w.ctx.Err()
	}
	fresh.Close()
	ix.Close()
	return nil, nil, rooted.ID{}, err
}

// openOrBuild opens the saved index or builds one (index.OpenOrBuild:
// a DB that fails its checks is moved aside, logged here, and rebuilt; a
// reopen cut short by the workspace's end keeps the DB), reporting the
// phases and the build's progress in the root's status. reopened says
// the saved index was used.
func (w *workspace) openOrBuild() (ix *index.Index, reopened bool, err error) {
	ix, rebuilt, err := index.OpenOrBuild(w.ctx, w.db, w.root, &index.OpenOptions{
		Progress: w.setProgress,
		Phase: func(p index.Phase) {
			w.setPhase(map[index.Phase]string{index.PhaseReopen: rpc.PhaseReopen, index.PhaseBuild: rpc.PhaseBuild, index.PhaseSave: rpc.PhaseSave}[p])
		},
		Discarded: func(err error, movedTo string) {
			w.d.log.Warn("discarding the saved index", "root", w.root, "db", w.db, "moved_to", movedTo, "err", err)
		},
		NoReconcile: w.d.cfg.catchUpByFreshener,
	})
	return ix, !rebuilt, err
}

// fail ends a build attempt. A build stopped because the workspace ended
// is not a failure: the root stays "building" and waiters see the
// workspace's end.
func (w *workspace) fail(err error) {
	if w.ctx.Err() != nil {
		return
	}
	w.d.log.Error("indexing failed", "root", w.root, "err", err)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state, w.phase, w.lastErr = rpc.StateError, "", err.Error()
	close(w.attempt)
}

func (w *workspace) setErr(err error) {
	w.mu.Lock()
	w.lastErr = err.Error()
	w.mu.Unlock()
}

func (w *workspace) setPhase(p string) {
	w.mu.Lock()
	w.phase = p
	w.mu.Unlock()
}

func (w *workspace) setProgress(p index.Progress) {
	w.mu.Lock()
	w.progress = p
	w.mu.Unlock()
	if h := w.d.cfg.hooks; h != nil && h.progress != nil {
		h.progress(w.ctx, p)
	}
}

// SyncTimeout bounds the read-your-writes barrier of one query; past it
// the query walks and says so (fallback "index_stale").
const SyncTimeout = 2 * time.Second

// First contact (docs/product.md, "Freshness"): a query that finds its root
// building (new, or reopening and revalidating after a restart) waits for the
// index for FirstContactWait, or, when the build reports that it will end
// within FirstContactMaxETA, until then plus FirstContactWait; it walks only
// if the index is still not ready. A small tree's first answer, and the first
// answers after a restart, so come from the index.
const (
	FirstContactWait   = 300 * time.Millisecond
	FirstContactMaxETA = 1500 * time.Millisecond
)

// awaitBuild waits, as first contact allows, for the current build
// attempt to end; it reports whether it waited at all.
func (w *workspace) awaitBuild(ctx context.Context) bool {
	w.mu.Lock()
	state, attempt, eta := w.state, w.attempt, w.progress.ETA
	w.mu.Unlock()
	if state != rpc.StateBuilding {
		return false
	}
	budget := FirstContactWait
	if eta > 0 && eta <= FirstContactMaxETA {
		budget += eta
	}
	t := w.d.cfg.clock.NewTimer(budget)
	defer t.Stop()
	select {
	case <-attempt:
	case <-t.C():
	case <-ctx.Done():
	case <-w.ctx.Done():
	}
	return true
}

// trusted returns the index a query of dir may use, or nil and the reason
// it must walk instead. A ready index is trusted once the Freshener's sync
// barrier has passed (unless the query asked for sync=false) and it
// vouches for dir. (A query waits for a building root first: awaitBuild,
// in searcher.pick.)
func (w *workspace) trusted(ctx context.Context, dir string, sync bool) (*index.Index, []string, envelope.FallbackReason) {
	w.mu.Lock()
	state, ix, fresh := w.state, w.ix, w.fresh
	w.mu.Unlock()
	switch state {
	case rpc.StateBuilding:
		return nil, nil, envelope.ReasonIndexBuilding
	case rpc.StateError:
		return nil, nil, envelope.ReasonIndexError
	case rpc.StateUnwatched:
		return nil, nil, envelope.ReasonNoWatcher
	}
	if stopped(fresh) {
		// The Freshener stopped (root moved or deleted): if a directory
		// is back at the root's path, serve it afresh.
		if w.noticeReplaced(false) {
			return nil, nil, envelope.ReasonIndexBuilding
		}
		return nil, nil, envelope.ReasonIndexStale
	}
	if sync {
		if err := barrier(ctx, fresh); err != nil {
			if errors.Is(err, watch.ErrRootGone) && w.noticeReplaced(true) {
				return nil, nil, envelope.ReasonIndexBuilding
			}
			return nil, nil, envelope.ReasonIndexStale
		}
	}
	live := fresh.Live()
	if slices.Contains(live, ".") {
		return nil, nil, envelope.ReasonWatchLimit // the root itself is not watched
	}
	if r := fresh.Stale(dir); r != "" && r != envelope.ReasonWatchLimit {
		return nil, nil, r
	}
	return ix, live, "" // unwatched subtrees are walked and merged by query.Indexed
}

// barrier passes fresh's read-your-writes barrier, waiting at most
// SyncTimeout.
func barrier(ctx context.Context, fresh Freshener) error {
	sctx, cancel := context.WithTimeout(ctx, SyncTimeout)
	defer cancel()
	return fresh.Sync(sctx)
}

// settle passes a ready root's sync barrier and retires its index if the
// root turns out to have been replaced (noticeReplaced). It reports
// whether the root is settled: its attempt ended, not as building again
// (retired meanwhile, by settle or by the workspace goroutine), and, when
// ready, the barrier passed or failed for another reason than a
// replacement. An index --wait waits again until it is.
func (w *workspace) settle(ctx context.Context) (settled bool) {
	w.mu.Lock()
	state, fresh, ix := w.state, w.fresh, w.ix
	w.mu.Unlock()
	switch state {
	case rpc.StateBuilding:
		return false
	case rpc.StateReady:
	default:
		return true
	}
	err := barrier(ctx, fresh)
	if w.noticeReplaced(errors.Is(err, watch.ErrRootGone)) {
		return false
	}
	return !w.retired(ix)
}

// wait blocks until the current build attempt ends, ctx is done or the
// workspace ends.
func (w *workspace) wait(ctx context.Context) error {
	w.mu.Lock()
	attempt := w.attempt
	w.mu.Unlock()
	select {
	case <-attempt:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.ctx.Done():
		return errWorkspaceEnded
	}
}

var errWorkspaceEnded = errors.New("daemon: the root was forgotten or the daemon is stopping")

// status reports the root's state: building, not ready, once the
// directory at the root's path is not the one the index describes
// (noticeReplaced).
func (w *workspace) status() rpc.RootStatus {
	w.noticeReplaced(false)
	w.mu.Lock()
	st := rpc.RootStatus{
		Root:      w.root,
		State:     w.state,
		Phase:     w.phase,
		DB:        w.db,
		Reopened:  w.reopened,
		Queries:   w.queries.Load(),
		LastError: w.lastErr,
	}
	var ix *index.Index
	switch w.state {
	case rpc.StateReady:
		ix = w.ix
		st.ReadyMS = w.readyIn.Milliseconds()
	case rpc.StateBuilding:
		p := w.progress
		st.Files = p.Files
		st.Progress = &rpc.BuildProgress{Files: p.Files, TotalFiles: p.TotalFiles, Bytes: p.Bytes, TotalBytes: p.TotalBytes, ETAMS: p.ETA.Milliseconds(), ElapsedMS: time.Since(w.started).Milliseconds()}
	}
	w.mu.Unlock()
	// The index's figures are read without mu: a query takes mu (trusted),
	// and must not wait behind the index's lock, which a writer may be
	// waiting for.
	if ix != nil {
		ixs := ix.Stats()
		st.Files = ixs.Files
		st.BaseBytes, st.HeapBytes, st.DeltaFiles, st.DeltaBytes, st.Merging = ixs.BaseBytes, ixs.HeapBytes, ixs.DeltaFiles, ixs.DeltaBytes, ixs.Compacting
	}
	if st.State == rpc.StateUnwatched {
		st.DB = "" // no index: a DB left by a daemon with a watcher is not this one's
		return st
	}
	if fi, err := os.Stat(w.db); err == nil {
		st.IndexBytes = fi.Size()
	}
	return st
}
