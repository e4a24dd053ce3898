// Package watch keeps one workspace root's index current: a recursive
// watcher on inotify (see notifier) that watches every directory the index
// holds, and on its own every file there with more than one link (which
// can be written through a path no watched directory sees: links.go), and
// turns events into index updates, and Sync, the read-your-writes barrier
// a query passes before it trusts the index (docs/product.md, "Freshness").
//
// # Goroutines
//
// Start starts two goroutines, drain and process; process starts
// writeBehind once the initial reconcile is done, and the background
// compactions. Close cancels their context and waits for all of them (one
// WaitGroup). Nothing else is started, so nothing outlives Close.
//
//   - drain reads the notifier's Events and Errors channels and never blocks
//     on anything but them: it records each event's path in the dirty set
//     (under mu), notes overflows and cookie arrivals, and wakes the
//     processor through a one-slot channel (a send that never waits).
//   - process is the only goroutine that changes the index and the only
//     owner of the watch table (which directories are watched, which could
//     not be; and those watched for the ignore rules' inputs, which the
//     initial reconcile's readers add to under inputMu: inputs.go). It
//     takes the whole dirty set at once, so bursts coalesce
//     into one Index.Apply per batch; it adds and removes watches; then it
//     releases the Sync callers whose cookies arrived with the batch. When
//     idle it compacts the index if Index.NeedsCompact says so: it is the
//     index's only writer, compactions included. After a failed compaction
//     it arms a timer to wake itself for the retry (time.AfterFunc, whose
//     function only wakes it, as drain does); it stops the timer when it
//     returns.
//   - writeBehind writes the index's changes to its DB (Index.Flush),
//     woken after each batch: once the initial reconcile has written its
//     own, the index defers its DB writes for the rest of the watcher's
//     life (Index.DeferWrites), so a batch's sync barriers are released
//     before its transaction's fsync, which overlaps the next batch. It
//     writes what is left when the watcher stops.
//
// The notifier's reader goroutine is ended by the notifier's Close, which
// Close calls and which waits for it. Sync callers wait on their cookie,
// their ctx or the watcher's end; they start nothing. When the root
// vanishes the processor cancels the context itself and the watcher stops;
// Close must still be called to release the inotify descriptor.
//
// # Invariants
//
//   - Events are hints, the file system is the truth: every path is
//     re-examined with lstat beneath the root (rooted.Root.Lstat: a path
//     with a symlink among its parents is gone), as Index.Apply does, and
//     so does the processor before it touches watches.
//   - A directory is watched and listed through one descriptor opened
//     beneath the root: never through a symlink, whatever the path names
//     by the time the watch is added.
//   - A directory is watched before it is scanned: a new directory gets its
//     watch, then its listing, then Index.Apply walks it. A file created
//     before the watch is in the listing; one created after makes an event.
//     At Start only the root (and .git) is watched: the initial
//     reconcile's walk adds every other directory's watch, from its
//     readers, just before listing it (reconcileWatching), so a restart
//     walks the tree once, not once to watch it and once to reconcile.
//   - The watched directories are exactly those the index would hold (the
//     verdicts as index.Build, from ignore.Classifier: hidden directories
//     included, ignored and private ones never watched), except
//     for unwatched subtrees: a directory whose watch failed for lack of
//     inotify watches (ENOSPC) is recorded as an unwatched subtree root and
//     nothing below it is watched. Every watched directory's parent is
//     watched.
//   - Within a batch, stale watches are removed before any is added: after
//     "mv a b" the watches under a go before those under b are added (the
//     kernel keeps one watch per directory, so b's add renames a's entry in
//     the notifier's table if a's removal came later).
//   - A Sync caller is released only when every event received before its
//     cookie's has been applied, or when a whole-tree reconcile that began
//     after the caller joined its cookie has ended; a caller that needs no
//     cookie (caughtUp) only when every event the kernel queued before its
//     call has been applied.
//   - Cookie files never reach the index: the drain drops their events and
//     the walk and Index.Apply skip their names (ignore.Classifier).
//   - An input of the ignore rules outside the tree's own rule files
//     (info/exclude, the excludes file, git's configuration, a
//     repository's index) is watched before the rules are read from it,
//     on the same inotify instance, so a Sync orders its edits with the
//     tree's (inputs.go).
//   - Every regular file the index holds with more than one link, as the
//     processor last looked at it, is watched on its own (one watch per
//     file, its events sent under each of its paths the watcher knows),
//     or its directory is published as unwatched; no other file is
//     watched. An event-named file is watched before the index reads it;
//     a file a walk found, read again if it may have changed before its
//     watch was in place (links.go).
//
// # Change journal
//
// With Options.Journal the processor also records, batch by batch, what
// it changed in the index's path table (journal.go: the table's entries
// under the batch's scopes before and after; renames as deletions and
// creations), truncating the journal when events were lost.
//
// # Sync cookies
//
// A Sync made while the watcher is caught up returns at once (caughtUp):
// inotify queues an event before the system call that caused it returns,
// so when the kernel queues none for this instance, no read's events are
// still being sent, the drain has recorded every event sent, and the
// processor has finished every batch it took and finds nothing left,
// every change made before the Sync is in the index. Otherwise Sync
// creates a uniquely named empty file (ignore.CookiePrefix, then the process
// id and a counter), removes it at once, and waits for the watcher to see
// its creation: inotify delivers one instance's events in order, so every
// change made before Sync was called has been received by then; the
// caller is released after the batch holding those changes is applied.
// Callers arriving while a cookie is in flight share the next one, so at
// most two cookies exist at a time however many queries wait.
//
// Cookies go in <root>/.git when it is a directory (watched on its own,
// non-recursively, for them and for the repository's config and index,
// which are inputs of the ignore rules: see inputs.go; the rest of its
// traffic is dropped), as
// watchman puts them in the VCS directory: other tools watching the
// workspace (editors, bundlers, git status) never see them, and walks of
// the tree skip .git. Without .git they go in the root itself, where a
// walk could meet one for the instant it exists: the classifier
// (ignore.Classifier) marks cookie names reserved, so no walk, index
// update or LS lists them.
// Leftover cookies (a crash between create and remove) are removed by
// Start.
//
// # Caveats
//
//   - Linux only: the backend is inotify (notifier.go says what a
//     backend must give; notifier_linux.go, with ENOSPC and
//     /proc/sys/fs/inotify). Elsewhere Supported is false and Start
//     fails with ErrUnsupported.
//   - The .ignore files of the root's ancestors above every repository
//     (outside a repository: of all its ancestors), and a .git made in
//     such an ancestor, are not watched (ignore.AboveInputs says why); a
//     change to them reaches paths that change afterwards, and the whole
//     tree at the next whole-tree reconcile. Every other input of the
//     rules is (inputs.go). A symbolic link among the directories on the
//     way to an input is resolved when the input is watched: its
//     retargeting is not seen, unlike that of a link that is the input.
//   - The watch limit is per user, shared with other programs. Subtrees it
//     left out are tried again when this watcher frees watches and at every
//     whole-tree reconcile, not when another program frees some.
//   - The root moved by renaming one of its ancestors makes no event; Sync
//     notices (it compares the root's device and inode on every call).
//   - A link made from outside the root to a file with one link makes no
//     event on a watched directory: writes through it are seen once the
//     file is named by an event or a whole-tree reconcile (a restart)
//     finds its link count. A store into a shared mmap of a file makes no
//     event at all (links.go).
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
)

