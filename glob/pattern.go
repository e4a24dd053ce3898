package glob

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadPattern is the error of a pattern that is not a glob.
var ErrBadPattern = errors.New("glob: invalid pattern")

// Pattern is a compiled glob (doublestar semantics: "*" and "?" never
// cross "/", "**" spans zero or more directories, braces and classes). It
// matches paths relative to the directory it was given for, and can tell
// which directories could hold a match and which hidden names it names.
//
// Pattern and names are matched byte for byte: both are compared in their
// matchKey form, in which every byte that is not part of valid UTF-8 is a
// character of its own, so "a\xff" never matches "a\xfe".
type Pattern struct {
	pat   string   // as matched: matchKey form, lowercased when fold
	fold  bool     // case-insensitive
	keyed bool     // matchKey changed the pattern
	segs  []string // pat split at "/"; nil when a brace holds a "/"
	// lead is the number of segments before the first "**" (all of them
	// when there is none).
	lead     int
	globstar bool
	hidden   []string  // segments naming hidden entries
	fast     []segment // compiled segments; nil: doublestar matches
	needs    []string  // with fast: substrings every match contains
	suffix   string    // with fast: the suffix every match has
	// rawNeeds: needs and suffix are ASCII and the pattern is
	// case-sensitive, so a path's raw bytes hold them exactly when its
	// matchKey form does (the form changes only non-ASCII bytes, into
	// non-ASCII runes), and they are checked before the form is made.
	rawNeeds bool
}

// Compile checks and compiles pattern; an error wraps ErrBadPattern. fold
// makes it case-insensitive.
func Compile(pattern string, fold bool) (*Pattern, error) {
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("%w: %q", ErrBadPattern, pattern)
	}
	key := matchKey(pattern)
	g := &Pattern{pat: key, fold: fold, keyed: key != pattern}
	if fold {
		g.pat = strings.ToLower(key)
	}
	segs := strings.Split(g.pat, "/")
	for _, s := range segs {
		if strings.HasPrefix(s, ".") || strings.Contains(s, "{.") || strings.Contains(s, ",.") {
			g.hidden = append(g.hidden, s)
		}
	}
	if !wholePath(g.pat) {
		g.segs = segs
		g.lead = len(g.segs)
		for i, s := range g.segs {
			if s == "**" {
				g.globstar = true
				g.lead = min(g.lead, i)
			}
		}
		g.fast = compileSegments(g.segs)
		if g.fast != nil {
			g.needs, g.suffix = literalNeeds(g.fast)
			g.rawNeeds = !fold && isASCII(g.suffix) && !slices.ContainsFunc(g.needs, func(n string) bool { return !isASCII(n) })
		}
	}
	return g, nil
}

// wholePath reports whether p must be matched whole, by doublestar,
// rather than split at its slashes into segments each matched against one
// path component: when a piece of p can match a "/" or spans one, the two
// readings differ (doublestar's is the answer). That is so when
//
//   - a class or a brace holds a "/" ("[x/]/y"), or p escapes one
//     ("[0\\/]");
//   - a class is negated ("0[!0]*" matches "0/0") or holds a range
//     spanning "/" ("[.-0]");
//   - a segment other than "**" holds two stars in a row once its braces
//     are expanded: doublestar expands braces first, so "{**}" and
//     "{}**" are globstars, and "a***/b" matches "a/b" though "a***"
//     does not match "a";
//   - a brace has an empty alternative ("{}", "{a,}"), a star, or a star
//     next to it ("?*{a,*}" expands to "?**").
//
// A pattern matched whole is a walk's to enter every directory for
// (Descend).
func wholePath(p string) bool {
	depth, class := 0, -1 // class: where the open class's contents start
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			if i++; i < len(p) && p[i] == '/' {
				return true
			}
		case class >= 0:
			switch {
			case c == ']' && i > class:
				class = -1
			case c == '/',
				(c == '!' || c == '^') && i == class,
				c == '-' && i > class && i+1 < len(p) && p[i+1] != ']' && p[i-1] <= '/' && '/' <= p[i+1]:
				return true
			}
		case c == '[':
			class = i + 1
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '/' && depth > 0:
			return true
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg != "**" && (strings.Contains(unbrace.Replace(seg), "**") ||
			strings.Contains(seg, "*{") || strings.Contains(seg, "}*") || starInBrace(seg)) {
			return true
		}
	}
	// A brace with an empty alternative: doublestar reads "a*{}" as
	// matching no name, yet "a*{}/**" as matching "a/b".
	for _, e := range []string{"{}", "{,", ",}", ",,"} {
		if strings.Contains(p, e) {
			return true
		}
	}
	return false
}

// unbrace removes a pattern's brace characters, as brace expansion
// would leave two stars that were apart next to one another.
var unbrace = strings.NewReplacer("{", "", "}", "", ",", "")

// starInBrace reports whether a "*" of seg lies within a brace.
func starInBrace(seg string) bool {
	depth := 0
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case '*':
			if depth > 0 {
				return true
			}
		}
	}
	return false
}

// norm returns the name s in the form the pattern is matched against.
func (g *Pattern) norm(s string) string {
	s = matchKey(s)
	if g.fold {
		return strings.ToLower(s)
	}
	return s
}

