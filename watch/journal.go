package watch

import (
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
)

// Feeding the change journal (Options.Journal).
//
// The journal records what the index's path table gained, lost or saw
// change, which the processor (the index's only writer) learns by taking
// the table's entries under a batch's paths before and after it applies
// them: a path in the second and not the first was created, in the first
// and not the second deleted, in both with another mtime, size or inode
// (or named by a write event) modified. A renamed directory therefore
// reports every file under its old name deleted and every file under its
// new one created, whatever events inotify sent. Ignored files, which the
// index does not hold, are journaled as events name them in watched
// directories (their kind from the event and lstat); nothing inside an
// ignored directory is watched, so nothing there is journaled.
//
// When events may have been lost (an overflow, a failed update) the
// journal is truncated, at once and again when the whole-tree reconcile
// that repairs the index ends: no token from before then is answered
// relative to itself. The initial reconcile is not journaled: no token
// can precede it (the daemon hands out tokens once the watcher is ready).

// entryState is what the journal compares of one path table entry.
type entryState struct {
	path   string
	mtime  int64
	size   int64
	ino    uint64
	hidden uint64
	link   bool
}

func stateOf(f *index.File) entryState {
	return entryState{f.Path, f.ModTime, f.Size, f.Ino, f.Hidden, f.Mode&fs.ModeSymlink != 0}
}

// tableUnder returns the path table's entries at or under each of scopes
// (root-relative; "" is the whole table), sorted by path, once each.
func tableUnder(ix *index.Index, scopes []string) []entryState {
	var out []entryState
	add := func(f *index.File) bool {
		out = append(out, stateOf(f))
		return true
	}
	for _, s := range outermost(slices.Clone(scopes)) {
		if s == "" {
			ix.Candidates(index.CandidateOptions{}, add)
			continue
		}
		dir, name := split(s)
		ix.Candidates(index.CandidateOptions{Dir: dir, Prefix: name}, func(f *index.File) bool {
			if f.Path != s && !strings.HasPrefix(f.Path, s+"/") {
				return f.Path < s+"/" // paths such as s.go and s-x sort between s and s/
			}
			return add(f)
		})
	}
	slices.SortFunc(out, func(a, b entryState) int { return strings.Compare(a.path, b.path) })
	return slices.CompactFunc(out, func(a, b entryState) bool { return a.path == b.path })
}

// tableDiff returns the changes from before to after (both sorted by
// path). A path in both whose stat is the same counts as modified when
// named[path] holds a write or create event (a rewrite within one mtime
// tick).
func tableDiff(before, after []entryState, named map[string]fsnotify.Op) []journal.Change {
	var out []journal.Change
	i, k := 0, 0
	for i < len(before) || k < len(after) {
		switch {
		case k == len(after) || (i < len(before) && before[i].path < after[k].path):
			b := before[i]
			out = append(out, journal.Change{Path: b.path, Kind: journal.Deleted, Mtime: b.mtime, Hidden: b.hidden, Link: b.link})
			i++
		case i == len(before) || after[k].path < before[i].path:
			a := after[k]
			out = append(out, journal.Change{Path: a.path, Kind: journal.Created, Mtime: a.mtime, Hidden: a.hidden, Link: a.link})
			k++
		default:
			b, a := before[i], after[k]
			if b.mtime != a.mtime || b.size != a.size || b.ino != a.ino || named[a.path]&(fsnotify.Write|fsnotify.Create) != 0 {
				out = append(out, journal.Change{Path: a.path, Kind: journal.Modified, Mtime: a.mtime, Hidden: a.hidden, Link: a.link})
			}
			i++
			k++
		}
	}
	return out
}

// journalScopeMax bounds the extra scope journalScopes gives a gone
// path: the shallowest of its ancestors holding at most this many files.
const journalScopeMax = 4096