// Errors of Sync and Start.
var (
	// ErrRootGone: the root was deleted or moved away; the watcher has
	// stopped and the index no longer describes anything.
	ErrRootGone = errors.New("watch: root moved or deleted")
	// ErrSyncTimeout: the caller's context ended before the barrier was
	// reached. The index may be behind; answer from the walk.
	ErrSyncTimeout = errors.New("watch: sync timed out")
	// ErrSyncUnavailable: no cookie can be created in a watched directory
	// (read-only root, or the root itself could not be watched).
	ErrSyncUnavailable = errors.New("watch: no watched directory for sync cookies")
	// ErrClosed: the watcher was closed.
	ErrClosed = errors.New("watch: watcher closed")
)

// Options configure a Watcher. The zero value is ready to use.
type Options struct {
	// Logger receives warnings (watch limit near or reached, overflows,
	// failed updates). Nil means slog.Default().
	Logger *slog.Logger
	// AddWatch, if set, is called to watch each directory, and each file
	// watched on its own (links.go), instead of add, the watcher's own
	// inotify add; it may call add or fail on its own (tests return
	// ENOSPC to play the inotify watch limit).
	AddWatch func(path string, add func(string) error) error
	// MaxWatches is the watch limit the warning compares against; 0 reads
	// /proc/sys/fs/inotify/max_user_watches.
	MaxWatches int
	// Journal, if set, receives every change the watcher makes to the
	// index's path table, and the ignored files events name (see
	// journal.go); it is truncated when events may have been lost.
	Journal *journal.Journal

	// Test hooks (set by this package's tests only).
	// onEvent is called by the drain for each event before anything else;
	// returning false drops the event (a lost event). It may block.
	onEvent func(fsnotify.Event) bool
	// onBatch is called by the processor with each batch's paths before
	// it applies them (it may panic, to play a bug in event handling).
	onBatch func(map[string]fsnotify.Op)
	// onScopes is called by the processor with each batch's journal
	// scopes (journalScopes) before it applies the batch.
	onScopes func([]string)
	// beforeResync is called by the processor as a whole-tree reconcile
	// begins, after Suspect is published.
	beforeResync func()
	// walkWatches makes Start leave the watches below the root to the
	// initial reconcile's walk even with AddWatch set (see walkWatches).
	walkWatches bool
	// cookiesOnly makes every Sync make a cookie (see caughtUp).
	cookiesOnly bool
	// onRead is the notifier's onRead: called by its reader after a
	// read(2) returned events, before it sends them. It may block.
	onRead func()
}

