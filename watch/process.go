package watch

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/tree"
)

// drain moves events from the notifier into the dirty set. It blocks only on
// the notifier's channels, so inotify's queue is emptied as fast as it fills.
func (w *Watcher) drain() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.event(ev)
			w.received()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.fault(err)
			w.received()
		}
	}
}

// received counts one event or error of the notifier's as recorded (see
// caughtUp).
func (w *Watcher) received() {
	w.mu.Lock()
	w.recorded++
	w.mu.Unlock()
}

// event marks an event's path dirty (or notes a cookie, a rule change, the
// root's end) and wakes the processor.
func (w *Watcher) event(ev fsnotify.Event) {
	if w.opts.onEvent != nil && !w.opts.onEvent(ev) {
		return
	}
	rel, ok := w.relOf(ev.Name)
	dir, name := split(rel)
	if ok && ignore.IsCookie(name) {
		if ev.Has(fsnotify.Create) && (dir == "" || dir == ignore.GitDir) {
			w.cookieSeen(name)
		}
		return // never indexed
	}
	if w.inputEvent(ev) || !ok {
		return // an input directory's alone, or outside the root
	}
	if dir == ignore.GitDir {
		return // the cookie directory's other traffic
	}
	w.mu.Lock()
	w.st.Events++
	switch {
	case rel == "":
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.rootGone = true
		} else {
			w.dirty[rel] |= ev.Op
		}
	default:
		w.dirty[rel] |= ev.Op
		switch name {
		case ignore.GitignoreFile, ignore.IgnoreFile:
			if ev.Op != fsnotify.Chmod {
				w.rules[dir] = true
			}
		case ignore.GitDir:
			// Made, removed, or (a file) pointed elsewhere: .gitignore
			// files above apply only inside a repository, and its
			// inputs are found again (inputs.go).
			if ev.Op != fsnotify.Chmod {
				w.rules[dir] = true
			}
		}
	}
	w.mu.Unlock()
	w.signal()
}

// fault handles an error from the notifier. An overflow means events were
// lost: the root is suspect until a whole-tree reconcile ends.
func (w *Watcher) fault(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("watch: inotify error", "root", w.root, "err", err)
		return
	}
	w.log.Warn("watch: event queue overflow; reconciling the whole tree", "root", w.root)
	w.truncateJournal()
	w.mu.Lock()
	w.st.Overflows++
	w.resyncs++
	w.st.Suspect = true
	w.mu.Unlock()
	w.signal()
}

// batch is what the processor takes from the dirty set at once.
type batch struct {
	paths    map[string]fsnotify.Op
	rules    map[string]bool
	indexes  map[string]bool // repositories whose index changed
	inputs   bool            // the rules' inputs are to be found again
	cookies  []*cookie
	resync   bool   // a whole-tree reconcile is wanted
	resyncAt uint64 // the resyncs count it answers
	rootGone bool
}

// take empties the dirty set into a batch; ok is false when there is
// nothing to do.
func (w *Watcher) take() (b batch, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b = batch{
		paths:    w.dirty,
		rules:    w.rules,
		indexes:  w.indexes,
		inputs:   w.inputsStale,
		cookies:  w.seen,
		resync:   w.resyncs != w.taken,
		resyncAt: w.resyncs,
		rootGone: w.rootGone,
	}
	if len(b.paths) == 0 && len(b.rules) == 0 && len(b.indexes) == 0 && !b.inputs && len(b.cookies) == 0 && !b.resync && !b.rootGone {
		w.busy = false // every batch taken so far is done
		return b, false
	}
	w.busy = true
	w.taken = w.resyncs
	w.dirty = make(map[string]fsnotify.Op)
	w.rules = make(map[string]bool)
	w.indexes = make(map[string]bool)
	w.inputsStale = false
	w.seen = nil
	w.inBatch = len(b.paths)
	return b, true
}

