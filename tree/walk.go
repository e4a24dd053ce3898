// Package tree walks a workspace directory tree: the uncached source of
// truth that answers queries while the index cannot, and that the index is
// built from.
//
// Walk reads directories in parallel but hands entries to its callback in
// one deterministic order: depth first, each directory's entries sorted by
// name. A pool of workers reads ahead (every subdirectory is queued as soon
// as its parent has been listed, nearest first); the caller's goroutine
// consumes the listings in order. So the output, the visited count and the
// point where a breaker fires do not depend on scheduling.
//
// What is skipped is ignore.Classifier's verdict on each entry: the
// daemon's private directories and sync cookies are not even visited;
// ignored entries (unless IncludeIgnored) and hidden ones (unless
// IncludeHidden or AllowHidden) are counted and reported as skipped.
//
// Every directory is opened through a rooted.Root: by its root-relative name,
// refusing any symlink on the way, so a directory swapped for a link mid-walk
// is not entered (docs/product.md, "The root is the boundary"). Symbolic links
// are reported, never followed into directories. Entries that are neither
// directories, regular files nor symlinks (FIFOs, sockets, devices) are
// counted as visited and never reported, so no caller opens them.
//
// Goroutines: Walk starts its workers and waits for all of them before it
// returns, whether it finished, the callback stopped it, or ctx ended.
package tree

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/rooted"
)

// Errors a walk ends with.
var (
	// ErrStop, returned by the callback, ends the walk without error.
	ErrStop = errors.New("tree: stop")
	// ErrCountLimit: the walk visited more than Options.MaxVisited entries.
	ErrCountLimit = errors.New("tree: visited entry limit reached")
	// ErrUnreadable: a directory could not be read for a reason other than
	// its being gone or replaced (out of descriptors, an I/O error), or
	// the root itself could not be listed: the walk would miss entries
	// without naming them, so it ends with this error (wrapping the
	// cause) rather than answer short. A directory below the root that
	// may not be listed is named instead (Skip.Denied).
	ErrUnreadable = errors.New("tree: directory could not be read")
)

// Options control one walk.
type Options struct {
	// IncludeHidden walks and reports names starting with ".".
	IncludeHidden bool
	// IncludeIgnored disables every ignore rule (default directories and
	// ignore files).
	IncludeIgnored bool
	// AllowHidden, if set, lets a hidden name through although
	// IncludeHidden is false (a pattern names it explicitly).
	AllowHidden func(name string) bool
	// Descend, if set, says whether the directory at rel (root-relative)
	// can hold anything of interest; if not it is skipped (not counted as
	// ignored).
	Descend func(rel string) bool
	// Info asks for size, mtime, ctime, inode and device of files (one
	// lstat each).
	Info bool
	// InfoWhen, if set, narrows Info to the directories listed while it
	// returns true (asked once per directory, by the reader listing it):
	// a caller that reads most files anyway can take their status from
	// the open file, and ask the walk for it only once it stops reading.
	// Entry.Info says which entries have it.
	InfoWhen func() bool
	// ResolveLinks asks, for each symlink, whether it points to a regular
	// file inside the root (Entry.LinkToFile).
	ResolveLinks bool
	// MaxVisited, if > 0, ends the walk with ErrCountLimit once more
	// entries than this were visited.
	MaxVisited int
	// Workers is the number of directory readers; 0 picks a default.
	Workers int
	// OnSkip, if set, is called (in walk order) for every entry left out
	// by ignore rules or hiddenness, and every directory Denied, beyond
	// the first MaxSkips kept in Stats.
	OnSkip func(Skip)
	// OnHiddenDir, if set, is called (in walk order) for every directory
	// with a hidden name that the walk enters because IncludeHidden or
	// AllowHidden let it through: what a walk without them would have
	// reported as a hidden skip. The index records these, so that it can
	// tell what a walk would skip even where the directory holds no file.
	OnHiddenDir func(rel string)
	// Eager makes the readers queue each directory's subdirectories as
	// soon as they have listed it, rather than when the caller's goroutine
	// reaches it: every reader then has work however narrow the tree
	// (without it the readers can only run ahead within the directories
	// on the caller's current path, and on a tree of small directories
	// the caller mostly waits for the next listing). Listings wait in
	// memory for the caller, up to eagerAhead entries listed and not yet
	// handed over (past that a reader leaves a directory's subdirectories
	// to the caller, as without Eager): for walks that run to the end
	// with a quick callback (the index's catch-up), not for a query's,
	// which may stop early.
	Eager bool
	// OnDir, if set, is called for every directory the walk enters (the
	// start directory included) with the directory open beneath the
	// root, after it was opened and before it is listed: a watcher adds
	// its watch there, so that whatever the listing misses (an entry
	// made after it) makes an event, and one walk of the tree both
	// watches and lists it. It is called by the walk's readers, several
	// at once: each directory's call returns before any of its
	// subdirectories' begins, and calls for other directories may run
	// at the same time. It must not close dir.
	OnDir func(rel string, dir *os.File)
	// OnRepo, if set, is called for every directory below the start
	// directory whose listing holds .git, open beneath the root, before
	// the rules of its entries are read from its repository's files: a
	// watcher watches those files there (see package watch), so that
	// whatever changes them after the read makes an event. It is called
	// as OnDir is, by several readers at once; it must not close dir.
	OnRepo func(rel string, dir *os.File)

	// maxAhead, if > 0, replaces eagerAhead: this package's tests lower
	// it to mix eager and lazy directories in one walk.
	maxAhead int64
	// walked, if set, is called as the walk ends, its readers stopped,
	// with the entries still counted as listed ahead (this package's
	// tests).
	walked func(ahead int64)
}

