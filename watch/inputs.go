package watch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/ignore"
)

// Watching the inputs of the ignore rules that are not the tree's own
// .gitignore, .ignore and .git entries (ignore.Input): each repository's
// info/exclude, config and index, the excludes file in force in it, git's
// configuration files (system, global), and when the root lies inside a
// repository without being its top, the ancestors' rule files up to it.
// They may lie anywhere: in an ignored directory under the root (.git), or
// outside it ($HOME, $XDG_CONFIG_HOME/git, another worktree's git
// directory), shared with other roots' watchers.
//
// Each input is watched through its directory, on the watcher's own
// inotify instance: an edit, a replacement by rename (editors, git's
// lock files) or a removal of the file makes an event there, and since
// one instance delivers its events in order, the sync barrier's cookie
// orders them with the tree's: a query that follows an edit finds it
// applied. A directory is watched by its real path (symbolic links on the
// way resolved); an input that is itself a link is watched at both ends
// (the link's directory for a retargeting, the target's for an edit). A
// directory that does not exist yet is waited for in its nearest existing
// ancestor (a "chain" name), and found again when it appears.
//
// What an event on an input does is the mechanism a .gitignore edit uses
// (process.go): the directory its repository governs is marked in the
// rules set, so the next batch re-applies the rules there (the root: a
// whole-tree reconcile; a repository inside the tree: its subtree). A
// configuration file or a chain name also makes the inputs be found
// again first (which file is the excludes file may have changed), watched
// before they are read. A repository's index is read again and its
// tracked directories of the default list compared with those of the last
// reading: each that changed is applied as a directory created, which
// indexes or prunes it.
//
// Invariant: an input is watched before the rules are read from it, as a
// directory is watched before it is listed. The root's and those above it
// are watched by Start; a repository inside the tree is registered (its
// inputs watched, its tracked directories read) by whatever walk of the
// watcher's meets its .git first: the initial reconcile's readers
// (tree.Options.OnRepo), watchTree's listings, and a batch that names its
// directory (a .git made, a directory moved in).
//
// Directories under the root that the tree's watches cover (the root, a
// repository top holding its excludes file) are not watched twice: the
// tree's watch delivers their events, under the same names. Directories
// watched for inputs alone (the root's .git, a .git/info) are "owned":
// their events go nowhere else.

// inputRef is what one name in a watched input directory stands for.
type inputRef struct {
	scope string // root-relative directory whose rules it feeds ("": the whole root)
	kind  ignore.InputKind
	// chain: the name leads to the input (a directory not there yet, a
	// symbolic link): when it changes, the inputs are found again.
	chain bool
}

// inputDir is one directory watched for inputs.
type inputDir struct {
	owned bool                  // watched for inputs alone (see above)
	names map[string][]inputRef // by entry name
}

// inputTable maps each directory watched for inputs (by absolute real
// path, the name its events carry) to its names. Immutable once published
// (Watcher.inputs): the processor makes a new one for each change.
type inputTable map[string]*inputDir

// scopes returns the scopes of every ref in d, for an event on the
// directory itself (removed, moved): all of them are found again.
func (d *inputDir) scopes() []inputRef {
	var out []inputRef
	for _, refs := range d.names {
		for _, r := range refs {
			out = append(out, inputRef{scope: r.scope, kind: r.kind, chain: true})
		}
	}
	return out
}

// inputEvent records an event on a watched input, if ev is one, and
// reports whether it is consumed: an event of an owned directory goes
// nowhere else. Drain only.
func (w *Watcher) inputEvent(ev fsnotify.Event) (consumed bool) {
	t := w.inputs.Load()
	if t == nil {
		return false
	}
	var refs []inputRef
	if d, ok := (*t)[ev.Name]; ok && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
		refs = d.scopes() // the directory itself went
		consumed = d.owned
	}
	i := strings.LastIndexByte(ev.Name, '/') // names are absolute: no allocation per event
	dir, name := ev.Name[:max(i, 1)], ev.Name[i+1:]
	if d, ok := (*t)[dir]; ok {
		if ev.Op != fsnotify.Chmod {
			refs = append(refs, d.names[name]...)
		}
		consumed = consumed || d.owned
	}
	if len(refs) == 0 {
		return consumed
	}
	w.mu.Lock()
	for _, r := range refs {
		switch {
		case r.chain || r.kind == ignore.InputConfig:
			w.inputsStale = true
			w.rules[r.scope] = true
			if r.kind == ignore.InputIndex {
				w.indexes[r.scope] = true
			}
		case r.kind == ignore.InputIndex:
			w.indexes[r.scope] = true
		default:
			w.rules[r.scope] = true
		}
	}
	w.mu.Unlock()
	w.signal()
	return consumed
}

