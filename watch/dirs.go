package watch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
)

// dirTree is the set of watched directories (root-relative, "" for the
// root) with each one's watched subdirectories, so a subtree can be
// dropped without scanning the whole set. Every member's parent is a
// member. Owned by the processor.
type dirTree struct {
	kids map[string]map[string]bool // watched dir -> names of its watched subdirectories
}

func newDirTree() *dirTree { return &dirTree{kids: make(map[string]map[string]bool)} }

func (t *dirTree) len() int            { return len(t.kids) }
func (t *dirTree) has(rel string) bool { _, ok := t.kids[rel]; return ok }

// add records rel as watched; its parent must be (unless rel is the root).
func (t *dirTree) add(rel string) {
	if t.has(rel) {
		return
	}
	t.kids[rel] = make(map[string]bool)
	if rel != "" {
		dir, name := split(rel)
		if k := t.kids[dir]; k != nil {
			k[name] = true
		}
	}
}

// walk calls fn for rel and every watched directory below it, parents
// before children.
func (t *dirTree) walk(rel string, fn func(string)) {
	k, ok := t.kids[rel]
	if !ok {
		return
	}
	fn(rel)
	for name := range k {
		t.walk(join(rel, name), fn)
	}
}

// remove drops rel and everything below it, calling fn for each, children
// before parents.
func (t *dirTree) remove(rel string, fn func(string)) {
	k, ok := t.kids[rel]
	if !ok {
		return
	}
	for name := range k {
		t.remove(join(rel, name), fn)
	}
	delete(t.kids, rel)
	if rel != "" {
		dir, name := split(rel)
		if p := t.kids[dir]; p != nil {
			delete(p, name)
		}
	}
	fn(rel)
}

// addWatch watches dir, open beneath the root, under the name abs,
// through the AddWatch seam.
func (w *Watcher) addWatch(dir *os.File, abs string) error {
	add := func(string) error { return w.fsw.Add(dir, abs) }
	if w.opts.AddWatch != nil {
		return w.opts.AddWatch(abs, add)
	}
	return add(abs)
}

// watchTree watches the directory rel (whose entries ign governs) and every
// directory below it that the index would hold, each before listing it,
// then drops the watches and unwatched records below rel that the walk did
// not reach (now ignored, gone). It reports whether the watch limit was
// hit. Processor only (or Start before the processor runs).
func (w *Watcher) watchTree(rel string, ign *ignore.Dir) (limited bool) {
	type item struct {
		rel    string
		parent *ignore.Dir // rules of the directory holding rel
		ign    *ignore.Dir // rules for rel's entries, if known
	}
	visited := make(map[string]bool)
	cl := ignore.Classifier{Root: w.root}
	// rel itself was chosen by the caller, past ignore rules; only a
	// reserved name (the daemon's own directories) keeps it unwatched.
	// Below it, each directory is chosen by the classifier's verdict.
	topReserved := rel != "" && ignore.Classifier{Root: w.root, NoRules: true}.Entry(nil, rel, true).Reserved()
	stack := []item{{rel: rel, ign: ign}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		abs := w.abs(it.rel)
		visited[it.rel] = true
		if it.rel == rel && topReserved {
			continue
		}
		// Open it beneath the root (no symlink anywhere on the way), then
		// watch and list what was opened: a directory swapped for a link
		// is neither watched nor listed through the link.
		dir, err := w.r.OpenDir(it.rel)
		if err == nil {
			err = w.addWatch(dir, abs)
			if err != nil {
				dir.Close()
			}
		}
		if err != nil {
			if w.dirs.has(it.rel) {
				w.unwatch(it.rel) // its watch is gone with the directory it watched
			}
			switch {
			case rooted.Gone(err) || rooted.Denied(err):
				// Gone, replaced (by a file or a link), or not permitted
				// (the index records it so: tree.Skip.Denied): an event on
				// the parent (a change of its mode is one) will bring it
				// back here.
			default:
				if errors.Is(err, syscall.ENOSPC) {
					limited = true
				} else {
					w.log.Warn("watch: cannot watch directory", "dir", abs, "err", err)
				}
				if !w.unwatched[it.rel] {
					w.unwatched[it.rel] = true
					if limited {
						w.log.Warn("watch: inotify watch limit reached; subtree not watched (queries there use the walk); raise fs.inotify.max_user_watches",
							"dir", abs, "watched", w.dirs.len(), "max_user_watches", w.maxWatches)
					}
				}
			}
			continue
		}
		delete(w.unwatched, it.rel)
		w.dirs.add(it.rel)
		w.checkLimit()
		ents, err := dir.ReadDir(-1)
		if err != nil {
			dir.Close()
			continue
		}
		slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		d := it.ign
		if d == nil {
			var rf ignore.RuleFiles
			for _, e := range ents {
				rf.See(e.Name())
			}
			if rf.Git {
				w.registerRepo(it.rel, dir) // its inputs watched before they are read
			}
			d = it.parent.Child(dir, it.rel, rf)
		}
		dir.Close()
		// Push in reverse so that directories are visited in name order:
		// the order (and so which subtrees a watch limit leaves out) does
		// not depend on scheduling.
		for i := len(ents) - 1; i >= 0; i-- {
			e := ents[i]
			if !e.IsDir() {
				continue
			}
			sub := join(it.rel, e.Name())
			if v := cl.Entry(d, sub, true); v.Reserved() || v.Ignored {
				continue // watched exactly where the walk enters, hidden or not
			}
			stack = append(stack, item{rel: sub, parent: d})
		}
	}
	var stale []string
	w.dirs.walk(rel, func(p string) {
		if !visited[p] {
			stale = append(stale, p)
		}
	})
	for _, p := range stale {
		w.unwatch(p)
	}
	for u := range w.unwatched {
		if within(u, rel) && !visited[u] {
			delete(w.unwatched, u)
		}
	}
	return limited
}

