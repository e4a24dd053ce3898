package index

import (
	"slices"
	"strings"
)

// Methods the watcher (package watch) needs beyond the incremental API.

// Prune brings each of skips (root-relative paths the ignore rules prune,
// at that path's own name) up to date in one transaction: whatever the
// table holds at or under the path is dropped and the path is recorded as
// ignored, as a build would record it.
//
// Apply treats an ignored path like a missing one: it drops the contents
// and also the path's own record of being ignored, so the Visibility's
// Ignored and Skipped would then disagree with a fresh build. The watcher sees
// ignored files change all the time (logs matched by *.log, a new
// node_modules) and calls Prune for them instead. Prune is cheap when
// nothing changes: a path already recorded, with nothing indexed at or
// under it, costs no transaction. A path under a directory the index may
// not list is not recorded, as a build could not see it (the index holds
// nothing there: see ApplyWith).
func (ix *Index) Prune(skips []Skipped) error {
	denied := ix.deniedDirs(nil, nil)
	skips = slices.DeleteFunc(slices.Clone(skips), func(s Skipped) bool { return below(s.Path, denied) || ix.prunedAlready(s) })
	if len(skips) == 0 {
		return nil
	}
	chs := make([]change, len(skips))
	scopes := make([]string, len(skips))
	for i, s := range skips {
		chs[i] = change{path: s.Path, remove: true}
		scopes[i] = s.Path
	}
	return ix.commit(chs, scopes, skips)
}

// prunedAlready reports whether s is recorded as ignored (the same
// record: kind, and whether the default list alone pruned it) and the
// table holds nothing at or under it.
func (ix *Index) prunedAlready(s Skipped) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i, ok := slices.BinarySearchFunc(ix.ignored, s.Path, cmpSkipped)
	if !ok || ix.ignored[i] != s {
		return false
	}
	if _, ok := ix.lookup(s.Path); ok {
		return false
	}
	pre := s.Path + "/"
	if k, _ := slices.BinarySearchFunc(ix.ignored, pre, cmpSkipped); k < len(ix.ignored) && strings.HasPrefix(ix.ignored[k].Path, pre) {
		return false
	}
	j, _ := slices.BinarySearchFunc(ix.order, pre, ix.pathSearch)
	return j == len(ix.order) || !strings.HasPrefix(ix.files[ix.order[j]].Path, pre)
}
