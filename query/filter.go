package query

import (
	"path/filepath"
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/glob"
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

// CompileFilter checks and compiles p, its messages in voice v; nil when
// p filters nothing. A glob in the quoted form (internal/quote; after its
// "!") is unquoted first.
func CompileFilter(p FilterParams, v envelope.Voice) (*glob.Filter, *envelope.Error) {
	if len(p.Types)+len(p.TypesNot)+len(p.Globs) == 0 {
		return nil, nil
	}
	types, err := typeGlobs(v, "type", p.Types)
	if err != nil {
		return nil, err
	}
	typesNot, err := typeGlobs(v, "type_not", p.TypesNot)
	if err != nil {
		return nil, err
	}
	var globs []glob.FilterGlob
	for _, given := range p.Globs {
		s, neg := strings.CutPrefix(given, "!")
		fg, gerr := glob.ParseFilterGlob(quote.Unquote(s), neg)
		if gerr != nil {
			return nil, invalid("Invalid glob '%s'.", given)
		}
		globs = append(globs, fg)
	}
	return glob.NewFilter(types, typesNot, globs), nil
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

// typeGlobs returns the base-name globs of the file types names, the
// parameter key's.
func typeGlobs(v envelope.Voice, key string, names []string) ([]*glob.Pattern, *envelope.Error) {
	var out []*glob.Pattern
	for _, n := range names {
		t, ok := filetype.Lookup(n)
		if !ok {
			list := ""
			if v.CLI() {
				list = " 'indexctl grep --type-list' lists them."
			}
			return nil, invalid("%s: unknown file type '%s'%s. The types are ripgrep's names, such as go, py, js, ts, rust, java, c, cpp, md (%d in all).%s", v.Param(key), n, didYouMean(n), len(filetype.All()), list)
		}
		for _, s := range t.Globs {
			g, err := glob.Compile(s, false)
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

// compileGlob compiles a Glob pattern (or Changes'), refusing one that is
// not a glob with the agent's message.
func compileGlob(pattern string, fold bool) (*glob.Pattern, *envelope.Error) {
	g, err := glob.Compile(pattern, fold)
	if err != nil {
		return nil, invalid("Invalid glob pattern '%s'.", pattern)
	}
	return g, nil
}

// compileInclude compiles Grep's include; "" means no filter (nil). An
// include in the quoted form (internal/quote) is unquoted first, so a
// file's printed name, given back, matches exactly that file.
func compileInclude(given string) (*glob.Include, *envelope.Error) {
	if given == "" {
		return nil, nil
	}
	in, err := glob.NewInclude(quote.Unquote(given))
	if err != nil {
		return nil, invalid("Invalid include pattern '%s'.", strings.TrimPrefix(given, "./"))
	}
	return in, nil
}

// normalizeGlob turns an agent's pattern into one relative to the search
// directory: a quoted form (internal/quote) unquoted to the bytes it stands
// for, leading "./" removed, and an absolute pattern inside the search
// directory made relative. dirAbs is the search directory's absolute path
// (real or as given); v words the messages.
func normalizeGlob(v envelope.Voice, pattern string, dirAbs ...string) (string, *envelope.Error) {
	p := quote.Unquote(pattern)
	if strings.HasPrefix(p, "/") {
		for _, d := range dirAbs {
			d = filepath.ToSlash(d)
			if rest, ok := strings.CutPrefix(p, d+"/"); ok {
				p = rest
				break
			}
		}
		if strings.HasPrefix(p, "/") {
			return "", invalid("pattern '%s' is absolute; give it relative to %s.", pattern, v.Param("path"))
		}
	}
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	if p == "" || p == "." {
		return "", missingPattern(v)
	}
	return p, nil
}
