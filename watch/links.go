package watch

import (
	"errors"
	"path"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// Hard links.
//
// inotify reports a write to the directory it went through, not to every
// directory that links the file: a file with more than one link
// (st_nlink > 1) can be written through a path no directory watch sees,
// outside the root (a package manager's store, a cp -l backup) or inside
// it (the write through b reaches a too). So each such regular file the
// index holds gets a watch of its own, on its inode, which reports writes
// through any link; the notifier sends each of its events under every
// path of the file the watcher knows (the table's other links of the
// inode, found when its watch is new), and the processor reads each
// again. The watch is one inotify instance's like the directories', so
// the sync barrier covers it: a write through an outside link that
// returned before Sync is in the index when Sync returns.
//
// Where the watcher learns a file's link count:
//
//   - a path an event names: lstat'd by the processor, watched before the
//     index reads it (watchLink);
//   - every file a walk of the index lists (Index.ApplyWith's and
//     ReconcileWith's Linked): a directory created or moved in, a
//     subtree watched again, every whole-tree reconcile (the initial one,
//     so a restart restores the watches, and those after an overflow).
//     Such a file was looked at before its watch existed: it is read
//     again when its stat, taken once the watch is in place, differs
//     from the walk's, or is too recent to tell (index.RacyWindow), as
//     git treats racily clean entries (settleLinks).
//
// A file's watch goes when the index drops its last path (deleted,
// renamed away, now ignored), when its link count falls to one (the
// watch's IN_ATTRIB names its paths, which are looked at again), when
// the file itself is gone (IN_IGNORED), and, after a whole-tree
// reconcile, when the walk found none of its paths with more than one
// link. Nothing else holds a watch, so none leaks.
//
// A file whose watch cannot be added (the inotify watch limit, ENOSPC, or
// any other failure) is not kept current: its directory is published as
// unwatched (State.Unwatched), so queries there walk and say so
// (watch_limit), as for a directory past the limit; it is tried again
// when watches are freed and at every whole-tree reconcile.
//
// Why a watch, not an unknown file. The other way to never lose such a
// write is to treat every file with more than one link as unknown to
// the index: a candidate for every Grep, read live, its mtime read
// again to order the answer. That costs every query a read of every
// such file (on a generated 200,000-file tree with every tenth file
// linked outside it, 19,000 indexed files, a tenth of the tree's bytes,
// per Grep), tells the change journal nothing, and still leaves Glob's
// recent order stale. A watch costs once: an inotify watch per file
// (19,000 there, beside 9,365 directory watches; none on this
// repository, none on $GOROOT/src), kernel memory the limit accounts
// for, and nothing per query; past the limit the file's directory is
// walked (below), as a directory past it is.
//
// What cannot be seen: a second link made from outside the root to a
// file that had one (ln root/f /elsewhere/g) changes the file's link
// count and ctime but makes no event on any directory watched, so
// writes through the new link go unseen until something names the file
// (any change through its path in the root) or a whole-tree reconcile
// (a restart of the daemon, an overflow) finds its link count. Nor does
// a store into a shared mmap of a file make any event (a kernel limit:
// see docs/product.md, "Caveats and limitations").

// fileKey identifies a file by its device and inode.
type fileKey struct{ dev, ino uint64 }

// maxLinkRounds bounds how many times settleLinks reads files again
// within one batch; past it they are left to the next batch (marked
// dirty). Each round needs a file replaced again on disk meanwhile.
const maxLinkRounds = 3

// indexOptions are the options of the processor's every Index.ApplyWith.
func (w *Watcher) indexOptions() index.ApplyOptions {
	w.beginLinks()
	return index.ApplyOptions{Removed: w.noteDropped, Linked: w.noteLinked}
}

// beginLinks marks the moment before an index call whose Linked reports
// settleLinks will look at: a file the call saw may have been written
// unseen from then until its watch is in place.
func (w *Watcher) beginLinks() {
	if len(w.found) == 0 {
		w.linkSince = time.Now().UnixNano()
	}
}

// noteLinked is the index's Linked: a regular file with more than one
// link, as the index's lstat saw it. settleLinks takes it from there.
func (w *Watcher) noteLinked(f index.File) {
	w.found = append(w.found, f)
}

// watchLink keeps the own watch of the file at rel, which an event
// named and which the index is about to read, as st (its lstat just
// taken) says: watched if it is a regular file with more than one link,
// not watched otherwise. Processor only.
func (w *Watcher) watchLink(rel string, st *unix.Stat_t) {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink <= 1 {
		w.unwatchFile(rel)
		return
	}
	if ino, ok := w.fsw.FileIno(w.abs(rel)); ok && ino == st.Ino {
		return
	}
	w.watchFile(rel, nil)
}

// watchFile adds the own watch of the file at rel (regular, with more
// than one link), opened beneath the root. seen is the file as a walk
// found it before the watch existed, or nil when the index reads it
// after this call: then reread says whether it may have been written
// unseen in between (mayDiffer) and must be read again. A failure
// leaves the file unwatched (linkUnwatched), unless it is gone, which an
// event on its directory reports.
func (w *Watcher) watchFile(rel string, seen *index.File) (reread bool) {
	fd, err := openWatchable(w.r, rel)
	if err != nil {
		if !rooted.Gone(err) && !rooted.Denied(err) { // the index reports a file it may not read
			w.linkUnwatched(rel, err)
		}
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return seen != nil // not the file the walk saw: the index looks again
	}
	abs := w.abs(rel)
	fresh := false
	add := func(string) error {
		var err error
		fresh, err = w.fsw.AddFile(fd, abs, st.Ino)
		return err
	}
	if w.opts.AddWatch != nil {
		err = w.opts.AddWatch(abs, add)
	} else {
		err = add(abs)
	}
	if err != nil {
		if rooted.Denied(err) {
			// A watch needs read permission. A file that may not be read
			// is unknown to the index (every Grep reads it, and names it)
			// and needs none; once readable, its change of mode is an
			// event on its directory, which brings it back here.
			return false
		}
		w.linkUnwatched(rel, err)
		return false
	}
	delete(w.linkFailed, rel)
	if fresh {
		w.fresh[fileKey{uint64(st.Dev), st.Ino}] = rel
		w.checkLimit()
	}
	if seen == nil {
		return false
	}
	if err := unix.Fstat(fd, &st); err != nil { // once the watch is in place
		return true
	}
	return mayDiffer(seen, &st, w.linkSince)
}

// mayDiffer reports whether the file recorded as f may hold other
// content than the file statted as st, after its watch was added: its
// stat differs, it was racy when read, or its mtime or ctime is within
// index.RacyWindow of since (the moment before f was looked at), so
// that a write after that look may have left the stat as it was (a
// timestamp tick is coarse).
func mayDiffer(f *index.File, st *unix.Stat_t, since int64) bool {
	mt, ct := tree.Nanos(st.Mtim.Unix()), tree.Nanos(st.Ctim.Unix())
	if f.Size != st.Size || f.ModTime != mt || f.Ctime != ct || f.Ino != st.Ino || f.Flags&index.Racy != 0 {
		return true
	}
	bound := since - int64(index.RacyWindow)
	return mt >= bound || ct >= bound
}

// linkUnwatched records that the file at rel could not be watched on its
// own: its directory is published as unwatched until it can be.
func (w *Watcher) linkUnwatched(rel string, err error) {
	if w.linkFailed[rel] {
		return
	}
	w.linkFailed[rel] = true
	if w.linkWarned {
		return
	}
	w.linkWarned = true
	if errors.Is(err, syscall.ENOSPC) {
		w.log.Warn("watch: inotify watch limit reached; a file with more than one link is not watched (queries in its directory use the walk); raise fs.inotify.max_user_watches",
			"file", w.abs(rel), "watched", w.watches(), "max_user_watches", w.maxWatches)
	} else {
		w.log.Warn("watch: cannot watch a file with more than one link (queries in its directory use the walk)", "file", w.abs(rel), "err", err)
	}
}

// unwatchFile removes rel from its file's own watch (the watch goes with
// its last path) and forgets a failure to watch it.
func (w *Watcher) unwatchFile(rel string) {
	if w.fsw.RemoveFile(w.abs(rel)) {
		w.removed++
	}
	delete(w.linkFailed, rel)
}

// unwatchFilesUnder removes every path at or under rel from the file
// watches (the index dropped them without naming each).
func (w *Watcher) unwatchFilesUnder(rel string) {
	for _, p := range w.fsw.FilePaths() {
		if r, ok := w.relOf(p); ok && within(r, rel) {
			w.unwatchFile(r)
		}
	}
	for p := range w.linkFailed {
		if within(p, rel) {
			delete(w.linkFailed, p)
		}
	}
}

// settleLinks ends the processor's index calls: the paths the index
// dropped leave their files' watches; every file with more than one link
// the calls found is watched on its own if it is not (and a file watched
// for the first time has its other paths the table holds named in its
// watch: otherLinks); and those that may have been written unseen before
// their watch was in place are read again, in the journaled change
// running if any (widenJournal), until no file is left to look at (at
// most maxLinkRounds times; then in the next batch). whole says the
// calls walked the whole tree, so they found every such file: the
// watches of paths they did not find go. Processor only.
func (w *Watcher) settleLinks(whole bool) {
	for round := 0; ; round++ {
		for _, p := range w.unlinked {
			w.unwatchFile(p)
		}
		w.unlinked = w.unlinked[:0]
		found := w.found
		w.found = nil
		var reread []string
		for i := range found {
			f := &found[i]
			if ino, ok := w.fsw.FileIno(w.abs(f.Path)); ok && ino == f.Ino {
				continue
			}
			if w.watchFile(f.Path, f) {
				reread = append(reread, f.Path)
			}
		}
		if whole && round == 0 {
			w.sweepLinks(found)
			clear(w.fresh) // the walk found every path of every file
		}
		reread = append(reread, w.otherLinks()...)
		slices.Sort(reread)
		reread = slices.Compact(reread)
		if len(reread) == 0 {
			return
		}
		if round+1 == maxLinkRounds {
			w.mu.Lock()
			for _, p := range reread {
				w.dirty[p] |= fsnotify.Write
			}
			w.mu.Unlock()
			w.signal()
			return
		}
		w.widenJournal(reread)
		w.indexApply(reread)
	}
}

// sweepLinks drops the file watches of paths that found, every file with
// more than one link a whole-tree walk listed, does not hold, and
// forgets failures to watch them.
func (w *Watcher) sweepLinks(found []index.File) {
	if w.fsw.FileWatches() == 0 && len(w.linkFailed) == 0 {
		return
	}
	in := make(map[string]bool, len(found))
	for _, f := range found {
		in[f.Path] = true
	}
	for _, p := range w.fsw.FilePaths() {
		if r, _ := w.relOf(p); !in[r] {
			w.unwatchFile(r)
		}
	}
	for p := range w.linkFailed {
		if !in[p] {
			delete(w.linkFailed, p)
		}
	}
}

// otherLinks names, in the watch of each file watched for the first time
// since the last call, the file's other paths the table holds (other
// links inside the root: a write through any link must reach them all),
// and returns those whose content may differ from what the table holds
// (mayDiffer), to be read again. It passes over the whole table once,
// only when a file was watched for the first time (a link made, a tree
// linked in); a whole-tree walk finds every path itself and clears the
// set first.
func (w *Watcher) otherLinks() []string {
	if len(w.fresh) == 0 {
		return nil
	}
	fresh := w.fresh
	w.fresh = make(map[fileKey]string)
	var cands []index.File
	w.ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
		if _, ok := fresh[fileKey{f.Dev, f.Ino}]; ok && f.Mode.IsRegular() {
			cands = append(cands, *f)
		}
		return true
	})
	var reread []string
	for i := range cands {
		f := &cands[i]
		abs := w.abs(f.Path)
		if ino, ok := w.fsw.FileIno(abs); ok && ino == f.Ino {
			continue // watched already (the known path, or found by the same walk); a watch of another file at this path, one replaced with its directory, is not this file's
		}
		st, err := w.r.Lstat(f.Path)
		if err != nil || st.Ino != f.Ino || uint64(st.Dev) != f.Dev {
			continue // not that file any more: an event on its directory says so
		}
		if !w.fsw.AddLink(w.abs(fresh[fileKey{f.Dev, f.Ino}]), abs) {
			continue // that watch went meanwhile (the file is gone)
		}
		if mayDiffer(f, &st, w.linkSince) {
			reread = append(reread, f.Path)
		}
	}
	return reread
}

// linkedDirs returns the directories of the files that could not be
// watched on their own (root-relative, "" for the root).
func (w *Watcher) linkedDirs() []string {
	var out []string
	for p := range w.linkFailed {
		d := path.Dir(p)
		if d == "." {
			d = ""
		}
		out = append(out, d)
	}
	return out
}

// watches returns the number of inotify watches this watcher holds
// (directories and files; the cookie directory's not counted).
func (w *Watcher) watches() int { return w.dirs.len() + w.fsw.FileWatches() }
