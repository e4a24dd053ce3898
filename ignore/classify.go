package ignore

import (
	"strings"

	"github.com/indexd/indexd/internal/rooted"
)

// The classifier: the one place that says what every traversal (the walk,
// the index's build and updates, the watcher's choice of directories, LS)
// does with one entry. None of them tests a name for hiddenness, a default
// directory or a cookie itself.

// CookiePrefix starts the name of every sync cookie file the watcher makes
// (see package watch). Names with it are reserved: no traversal lists,
// counts, indexes or watches them.
const CookiePrefix = ".indexd-cookie-"

// isDefaultDir reports whether a directory named name is skipped by default.
func isDefaultDir(name string) bool { return DefaultDirs[name] }

// isHidden reports whether name is a hidden name (starts with ".").
func isHidden(name string) bool { return len(name) > 0 && name[0] == '.' }

// IsCookie reports whether name is a sync cookie's name.
func IsCookie(name string) bool { return strings.HasPrefix(name, CookiePrefix) }

// Verdict is the classifier's answer on one entry.
type Verdict struct {
	// Private: one of the daemon's own directories (IsPrivate). Never
	// entered, listed, counted, indexed or watched.
	Private bool
	// Cookie: a sync cookie's name (CookiePrefix). Never listed, counted,
	// indexed or watched.
	Cookie bool
	// Ignored: a directory with a default-ignored name (DefaultDirs) in
	// which git tracks nothing (see the package doc), or an entry an
	// ignore rule ignores. Always false when rules are off
	// (include_ignored).
	Ignored bool
	// Default: Ignored by the default list alone; no ignore file ignores
	// it. Answers name such directories whether or not they found
	// anything: ripgrep would have searched them.
	Default bool
	// Hidden: a hidden name that no ignore rule whitelists (with rules
	// off, every hidden name). Whether it is shown is the query's choice
	// (include_hidden, names in the pattern).
	Hidden bool
}

// Reserved reports whether the entry is left out whatever the query asks:
// a private directory or a cookie. A reserved entry is not even visited.
func (v Verdict) Reserved() bool { return v.Private || v.Cookie }

// Classifier classifies the entries of one workspace root.
type Classifier struct {
	// Root is the workspace root: absolute, symlinks resolved.
	Root string
	// NoRules turns ignore rules off (include_ignored): nothing is
	// Ignored, and no rule whitelists a hidden name.
	NoRules bool
}

// Entry classifies the entry rel (root-relative, slash separated, not "")
// of a directory whose entries the rules d govern (d may be nil when
// NoRules is set). It looks at rel's own name only: a walker that prunes
// ignored and hidden directories never asks about their contents.
func (c Classifier) Entry(d *Dir, rel string, isDir bool) Verdict {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case isDir && IsPrivate(c.Root, rel):
		return Verdict{Private: true}
	case IsCookie(name):
		return Verdict{Cookie: true}
	}
	m := None
	if !c.NoRules {
		if isDir && isDefaultDir(name) && !d.tracked(rel) {
			return Verdict{Ignored: true, Default: d.Match(rel, isDir) != Ignore}
		}
		if m = d.Match(rel, isDir); m == Ignore {
			return Verdict{Ignored: true}
		}
	}
	return Verdict{Hidden: m != Whitelist && isHidden(name)}
}

// PathVerdict is the classifier's answer on a path, as a walk from the
// root would see it: the first of its components (from the top) that is
// private, a cookie or ignored decides.
type PathVerdict struct {
	// Private: the path is or lies in a private directory.
	Private bool
	// Cookie: a component of the path is a cookie's name.
	Cookie bool
	// Ignored: a component of the path is ignored (see Verdict.Ignored).
	Ignored bool
	// Default: the deciding component is ignored by the default list
	// alone (see Verdict.Default).
	Default bool
	// Self: the deciding component is the path's own name (its last),
	// rather than an ancestor's.
	Self bool
	// Hidden has bit i set when path component i (0 = the first below the
	// root) is Hidden (see Verdict.Hidden); components past 63 share bit
	// 63. Zero when the path is private, a cookie or ignored.
	Hidden uint64
}

// Reserved reports whether the path is left out whatever the query asks.
func (v PathVerdict) Reserved() bool { return v.Private || v.Cookie }

// Cache holds the rules in force in the directories of one root that a
// batch of paths looks at, reading each directory's rule files once (and
// the root's ancestors' and the global file once per Cache). Not safe for
// concurrent use.
type Cache struct {
	root *rooted.Root
	dirs map[string]*Dir // by root-relative directory, "" for the root
}

// NewCache returns an empty Cache for the rules under root. Nothing is
// read until a verdict needs it.
func NewCache(root *rooted.Root) *Cache {
	return &Cache{root: root, dirs: map[string]*Dir{}}
}

// At returns the rules for the entries of the directory dir
// (root-relative, "" for the root).
func (c *Cache) At(dir string) *Dir {
	if d, ok := c.dirs[dir]; ok {
		return d
	}
	if dir == "" {
		d := OpenAt(c.root)
		c.dirs[""] = d
		return d
	}
	parent := ""
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		parent = dir[:i]
	}
	d := c.At(parent).Step(c.root, dir)
	c.dirs[dir] = d
	return d
}

// Path classifies the path rel (root-relative; isDir says whether rel
// itself is a directory; every ancestor is one) component by component,
// with the Classifier for the Cache's root and ignore rules on. The root
// ("") is never private, a cookie, ignored or hidden.
func (c *Cache) Path(rel string, isDir bool) PathVerdict {
	var v PathVerdict
	if rel == "" {
		return v
	}
	cl := Classifier{Root: c.root.Path()}
	start := 0
	for i := 0; ; i++ {
		end := strings.IndexByte(rel[start:], '/')
		last := end < 0
		if last {
			end = len(rel)
		} else {
			end += start
		}
		e := cl.Entry(c.At(rel[:max(start-1, 0)]), rel[:end], !last || isDir)
		switch {
		case e.Private:
			return PathVerdict{Private: true, Self: last}
		case e.Cookie:
			return PathVerdict{Cookie: true, Self: last}
		case e.Ignored:
			return PathVerdict{Ignored: true, Default: e.Default, Self: last}
		case e.Hidden:
			v.Hidden |= 1 << min(i, 63)
		}
		if last {
			return v
		}
		start = end + 1
	}
}

// Hidden returns Path(rel, isDir).Hidden, reading no rule file when no
// component of rel has a hidden name (no rule can make one hidden). A nil
// Cache reads no rules at all: every hidden name is hidden.
func (c *Cache) Hidden(rel string, isDir bool) uint64 {
	if !isHidden(rel) && !strings.Contains(rel, "/.") {
		return 0
	}
	if c != nil {
		return c.Path(rel, isDir).Hidden
	}
	var mask uint64
	for i, name := range strings.Split(rel, "/") {
		if isHidden(name) {
			mask |= 1 << min(i, 63)
		}
	}
	return mask
}