// process applies batches until the watcher stops.
func (w *Watcher) process() {
	defer w.shutdown(ErrClosed)
	defer func() {
		if w.compactTimer != nil {
			w.compactTimer.Stop()
		}
	}()
	w.withRoot(func() { w.guard(nil, func() { w.resync(nil, nil) }) })
	if w.ctx.Err() != nil {
		return
	}
	// The initial reconcile wrote its changes as it made them, as a build
	// or a reopen does, before the root is ready; from here the DB's
	// writes go behind (writeBehind).
	stop := w.ix.DeferWrites()
	w.wg.Go(func() { w.writeBehind(stop) })
	w.markReady() // if the initial reconcile panicked, it did not
	for {
		// When idle: a delta reopened large (changes made before a
		// restart) is compacted as one grown by events is.
		w.maybeCompact()
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
		for {
			b, ok := w.take()
			if !ok {
				break
			}
			if b.rootGone || !w.withRoot(func() { w.guard(b.cookies, func() { w.handle(b) }) }) {
				w.stopRootGone()
				return
			}
			if w.ctx.Err() != nil {
				return
			}
		}
	}
}

// maybeCompact starts a compaction in the background if the index needs
// one and none runs: batches (and sync barriers) go on being served while
// the index builds its new base aside. After a failed one (a full disk),
// the next waits its backoff (compactBackoff), and the processor wakes
// itself for it then: nothing else may (a Sync finds a watcher with
// nothing pending caught up, without a batch).
func (w *Watcher) maybeCompact() {
	if !w.ix.NeedsCompact() {
		return
	}
	if wait := time.Duration(w.compactNotBefore.Load() - time.Now().UnixNano()); wait > 0 {
		if w.compactTimer == nil {
			w.compactTimer = time.AfterFunc(wait, w.signal)
		} else {
			w.compactTimer.Reset(wait)
		}
		return
	}
	if w.compacting.CompareAndSwap(false, true) {
		w.wg.Go(func() {
			err := w.ix.Compact()
			if err != nil {
				n := w.compactFailures.Add(1)
				w.compactNotBefore.Store(time.Now().Add(compactBackoff(n)).UnixNano())
			} else {
				w.compactFailures.Store(0)
			}
			// Done before failed wakes the processor, so that its idle
			// point after the reconcile finds no compaction running and
			// arms the retry.
			w.compacting.Store(false)
			if err != nil {
				w.failed(err)
				return
			}
			// The delta folded in is garbage now: hand its pages back
			// to the system, as a build's are, or the daemon stays as
			// large as the burst made it (16,000 rewrites on a
			// 200,000-file tree: RssAnon 314 MiB after the compaction,
			// the index's own heap estimate 42 MB; 54 MiB with this).
			debug.FreeOSMemory()
		})
	}
}

// compactBackoff is how long the n-th compaction failed in a row holds off
// the next: a second, doubled each time, at most a minute.
func compactBackoff(n int32) time.Duration {
	return min(time.Second<<min(max(n-1, 0), 6), time.Minute)
}

// guard runs fn, one batch's work, and turns a panic in it into a failed
// update: logged with its stack, the root suspect, a whole-tree reconcile
// asked for, and the batch's cookies handed back so that the reconcile
// releases them. The watcher keeps running.
func (w *Watcher) guard(cookies []*cookie, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("watch: panic while applying events; reconciling the whole tree", "root", w.root, "panic", r, "stack", string(debug.Stack()))
			w.mu.Lock()
			w.seen = append(cookies, w.seen...)
			w.inBatch = 0
			w.mu.Unlock()
			w.failed(fmt.Errorf("watch: panic: %v", r))
		}
	}()
	fn()
}

// withRoot runs fn with w.r open on the root, and reports false, without
// running it, when the root cannot be opened as the directory it was
// (deleted, or replaced by a link or another directory).
func (w *Watcher) withRoot(fn func()) bool {
	r, err := rooted.Open(w.root)
	if err != nil {
		return false
	}
	defer r.Close()
	if id, err := r.ID(); err != nil || id != w.id {
		return false
	}
	w.r = r
	defer func() { w.r = nil }()
	fn()
	return true
}

