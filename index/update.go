package index

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// Incremental updates. Each call reads what changed outside the lock,
// then applies it to memory and to the DB in one transaction, so its cost
// is proportional to the change, not to the index. A file read anew goes
// to the delta with its own trigram set and its base postings become
// stale; Compact folds the delta back into the base.

// change is one file's new state, or its removal.
type change struct {
	path   string
	remove bool
	f      File
	tris   []uint32 // owned copy, packed postings (trigram<<8 | mask) sorted; nil for symlinks, binary and unknown files
}

// Update brings the file at rel (root-relative) up to date: re-read if it
// exists and is indexable, removed if it is gone or now ignored. A
// directory is reconciled as a subtree (see UpdateTree).
func (ix *Index) Update(rel string) error {
	return ix.Apply(context.Background(), []string{rel})
}

// Remove drops the file at rel from the index.
func (ix *Index) Remove(rel string) error {
	return ix.commit([]change{{path: rel, remove: true}}, nil, nil)
}

// RemoveTree drops everything under the directory rel (and rel itself),
// with the record of ignored entries there.
func (ix *Index) RemoveTree(rel string) error {
	return ix.commit([]change{{path: rel, remove: true}}, []string{rel}, nil)
}

// Apply brings each of paths (root-relative) up to date with the tree, in
// one transaction: a file is re-read, a directory's subtree reconciled by
// walking it, a missing or ignored path removed with its subtree.
//
// Every path is looked up beneath the root through real directories only
// (see rooted): a path with a symlink among its parents is gone, whatever
// the link points at, and a directory now a symlink loses its subtree. So
// a directory swapped for a link to /elsewhere disappears from the index
// in the batch that sees either event, in whichever order they come.
func (ix *Index) Apply(ctx context.Context, paths []string) error {
	return ix.ApplyWith(ctx, paths, ApplyOptions{})
}

// ApplyOptions are ApplyWith's.
type ApplyOptions struct {
	// Removed, if set, is called with each file the batch removes from
	// the table as the table held it, before it goes: those paths names,
	// and those of a subtree dropped whole, which may lie beyond them (a
	// path's ancestor that is no longer a real directory loses its
	// subtree). It is called with the index locked: it must not call ix.
	Removed func(*File)
	// Linked, if set, is called with each regular file the batch finds
	// with more than one link (st_nlink > 1), the paths it names and
	// those its walks of directories list, as lstat found it (before its
	// read, if it is read). Such a file can be written through a path
	// outside the tree, which a watcher of the tree's directories is not
	// told about; a watcher watches it on its own (package watch). It is
	// called from the goroutine that called ApplyWith, without the
	// index's lock.
	Linked func(File)
}