// journalScopes returns where a batch may change the path table: at or
// under each path it names, and for a path that is gone, under its
// shallowest ancestor that is no longer a real directory and under its
// shallowest ancestor holding at most journalScopeMax files, which may go
// before Index.Apply looks (Apply drops a broken ancestor's whole
// subtree: a directory renamed or removed while events under it were
// queued, as rm -r and git checkout do). A path that is there is its own
// scope: its directories were real when looked at. Should one go before
// Apply looks, the files Apply drops beyond the scopes are journaled as
// deleted from its own report (noteDropped), not from a snapshot; so
// bursts of rewrites no longer widen every path to such an ancestor,
// which made each batch's before and after snapshots cover most of a
// large table (a 16,000-file burst at a million files: a synced query
// after it waited out the barrier and walked, 5.3 s, against 1.8 s
// answered from the index). journaled's count check still catches any
// other change beyond the scopes, and truncates the journal.
func (w *Watcher) journalScopes(b batch) []string {
	if w.opts.Journal == nil {
		return nil
	}
	scopes := append(sortedKeys(b.paths), sortedKeys(b.rules)...)
	small := map[string]bool{}
	for _, p := range sortedKeys(b.paths) {
		if _, err := w.r.Lstat(p); err == nil {
			continue
		}
		if a := brokenAncestor(w.r, p); a != "" {
			scopes = append(scopes, a)
		}
		if a := w.smallAncestor(p, small); a != "" {
			scopes = append(scopes, a)
		}
	}
	return scopes
}

// smallAncestor returns the shallowest proper ancestor of p under which
// the table holds at most journalScopeMax files ("" if none does), with
// memo remembering each ancestor's verdict.
func (w *Watcher) smallAncestor(p string, memo map[string]bool) string {
	for i, c := range p {
		if c != '/' {
			continue
		}
		a := p[:i]
		ok, seen := memo[a]
		if !seen {
			n := 0
			w.ix.Candidates(index.CandidateOptions{Dir: a}, func(*index.File) bool { n++; return n <= journalScopeMax })
			ok = n <= journalScopeMax
			memo[a] = ok
		}
		if ok {
			return a
		}
	}
	return ""
}

// brokenAncestor returns the shallowest proper ancestor of rel that is no
// longer a real directory beneath the root (as Index.Apply finds it), or
// "" if every ancestor still is one.
func brokenAncestor(r *rooted.Root, rel string) string {
	for i, c := range rel {
		if c != '/' {
			continue
		}
		if st, err := r.Lstat(rel[:i]); err != nil || !isDirStat(st) {
			return rel[:i]
		}
	}
	return ""
}

// journaled runs fn, which changes the index at or under scopes, and
// appends to the journal what it changed there, the files the index
// reported dropping elsewhere (noteDropped: the tree changed again between
// the processor's look and the index's, so that Index.Apply dropped a
// subtree the batch did not name) as deleted, then extra (the ignored
// files fn saw). If fn changed the table elsewhere in any other way (the
// number of its entries moved by more than those under scopes and those
// dropped beyond them), the changes cannot be told and the journal is
// truncated instead. fn may widen the scopes as it goes (widenJournal).
func (w *Watcher) journaled(scopes []string, named map[string]fsnotify.Op, fn func(), extra func() []journal.Change) {
	start := len(w.dropped)
	defer func() { w.dropped = w.dropped[:start] }() // consumed here, not by an enclosing call
	j := w.opts.Journal
	if j == nil || len(scopes) == 0 {
		fn()
		return
	}
	n0 := w.ix.Len()
	js := &journalScope{scopes: scopes, before: tableUnder(w.ix, scopes), named: named}
	outer := w.jscope
	w.jscope = js
	fn()
	w.jscope = outer
	before, scopes := js.before, js.scopes
	after := tableUnder(w.ix, scopes)
	beyond := outside(w.dropped[start:], scopes)
	if w.ix.Len()-n0 != len(after)-len(before)-len(beyond) {
		w.log.Warn("watch: a batch changed the index beyond the paths it named; the change journal starts again", "root", w.root)
		j.Truncate()
		return
	}
	chs := tableDiff(before, after, js.named)
	for _, d := range beyond {
		chs = append(chs, journal.Change{Path: d.path, Kind: journal.Deleted, Mtime: d.mtime, Hidden: d.hidden, Link: d.link})
	}
	if extra != nil {
		chs = append(chs, extra()...)
	}
	j.Append(chs)
}

