package query

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/indexd/indexd/envelope"
)

// GlobPattern is a compiled glob (doublestar semantics: "*" and "?" never
// cross "/", "**" spans zero or more directories, braces and classes). It
// matches paths relative to the directory it was given for, and can tell
// which directories could hold a match and which hidden names it names.
type GlobPattern struct {
	pat  string   // as matched (lowercased when fold)
	fold bool     // case-insensitive
	segs []string // pat split at "/"; nil when a brace holds a "/"
	// lead is the number of segments before the first "**" (all of them
	// when there is none).
	lead     int
	globstar bool
	hidden   []string  // segments naming hidden entries
	fast     []segment // compiled segments; nil: doublestar matches
	needs    []string  // with fast: substrings every match contains
	suffix   string    // with fast: the suffix every match has
}

// CompileGlob checks and compiles pattern. fold makes it case-insensitive.
func CompileGlob(pattern string, fold bool) (*GlobPattern, *envelope.Error) {
	if !doublestar.ValidatePattern(pattern) {
		return nil, invalid("Invalid glob pattern '%s'.", pattern)
	}
	g := &GlobPattern{pat: pattern, fold: fold}
	if fold {
		g.pat = strings.ToLower(pattern)
	}
	if !braceHoldsSlash(g.pat) {
		g.segs = strings.Split(g.pat, "/")
		g.lead = len(g.segs)
		for i, s := range g.segs {
			if s == "**" {
				g.globstar = true
				g.lead = min(g.lead, i)
			}
			if strings.HasPrefix(s, ".") || strings.Contains(s, "{.") || strings.Contains(s, ",.") {
				g.hidden = append(g.hidden, s)
			}
		}
		g.fast = compileSegments(g.segs)
		if g.fast != nil {
			g.needs, g.suffix = literalNeeds(g.fast)
		}
	}
	return g, nil
}

func braceHoldsSlash(p string) bool {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth > 0 {
				return true
			}
		}
	}
	return false
}

func (g *GlobPattern) norm(s string) string {
	if g.fold {
		return strings.ToLower(s)
	}
	return s
}

// Match reports whether rel (relative to the pattern's directory) matches.
func (g *GlobPattern) Match(rel string) bool {
	if g.fast != nil {
		rel = g.norm(rel)
		if !strings.HasSuffix(rel, g.suffix) {
			return false
		}
		for _, n := range g.needs {
			if !strings.Contains(rel, n) {
				return false
			}
		}
		return matchSegments(g.fast, rel)
	}
	return doublestar.MatchUnvalidated(g.pat, g.norm(rel))
}

// Descend reports whether the directory rel (relative to the pattern's
// directory) can hold a match: its leading segments must match the
// pattern's segments before the first "**", and without "**" it must be
// shallower than the pattern.
func (g *GlobPattern) Descend(rel string) bool {
	if g.segs == nil {
		return true
	}
	ds := strings.Split(g.norm(rel), "/")
	if !g.globstar && len(ds) >= len(g.segs) {
		return false
	}
	for i := 0; i < len(ds) && i < g.lead; i++ {
		if !doublestar.MatchUnvalidated(g.segs[i], ds[i]) {
			return false
		}
	}
	return true
}

// LiteralPrefix returns the leading directories of the pattern that hold
// no wildcard ("src/" for "src/**/*.go"), which every match starts with;
// "" when there are none or the pattern is case-insensitive.
func (g *GlobPattern) LiteralPrefix() string {
	if g.fold || g.segs == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range g.segs[:len(g.segs)-1] {
		if strings.ContainsAny(s, `*?[{\`) {
			break
		}
		b.WriteString(s + "/")
	}
	return b.String()
}

// AllowHidden reports whether a segment of the pattern that itself starts
// with "." matches name: naming a hidden entry explicitly shows it.
func (g *GlobPattern) AllowHidden(name string) bool {
	name = g.norm(name)
	for _, s := range g.hidden {
		if doublestar.MatchUnvalidated(s, name) {
			return true
		}
	}
	return false
}

// normalizeGlob turns an agent's pattern into one relative to the search
// directory: leading "./" removed, and an absolute pattern inside the
// search directory made relative. dirAbs is the search directory's
// absolute path (real or as given).
func normalizeGlob(pattern string, dirAbs ...string) (string, *envelope.Error) {
	p := pattern
	if strings.HasPrefix(p, "/") {
		for _, d := range dirAbs {
			d = filepath.ToSlash(d)
			if rest, ok := strings.CutPrefix(p, d+"/"); ok {
				p = rest
				break
			}
		}
		if strings.HasPrefix(p, "/") {
			return "", invalid("pattern '%s' is absolute; give it relative to path.", pattern)
		}
	}
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	if p == "" || p == "." {
		return "", invalid("Missing required parameter 'pattern'.")
	}
	return p, nil
}

// Include is Grep's file filter (SPEC §7): a pattern without "/" matches
// the base name ("*.ts", "*.{ts,tsx}"); one with "/" matches the path
// relative to the search directory ("src/**/*.ts").
type Include struct {
	g    *GlobPattern
	base bool
}

// CompileInclude compiles Grep's include; "" means no filter (nil).
func CompileInclude(s string) (*Include, *envelope.Error) {
	if s == "" {
		return nil, nil
	}
	s = strings.TrimPrefix(s, "./")
	g, err := CompileGlob(s, false)
	if err != nil {
		return nil, invalid("Invalid include pattern '%s'.", s)
	}
	return &Include{g: g, base: !strings.Contains(s, "/")}, nil
}

// Match reports whether the file at rel (relative to the search directory)
// passes.
func (in *Include) Match(rel string) bool {
	if in == nil {
		return true
	}
	if in.base {
		return in.g.Match(rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return in.g.Match(rel)
}

// Descend reports whether the directory rel could hold a passing file.
func (in *Include) Descend(rel string) bool {
	return in == nil || in.base || in.g.Descend(rel)
}

// AllowHidden reports whether the include names a hidden entry.
func (in *Include) AllowHidden(name string) bool { return in != nil && in.g.AllowHidden(name) }