// ApplyWith is Apply with options.
func (ix *Index) ApplyWith(ctx context.Context, paths []string, opts ApplyOptions) error {
	t0 := ix.k.now().UnixNano()
	root, err := rooted.Open(ix.root)
	if err != nil {
		return fmt.Errorf("index: apply: %w", err)
	}
	defer root.Close()
	var files []File
	var gone, dirs []string
	var ignoredAdds []Skipped
	rules := ignore.NewCache(root)
	seen := make(map[string]bool, len(paths))
	for i := 0; i < len(paths); i++ {
		rel := strings.Trim(filepath.ToSlash(paths[i]), "/")
		if seen[rel] {
			continue
		}
		seen[rel] = true
		if rel == "" || rel == "." {
			dirs = append(dirs, "")
			continue
		}
		st, err := root.Lstat(rel)
		if err != nil {
			if rooted.Denied(err) {
				// A directory above it may be listed but not searched, or
				// neither: its parent is looked at whole, as a build lists
				// it (by name, or as Denied).
				parent, _ := rooted.Split(rel)
				paths = append(paths, parent)
				continue
			}
			if !rooted.Gone(err) {
				return fmt.Errorf("index: apply: %w", err)
			}
			gone = append(gone, rel)
			if a := brokenAncestor(root, rel); a != "" {
				// A directory on the way is a link or a file now: it goes
				// with its whole subtree, in this batch, and is looked at
				// as what it is now.
				paths = append(paths, a)
			}
			continue
		}
		f := fileFromStat(rel, &st)
		isDir := f.Mode.IsDir()
		v := rules.Path(rel, isDir)
		switch {
		case v.Reserved(): // private, a cookie: never indexed nor recorded
			gone = append(gone, rel)
		case v.Ignored:
			gone = append(gone, rel)
			if v.Self { // recorded as a build records it; an ignored ancestor already is
				ignoredAdds = append(ignoredAdds, Skipped{Path: rel, IsDir: isDir, Default: v.Default})
			}
		case isDir:
			if ix.holds(rel) { // a file replaced by a directory
				gone = append(gone, rel)
			}
			dirs = append(dirs, rel)
			if ownBit(rel)&v.Hidden != 0 { // recorded as a build records it
				ignoredAdds = append(ignoredAdds, Skipped{Path: rel, IsDir: true, Hidden: true})
			}
		case f.Mode.IsRegular() || f.Mode&fs.ModeSymlink != 0:
			if ix.holdsUnder(rel) { // a directory replaced by a file or a link
				gone = append(gone, rel)
			}
			f.Hidden = v.Hidden
			files = append(files, f)
			if opts.Linked != nil && f.Mode.IsRegular() && st.Nlink > 1 {
				opts.Linked(f)
			}
		default:
			gone = append(gone, rel) // FIFOs, sockets, devices are never indexed
		}
	}
	for _, d := range dirs {
		fs, missing, ign, err := ix.walkSubtree(ctx, rules, d, nil, nil, opts.Linked)
		if err != nil {
			return err
		}
		files = append(files, fs...)
		ignoredAdds = append(ignoredAdds, ign...)
		gone = append(gone, missing...)
	}
	// The index holds nothing under a directory it may not list, as a
	// build (which cannot list it) holds nothing there: not a file made
	// in a directory that may be written and searched but not listed,
	// whose watch reports it.
	if denied := ix.deniedDirs(ignoredAdds, dirs); len(denied) > 0 {
		files = slices.DeleteFunc(files, func(f File) bool {
			if below(f.Path, denied) {
				gone = append(gone, f.Path)
				return true
			}
			return false
		})
		ignoredAdds = slices.DeleteFunc(ignoredAdds, func(s Skipped) bool { return below(s.Path, denied) })
	}
	// A processor is left to the queries: a burst of changes (a
	// checkout, a script) otherwise took every one, and a query waited
	// for the scheduler's 10 ms preemption (see readChanges).
	read, vanished := ix.readChanges(root, files, t0, max(1, runtime.GOMAXPROCS(0)-1))
	// Removals first: a path removed and re-added in one batch (a type
	// change) must end up added.
	chs := make([]change, 0, len(gone)+len(vanished)+len(read))
	for _, g := range append(gone, vanished...) {
		chs = append(chs, change{path: g, remove: true})
	}
	chs = append(chs, read...)
	return ix.commitObserved(chs, append(gone, dirs...), ignoredAdds, opts.Removed)
}

// deniedDirs returns the directories an update leaves recorded as not
// listable (Skipped.Denied): those its walks recorded (adds), and the
// index's that no walk of it (of rescanned) looked at again.
func (ix *Index) deniedDirs(adds []Skipped, rescanned []string) []string {
	var out []string
	for _, s := range adds {
		if s.Denied {
			out = append(out, s.Path)
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, s := range ix.ignored {
		if s.Denied && !slices.ContainsFunc(rescanned, func(d string) bool { return inScope(s.Path, d) }) {
			out = append(out, s.Path)
		}
	}
	return out
}

// below reports whether the path p lies under one of the directories
// dirs.
func below(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d+"/") })
}

// inScope reports whether the path p is the directory scope or lies
// under it ("" or "." is the root, holding every path).
func inScope(p, scope string) bool {
	return scope == "" || scope == "." || p == scope || strings.HasPrefix(p, scope+"/")
}