// journalScope is the state of the journaled change running: its scopes
// and the table's entries under them before it, and the paths named as
// written.
type journalScope struct {
	scopes []string
	before []entryState
	named  map[string]fsnotify.Op
	owned  bool // named is this scope's own copy
}

// widenJournal adds paths, files about to be read again, to the change
// being journaled (if one is), before they are read: each is named as
// written, since its content may change with its stat as it was, and
// one outside the scopes joins them, its entry taken as it is now.
// Processor only.
func (w *Watcher) widenJournal(paths []string) {
	js := w.jscope
	if js == nil {
		return
	}
	if !js.owned {
		js.named, js.owned = maps.Clone(js.named), true
		if js.named == nil {
			js.named = make(map[string]fsnotify.Op)
		}
	}
	var add []string
	for _, p := range paths {
		js.named[p] |= fsnotify.Write
		if !slices.ContainsFunc(js.scopes, func(s string) bool { return within(p, s) }) {
			add = append(add, p)
		}
	}
	if len(add) == 0 {
		return
	}
	js.scopes = append(slices.Clip(js.scopes), add...)
	js.before = append(js.before, tableUnder(w.ix, add)...)
	slices.SortFunc(js.before, func(a, b entryState) int { return strings.Compare(a.path, b.path) })
	js.before = slices.CompactFunc(js.before, func(a, b entryState) bool { return a.path == b.path })
}

// noteDropped records a file the index removes (Index.ApplyWith's
// removed), for journaled: a subtree dropped whole may lie beyond the
// batch's scopes (a named path's ancestor renamed or removed after the
// batch was scoped); and, when the file was watched on its own, for
// settleLinks, which drops its path from the watch.
func (w *Watcher) noteDropped(f *index.File) {
	if w.opts.Journal != nil {
		w.dropped = append(w.dropped, stateOf(f))
	}
	if _, ok := w.fsw.FileIno(w.abs(f.Path)); ok {
		w.unlinked = append(w.unlinked, f.Path) // its watch goes (settleLinks), outside the index's lock
	}
}

// outside returns those of dropped that lie at or under none of scopes,
// sorted by path, once each.
func outside(dropped []entryState, scopes []string) []entryState {
	if len(dropped) == 0 {
		return nil
	}
	in := make(map[string]bool, len(scopes))
	for _, s := range scopes {
		in[s] = true
	}
	if in[""] {
		return nil
	}
	var out []entryState
	for _, d := range dropped {
		covered := in[d.path]
		for i := 0; i < len(d.path) && !covered; i++ {
			covered = d.path[i] == '/' && in[d.path[:i]]
		}
		if !covered {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b entryState) int { return strings.Compare(a.path, b.path) })
	return slices.CompactFunc(out, func(a, b entryState) bool { return a.path == b.path })
}

// truncateJournal marks that changes may have been missed: no token from
// before now is answered relative to itself.
func (w *Watcher) truncateJournal() {
	if j := w.opts.Journal; j != nil {
		j.Truncate()
	}
}

// ignoredChange returns the journal entry for an ignored file an event
// named: created or modified as the event says, deleted when it is gone.
func ignoredChange(p string, op fsnotify.Op, exists bool, mtime int64, hidden uint64) journal.Change {
	c := journal.Change{Path: p, Kind: journal.Modified, Mtime: mtime, Hidden: hidden, Ignored: true}
	switch {
	case !exists:
		c.Kind, c.Mtime = journal.Deleted, 0
	case op&fsnotify.Create != 0:
		c.Kind = journal.Created
	}
	return c
}

// ignoredDir reports whether the index records p as an ignored directory.
func (w *Watcher) ignoredDir(p string) bool {
	dir, _ := split(p)
	found := false
	w.ix.Visibility().Skipped(dir, func(s index.Skipped, _ bool) {
		found = found || (!s.Hidden && !s.Denied && s.Path == p && s.IsDir)
	})
	return found
}