// repoState is what the watcher keeps of one repository (see Watcher.repos).
type repoState struct {
	spots   []inputSpot // where its inputs are watched
	tracked []string    // its tracked directories of the default list, root-relative, as last read
}

// inputSpot is one name watched in one directory for an input of a scope.
type inputSpot struct {
	dir, name string
	ref       inputRef
	owned     bool // dir is watched for inputs alone (see ownsInputDir)
}

// registerRepo registers the repository whose .git is in the directory
// rel (root-relative), open as dir, unless it is known: its inputs are
// watched and its tracked directories read, before the rules are read
// from them (the caller reads them next). Called by the processor, and by
// the initial reconcile's readers (several at once).
func (w *Watcher) registerRepo(rel string, dir *os.File) {
	w.inputMu.Lock()
	defer w.inputMu.Unlock()
	if _, ok := w.repos[rel]; ok {
		return
	}
	repo, ok := ignore.RepoAt(dir, rel)
	if !ok {
		return
	}
	st := &repoState{tracked: repo.Tracked}
	w.repos[rel] = st
	w.watchInputsLocked(func() { st.spots = w.resolveScope(rel, repo.Inputs) })
}

// registerRepoAt is registerRepo for a directory not open: rel must hold
// .git.
func (w *Watcher) registerRepoAt(rel string) {
	if !w.holdsGit(rel) {
		return
	}
	dir, err := w.r.OpenDir(rel)
	if err != nil {
		return
	}
	defer dir.Close()
	w.registerRepo(rel, dir)
}

// holdsGit reports whether the directory rel holds a .git entry.
func (w *Watcher) holdsGit(rel string) bool {
	_, err := w.r.Lstat(join(rel, ignore.GitDir))
	return err == nil
}

// refreshInputs finds the inputs of the root and of every repository
// known (and of those in dirs, directories whose rules changed, that hold
// a .git now) again, forgets the repositories that are gone, and watches
// what changed. A repository seen for the first time has its tracked
// directories read; the others keep theirs (trackedChanges compares with
// them), unless whole: before a whole-tree reconcile, which applies the
// rules as they are now everywhere, every one is read again. Processor
// only.
func (w *Watcher) refreshInputs(dirs []string, whole bool) {
	w.inputMu.Lock()
	defer w.inputMu.Unlock()
	w.reposDropped = false
	type found struct {
		rel    string
		st     *repoState
		inputs []ignore.Input
	}
	above, aboveRepo, isAbove := ignore.AboveInputs(w.root)
	var all []found
	rels := append(append(sortedKeys(w.repos), dirs...), "")
	slices.Sort(rels)
	for _, rel := range slices.Compact(rels) {
		var repo ignore.Repo
		ok := false
		if rel == "" && isAbove {
			repo, ok = aboveRepo, true
		} else if dir, err := w.r.OpenDir(rel); err == nil {
			repo, ok = ignore.RepoAt(dir, rel)
			dir.Close()
		}
		st := w.repos[rel]
		switch {
		case !ok:
			delete(w.repos, rel)
			continue
		case st == nil:
			st = &repoState{tracked: repo.Tracked}
			w.repos[rel] = st
		case whole:
			st.tracked = repo.Tracked
		}
		all = append(all, found{rel, st, repo.Inputs})
	}
	w.watchInputsLocked(func() {
		w.aboveSpots = w.resolveScope("", above)
		for _, f := range all {
			f.st.spots = w.resolveScope(f.rel, f.inputs)
		}
	})
}

