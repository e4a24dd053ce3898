package ignore

import (
	"path/filepath"
	"sync/atomic"
)

// The daemon's private directories (its state and runtime directories) are
// never entered, listed, indexed or watched by any traversal, even under a
// root and even with include_ignored (docs/product.md, "The root is the
// boundary"): the daemon must not index its own DB and log, nor show them. The
// set is process-wide, as the daemon's directories are; it is empty in a
// process that never sets it (the CLI's --direct mode, tests).
var private atomic.Pointer[[]string]

// SetPrivate replaces the set of private directories with dirs (absolute
// paths; each is cleaned and, where it exists, its symlinks resolved, so
// that it compares with the real roots traversals work under).
func SetPrivate(dirs ...string) {
	var set []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		set = append(set, d)
	}
	private.Store(&set)
}

// IsPrivate reports whether the directory at rel (root-relative, slash
// separated) under root (absolute, real) is one of the private
// directories. Traversals ask it of every directory they would enter, so
// it compares in place: no path is built.
func IsPrivate(root, rel string) bool {
	set := private.Load()
	if set == nil {
		return false
	}
	n := len(root) // p is root, '/', rel; the root "/" brings its own '/'
	if root == "/" {
		n = 0
	}
	for _, p := range *set {
		if len(p) == n+1+len(rel) && p[:n] == root[:n] && p[n] == '/' && p[n+1:] == rel {
			return true
		}
	}
	return false
}