// stopRootGone stops the watcher for good: the index describes nothing
// that exists any more.
func (w *Watcher) stopRootGone() {
	w.log.Warn("watch: root moved or deleted; watcher stopped", "root", w.root)
	w.mu.Lock()
	w.rootGone = true
	w.mu.Unlock()
	w.shutdown(ErrRootGone)
	w.cancel()
	_ = w.fsw.Close() // ends the drain; Close will find it closed
}

// handle applies one batch.
func (w *Watcher) handle(b batch) {
	if w.opts.onBatch != nil {
		w.opts.onBatch(b.paths)
	}
	w.removed = 0
	w.inputsFirst(&b)
	defer w.inputsAfter()
	if b.resync || b.rules[""] {
		w.resync(&b, b.cookies)
		return
	}
	scopes := w.journalScopes(b)
	if w.opts.onScopes != nil {
		w.opts.onScopes(scopes)
	}
	var ignored []journal.Change
	w.journaled(scopes, b.paths, func() { w.apply(b, &ignored) }, func() []journal.Change { return ignored })
	w.finishBatch(b.cookies, false)
}

// inputsFirst brings the rules' inputs up to date before the batch reads
// any rule (inputs.go): found again and watched when one that says where
// the others are changed, or a repository appeared, went or may have
// (the rules of its directory changed); and the directories whose
// tracked state a changed index turned added to the batch's paths.
func (w *Watcher) inputsFirst(b *batch) {
	var dirs []string
	for _, d := range sortedKeys(b.rules) {
		w.inputMu.Lock()
		_, known := w.repos[d]
		w.inputMu.Unlock()
		if d == "" || known || w.holdsGit(d) {
			dirs = append(dirs, d)
		}
	}
	// A whole-tree reconcile applies the rules as they are now: the
	// inputs are found again (events may have been lost) and every
	// repository's tracked directories read again.
	whole := b.resync || b.rules[""]
	if b.inputs || len(dirs) > 0 || whole {
		w.refreshInputs(dirs, whole)
	}
	if len(b.indexes) > 0 && !whole {
		w.trackedChanges(b.indexes, b.paths)
	}
}

// inputsAfter drops the watches of repositories the batch forgot (their
// directories unwatched), and moves the watches of input directories
// under the root whose coverage by the tree's watches the batch changed.
func (w *Watcher) inputsAfter() {
	w.inputMu.Lock()
	dropped := w.reposDropped
	w.inputMu.Unlock()
	switch {
	case dropped:
		w.refreshInputs(nil, false)
	case w.inputOwnershipChanged():
		w.refreshInputs(nil, false)
	}
}