// forgetRepos forgets the repositories at or below rel (a directory no
// longer watched): the next refresh drops their inputs' watches.
func (w *Watcher) forgetRepos(rel string) {
	w.inputMu.Lock()
	defer w.inputMu.Unlock()
	for r := range w.repos {
		if r != "" && within(r, rel) {
			delete(w.repos, r)
			w.reposDropped = true
		}
	}
}

// trackedChanges reads again the tracked directories of the repositories
// whose index changed (scopes) and adds to paths, as created, each
// directory under the root that became tracked or untracked since the
// last reading: the batch then indexes or prunes it. Processor only.
func (w *Watcher) trackedChanges(scopes map[string]bool, paths map[string]fsnotify.Op) {
	w.inputMu.Lock()
	defer w.inputMu.Unlock()
	for _, s := range sortedKeys(scopes) {
		st := w.repos[s]
		if st == nil {
			continue
		}
		var now []string
		if s == "" && !w.holdsGit("") {
			_, repo, _ := ignore.AboveInputs(w.root)
			now = repo.Tracked
		} else if dir, err := w.r.OpenDir(s); err == nil {
			repo, _ := ignore.RepoAt(dir, s)
			dir.Close()
			now = repo.Tracked
		}
		for _, d := range symmetricDiff(st.tracked, now) {
			if fi, err := w.r.Lstat(d); err == nil && isDirStat(fi) {
				paths[d] |= fsnotify.Create
			}
		}
		st.tracked = now
	}
}

// symmetricDiff returns what is in one of the sorted lists a and b only.
func symmetricDiff(a, b []string) []string {
	var out []string
	i, k := 0, 0
	for i < len(a) || k < len(b) {
		switch {
		case k == len(b) || i < len(a) && a[i] < b[k]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[k] < a[i]:
			out = append(out, b[k])
			k++
		default:
			i++
			k++
		}
	}
	return out
}

// watchSpot is one name to watch in one directory for an input.
type watchSpot struct {
	dir, name string
	chain     bool
}

// resolveInput returns where to watch for the input file p: its
// directory (real path) for its name; if it is a symbolic link, the
// link's entry as a chain and its target as the input; if its directory
// does not exist, the nearest existing ancestor for the next name on the
// way, as a chain.
func resolveInput(p string) []watchSpot {
	var out []watchSpot
	for hop := 0; hop < 8; hop++ {
		dir, name := filepath.Dir(p), filepath.Base(p)
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			for d := dir; ; {
				parent := filepath.Dir(d)
				if r, err := filepath.EvalSymlinks(parent); err == nil {
					out = append(out, watchSpot{r, filepath.Base(d), true})
					break
				}
				if parent == d {
					break
				}
				d = parent
			}
			return out
		}
		out = append(out, watchSpot{real, name, false})
		at := filepath.Join(real, name)
		fi, err := os.Lstat(at)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return out
		}
		out[len(out)-1].chain = true
		t, err := os.Readlink(at)
		if err != nil {
			return out
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(real, t)
		}
		p = filepath.Clean(t)
	}
	return out
}

// resolveScope resolves a scope's inputs to the spots to watch, each
// directory's ownership decided. Caller holds inputMu.
func (w *Watcher) resolveScope(scope string, inputs []ignore.Input) []inputSpot {
	var out []inputSpot
	owned := map[string]bool{}
	for _, in := range inputs {
		for _, s := range resolveInput(in.Path) {
			o, ok := owned[s.dir]
			if !ok {
				o = w.ownsInputDir(s.dir)
				owned[s.dir] = o
			}
			out = append(out, inputSpot{dir: s.dir, name: s.name, ref: inputRef{scope: scope, kind: in.Kind, chain: s.chain}, owned: o})
		}
	}
	return out
}

// watchInputsLocked runs resolve, which sets the spots of the scopes that
// changed, then publishes the table of every scope's spots for the drain,
// then watches the directories not watched yet and drops the watches of
// those no longer needed (published first, so that no event of a new
// watch comes before the drain knows it). It resolves again once the
// watches are in place: a directory made in between (its chain name's
// event may have come before its parent was watched) is then watched too.
// Caller holds inputMu.
func (w *Watcher) watchInputsLocked(resolve func()) {
	for range 3 {
		resolve()
		t := w.inputTable()
		w.inputs.Store(&t)
		w.applyInputWatches(t)
		resolve()
		if sameDirs(t, w.inputTable()) {
			return
		}
	}
}

