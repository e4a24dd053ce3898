package glob

import (
	"fmt"
	"strings"
)

// Filter is ripgrep's file filter, as its -t, -T and -g flags select
// files: file types (each a list of base-name patterns: a file's base name
// must match one of a type given, and none of a type excluded) and -g
// globs (FilterGlob), in order. A nil *Filter passes everything.
type Filter struct {
	types, typesNot []*Pattern // base-name patterns
	globs           []FilterGlob
	whitelist       bool // a glob without "!" was given
}

// FilterGlob is one of ripgrep's -g globs, compiled by ParseFilterGlob.
type FilterGlob struct {
	g       *Pattern
	base    bool // matched against the base name
	dirOnly bool
	negate  bool
}

// ParseFilterGlob compiles s, one of ripgrep's -g globs without its
// leading "!" (negate says it had one: it excludes what it matches): a
// glob without "/" matches the base name, one with "/" the path relative
// to the search directory (a leading "/" anchors it there; a trailing "/"
// matches directories only). An empty glob is invalid.
func ParseFilterGlob(s string, negate bool) (FilterGlob, error) {
	fg := FilterGlob{negate: negate}
	if rest, ok := strings.CutSuffix(s, "/"); ok {
		s, fg.dirOnly = rest, true
	}
	anchored := strings.HasPrefix(s, "/")
	s = strings.TrimLeft(s, "/")
	fg.base = !anchored && !strings.Contains(s, "/")
	if s == "" {
		return FilterGlob{}, fmt.Errorf("%w: an empty -g glob", ErrBadPattern)
	}
	g, err := Compile(s, false)
	if err != nil {
		return FilterGlob{}, err
	}
	fg.g = g
	return fg, nil
}

// NewFilter returns the filter of the file types types and typesNot (each
// type's base-name patterns, flattened: a file must match one of types
// when any is given, and none of typesNot) and the -g globs, in order:
// when a glob without "!" is given, a file must match one; the last glob
// that matches decides; a directory an excluding glob matches is not
// searched.
func NewFilter(types, typesNot []*Pattern, globs []FilterGlob) *Filter {
	f := &Filter{types: types, typesNot: typesNot, globs: globs}
	for _, fg := range globs {
		f.whitelist = f.whitelist || !fg.negate
	}
	return f
}

func baseName(rel string) string { return rel[strings.LastIndexByte(rel, '/')+1:] }

func anyMatch(gs []*Pattern, name string) bool {
	for _, g := range gs {
		if g.Match(name) {
			return true
		}
	}
	return false
}

// Match reports whether the file at rel (relative to the search
// directory) passes.
func (f *Filter) Match(rel string) bool {
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

func (fg FilterGlob) matches(rel, base string) bool {
	if fg.base {
		return fg.g.Match(base)
	}
	return fg.g.Match(rel)
}

// DescendsAll reports whether Descend is true of every directory.
func (f *Filter) DescendsAll() bool { return f == nil || len(f.globs) == 0 }

// Descend reports whether the directory rel (relative to the search
// directory) is searched: not when the last glob matching it excludes it.
func (f *Filter) Descend(rel string) bool {
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