// apply brings one batch's paths up to date in the index and the watch
// table, appending to ignored the journal entries of the ignored files
// the batch names.
func (w *Watcher) apply(b batch, ignored *[]journal.Change) {
	rc := ignore.NewCache(w.r)
	var apply []string          // paths for Index.Apply
	isDir := map[string]bool{}  // which of them are directories now
	isFile := map[string]bool{} // which are files (or links, or others) now
	var prune []index.Skipped   // paths ignored at their own name
	var rewatch []string        // directories to (re)watch, after all removals
	for _, d := range sortedKeys(b.rules) {
		if st, err := w.r.Lstat(d); err == nil && isDirStat(st) && w.dirs.has(d) {
			rewatch = append(rewatch, d)
			apply = append(apply, d)
			isDir[d] = true
		}
	}
	for _, p := range sortedKeys(b.paths) {
		op := b.paths[p]
		st, err := w.r.Lstat(p)
		switch {
		case err != nil: // gone (or under a link now): the index drops it and everything under it
			w.unwatch(p)
			w.unwatchFile(p)
			apply = append(apply, p)
			if w.opts.Journal != nil && !holds(w.ix, p) && !w.ignoredDir(p) && rc.Path(p, false).Ignored {
				*ignored = append(*ignored, ignoredChange(p, op, false, 0, (*ignore.Cache)(nil).Hidden(p, false)))
			}
		case isDirStat(st):
			w.unwatchFile(p) // a file replaced by a directory
			v := rc.Path(p, true)
			ignored, self, deflist := v.Ignored, v.Self, v.Default
			// Created, moved in, replaced, or not watched yet: any watch
			// at p is stale and goes before any is added.
			fresh := ignored || op&(fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 || !w.dirs.has(p)
			if fresh {
				w.unwatch(p)
				if !ignored {
					rewatch = append(rewatch, p)
				}
			}
			if ignored && self {
				prune = append(prune, index.Skipped{Path: p, IsDir: true, Default: deflist})
				w.unwatchFilesUnder(p) // Prune drops what the index held there
			} else {
				w.dropReplaced(p, true)
				apply = append(apply, p)
				isDir[p] = true
			}
		default:
			w.unwatch(p) // a directory replaced by a file
			if v := rc.Path(p, false); v.Ignored && v.Self {
				prune = append(prune, index.Skipped{Path: p})
				w.unwatchFile(p)
				if w.opts.Journal != nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
					*ignored = append(*ignored, ignoredChange(p, op, true, tree.Nanos(st.Mtim.Sec, st.Mtim.Nsec), (*ignore.Cache)(nil).Hidden(p, false)))
				}
			} else {
				w.dropReplaced(p, false)
				// Watched (or not) on its own before the index reads it:
				// a write after the read makes an event.
				w.watchLink(p, &st)
				apply = append(apply, p)
				isFile[p] = true
			}
		}
	}
	for _, d := range outermost(rewatch) {
		parent, _ := split(d)
		if d != "" && !w.dirs.has(parent) {
			continue // its parent is not watched (gone, unwatched): nor is it
		}
		w.registerRepoAt(d) // before its rules are read
		w.watchTree(d, rc.At(d))
	}
	w.applyPaths(minimal(apply, isDir, isFile))
	if len(prune) > 0 {
		if err := w.ix.Prune(prune); err != nil {
			w.failed(err)
		}
	}
	if w.removed > 0 && (len(w.unwatched) > 0 || len(w.linkFailed) > 0) {
		w.retryUnwatched(rc)
	}
}

// resync rewatches and reconciles the whole tree: the initial reconcile
// (b == nil), after an overflow or a failed update, or when the root's
// ignore rules changed. The cookies in release, and those every caller of
// which had already called Sync when it began, are released when it ends.
func (w *Watcher) resync(b *batch, release []*cookie) {
	release = append(release, w.seal()...)
	if b != nil && w.opts.beforeResync != nil {
		w.opts.beforeResync()
	}
	rc := ignore.NewCache(w.r)
	if b != nil { // the initial one follows Start's watching
		w.watchTree("", rc.At(""))
		w.chooseCookieDir()
	}
	// The initial reconcile precedes every token, and after lost events
	// the journal is truncated: only a reconcile for changed root rules
	// is journaled.
	var scopes []string
	var named map[string]fsnotify.Op
	if b != nil && !b.resync {
		scopes, named = []string{""}, b.paths
	}
	var err error
	w.journaled(scopes, named, func() { err = w.reconcile(b, rc) }, nil)
	if b != nil && b.resync {
		w.truncateJournal()
	}
	if w.ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.st.Reconciles++
	if err != nil {
		w.st.Err = err
		w.st.Suspect = true // the index may be behind until a reconcile succeeds
	} else {
		w.st.Err = nil
		if b != nil && b.resyncAt == w.resyncs {
			w.st.Suspect = false
		}
	}
	w.mu.Unlock()
	if err != nil {
		w.log.Warn("watch: reconcile failed; the index stays suspect", "root", w.root, "err", err)
	}
	if b == nil {
		// The watches the initial walk added, and the subtrees it could
		// not watch, are in State before it says Ready: a query that
		// finds the root ready must see an unwatched subtree as one.
		w.publish()
		// Ready before the callers that joined during the initial
		// reconcile are released: a Sync that returns finds it ready.
		w.markReady()
	}
	w.finishBatch(release, true)
}