// The matchKey form. doublestar matches rune by rune, and every byte that
// is not part of valid UTF-8 decodes as utf8.RuneError, so "a\xff",
// "a\xfe" and "a\uFFFD" would all match each other; strings.ToLower even
// rewrites such bytes as U+FFFD. matchKey maps every string one to one
// onto valid UTF-8 so that matching stays exact:
//
//   - a byte b that is not part of valid UTF-8 becomes the rune
//     keyByte+b (U+10FF80–U+10FFFF, private use);
//   - a rune r in [keyEsc, U+10FFFF] that the string really holds becomes
//     keyEsc followed by r-0x100, so it cannot be taken for such a byte;
//   - everything else stays as it is (so valid UTF-8 without those last
//     129 private-use code points is its own key).
//
// A byte that is not UTF-8 is then one character for "?" and classes,
// which is what a name's reader sees in its quoted form (\xHH).
const (
	keyByte = 0x10FF00
	keyEsc  = 0x10FF7F
)

// matchKey returns s in the matchKey form.
func matchKey(s string) string {
	i := asciiPrefix(s)
	if i == len(s) {
		return s // ASCII: the common case
	}
	plain := true
	for j := i; j < len(s) && plain; {
		r, n := utf8.DecodeRuneInString(s[j:])
		plain = !(r == utf8.RuneError && n == 1) && r < keyEsc
		j += n
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(keyByte + rune(s[i]))
		case r >= keyEsc:
			b.WriteRune(keyEsc)
			b.WriteRune(r - 0x100)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// asciiPrefix returns the length of s's leading run of ASCII bytes,
// reading eight at a time (Glob reads every path of the table).
func asciiPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// Match reports whether rel (relative to the pattern's directory) matches.
func (g *Pattern) Match(rel string) bool {
	if g.fast != nil {
		if g.rawNeeds && !g.holdsNeeds(rel) {
			return false
		}
		rel = g.norm(rel)
		if !g.rawNeeds && !g.holdsNeeds(rel) {
			return false
		}
		// The last segment (never "**") takes the last component: one
		// test of the name rejects most paths before "**" tries every
		// depth (**/zz* over a million paths: 192 ms, most of it there).
		if !g.fast[len(g.fast)-1].match(rel[strings.LastIndexByte(rel, '/')+1:]) {
			return false
		}
		return matchSegments(g.fast, rel)
	}
	return doublestar.MatchUnvalidated(g.pat, g.norm(rel))
}

// holdsNeeds reports whether rel has the suffix and holds the needs.
func (g *Pattern) holdsNeeds(rel string) bool {
	if !strings.HasSuffix(rel, g.suffix) {
		return false
	}
	for _, n := range g.needs {
		if !strings.Contains(rel, n) {
			return false
		}
	}
	return true
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool { return asciiPrefix(s) == len(s) }

// Descend reports whether the directory rel (relative to the pattern's
// directory) can hold a match: its leading segments must match the
// pattern's segments before the first "**", and without "**" it must be
// shallower than the pattern.
func (g *Pattern) Descend(rel string) bool {
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

// DescendsAll reports whether Descend is true of every directory.
func (g *Pattern) DescendsAll() bool { return g.segs == nil || g.globstar && g.lead == 0 }

// LiteralPrefix returns the leading directories of the pattern that hold
// no wildcard ("src/" for "src/**/*.go"), which every match starts with;
// "" when there are none, the pattern is case-insensitive or it is not
// its own matchKey (the prefix is of raw names).
func (g *Pattern) LiteralPrefix() string {
	if g.fold || g.keyed || g.segs == nil {
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
func (g *Pattern) AllowHidden(name string) bool {
	name = g.norm(name)
	for _, s := range g.hidden {
		if doublestar.MatchUnvalidated(s, name) {
			return true
		}
	}
	return false
}

// Include is Grep's file filter (docs/tools.md, "Grep"): a pattern without "/" matches
// the base name ("*.ts", "*.{ts,tsx}"); one with "/" matches the path
// relative to the search directory ("src/**/*.ts").
//
// An Include also carries the query's Filter (types and globs), so
// that every place that selects Grep's files applies both.
type Include struct {
	g      *Pattern // nil: only the filter
	base   bool
	filter *Filter
}

// WithFilter returns in with the filter f added; nil when both are nil.
func (in *Include) WithFilter(f *Filter) *Include {
	if f == nil {
		return in
	}
	if in == nil {
		return &Include{filter: f}
	}
	c := *in
	c.filter = f
	return &c
}

// NewInclude compiles Grep's include pattern (a leading "./" is
// dropped). An error wraps ErrBadPattern. (No include at all is a nil
// *Include.)
func NewInclude(pattern string) (*Include, error) {
	s := strings.TrimPrefix(pattern, "./")
	g, err := Compile(s, false)
	if err != nil {
		return nil, err
	}
	return &Include{g: g, base: !strings.Contains(s, "/")}, nil
}

// Match reports whether the file at rel (relative to the search directory)
// passes.
func (in *Include) Match(rel string) bool {
	if in == nil {
		return true
	}
	if !in.filter.Match(rel) {
		return false
	}
	switch {
	case in.g == nil:
		return true
	case in.base:
		return in.g.Match(rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return in.g.Match(rel)
}

// Descend reports whether the directory rel could hold a passing file.
func (in *Include) Descend(rel string) bool {
	if in == nil {
		return true
	}
	return in.filter.Descend(rel) && (in.g == nil || in.base || in.g.Descend(rel))
}

// DescendsAll reports whether Descend is true of every directory.
func (in *Include) DescendsAll() bool {
	return in == nil || in.filter.DescendsAll() && (in.g == nil || in.base || in.g.DescendsAll())
}

// AllowHidden reports whether the include names a hidden entry.
func (in *Include) AllowHidden(name string) bool {
	return in != nil && in.g != nil && in.g.AllowHidden(name)
}
