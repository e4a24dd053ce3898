package ignore

import (
	"path/filepath"
	"sync/atomic"
)

// The daemon's private directories (its state and runtime directories)
// are never entered, listed, indexed or watched by any traversal, even
// under a root and even with include_ignored (SPEC §4): the daemon must
// not index its own DB and log, nor show them. The set is process-wide,
// as the daemon's directories are; it is empty in a process that never
// sets it (the CLI's --direct mode, tests).
var private atomic.Pointer[map[string]bool]

// SetPrivate replaces the set of private directories with dirs (absolute
// paths; each is cleaned and, where it exists, its symlinks resolved, so
// that it compares with the real roots traversals work under).
func SetPrivate(dirs ...string) {
	m := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		m[d] = true
	}
	private.Store(&m)
}

// IsPrivate reports whether the directory at rel (root-relative, slash
// separated) under root (absolute, real) is one of the private
// directories. Traversals ask it of every directory they would enter.
func IsPrivate(root, rel string) bool {
	m := private.Load()
	if m == nil || len(*m) == 0 {
		return false
	}
	return (*m)[filepath.Join(root, filepath.FromSlash(rel))]
}

// UnderPrivate reports whether rel under root is a private directory or
// lies inside one.
func UnderPrivate(root, rel string) bool {
	m := private.Load()
	if m == nil || len(*m) == 0 {
		return false
	}
	for p := filepath.Join(root, filepath.FromSlash(rel)); ; {
		if (*m)[p] {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p || len(parent) < len(root) {
			return false
		}
		p = parent
	}
}