// State is a snapshot of a watcher's health, for status output and for the
// query layer's choice between index and walk.
type State struct {
	// Ready: the initial watch and reconcile are done.
	Ready bool
	// Suspect: events were lost (an overflow, or an update failed) and the
	// whole-tree reconcile that repairs the index has not finished.
	Suspect bool
	// RootGone: the root was deleted or moved; the watcher has stopped.
	RootGone bool
	// Unwatched lists the root-relative roots of subtrees that could not be
	// watched (watch limit), sorted; "." is the root itself. Nothing under
	// them is watched and the index there may be stale. It also lists the
	// directory of each file with more than one link that could not be
	// watched on its own (see links.go): the index may be stale there too.
	Unwatched []string
	// Dirs is the number of directories watched (the cookie directory not
	// counted).
	Dirs int
	// Files is the number of files watched on their own: regular files
	// with more than one link, one watch per file whatever its paths.
	Files int
	// Pending is the number of paths marked dirty and not yet applied.
	Pending int
	// Counters since Start.
	Events     uint64 // inotify events received
	Batches    uint64 // batches processed
	Applies    uint64 // Index.Apply calls
	Reconciles uint64 // whole-tree reconciles
	Overflows  uint64 // event queue overflows
	Cookies    uint64 // sync cookies created
	// Err is the last error updating the index, nil once a whole-tree
	// reconcile succeeded after it.
	Err error
}