// reconcile reconciles the whole index and re-reads the files b's events
// named (b nil: the initial reconcile, whose walk also watches the tree
// when Start left that to it).
func (w *Watcher) reconcile(b *batch, rc *ignore.Cache) error {
	var err error
	defer func() {
		// The walk listed every file: after a failed one, the files it
		// found are watched but no watch is dropped.
		w.settleLinks(err == nil)
	}()
	if b == nil && w.walkWatches {
		err = w.reconcileWatching()
		return err
	}
	err = w.reconcileIndex(index.ReconcileOptions{})
	if err == nil && b != nil {
		// Files named by events are re-read even if their stat looks
		// unchanged (a rewrite within one mtime tick). Ignored ones are
		// left to the reconcile, which recorded them.
		var files []string
		for _, p := range sortedKeys(b.paths) {
			if st, e := w.r.Lstat(p); e == nil && !isDirStat(st) {
				if !rc.Path(p, false).Ignored {
					files = append(files, p)
				}
			}
		}
		if len(files) > 0 {
			err = w.ix.ApplyWith(w.ctx, files, w.indexOptions())
		}
	}
	return err
}

// reconcileIndex reconciles the whole index (Index.ReconcileWith, with
// opts), reporting the files with more than one link to settleLinks.
func (w *Watcher) reconcileIndex(opts index.ReconcileOptions) error {
	w.beginLinks()
	opts.Linked = w.noteLinked
	_, err := w.ix.ReconcileWith(w.ctx, opts)
	return err
}

func isDirStat(st unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// markReady publishes that the initial watch and reconcile are done and
// closes Ready; later calls do nothing.
func (w *Watcher) markReady() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st.Ready {
		return
	}
	w.st.Ready = true
	close(w.ready)
}

// applyPaths brings paths up to date in the index, and the watches of
// the files with more than one link there (settleLinks).
func (w *Watcher) applyPaths(paths []string) {
	if len(paths) == 0 {
		return
	}
	w.indexApply(paths)
	w.settleLinks(false)
}

// indexApply brings paths up to date in the index (Index.ApplyWith).
func (w *Watcher) indexApply(paths []string) {
	err := w.ix.ApplyWith(w.ctx, paths, w.indexOptions())
	w.mu.Lock()
	w.st.Applies++
	w.mu.Unlock()
	if err != nil && w.ctx.Err() == nil {
		w.failed(err)
	}
}

// failed records an update failure: the index may have missed a change,
// so it is suspect until a whole-tree reconcile succeeds. A failing
// reconcile does not ask for another (no loop); the next failure or
// overflow will.
func (w *Watcher) failed(err error) {
	w.log.Warn("watch: index update failed; reconciling the whole tree", "root", w.root, "err", err)
	w.truncateJournal()
	w.mu.Lock()
	w.st.Err = err
	w.st.Suspect = true
	w.resyncs++
	w.mu.Unlock()
	w.signal()
}

// retryUnwatched tries again to watch the subtrees the watch limit left
// out, then the files with more than one link it left unwatched, now
// that watches were freed; each one watched is reconciled (a file read
// again), since the index there may have gone stale. It stops at the
// first that still fails.
func (w *Watcher) retryUnwatched(rc *ignore.Cache) {
	var now []string
	limited := false
	for _, u := range sortedKeys(w.unwatched) {
		parent, _ := split(u)
		if u != "" && !w.dirs.has(parent) {
			continue
		}
		if limited = w.watchTree(u, rc.At(u)); limited {
			break
		}
		if w.dirs.has(u) {
			now = append(now, u)
		}
	}
	for _, p := range sortedKeys(w.linkFailed) {
		if limited {
			break
		}
		st, err := w.r.Lstat(p)
		if err != nil {
			delete(w.linkFailed, p) // gone: its event says so
			continue
		}
		w.watchLink(p, &st)
		if w.linkFailed[p] {
			break
		}
		now = append(now, p)
	}
	named := make(map[string]fsnotify.Op)
	for _, p := range now {
		named[p] = fsnotify.Write // a file watched again may have been written unseen
	}
	w.journaled(now, named, func() { w.applyPaths(now) }, nil)
}