// Entry is one file or symlink found by the walk.
type Entry struct {
	// Rel is the path relative to the root, slash separated.
	Rel string
	// Type is the entry's type bits: 0 for a regular file, fs.ModeSymlink
	// for a link.
	Type fs.FileMode
	// Size and ModTime (Unix nanoseconds) are set when Info is, with
	// Ctime (Unix nanoseconds), Ino and Dev from the same lstat. Times
	// past the int64 nanosecond range (years before 1678 or after 2262)
	// are clamped to it (see Nanos).
	Size    int64
	ModTime int64
	Ctime   int64
	Ino     uint64
	Dev     uint64
	// Nlink is the entry's number of hard links (st_nlink, from the same
	// lstat; saturated at MaxUint32): a regular file with more than one
	// can be written through a path the walk never lists.
	Nlink uint32
	// Info: the entry was lstat'd (Options.Info, and InfoWhen let it),
	// and the lstat succeeded; Type is then the lstat's.
	Info bool
	// LinkToFile is set, with Options.ResolveLinks, for a symlink whose
	// target is a regular file inside the root.
	LinkToFile bool
	// Hidden has bit i set when path component i (0 = the first below the
	// root) has a hidden name that no ignore rule whitelists: what a walk
	// without IncludeHidden would skip. Components past 63 share bit 63.
	Hidden uint64
}

// Skip is an entry left out by ignore rules or for being hidden, or a
// directory that could not be listed for want of permission.
type Skip struct {
	Rel    string
	IsDir  bool
	Hidden bool // hidden name (else: an ignore rule, or Denied)
	// Default: a directory skipped by the default list alone
	// (ignore.Verdict.Default), which answers name whether they found
	// anything or not.
	Default bool
	// Denied: a directory (never the walk's start at the root) this
	// process may not list (rooted.Denied): its contents are missing, and
	// an answer that could have held them is partial and names it.
	Denied bool
}