// inputTable assembles the table of every scope's spots. Caller holds
// inputMu.
func (w *Watcher) inputTable() inputTable {
	t := inputTable{}
	add := func(spots []inputSpot) {
		for _, s := range spots {
			d := t[s.dir]
			if d == nil {
				d = &inputDir{owned: s.owned, names: map[string][]inputRef{}}
				t[s.dir] = d
			}
			if !slices.Contains(d.names[s.name], s.ref) {
				d.names[s.name] = append(d.names[s.name], s.ref)
			}
		}
	}
	add(w.aboveSpots)
	for _, rel := range sortedKeys(w.repos) {
		add(w.repos[rel].spots)
	}
	return t
}

// ownsInputDir reports whether the directory abs (real) is watched for
// inputs alone: it is outside the root, or under it in a directory the
// tree's watches do not cover (ignored, private; a git directory always
// is).
func (w *Watcher) ownsInputDir(abs string) bool {
	rel, ok := w.relOf(abs)
	switch {
	case !ok:
		return true
	case rel == "":
		return false
	case underGitDir(rel):
		return true
	}
	v := ignore.NewCache(w.r).Path(rel, true)
	return v.Ignored || v.Reserved()
}

// underGitDir reports whether a component of rel is .git.
func underGitDir(rel string) bool {
	return rel == ignore.GitDir || strings.HasPrefix(rel, ignore.GitDir+"/") ||
		strings.HasSuffix(rel, "/"+ignore.GitDir) || strings.Contains(rel, "/"+ignore.GitDir+"/")
}

// applyInputWatches adds a watch on each owned directory of t not watched
// for inputs yet and removes those of the owned directories no longer in
// it (but the cookie directory's, which chooseCookieDir owns). Caller
// holds inputMu.
func (w *Watcher) applyInputWatches(t inputTable) {
	for abs, d := range t {
		if !d.owned || w.inputWatched[abs] {
			continue
		}
		var f *os.File
		var err error
		if rel, in := w.relOf(abs); in {
			f, err = w.r.OpenDir(rel)
		} else {
			f, err = os.Open(abs)
		}
		if err == nil {
			err = w.fsw.Add(f, abs) // not through the AddWatch seam, which plays the tree's watches
			f.Close()
		}
		if err != nil {
			// Gone in between (resolved again next time), or not
			// watchable: the rules there are read at each reconcile.
			if !w.inputWarned[abs] {
				w.inputWarned[abs] = true
				w.log.Warn("watch: cannot watch a directory of ignore-rule inputs", "root", w.root, "dir", abs, "err", err)
			}
			continue
		}
		delete(w.inputWarned, abs)
		w.inputWatched[abs] = true
	}
	for abs := range w.inputWatched {
		if d := t[abs]; d != nil && d.owned {
			continue
		}
		delete(w.inputWatched, abs)
		if rel, in := w.relOf(abs); in && (rel == ignore.GitDir && w.gitWatched || w.dirs.has(rel)) {
			continue // watched for the tree, or for cookies, too
		}
		w.fsw.Remove(abs)
	}
}

// sameDirs reports whether two tables watch the same names in the same
// directories with the same ownership.
func sameDirs(a, b inputTable) bool {
	if len(a) != len(b) {
		return false
	}
	for abs, d := range a {
		e := b[abs]
		if e == nil || e.owned != d.owned || len(e.names) != len(d.names) {
			return false
		}
		for n := range d.names {
			if _, ok := e.names[n]; !ok {
				return false
			}
		}
	}
	return true
}

// inputOwnershipChanged reports whether an input directory under the
// root outside any git directory (where an excludes file may lie) changed
// ownership, as a batch's watch changes can make it: a directory the tree
// now watches, or no longer does. Processor only.
func (w *Watcher) inputOwnershipChanged() bool {
	t := w.inputs.Load()
	if t == nil {
		return false
	}
	for abs, d := range *t {
		if rel, in := w.relOf(abs); in && rel != "" && !underGitDir(rel) && w.ownsInputDir(abs) != d.owned {
			return true
		}
	}
	return false
}