// Watcher keeps one index current with one root's file system.
type Watcher struct {
	root   string
	prefix string // root + "/", for cutting event names
	ix     *index.Index
	opts   Options
	log    *slog.Logger
	fsw    *notifier
	id     rooted.ID // the root's identity at Start

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // one slot: the processor has work
	// flushWake (one slot) wakes writeBehind: a batch left DB writes.
	flushWake chan struct{}
	done      chan struct{} // closed once the watcher has stopped
	ready     chan struct{} // closed once the initial reconcile is done

	closeOnce sync.Once
	closeErr  error

	compacting atomic.Bool // a background Compact runs (in wg)
	// After compactions failed in a row (compactFailures), the next one
	// waits until compactNotBefore (UnixNano; see compactBackoff): both
	// set by the compaction, read by the processor, which arms
	// compactTimer (its own; stopped when it returns) to wake itself then.
	compactFailures  atomic.Int32
	compactNotBefore atomic.Int64
	compactTimer     *time.Timer

	mu      sync.Mutex             // guards the fields below: the dirty set and the published state
	dirty   map[string]fsnotify.Op // root-relative path -> ops seen since the last take
	rules   map[string]bool        // directories whose ignore files, .git or rule inputs changed
	indexes map[string]bool        // repositories (by Top) whose index changed (inputs.go)
	// inputsStale: an input that says where other inputs are changed
	// (a configuration file, a directory on the way): find them again.
	inputsStale bool
	seen        []*cookie // cookies whose create event arrived, in order
	resyncs     uint64    // whole-tree reconciles asked for (overflows, failures)
	taken       uint64    // resyncs value at the last reconcile taken
	rootGone    bool
	inBatch     int // paths in the batch being processed
	// recorded counts the notifier's events and errors the drain has
	// recorded (in the fields above, or dropped); busy is set while the
	// processor has batches taken and not finished. See caughtUp.
	recorded uint64
	busy     bool
	st       State // published counters and flags

	syncMu         sync.Mutex // guards the cookie pipeline below
	cookieDir      string     // where cookies are made; "" when nowhere is watched
	cookieFallback string     // the root when it is watched, else ""
	inflight       *cookie    // created, its event awaited
	next           *cookie    // joined while inflight was out; created when it is done
	pending        map[string]*cookie
	stopErr        error // why the watcher stopped, once it has

	// Owned by the processor goroutine (by Start before it starts it).
	// r is the root's handle for the batch being processed: every open
	// under the root goes through it. It is opened per batch, not held,
	// because an open descriptor on the root would keep inotify from
	// reporting the root's deletion (IN_DELETE_SELF waits for the last
	// reference).
	r          *rooted.Root
	dirs       *dirTree
	unwatched  map[string]bool // roots of subtrees that could not be watched
	gitWatched bool            // <root>/.git is watched for cookies
	// walkWatches: Start watched the root alone, and the initial
	// reconcile's walk watches every directory below it as it lists it
	// (reconcileWatching). Otherwise (the root's watch failed, or the
	// AddWatch seam is set: tests that count watches need them added in
	// walk order) Start watched the whole tree, as watchTree does.
	walkWatches bool
	maxWatches  int
	warned      bool // the near-limit warning was given
	removed     int  // watches removed in the current batch
	// dropped: the files the index removed while a journaled change ran
	// (noteDropped), for the journal; jscope, the journaled change
	// running (widenJournal); the processor's alone.
	dropped []entryState
	jscope  *journalScope

	// The inputs of the ignore rules outside the tree's own rule files
	// (inputs.go). inputs is the table the drain reads, swapped whole.
	inputs atomic.Pointer[inputTable]
	// inputMu guards the fields below: the processor's, and during the
	// initial reconcile those of its walk's readers (registerRepo).
	inputMu    sync.Mutex
	repos      map[string]*repoState // repositories by root-relative top ("": the root's, at or above it)
	aboveSpots []inputSpot           // where the inputs no repository in the tree owns are watched (ignore.AboveInputs)
	// inputWatched: the owned input directories watched, by absolute
	// path; reposDropped: repositories were forgotten since the last
	// refresh (their watches are to go).
	inputWatched map[string]bool
	inputWarned  map[string]bool // directories whose watch failed, warned about once
	reposDropped bool

	// Files watched on their own (links.go), the processor's alone:
	// found, the files with more than one link the index's calls
	// reported since linkSince (the moment before the first of them);
	// fresh, the files watched for the first time since the last
	// otherLinks, by inode, with the path watched; linkFailed, the
	// root-relative paths of files that could not be watched (their
	// directories are published as unwatched); linkWarned, that was
	// logged; unlinked, the paths of files watched on their own that
	// the index dropped (noteDropped).
	found      []index.File
	linkSince  int64
	fresh      map[fileKey]string
	linkFailed map[string]bool
	linkWarned bool
	unlinked   []string
}

// eventBuffer is the capacity of the notifier's Events channel: slack for the
// drain, which only takes a mutex per event.
const eventBuffer = 4096