// dropReplaced removes what the index holds at p of the other kind: a
// file where p is now a directory, or files under p where p is now a
// file. Index.Apply reconciles a directory's contents and a file's own
// entry but not a change of kind at the path itself.
func (w *Watcher) dropReplaced(p string, nowDir bool) {
	stale := false
	if nowDir {
		stale = holds(w.ix, p)
	} else {
		w.ix.Candidates(index.CandidateOptions{Dir: p}, func(*index.File) bool { stale = true; return false })
	}
	if !stale {
		return
	}
	var err error
	if nowDir {
		err = w.ix.Remove(p)
	} else {
		w.unwatchFilesUnder(p)
		err = w.ix.RemoveTree(p)
	}
	if err != nil {
		w.failed(err)
	}
}

// holds reports whether the index has an entry at exactly rel.
func holds(ix *index.Index, rel string) bool {
	dir, name := split(rel)
	found := false
	ix.Candidates(index.CandidateOptions{Dir: dir, Prefix: name}, func(f *index.File) bool {
		found = f.Path == rel // rel itself sorts first among paths it prefixes
		return false
	})
	return found
}

// finishBatch publishes the state after a batch and releases its cookies.
func (w *Watcher) finishBatch(cookies []*cookie, resync bool) {
	w.publish()
	w.mu.Lock()
	w.inBatch = 0
	if !resync {
		w.st.Batches++
	}
	w.mu.Unlock()
	for _, c := range cookies {
		w.finish(c, nil)
	}
	if w.ix.HasPending() { // the batch's DB writes: behind, once the cookies are out
		select {
		case w.flushWake <- struct{}{}:
		default:
		}
	}
}

// writeBehind writes the index's changes to its DB behind the processor
// (index.Index.Flush), woken after each batch: a batch's sync barriers
// are released once it is applied to memory, and its transaction and
// fsync overlap the next batch. A failed write is a failed update
// (failed); the writes stay pending for the next. When the watcher stops
// it writes what is left and ends the deferral.
func (w *Watcher) writeBehind(stop func() error) {
	defer func() {
		if err := stop(); err != nil {
			w.log.Warn("watch: writing the index's last changes failed", "root", w.root, "err", err)
		}
	}()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.flushWake:
		}
		if err := w.ix.Flush(); err != nil && w.ctx.Err() == nil {
			w.failed(err)
		}
	}
}

// publish copies the processor's watch table figures into the state:
// the unwatched subtrees, and the directories of the files that could
// not be watched on their own.
func (w *Watcher) publish() {
	un := append(sortedKeys(w.unwatched), w.linkedDirs()...)
	for i, u := range un {
		if u == "" {
			un[i] = "."
		}
	}
	slices.Sort(un)
	un = slices.Compact(un)
	if len(w.linkFailed) == 0 {
		w.linkWarned = false
	}
	files := w.fsw.FileWatches()
	w.mu.Lock()
	w.st.Dirs = w.dirs.len()
	w.st.Files = files
	w.st.Unwatched = un
	w.mu.Unlock()
}

// outermost drops the directories that lie below another in dirs.
func outermost(dirs []string) []string {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) > 0 && within(d, out[len(out)-1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// minimal drops from paths what an Apply of a directory among them
// already covers (paths below it that are directories or gone), keeping
// the files events named: a directory's walk trusts unchanged stats, an
// explicit path is always re-read.
func minimal(paths []string, isDir, isFile map[string]bool) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	covered := func(p string) bool {
		for d := p; d != ""; {
			d, _ = split(d)
			if isDir[d] {
				return true
			}
		}
		return false
	}
	out := paths[:0]
	for _, p := range paths {
		if isFile[p] || !covered(p) {
			out = append(out, p)
		}
	}
	return out
}