// Stats describe a finished walk.
type Stats struct {
	// Visited counts every entry listed (directories, files, others).
	Visited int
	// Ignored counts entries skipped by ignore rules; a pruned directory
	// counts once.
	Ignored int
	// Hidden counts hidden entries skipped.
	Hidden int
	// Skipped lists the skipped entries in walk order: every one marked
	// Default, and the others while the list holds fewer than MaxSkips
	// (KeepSkip).
	Skipped []Skip
	// Errors counts directories that could not be read because they were
	// gone or replaced by something else by the time they were opened.
	Errors int
	// Denied counts directories that could not be listed for want of
	// permission (each also in Skipped, marked Denied); any other failure
	// ends the walk with ErrUnreadable.
	Denied int
}

// MaxSkips bounds the entries of Stats.Skipped that are not Default.
const MaxSkips = 256

// KeepSkip reports whether a list of kept skips of length n keeps s: a
// directory of the default list or one Denied always (they are few, and
// every answer names them), another entry while fewer than MaxSkips are
// kept. The index's answers keep the same ones.
func KeepSkip(n int, s Skip) bool { return s.Default || s.Denied || n < MaxSkips }

type dirent struct {
	name  string
	typ   fs.FileMode
	skip  uint8 // keep, skipIgnored, skipHidden, skipPruned, skipReserved
	hid   bool  // hidden name, not whitelisted
	def   bool  // skipIgnored by the default list alone
	size  int64
	mod   int64
	ctim  int64
	ino   uint64
	dev   uint64
	info  bool // the lstat fields are set
	link  bool
	nlink uint32
}

const (
	keep = iota
	skipIgnored
	skipHidden
	skipPruned
	skipReserved // the daemon's own directories, sync cookies: not even visited
)

// node is one directory queued for reading; done closes once entries is set.
type node struct {
	rel     string
	parent  *ignore.Dir // rules of the directory holding this one
	ign     *ignore.Dir // rules for this directory's entries
	entries []dirent
	subs    []*node // with Options.Eager: the subdirectories the reader queued, in entry order
	queued  bool    // subs were queued by the reader
	err     error
	done    chan struct{}
	hidden  uint64 // Entry.Hidden bits of the directory itself
	depth   int    // components below the root
}