// Start watches root (absolute, clean, symlink-free; the root of ix) and
// keeps ix current until Close. It returns once the root (and its .git,
// where Sync makes cookies) is watched and leftover cookies are removed;
// the initial reconcile (which catches changes made between the index's
// build and the watches) then runs in the background, its walk of the
// tree adding the watch of each directory before listing it (one walk
// of the tree, not one to watch it and one to reconcile), and
// State().Ready (or Ready()) says when it is done: only then is every
// directory watched. A Sync made before then waits for the initial
// reconcile. ctx bounds the watcher's life like Close, which must be
// called anyway.
func Start(ctx context.Context, root string, ix *index.Index, opts Options) (*Watcher, error) {
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return nil, fmt.Errorf("watch: root %q is not a clean absolute path", root)
	}
	if ix.Root() != root {
		return nil, fmt.Errorf("watch: index of %q given for root %q", ix.Root(), root)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(root, &st); err != nil {
		return nil, fmt.Errorf("watch: root %s: %w", root, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, fmt.Errorf("watch: root %s is not a directory", root)
	}
	r, err := rooted.Open(root)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	defer func() { r.Close() }()
	id, err := r.ID()
	if err != nil {
		return nil, fmt.Errorf("watch: root %s: %w", root, err)
	}
	fsw, err := newNotifier(eventBuffer, opts.onRead)
	if err != nil {
		return nil, err
	}
	w := &Watcher{
		r:         r,
		root:      root,
		prefix:    strings.TrimSuffix(root, "/") + "/",
		ix:        ix,
		opts:      opts,
		log:       opts.Logger,
		fsw:       fsw,
		id:        id,
		wake:      make(chan struct{}, 1),
		flushWake: make(chan struct{}, 1),
		done:      make(chan struct{}),
		ready:     make(chan struct{}),
		dirty:     make(map[string]fsnotify.Op),
		rules:     make(map[string]bool),
		indexes:   make(map[string]bool),
		pending:   make(map[string]*cookie),
		repos:     make(map[string]*repoState),

		inputWatched: make(map[string]bool),
		inputWarned:  make(map[string]bool),
		dirs:         newDirTree(),
		unwatched:    make(map[string]bool),
		fresh:        make(map[fileKey]string),
		linkFailed:   make(map[string]bool),
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	w.maxWatches = opts.MaxWatches
	if w.maxWatches <= 0 {
		w.maxWatches = readMaxWatches()
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	removeLeftoverCookies(r, "")
	removeLeftoverCookies(r, ignore.GitDir)
	w.wg.Go(w.drain)
	// The rules' inputs outside the tree first: watched before the
	// initial reconcile reads them.
	w.refreshInputs(nil, true)
	if opts.AddWatch == nil || opts.walkWatches {
		w.walkWatches = w.watchRoot()
	}
	if !w.walkWatches {
		rc := ignore.NewCache(r)
		w.watchTree("", rc.At(""))
	}
	w.chooseCookieDir()
	w.r = nil // the processor opens its own, batch by batch
	w.publish()
	w.wg.Go(w.process)
	return w, nil
}

// Close stops the watcher's goroutines, waits for them and closes the
// inotify descriptor. Waiting Sync callers get ErrClosed. Close is
// idempotent.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		w.cancel()
		w.closeErr = w.fsw.Close()
		w.wg.Wait()
		w.shutdown(ErrClosed)
	})
	return w.closeErr
}

// Done is closed once the watcher has stopped: closed, its context ended,
// or its root gone (see State().RootGone).
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Ready is closed once the initial watch and reconcile are done; never if
// the watcher stops first (wait on Done too).
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Root returns the watched root.
func (w *Watcher) Root() string { return w.root }

// State returns a snapshot of the watcher's state.
func (w *Watcher) State() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.st
	s.Unwatched = slices.Clone(w.st.Unwatched)
	s.Pending = len(w.dirty) + w.inBatch
	s.RootGone = w.rootGone
	return s
}

// Stale says whether a query of the directory dir (root-relative, "." or
// "" for the root) can trust the index, and if not why: ReasonIndexBuilding
// before the initial reconcile, ReasonIndexStale while events are known lost
// or once the root is gone, ReasonWatchLimit when dir is inside an unwatched
// subtree or holds one. It returns "" when the index may be used.
func (s State) Stale(dir string) envelope.FallbackReason {
	switch {
	case !s.Ready:
		return envelope.ReasonIndexBuilding
	case s.Suspect || s.RootGone:
		return envelope.ReasonIndexStale
	}
	dir = strings.Trim(dir, "/")
	for _, u := range s.Unwatched {
		if u == "." || dir == "" || dir == "." || dir == u || strings.HasPrefix(dir, u+"/") || strings.HasPrefix(u, dir+"/") {
			return envelope.ReasonWatchLimit
		}
	}
	return ""
}

// shutdown marks the watcher stopped for err (the first cause wins), fails
// every waiting Sync with it and closes Done.
func (w *Watcher) shutdown(err error) {
	w.syncMu.Lock()
	if w.stopErr == nil {
		w.stopErr = err
	}
	err = w.stopErr
	cs := []*cookie{w.inflight, w.next}
	w.syncMu.Unlock()
	for _, c := range cs {
		if c != nil {
			w.finish(c, err)
		}
	}
	w.mu.Lock()
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.mu.Unlock()
}

// signal wakes the processor without waiting.
func (w *Watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// abs returns the absolute path of the root-relative rel.
func (w *Watcher) abs(rel string) string {
	if rel == "" {
		return w.root
	}
	return w.prefix + rel
}

// relOf returns the root-relative path of an event's name.
func (w *Watcher) relOf(name string) (string, bool) {
	if name == w.root {
		return "", true
	}
	rel, ok := strings.CutPrefix(name, w.prefix)
	return rel, ok && rel != ""
}