// watchRoot watches the root directory alone and reports whether it
// could; Start's first step when the initial reconcile's walk watches the
// rest (see reconcileWatching). A failure is left to watchTree, which
// tries again and records it.
func (w *Watcher) watchRoot() bool {
	dir, err := w.r.OpenDir("")
	if err != nil {
		return false
	}
	defer dir.Close()
	if w.addWatch(dir, w.root) != nil {
		return false
	}
	w.dirs.add("")
	return true
}

// reconcileWatching is the initial reconcile when Start watched the root
// alone: one walk of the tree adds the watch of every directory below the
// root (from the walk's readers, each directory's before it is listed and
// after its parent's, the invariant watchTree keeps) and catches the index
// up. The directories watched are those watchTree would watch: the walk
// enters exactly the directories the index holds. Should a watch fail
// (the inotify limit), the walk adds no more; once it is done the watches
// it added are removed and the tree is watched again by watchTree, in
// walk order (so which subtrees a limit leaves out does not depend on the
// walk's scheduling), then reconciled again. Processor only.
func (w *Watcher) reconcileWatching() error {
	var mu sync.Mutex
	watched := map[string]bool{"": true} // by Start
	failed := false
	onDir := func(rel string, dir *os.File) {
		if rel == "" {
			return
		}
		parent, _ := split(rel)
		mu.Lock()
		ok := watched[parent] && !failed
		mu.Unlock()
		if !ok {
			return
		}
		err := w.addWatch(dir, w.abs(rel))
		mu.Lock()
		if err == nil {
			watched[rel] = true
		} else {
			failed = true
		}
		mu.Unlock()
	}
	err := w.reconcileIndex(index.ReconcileOptions{OnDir: onDir, OnRepo: w.registerRepo})
	if failed {
		for rel := range watched {
			if rel != "" {
				w.fsw.Remove(w.abs(rel))
			}
		}
		w.watchTree("", ignore.NewCache(w.r).At(""))
		if err == nil {
			w.found = w.found[:0] // the next walk finds them again
			err = w.reconcileIndex(index.ReconcileOptions{})
		}
		return err
	}
	// The paths the walk made sit among its garbage, each pinning a span:
	// the long-lived copies are made here, together.
	for _, rel := range sortedKeys(watched) { // parents first
		w.dirs.add(strings.Clone(rel))
	}
	w.fsw.compact()
	w.checkLimit()
	return err
}

// unwatch removes the watches on rel and every directory below it, and
// forgets unwatched subtrees there. Removing a watch inotify already
// dropped (the directory was deleted) is harmless.
func (w *Watcher) unwatch(rel string) {
	if !w.dirs.has(rel) && !w.unwatched[rel] {
		// Nothing at or below rel: an unwatched root's parent is watched,
		// and so are all its ancestors.
		return
	}
	w.dirs.remove(rel, func(p string) {
		w.fsw.Remove(w.abs(p))
		w.removed++
	})
	w.forgetRepos(rel)
	for u := range w.unwatched {
		if within(u, rel) {
			delete(w.unwatched, u)
		}
	}
	w.checkLimit()
}

// checkLimit warns once when the watch count passes 80% of the limit, and
// re-arms when it falls back under 70%.
func (w *Watcher) checkLimit() {
	if w.maxWatches <= 0 {
		return
	}
	n := w.watches()
	switch {
	case !w.warned && n*10 > w.maxWatches*8:
		w.warned = true
		w.log.Warn("watch: nearing the inotify watch limit; raise fs.inotify.max_user_watches",
			"root", w.root, "watched", n, "max_user_watches", w.maxWatches)
	case w.warned && n*10 < w.maxWatches*7:
		w.warned = false
	}
}

// chooseCookieDir picks where Sync makes cookies: <root>/.git when it is a
// directory that can be watched, else the root if it is watched.
func (w *Watcher) chooseCookieDir() {
	git := filepath.Join(w.root, ignore.GitDir)
	dir := ""
	if f, err := w.r.OpenDir(ignore.GitDir); err == nil && w.addWatch(f, git) == nil {
		f.Close()
		dir, w.gitWatched = git, true
	} else {
		if err == nil {
			f.Close()
		}
		if w.gitWatched {
			w.fsw.Remove(git)
			w.gitWatched = false
		}
		if w.dirs.has("") {
			dir = w.root
		}
	}
	w.syncMu.Lock()
	w.cookieDir = dir
	w.cookieFallback = ""
	if w.dirs.has("") {
		w.cookieFallback = w.root
	}
	w.syncMu.Unlock()
}

// removeLeftoverCookies removes cookie files left in the directory rel
// (beneath r) by a process that died between creating and removing one.
func removeLeftoverCookies(r *rooted.Root, rel string) {
	f, err := r.OpenDir(rel)
	if err != nil {
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	for _, e := range ents {
		if ignore.IsCookie(e.Name()) && e.Type().IsRegular() {
			_ = r.Remove(join(rel, e.Name())) // another process may have removed it first
		}
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// within reports whether p is dir or below it ("" is the root).
func within(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// split cuts rel into its parent ("" at the top) and its last name.
func split(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}
