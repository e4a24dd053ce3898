package query

import (
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/filetype"
	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/internal/suggest"
)

// FilterParams are the file filters Glob and Grep share besides their own
// pattern and include: file types by name (type, type_not: ripgrep's type
// table, package filetype) and ripgrep-style globs (glob: what indexctl's
// -g sends). Each may be given as one string or a list of strings.
type FilterParams struct {
	Types    []string // a file's base name must match a glob of one of them
	TypesNot []string // a file's base name must match no glob of any of them
	// Globs are ripgrep's -g globs, in order: a glob without "/" matches
	// the base name, one with "/" the path relative to the search
	// directory (a leading "/" anchors it there; a trailing "/" matches
	// directories only); "!" in front excludes what it matches. When a
	// glob without "!" is given, a file must match one; the last glob
	// that matches decides. A directory an excluding glob matches is not
	// searched.
	Globs []string
}

// FileFilter is a compiled FilterParams; nil passes everything.
type FileFilter struct {
	types, typesNot []*GlobPattern // base-name globs
	globs           []filterGlob
	whitelist       bool // a glob without "!" was given
}

type filterGlob struct {
	g       *GlobPattern
	base    bool // matched against the base name
	dirOnly bool
	negate  bool
}

// CompileFilter checks and compiles p; nil when p filters nothing.
func CompileFilter(p FilterParams) (*FileFilter, *envelope.Error) {
	if len(p.Types)+len(p.TypesNot)+len(p.Globs) == 0 {
		return nil, nil
	}
	f := &FileFilter{}
	var err *envelope.Error
	if f.types, err = typeGlobs("type", p.Types); err != nil {
		return nil, err
	}
	if f.typesNot, err = typeGlobs("type_not", p.TypesNot); err != nil {
		return nil, err
	}
	for _, given := range p.Globs {
		s, neg := strings.CutPrefix(given, "!")
		s = quote.Unquote(s)
		fg := filterGlob{negate: neg}
		if rest, ok := strings.CutSuffix(s, "/"); ok {
			s, fg.dirOnly = rest, true
		}
		anchored := strings.HasPrefix(s, "/")
		s = strings.TrimLeft(s, "/")
		fg.base = !anchored && !strings.Contains(s, "/")
		g, gerr := CompileGlob(s, false)
		if s == "" || gerr != nil {
			return nil, invalid("Invalid glob '%s'.", given)
		}
		fg.g = g
		f.globs = append(f.globs, fg)
		f.whitelist = f.whitelist || !neg
	}
	return f, nil
}

// didYouMean is " (did you mean 'NAME'?)" for the file type nearest to
// the unknown name n, or "" when none is near.
func didYouMean(n string) string {
	var names []string
	for _, t := range filetype.All() {
		names = append(names, t.Name)
	}
	if s := suggest.Closest(n, names); s != "" {
		return " (did you mean '" + s + "'?)"
	}
	return ""
}

func typeGlobs(key string, names []string) ([]*GlobPattern, *envelope.Error) {
	var out []*GlobPattern
	for _, n := range names {
		t, ok := filetype.Lookup(n)
		if !ok {
			return nil, invalid("%s: unknown file type '%s'%s. The types are ripgrep's names, such as go, py, js, ts, rust, java, c, cpp, md (%d in all).", key, n, didYouMean(n), len(filetype.All()))
		}
		for _, s := range t.Globs {
			g, err := CompileGlob(s, false)
			if err != nil {
				return nil, internal(errorString("file type " + n + ": bad glob " + s))
			}
			out = append(out, g)
		}
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func baseName(rel string) string { return rel[strings.LastIndexByte(rel, '/')+1:] }

func anyMatch(gs []*GlobPattern, name string) bool {
	for _, g := range gs {
		if g.Match(name) {
			return true
		}
	}
	return false
}

// Match reports whether the file at rel (relative to the search
// directory) passes.
func (f *FileFilter) Match(rel string) bool {
	if f == nil {
		return true
	}
	base := baseName(rel)
	if f.types != nil && !anyMatch(f.types, base) || anyMatch(f.typesNot, base) {
		return false
	}
	if len(f.globs) == 0 {
		return true
	}
	// A file in a directory the globs exclude is excluded too: the walk
	// never descends there (Descend), and the index must agree.
	for i := strings.IndexByte(rel, '/'); i >= 0; i = nextSlash(rel, i) {
		if !f.Descend(rel[:i]) {
			return false
		}
	}
	for i := len(f.globs) - 1; i >= 0; i-- {
		fg := f.globs[i]
		if fg.dirOnly {
			continue
		}
		if fg.matches(rel, base) {
			return !fg.negate
		}
	}
	return !f.whitelist
}

// nextSlash returns the index of the first "/" in s after i, or -1.
func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (fg filterGlob) matches(rel, base string) bool {
	if fg.base {
		return fg.g.Match(base)
	}
	return fg.g.Match(rel)
}

// descendsAll reports whether Descend is true of every directory.
func (f *FileFilter) descendsAll() bool { return f == nil || len(f.globs) == 0 }

// Descend reports whether the directory rel (relative to the search
// directory) is searched: not when the last glob matching it excludes it.
func (f *FileFilter) Descend(rel string) bool {
	if f == nil {
		return true
	}
	base := baseName(rel)
	for i := len(f.globs) - 1; i >= 0; i-- {
		if fg := f.globs[i]; fg.matches(rel, base) {
			return !fg.negate
		}
	}
	return true
}