// Walk walks the directory start (root-relative, "" for the root) under
// root (absolute, symlinks resolved), with ign the ignore rules in force
// for start's entries, calling fn for each file and symlink in order. The
// start directory itself is never filtered: naming it is explicit.
func Walk(ctx context.Context, root, start string, ign *ignore.Dir, opts Options, fn func(Entry) error) (Stats, error) {
	r, err := rooted.Open(root)
	if err != nil {
		return Stats{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(ctx)
	w := &walker{root: root, r: r, opts: opts, ctx: ctx}
	w.cond = sync.NewCond(&w.mu)
	n := opts.Workers
	if n <= 0 {
		n = max(4, 2*runtime.GOMAXPROCS(0))
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(w.work)
	}
	defer func() {
		cancel()
		w.mu.Lock()
		w.closed = true
		w.cond.Broadcast()
		w.mu.Unlock()
		wg.Wait()
		if opts.walked != nil {
			opts.walked(w.ahead.Load())
		}
	}()
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.closed = true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()

	first := &node{rel: start, ign: ign, done: make(chan struct{})}
	if start != "" {
		first.depth = strings.Count(start, "/") + 1
	}
	w.push(first)
	var st Stats
	err = w.consume(first, &st, fn)
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return st, err
}

type walker struct {
	root string
	r    *rooted.Root
	opts Options
	ctx  context.Context

	mu     sync.Mutex // guards queue and closed
	cond   *sync.Cond
	queue  []*node // LIFO: the consumer needs the most recently queued first
	closed bool

	ahead atomic.Int64 // entries listed and not yet consumed (Options.Eager)
}

// eagerAhead bounds how far Options.Eager's readers list ahead of the
// caller, in entries: without it the listings waited for the caller up
// to the whole tree's (and a consumed directory's stayed reachable from
// its parent's subs), 136 MB more live heap in a reconcile at a million
// files.
const eagerAhead = 1 << 16

func (w *walker) push(ns ...*node) {
	w.mu.Lock()
	for i := len(ns) - 1; i >= 0; i-- {
		w.queue = append(w.queue, ns[i])
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		if w.closed {
			w.mu.Unlock()
			return
		}
		nd := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		w.mu.Unlock()
		w.read(nd)
		close(nd.done)
	}
}

// consume hands nd's entries to fn in order, descending into subdirectories.
func (w *walker) consume(nd *node, st *Stats, fn func(Entry) error) error {
	select {
	case <-nd.done:
	case <-w.ctx.Done():
	}
	// Both may be ready; a listing cut short by the deadline must end the
	// walk as timed out, never pass for an unreadable directory.
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if nd.err != nil {
		switch {
		case rooted.Gone(nd.err):
			st.Errors++
			return nil
		case rooted.Denied(nd.err) && nd.rel != "":
			st.Denied++
			sk := Skip{Rel: nd.rel, IsDir: true, Denied: true}
			st.Skipped = append(st.Skipped, sk)
			if w.opts.OnSkip != nil {
				w.opts.OnSkip(sk)
			}
			return nil
		}
		return fmt.Errorf("%w: %w", ErrUnreadable, nd.err)
	}
	subs := nd.subs
	if !nd.queued {
		subs = nd.children()
		w.push(subs...)
	}
	defer func() {
		// Consumed: nothing reads the listing again.
		if w.opts.Eager {
			w.ahead.Add(-int64(len(nd.entries)))
		}
		nd.entries, nd.subs = nil, nil
	}()
	si := 0
	for _, e := range nd.entries {
		if e.skip == skipReserved {
			continue
		}
		st.Visited++
		if w.opts.MaxVisited > 0 && st.Visited > w.opts.MaxVisited {
			return ErrCountLimit
		}
		rel := join(nd.rel, e.name)
		switch e.skip {
		case skipIgnored, skipHidden:
			if e.skip == skipIgnored {
				st.Ignored++
			} else {
				st.Hidden++
			}
			sk := Skip{Rel: rel, IsDir: e.typ.IsDir(), Hidden: e.skip == skipHidden, Default: e.def}
			if KeepSkip(len(st.Skipped), sk) {
				st.Skipped = append(st.Skipped, sk)
			}
			if w.opts.OnSkip != nil {
				w.opts.OnSkip(sk)
			}
			continue
		case skipPruned:
			continue
		}
		switch {
		case e.typ.IsDir():
			sub := subs[si]
			si++
			if e.hid && w.opts.OnHiddenDir != nil {
				w.opts.OnHiddenDir(rel)
			}
			if err := w.consume(sub, st, fn); err != nil {
				return err
			}
		case e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0:
			if err := fn(Entry{Rel: rel, Type: e.typ, Size: e.size, ModTime: e.mod, Ctime: e.ctim, Ino: e.ino, Dev: e.dev, Nlink: e.nlink, Info: e.info, LinkToFile: e.link, Hidden: nd.hidden | hiddenBit(e.hid, nd.depth)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// children returns the nodes of nd's subdirectories to walk, in entry
// order, once nd is read.
func (nd *node) children() []*node {
	var subs []*node
	for _, e := range nd.entries {
		if e.typ.IsDir() && e.skip == keep {
			rel := join(nd.rel, e.name)
			subs = append(subs, &node{rel: rel, parent: nd.ign, done: make(chan struct{}),
				hidden: nd.hidden | hiddenBit(e.hid, nd.depth), depth: nd.depth + 1})
		}
	}
	return subs
}

// read lists nd, works out the ignore rules for its entries and marks
// which are skipped; with Options.Eager it queues its subdirectories.
func (w *walker) read(nd *node) {
	if w.ctx.Err() != nil {
		nd.err = w.ctx.Err()
		return
	}
	f, err := w.r.OpenDir(nd.rel)
	if err != nil {
		nd.err = err
		return
	}
	defer f.Close()
	if w.opts.OnDir != nil {
		w.opts.OnDir(nd.rel, f)
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		nd.err = err // a listing cut short is a fault, not a smaller directory
		return
	}
	dirfd := -1
	if w.opts.Info && (w.opts.InfoWhen == nil || w.opts.InfoWhen()) {
		dirfd = int(f.Fd())
	}
	ents := make([]dirent, len(des))
	var rf ignore.RuleFiles
	for i, de := range des {
		name := de.Name()
		ents[i] = dirent{name: name, typ: de.Type()}
		rf.See(name)
	}
	slices.SortFunc(ents, func(a, b dirent) int { return cmp.Compare(a.name, b.name) })
	if nd.ign == nil {
		if rf.Git && w.opts.OnRepo != nil {
			w.opts.OnRepo(nd.rel, f)
		}
		nd.ign = nd.parent.Child(f, nd.rel, rf)
	}
	o := &w.opts
	cl := ignore.Classifier{Root: w.root, NoRules: o.IncludeIgnored}
	for i := range ents {
		e := &ents[i]
		isDir := e.typ.IsDir()
		rel := join(nd.rel, e.name)
		v := cl.Entry(nd.ign, rel, isDir)
		switch {
		case v.Reserved():
			e.skip = skipReserved
			continue
		case v.Ignored:
			e.skip, e.def = skipIgnored, v.Default
			continue
		}
		e.hid = v.Hidden
		if e.hid && !o.IncludeHidden && (o.AllowHidden == nil || !o.AllowHidden(e.name)) {
			e.skip = skipHidden
			continue
		}
		if isDir {
			if o.Descend != nil && !o.Descend(rel) {
				e.skip = skipPruned
			}
			continue
		}
		if dirfd >= 0 && (e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0) {
			// fstatat on the open directory: no path lookup from the root.
			var st unix.Stat_t
			if err := unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
				e.typ = StatType(uint32(st.Mode))
				e.size, e.mod, e.ctim = st.Size, Nanos(st.Mtim.Unix()), Nanos(st.Ctim.Unix())
				e.ino, e.dev, e.info = st.Ino, uint64(st.Dev), true
				e.nlink = uint32(min(uint64(st.Nlink), math.MaxUint32))
			}
		}
		if o.ResolveLinks && e.typ&fs.ModeSymlink != 0 {
			e.link = LinkToFileInside(w.root, filepath.Join(w.root, filepath.FromSlash(rel)))
		}
	}
	nd.entries = ents
	ahead := o.maxAhead
	if ahead <= 0 {
		ahead = eagerAhead
	}
	if o.Eager && w.ahead.Add(int64(len(ents))) <= ahead {
		nd.subs, nd.queued = nd.children(), true
		w.push(nd.subs...)
	}
}

// StatType converts stat(2) mode bits to fs.FileMode type bits.
func StatType(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// LinkToFileInside reports whether the symlink at abs resolves to a regular
// file inside root (an absolute, symlink-free path).
func LinkToFileInside(root, abs string) bool {
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	fi, err := os.Stat(target)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return Within(root, target)
}

// Within reports whether p is root or inside it, comparing whole path
// components (root /a/b does not contain /a/bc). Both must be clean.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	if root == string(filepath.Separator) {
		return len(p) > 0 && p[0] == filepath.Separator
	}
	return len(p) > len(root) && p[:len(root)] == root && p[len(root)] == filepath.Separator
}

func hiddenBit(hid bool, depth int) uint64 {
	if !hid {
		return 0
	}
	return 1 << min(depth, 63)
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Order compares root-relative paths in the order Walk hands them out:
// depth first, each directory's entries by name (so "a/b" comes before
// "a.txt"), a directory before what it holds. That is the order of the
// paths' bytes with "/" taken as smaller than every other byte (names
// hold no NUL): at the first byte where two paths differ, a "/" ends a
// name that the other path's name continues, and a path that runs out
// first is the other's ancestor or its name is a prefix of the other's.
func Order(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	switch {
	case i == n:
		return cmp.Compare(len(a), len(b))
	case a[i] == '/':
		return -1
	case b[i] == '/':
		return 1
	}
	return cmp.Compare(a[i], b[i])
}