// brokenAncestor returns the shallowest proper ancestor of rel that is no
// longer a real directory beneath root (a link, a file, gone), or "" if
// every ancestor still is one.
func brokenAncestor(root *rooted.Root, rel string) string {
	for i := strings.IndexByte(rel, '/'); i >= 0; {
		a := rel[:i]
		if st, err := root.Lstat(a); err != nil || !tree.StatType(uint32(st.Mode)).IsDir() {
			return a
		}
		j := strings.IndexByte(rel[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return ""
}

// holds reports whether the table has a file at rel; holdsUnder whether it
// has any below the directory rel.
func (ix *Index) holds(rel string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.lookup(rel)
	return ok
}

func (ix *Index) holdsUnder(rel string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	pre := rel + "/"
	i, _ := slices.BinarySearchFunc(ix.order, pre, ix.pathSearch)
	return i < len(ix.order) && strings.HasPrefix(ix.files[ix.order[i]].Path, pre)
}

// Reconcile walks the whole tree and brings the index up to date: files
// whose stat changed (see changed) or that are racy are re-read
// (unchanged files are trusted on their stat alone), new ones added,
// vanished ones removed. It returns how many files changed.
func (ix *Index) Reconcile(ctx context.Context) (int, error) {
	return ix.ReconcileWith(ctx, ReconcileOptions{})
}

// ReconcileOptions are ReconcileWith's.
type ReconcileOptions struct {
	// OnDir, if set, is called for every directory the reconcile's walk
	// enters, open beneath the root, before it is listed (see
	// tree.Options.OnDir: from several goroutines at once, a directory
	// before its subdirectories). A watcher's first reconcile adds its
	// watches there, so that one walk of the tree both watches it and
	// catches the index up, instead of one walk for each.
	OnDir func(rel string, dir *os.File)
	// OnRepo, if set, is the walk's tree.Options.OnRepo: called for
	// every directory holding .git below the root, before the rules of
	// its entries are read from its repository's files.
	OnRepo func(rel string, dir *os.File)
	// Linked, if set, is called as ApplyOptions.Linked is, with every
	// regular file the walk finds with more than one link.
	Linked func(File)
}

// ReconcileWith is Reconcile with options.
func (ix *Index) ReconcileWith(ctx context.Context, opts ReconcileOptions) (int, error) {
	t0 := ix.k.now().UnixNano()
	root, err := rooted.Open(ix.root)
	if err != nil {
		return 0, fmt.Errorf("index: reconcile: %w", err)
	}
	defer root.Close()
	files, missing, ign, err := ix.walkSubtree(ctx, ignore.NewCache(root), "", opts.OnDir, opts.OnRepo, opts.Linked)
	if err != nil {
		return 0, err
	}
	read, vanished := ix.readChanges(root, files, t0, runtime.GOMAXPROCS(0))
	var chs []change
	for _, g := range append(missing, vanished...) {
		chs = append(chs, change{path: g, remove: true})
	}
	chs = append(chs, read...)
	if len(chs) == 0 && ix.sameIgnored(ign) {
		// Nothing to write: no transaction, no fsync (a restart's catch-up
		// of a tree that did not change while the daemon was down). Meta
		// "written" stays, and with it which files are racy: none was
		// found, or it would have been re-read, a change.
		return 0, nil
	}
	return len(chs), ix.commit(chs, []string{""}, ign)
}

// sameIgnored reports whether ign, a whole-tree walk's records of what a
// walk skips, are the index's (what commit would make of them: sorted,
// one per path).
func (ix *Index) sameIgnored(ign []Skipped) bool {
	ign = mergeSkipped(slices.Clone(ign))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Equal(ign, ix.ignored)
}

// walkSubtree walks dir ("" for the root) as a build would and compares
// it with the table as it goes: it returns the files that must be read
// (see changed), the table's paths under dir the walk did not find, and
// the records of what a walk would skip (the entries ignore rules pruned,
// the hidden directories); rules is the batch's rule cache. Unchanged
// files are only marked seen, by id, so a whole-tree walk keeps no list
// of the tree (a million Files and their paths) nor a set of its paths.
// onDir and onRepo, if not nil, are the walk's tree.Options.OnDir and
// OnRepo; linked, if not nil, is called with each regular file it lists
// with more than one link (ApplyOptions.Linked).
func (ix *Index) walkSubtree(ctx context.Context, rules *ignore.Cache, dir string, onDir, onRepo func(string, *os.File), linked func(File)) (read []File, missing []string, ign []Skipped, err error) {
	var hidden uint64
	if dir != "" {
		// The walk counts hidden bits from dir; shift them to the root.
		hidden = rules.Path(dir, true).Hidden
	}
	var seen []uint64 // bitset of the ids the walk found
	// A whole-tree walk finds the table's files mostly in the table's
	// own order (the walk's order differs from the paths' only where a
	// name continues with a byte below '/', as "a.go" beside "a/"): a
	// cursor in ix.order, checked before a lookup, finds most of them
	// without a search (a cache miss or more each; a serial cost on the
	// walk's consumer, a tenth of a restart's at 200k files).
	// After a miss the cursor moves to the file found, by pos, each id's
	// place in ix.order as the walk began (ix.order is changed only by a
	// writer: a stale cursor or pos only makes more misses, since a hit
	// compares the path). A subtree's walk (Apply) looks up by path alone:
	// pos costs a pass over the whole table.
	var pos []uint32
	cur := -1 // no cursor
	walked := 0
	if dir == "" {
		ix.mu.RLock()
		pos = make([]uint32, len(ix.files))
		for k, id := range ix.order {
			pos[id] = uint32(k)
		}
		ix.mu.RUnlock()
		cur = 0
	}
	_, err = tree.Walk(ctx, ix.root, dir, rules.At(dir), tree.Options{
		IncludeHidden: true,
		Info:          true,
		Eager:         true, // runs to the end; the callback is quick
		OnSkip: func(s tree.Skip) {
			if !s.Hidden {
				ign = append(ign, skippedOf(s))
			}
		},
		OnHiddenDir: func(rel string) {
			ign = append(ign, Skipped{Path: rel, IsDir: true, Hidden: true})
		},
		OnDir:  onDir,
		OnRepo: onRepo,
	}, func(e tree.Entry) error {
		if walked++; walked%4096 == 0 {
			pacer.checkLoose() // the listings are garbage once consumed (pacer.go)
		}
		f := fileFromEntry(e)
		f.Hidden |= hidden
		ix.mu.RLock()
		var id uint32
		ok := false
		if cur >= 0 && cur < len(ix.order) && ix.files[ix.order[cur]].Path == f.Path {
			id, ok = ix.order[cur], true
			cur++
		} else if id, ok = ix.lookup(f.Path); ok && cur >= 0 && int(id) < len(pos) {
			cur = int(pos[id]) + 1
		}
		same := ok && !ix.changed(id, &f)
		ix.mu.RUnlock()
		if ok {
			for int(id/64) >= len(seen) {
				seen = append(seen, 0)
			}
			seen[id/64] |= 1 << (id % 64)
		}
		if !same {
			read = append(read, f)
		}
		if linked != nil && e.Nlink > 1 && f.Mode.IsRegular() {
			linked(f)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	pre := dirPrefix(dir)
	i, _ := slices.BinarySearchFunc(ix.order, pre, ix.pathSearch)
	for _, id := range ix.order[i:] {
		p := ix.files[id].Path
		if !strings.HasPrefix(p, pre) {
			break
		}
		if int(id/64) >= len(seen) || seen[id/64]&(1<<(id%64)) == 0 {
			missing = append(missing, p)
		}
	}
	return read, missing, ign, nil
}

// changed reports whether the file recorded at id must be read again to
// be as f, just walked: its stat differs (git's comparison: size, mtime,
// ctime, inode, device; and type and hiddenness), its trigrams are
// unknown, or it is racy: flagged Racy when read, or with an mtime not
// older than the index's last write. Caller holds mu.
func (ix *Index) changed(id uint32, f *File) bool {
	return !ix.files[id].sameStat(f) || ix.racyLocked(&ix.files[id])
}

// sameStat reports whether f's stat (and type and hiddenness) is the one
// recorded in old.
func (old *File) sameStat(f *File) bool {
	return old.Size == f.Size && old.ModTime == f.ModTime && old.Ctime == f.Ctime && old.Ino == f.Ino && old.Dev == f.Dev &&
		old.Mode == f.Mode && old.Hidden == f.Hidden
}

// racyLocked reports whether the recorded f cannot be trusted on its stat
// alone. Caller holds mu.
func (ix *Index) racyLocked(f *File) bool {
	return f.Mode.IsRegular() && (f.Flags&(Unknown|Racy) != 0 && f.Flags&Denied == 0 || f.ModTime >= ix.written)
}

// readers keeps readers (each with a 2 MiB trigram bitmap) across calls:
// allocating one per Apply was a quarter of a small update's cost.
var readers = sync.Pool{New: func() any { return new(reader) }}

// readChanges reads the given files beneath root with up to workers
// goroutines; t0 is when their stat was about to be taken (for
// racyFlag). A file no longer there as listed (see rooted.Gone) is
// returned in gone instead.
//
// Apply, the watcher's updates, reads with one processor fewer than
// there are (at least one): on two processors, a burst of 30,000
// rewrites with every processor reading gave a query stream p99 of
// 46-47 ms and p90 11-12.5 ms, one reader 27-34 ms and 5-6 ms, and 53-69%
// more queries answered in the same 22 s; the burst caught up as soon.
// A reconcile (on open, after an overflow) reads with all: a restart
// after the same burst took 3.9-4.0 s with one reader, 2.6-2.7 with two.
func (ix *Index) readChanges(root *rooted.Root, files []File, t0 int64, workers int) (chs []change, gone []string) {
	chs = make([]change, len(files))
	isGone := make([]bool, len(files))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	pf := rawfile.StartPrefetch(root, 0, len(files), func(i int) (string, bool) {
		return files[i].Path, files[i].Mode.IsRegular()
	})
	defer pf.Stop()
	for range min(len(files), workers) {
		wg.Go(func() {
			rd := readers.Get().(*reader)
			defer readers.Put(rd)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(files) {
					return
				}
				pf.Reached(i)
				f := files[i]
				var tris []uint32
				if f.Mode.IsRegular() {
					var t []uint32
					t, f.Flags, isGone[i] = rd.index(root, f.Path, f.Size, &ix.k)
					if f.Flags&(Binary|Unknown) == 0 {
						// Delta sets are searched: keep them sorted. A file too
						// short for a trigram gets an empty set, not none:
						// every stale file that can match is in the delta.
						tris = append(make([]uint32, 0, len(t)), t...)
						slices.Sort(tris)
					}
					f.Flags |= racyFlag(&f, t0)
				}
				chs[i] = change{path: f.Path, f: f, tris: tris}
				// A burst's reads may take every processor: let a query
				// waiting for one have it between files, not after the
				// scheduler's 10 ms time slice.
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	kept := chs[:0]
	for i, c := range chs {
		if isGone[i] {
			gone = append(gone, c.path)
		} else {
			kept = append(kept, c)
		}
	}
	return kept, gone
}

// defaultCommitChunk is how many changes commit applies to memory per
// hold of mu: about a millisecond's work (3.5 µs a change; a burst's batch of
// 15,000 files held it 54 ms, and every query with it). Tests cut
// smaller chunks (knobs.commitChunk).
const defaultCommitChunk = 256

// commit applies changes to memory, knobs.commitChunk at a time, then writes
// them to the DB in one transaction, or leaves them pending while writes
// are deferred (pending.go). The record of ignored entries under each of
// the rescanned scopes ("" for all) is replaced by ignoredAdds.
func (ix *Index) commit(chs []change, rescanned []string, ignoredAdds []Skipped) error {
	return ix.commitObserved(chs, rescanned, ignoredAdds, nil)
}

// commitObserved is commit, calling removed, if set, with each file it
// removes from the table before it goes (see ApplyWith).
func (ix *Index) commitObserved(chs []change, rescanned []string, ignoredAdds []Skipped, removed func(*File)) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.Lock()
	locked := true
	defer func() {
		if locked {
			ix.mu.Unlock()
		}
	}()
	var puts, adds []uint32
	var dels []string
	for i, c := range chs {
		if i > 0 && i%ix.k.commitChunk == 0 {
			// Readers waiting for mu come in between chunks: they see
			// the changes so far (the order holding every id put), as
			// they would with the batch cut here, and wait for at most
			// one chunk, not the whole batch.
			ix.insertOrdered(adds)
			adds = adds[:0]
			ix.mu.Unlock()
			if ix.hookCommitChunk != nil {
				ix.hookCommitChunk()
			}
			ix.mu.Lock()
		}
		if c.remove {
			ix.insertOrdered(adds) // removeLocked searches the order
			adds = adds[:0]
			dels = append(dels, ix.removeLocked(c.path, removed)...)
			continue
		}
		id, added := ix.putLocked(c)
		puts = append(puts, id)
		if added {
			adds = append(adds, id)
		}
	}
	ix.insertOrdered(adds)
	var ignDels []string
	for _, scope := range rescanned {
		ix.ignored = slices.DeleteFunc(ix.ignored, func(s Skipped) bool {
			if inScope(s.Path, scope) {
				ignDels = append(ignDels, s.Path)
				return true
			}
			return false
		})
	}
	// A path's new record replaces its old one (a scope rescanned has
	// none left).
	ignoredAdds = mergeSkipped(slices.Clone(ignoredAdds))
	ix.ignored = slices.DeleteFunc(ix.ignored, func(s Skipped) bool {
		_, ok := slices.BinarySearchFunc(ignoredAdds, s.Path, cmpSkipped)
		return ok
	})
	ix.ignored = append(ix.ignored, ignoredAdds...)
	slices.SortFunc(ix.ignored, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	ix.setIgnored(ix.ignored)
	if ix.db == nil {
		ix.written = ix.k.now().UnixNano()
		return nil
	}
	// Readers see the change from here; the transaction and its fsync run
	// without mu (see Index), now or, while writes are deferred, later.
	locked = false
	ix.mu.Unlock()
	for _, p := range dels {
		ix.pending.file(p)
	}
	for _, id := range puts {
		if p := ix.files[id].Path; p != "" { // "": put, then removed in the same change
			ix.pending.file(p)
		}
	}
	for _, p := range ignDels {
		ix.pending.ignoredPath(p)
	}
	for _, s := range ignoredAdds {
		ix.pending.ignoredPath(s.Path)
	}
	if ix.deferWrites && ix.pending.len() < ix.k.deferMax {
		return nil
	}
	return ix.flushLocked()
}

// putLocked stores c's file, reusing its id or taking a free one, and
// returns the id and whether the path is new to the table: then the
// caller adds the id to the order (insertOrdered), once for all the new
// paths of a change. Caller holds mu.
func (ix *Index) putLocked(c change) (id uint32, added bool) {
	id, ok := ix.lookup(c.path)
	if !ok {
		if n := len(ix.free); n > 0 {
			id, ix.free = ix.free[n-1], ix.free[:n-1]
		} else {
			id = uint32(len(ix.files))
			ix.files = append(ix.files, File{})
			ix.mtimes = append(ix.mtimes, 0)
		}
		ix.adding[c.path] = id
	}
	was := ok && ix.files[id].HiddenName()
	ix.paths += int64(len(c.f.Path) - len(ix.files[id].Path))
	ix.files[id] = c.f
	ix.mtimes[id] = c.f.ModTime
	ix.nexts.set(id, c.f.Flags&NextMasks != 0)
	if now := c.f.HiddenName(); now != was {
		i, found := slices.BinarySearchFunc(ix.hidden, c.path, ix.pathSearch)
		switch {
		case now && !found:
			ix.hidden = slices.Insert(ix.hidden, i, id)
		case !now && found:
			ix.hidden = slices.Delete(ix.hidden, i, i+1)
		}
	}
	ix.stale[id] = true
	if c.tris != nil {
		ix.setDelta(id, c.tris)
	} else {
		ix.dropDelta(id)
	}
	if c.f.Flags&Unknown != 0 {
		ix.unknown[id] = true
	} else {
		delete(ix.unknown, id)
	}
	ix.touch(id)
	return id, !ok
}

// insertOrdered adds ids, new to the table (their paths set, none in the
// order), to the path order: one at a time when they are few, else
// sorted and merged in one pass from the back, so that a change adding k
// paths to a table of n costs O(n + k log k), not O(n·k). They are then
// found by their paths in the order, no longer in ix.adding. Caller
// holds mu.
func (ix *Index) insertOrdered(ids []uint32) {
	for _, id := range ids {
		delete(ix.adding, ix.files[id].Path)
	}
	if len(ids) < 8 {
		for _, id := range ids {
			i, _ := slices.BinarySearchFunc(ix.order, ix.files[id].Path, ix.pathSearch)
			ix.order = slices.Insert(ix.order, i, id)
		}
		return
	}
	slices.SortFunc(ids, ix.pathCmp)
	n := len(ix.order)
	ix.order = slices.Grow(ix.order, len(ids))[:n+len(ids)]
	i, j := n-1, len(ids)-1
	for k := len(ix.order) - 1; j >= 0; k-- {
		if i >= 0 && ix.pathCmp(ix.order[i], ids[j]) > 0 {
			ix.order[k] = ix.order[i]
			i--
		} else {
			ix.order[k] = ids[j]
			j--
		}
	}
}

// touch records that id changed in memory. Caller holds wmu and mu.
func (ix *Index) touch(id uint32) {
	ix.pending.touched = append(ix.pending.touched, id)
	if ix.compactTouched != nil {
		ix.compactTouched[id] = true
	}
}

// removeLocked drops the file at p, or every file under the directory p,
// returning the removed paths, each file shown to removed (if set) first.
// The files under a directory are one run of the order, cut out at once.
// Caller holds mu.
func (ix *Index) removeLocked(p string, removed func(*File)) []string {
	lo, hi := ix.orderRange(p)
	ids := slices.Clone(ix.order[lo:hi])
	ix.order = slices.Delete(ix.order, lo, hi)
	if i, found := slices.BinarySearchFunc(ix.order, p, ix.pathSearch); found {
		ids = append(ids, ix.order[i])
		ix.order = slices.Delete(ix.order, i, i+1)
	}
	paths := make([]string, len(ids))
	hidden := false
	for i, id := range ids {
		if removed != nil {
			removed(&ix.files[id])
		}
		paths[i] = ix.files[id].Path
		hidden = hidden || ix.files[id].HiddenName()
		ix.paths -= int64(len(paths[i]))
		ix.files[id] = File{}
		ix.mtimes[id] = 0
		ix.nexts.set(id, false)
		ix.dropDelta(id)
		delete(ix.unknown, id)
		ix.stale[id] = true
		ix.free = append(ix.free, id)
		ix.touch(id)
	}
	if hidden {
		ix.hidden = slices.DeleteFunc(ix.hidden, func(id uint32) bool { return ix.files[id].Path == "" })
	}
	return paths
}

// NeedsCompact reports whether the delta has grown enough that folding it
// into the base is worth its cost: more than an eighth of the files (at
// least 1,024) changed since the base, or the delta's sets holding more
// than defaultDeltaMaxBytes.
func (ix *Index) NeedsCompact() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.stale) > max(1024, len(ix.order)/8) || ix.deltaBytes > ix.k.deltaMaxBytes
}

// defaultDeltaMaxBytes bounds the delta's sets and signatures: the heap a burst
// of changes holds until a compaction, and what every query reads of the
// delta (its slices' rows, a bit per file, and the sets they admit). An
// eighth of the files alone let a million-file root hold 125,000 changed
// files' sets, ~5.2 KB each (deltaSize) on a bench/gentree tree (30,000
// of them took the daemon's RssAnon from 51 to 261 MiB at 200,000
// files); 64 MiB is ~12,800 such files.
const defaultDeltaMaxBytes = 64 << 20

// Compact folds the delta into a new base (dropping stale postings) and
// rewrites the DB's base, delta and stale buckets in one transaction.
//
// The new base is built to the side from the base, delta and stale set as
// they were when Compact began, holding no lock a reader or an update
// takes; updates go on meanwhile, and the ids they touch stay stale (with
// their delta sets) after the swap. The swap itself holds mu only to
// replace three fields; the transaction runs under wmu alone.
func (ix *Index) Compact() error {
	ix.cmu.Lock()
	defer ix.cmu.Unlock()
	ix.compacting.Store(true)
	defer ix.compacting.Store(false)
	ix.wmu.Lock()
	base, delta, stale := ix.base, maps.Clone(ix.delta), maps.Clone(ix.stale)
	path := ""
	if ix.db != nil {
		path = ix.path
	}
	ix.compactTouched = make(map[uint32]bool)
	ix.wmu.Unlock()
	np, err := writeNewBase(path, func(pw *postingWriter) { compactBase(&base, delta, stale, pw, ix.k.compactAddBudget) })
	if err != nil {
		ix.wmu.Lock()
		ix.compactTouched = nil
		ix.wmu.Unlock()
		return fmt.Errorf("index: compact: %w", err)
	}
	if ix.hookCompactBuilt != nil {
		ix.hookCompactBuilt()
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if cur := ix.path; ix.db == nil && path != "" || ix.db != nil && cur != path {
		// Closed, or saved elsewhere, meanwhile: this base belongs to no DB.
		ix.compactTouched = nil
		np.p.close()
		if np.gen != 0 {
			os.Remove(basePath(path, np.gen))
		}
		return fmt.Errorf("index: compact: the index was closed or saved elsewhere meanwhile")
	}
	ndelta, ndsl, nstale := make(map[uint32][]uint32), newDeltaSlices(), make(map[uint32]bool)
	var nbytes int64
	for id := range ix.compactTouched {
		nstale[id] = true
		if t, ok := ix.delta[id]; ok {
			ndelta[id] = t
			ndsl.add(id, t)
			nbytes += deltaSize(t)
		}
	}
	ix.compactTouched = nil
	ix.mu.Lock()
	old := ix.base
	ix.base, ix.gen, ix.delta, ix.dsl, ix.stale, ix.deltaBytes = np.p, np.gen, ndelta, ndsl, nstale, nbytes
	ix.mu.Unlock()
	// No reader holds the old base now: they hold mu while they use it.
	if err := old.close(); err != nil {
		return fmt.Errorf("index: compact: %w", err)
	}
	ix.pending.touched = nil // the transaction below rewrites delta and stale whole
	if ix.db == nil {
		return nil
	}
	err = ix.update(func(w *dbTx) error {
		for _, b := range []int{sumDelta, sumStale} {
			if err := w.reset(b); err != nil {
				return err
			}
		}
		for id, tris := range ix.delta {
			if err := w.put(sumDelta, be32(id), packTrigrams(tris)); err != nil {
				return err
			}
		}
		for id := range ix.stale {
			if err := w.put(sumStale, be32(id), nil); err != nil {
				return err
			}
		}
		return putBaseRecord(w.tx, np)
	})
	if err == nil {
		removeBases(ix.path, np.gen) // the old base, no longer named
	}
	return err
}

// defaultCompactAddBudget bounds how many delta postings compactBase
// inverts at a time (5 bytes each, an id and its mask): a burst of
// 30,000 changed files at 200k files held 835 MB live when the whole
// delta was inverted at once. Tests force many ranges with a smaller one.
const defaultCompactAddBudget = 4 << 20

// compactBase writes to pw base without the postings of stale ids, plus
// the delta's, list by list in trigram order. It only reads its
// arguments. The delta is inverted (trigram -> its files) one range of
// trigrams at a time, each range holding about budget of its
// postings (cut at the trigrams' first byte, counted first), so the
// merge holds that much and one list at a time, whatever the delta.
func compactBase(base *postings, delta map[uint32][]uint32, stale map[uint32]bool, pw *postingWriter, budget int) {
	ids := make([]uint32, 0, len(delta))
	var perFirst [256]int // delta postings by their trigram's first byte
	for id, set := range delta {
		ids = append(ids, id)
		for _, v := range set {
			perFirst[v>>24]++
		}
	}
	slices.Sort(ids)
	var cuts []uint32 // the ranges' ends (exclusive), ascending, the last 1<<24
	for b, n := 0, 0; b < 256; b++ {
		if n += perFirst[b]; n >= budget || b == 255 {
			cuts = append(cuts, uint32(b+1)<<16)
			n = 0
		}
	}
	// The stale ids as a bitmap: a test per posting read, hundreds of
	// millions of them at a million files, is a bit test, not a map lookup.
	var gone []uint64
	for id := range stale {
		if w := int(id >> 6); w >= len(gone) {
			gone = slices.Grow(gone, w+1-len(gone))[:w+1]
		}
		gone[id>>6] |= 1 << (id & 63)
	}
	isGone := func(id uint32) bool { w := int(id >> 6); return w < len(gone) && gone[w]&(1<<(id&63)) != 0 }
	next := make([]int, len(ids)) // per delta file (as ids), its first posting not yet inverted
	var kept, merged, none postingList
	// yield lets a waiting query have this processor every ~64k postings
	// read (inverted or merged): otherwise a query could wait for the
	// scheduler's 10 ms preemption (or a GC worker and this take both of
	// two).
	read := 0
	yield := func(n int) {
		if read += n; read >= 1<<16 {
			runtime.Gosched()
			read = 0
		}
	}
	i := 0 // the next base list
	for _, hi := range cuts {
		add := make(map[uint32]*postingList) // trigram -> its delta files, ascending
		for k, id := range ids {
			set, p := delta[id], next[k]
			yield(len(set))
			for ; p < len(set) && packedTri(set[p]) < hi; p++ {
				l := add[packedTri(set[p])]
				if l == nil {
					l = &postingList{}
					add[packedTri(set[p])] = l
				}
				l.ids, l.masks = append(l.ids, id), append(l.masks, byte(set[p]))
			}
			next[k] = p
		}
		addT := slices.Sorted(maps.Keys(add))
		for j := 0; i < base.n && base.trigram(i) < hi || j < len(addT); {
			var t uint32
			var list []byte
			inBase := i < base.n && base.trigram(i) < hi
			switch {
			case inBase && (j == len(addT) || base.trigram(i) < addT[j]):
				t, list = base.trigram(i), base.list(i)
				i++
			case !inBase || addT[j] < base.trigram(i):
				t = addT[j]
				j++
			default:
				t, list = addT[j], base.list(i)
				i++
				j++
			}
			kept.reset()
			c := listCursor(list)
			yield(c.n)
			for ; !c.done; c.next() {
				if !isGone(c.cur) {
					kept.ids, kept.masks = append(kept.ids, c.cur), append(kept.masks, c.mask)
				}
			}
			fromDelta := add[t]
			if fromDelta == nil {
				fromDelta = &none
			}
			merged.reset()
			merge2(&merged, &kept, fromDelta)
			pw.add(t, merged.ids, merged.masks)
		}
	}
}
