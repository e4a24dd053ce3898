package ignore

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Result is the verdict of one set of ignore rules on one path.
type Result uint8

// The three verdicts: no rule matched, a rule ignores the path, or a "!"
// rule re-includes (whitelists) it.
const (
	None Result = iota
	Ignore
	Whitelist
)

// Rules is one compiled ignore file (.gitignore, .ignore, info/exclude or
// the global excludes file). Paths are matched relative to the directory
// the file applies to; the last matching line wins.
type Rules struct {
	lines []line
}

// A line is one compiled pattern. Most real lines are a plain name
// ("node_modules", "*.log"); those are matched without a regexp.
type line struct {
	negate  bool
	dirOnly bool
	kind    lineKind
	lit     string         // kindName: the base name; kindSuffix: the suffix; kindPath: the path
	re      *regexp.Regexp // kindRegexp
}

type lineKind uint8

const (
	kindName   lineKind = iota // unanchored, no wildcard: base name equals lit
	kindSuffix                 // unanchored "*lit": base name ends with lit
	kindPath                   // anchored, no wildcard: path equals lit
	kindRegexp                 // anything else
)

// Parse compiles the contents of an ignore file with gitignore syntax, as
// ripgrep reads it: "#" comments, trailing spaces trimmed unless escaped,
// "!" negation, "\#" and "\!" escapes, a trailing "/" for directories only,
// a "/" at the start or in the middle anchors the pattern to the file's
// directory, "**" spans directories, "foo/**" matches only what is inside
// foo, and "[!a-z]" or "[^a-z]" negates a class. Lines that cannot match
// anything in git (an unterminated "[", an unknown "[:class:]", a trailing
// lone backslash) are skipped.
//
// Matching is git's wildmatch with WM_PATHNAME: it works on bytes, so "?"
// and a class match one byte (a two-byte "é" needs "??"), "*", "?" and
// classes never match "/", and a run of three or more "*" is read as "**".
func Parse(data []byte) *Rules {
	r := &Rules{}
	for raw := range bytes.Lines(data) {
		if l, ok := compileLine(string(raw)); ok {
			r.lines = append(r.lines, l)
		}
	}
	return r
}

// Len returns the number of patterns.
func (r *Rules) Len() int { return len(r.lines) }

// Match returns the verdict of the last line matching rel, a slash-separated
// path relative to the rules' directory.
func (r *Rules) Match(rel string, isDir bool) Result {
	if r == nil {
		return None
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	bytesRel := "" // rel as the regexps read it, made on first use
	for i := len(r.lines) - 1; i >= 0; i-- {
		l := &r.lines[i]
		if l.dirOnly && !isDir {
			continue
		}
		var ok bool
		switch l.kind {
		case kindName:
			ok = base == l.lit
		case kindSuffix:
			ok = strings.HasSuffix(base, l.lit)
		case kindPath:
			ok = rel == l.lit
		default:
			if bytesRel == "" {
				bytesRel = asBytes(rel)
			}
			ok = l.re.MatchString(bytesRel)
		}
		if ok {
			if l.negate {
				return Whitelist
			}
			return Ignore
		}
	}
	return None
}

func compileLine(s string) (line, bool) {
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	if s == "" || s[0] == '#' {
		return line{}, false
	}
	s = trimTrailingSpaces(s)
	var l line
	if strings.HasPrefix(s, "!") {
		l.negate = true
		s = s[1:]
	} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
		s = s[1:]
	}
	anchored := false
	if strings.HasPrefix(s, "/") {
		anchored = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		l.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" || trailingBackslash(s) {
		return line{}, false // git never matches these
	}
	if strings.Contains(s, "/") {
		anchored = true
	}
	s = collapseStars(s)
	// "foo/**" matches what is inside foo, not foo itself.
	if strings.HasSuffix(s, "/**") {
		s += "/*"
	}
	if !anchored && !strings.HasPrefix(s, "**/") && s != "**" {
		switch {
		case !hasMeta(s):
			l.kind, l.lit = kindName, s
			return l, true
		case s[0] == '*' && !hasMeta(s[1:]):
			l.kind, l.lit = kindSuffix, s[1:]
			return l, true
		}
		s = "**/" + s
	}
	if !hasMeta(s) {
		l.kind, l.lit = kindPath, s
		return l, true
	}
	expr, ok := globRegexp(s)
	if !ok {
		return line{}, false
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return line{}, false
	}
	l.kind, l.re = kindRegexp, re
	return l, true
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// trimTrailingSpaces removes unescaped trailing spaces as git does: a
// backslash escapes the next byte (so "a\ " keeps its space and "a\\ "
// loses it).
func trimTrailingSpaces(s string) string {
	end := -1 // start of the current run of spaces
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return s[:end]
	}
	return s
}

// trailingBackslash reports whether s ends with an unescaped backslash,
// which makes git's wildmatch fail on every path.
func trailingBackslash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 == len(s) {
				return true
			}
			i++
		}
	}
	return false
}

// collapseStars rewrites every unescaped run of three or more "*" as "**":
// wildmatch reads such a run as "**" between slashes and as "*" elsewhere,
// exactly as it reads "**".
func collapseStars(s string) string {
	if !strings.Contains(s, "***") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i++
		case c == '*':
			j := i
			for j < len(s) && s[j] == '*' {
				j++
			}
			b.WriteString(s[i:min(j, i+2)])
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// asBytes returns s with each byte as one rune (Latin-1), the form the
// compiled regexps match: git's wildmatch works on bytes, so "?" must match
// one byte of a multi-byte character, never the whole character. An ASCII
// string is returned as is.
func asBytes(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)-i)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		b = utf8.AppendRune(b, rune(s[i]))
	}
	return string(b)
}

// globRegexp translates a gitignore glob into an anchored regexp over a
// slash-separated path in asBytes form: "*" and "?" never match "/",
// "**/" matches zero or more directories, a trailing "/**" everything
// below, a lone "**" everything. Other "**" act as "*". ok is false for a
// glob git never matches (an unterminated or malformed class).
func globRegexp(g string) (string, bool) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); {
		atSegStart := i == 0 || g[i-1] == '/'
		switch c := g[i]; {
		case c == '*' && atSegStart && strings.HasPrefix(g[i:], "**") && (i+2 == len(g) || g[i+2] == '/'):
			if i+2 == len(g) {
				b.WriteString(".*")
				i += 2
			} else {
				b.WriteString("(?:.*/)?")
				i += 3
			}
		case c == '*':
			b.WriteString("[^/]*")
			i++
		case c == '?':
			b.WriteString("[^/]")
			i++
		case c == '[':
			cls, n := globClass(g[i:])
			if n == 0 {
				return "", false
			}
			b.WriteString(cls)
			i += n
		case c == '\\':
			// Not the last byte: compileLine drops trailing backslashes.
			b.WriteString(quoteByte(g[i+1]))
			i += 2
		default:
			b.WriteString(quoteByte(c))
			i++
		}
	}
	b.WriteString("$")
	return b.String(), true
}

// quoteByte returns a regexp matching the byte c in asBytes form.
func quoteByte(c byte) string { return regexp.QuoteMeta(string(rune(c))) }

// globClass translates the bracket expression at the start of g into a
// regexp class over bytes (in asBytes form) that never matches "/", and
// returns it with the number of bytes it used; n is 0 if it is
// unterminated or names an unknown "[:class:]" (git then matches nothing).
func globClass(g string) (cls string, n int) {
	var set []rune // pairs of inclusive ranges
	i := 1
	negate := i < len(g) && (g[i] == '!' || g[i] == '^')
	if negate {
		i++
	}
	for first := true; i < len(g); first = false {
		c := g[i]
		switch {
		case c == ']' && !first:
			return classRegexp(set, negate), i + 1
		case c == '[' && i+1 < len(g) && g[i+1] == ':':
			// As wildmatch: the name runs to the first "]", which must
			// follow a ":"; otherwise "[" is an ordinary member.
			j := strings.IndexByte(g[i+2:], ']')
			if j < 0 {
				return "", 0
			}
			end := i + 2 + j
			if j == 0 || g[end-1] != ':' {
				set = append(set, '[', '[')
				i++
				continue
			}
			rs, ok := posixClass(g[i+2 : end-1])
			if !ok {
				return "", 0
			}
			set = append(set, rs...)
			i = end + 1
			continue
		}
		lo, w := classByte(g, i)
		if w == 0 {
			return "", 0
		}
		i += w
		hi := lo
		if i+1 < len(g) && g[i] == '-' && g[i+1] != ']' {
			h, w := classByte(g, i+1)
			if w == 0 {
				return "", 0
			}
			hi = h
			i += 1 + w
		}
		// wildmatch tests the first byte as a member before it sees the
		// "-", so a reversed range "c-a" still holds "c".
		set = append(set, rune(lo), rune(max(lo, hi)))
	}
	return "", 0
}

// classByte returns the (possibly backslash-escaped) member byte at g[i]
// and its width, 0 if the class ends there.
func classByte(g string, i int) (byte, int) {
	if g[i] == '\\' {
		if i+1 == len(g) {
			return 0, 0
		}
		return g[i+1], 2
	}
	return g[i], 1
}

// posixClass returns the byte ranges of a "[:name:]" class.
func posixClass(name string) ([]rune, bool) {
	switch name {
	case "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower",
		"print", "punct", "space", "upper", "xdigit":
	default:
		return nil, false
	}
	re, err := syntax.Parse("[[:"+name+":]]", syntax.Perl)
	if err != nil || re.Op != syntax.OpCharClass {
		return nil, false
	}
	return re.Rune, true
}

// classRegexp writes the byte set (ranges, possibly unsorted and
// overlapping) as a regexp class over asBytes runes, negated if asked, and
// without "/" either way.
func classRegexp(set []rune, negate bool) string {
	var in [256]bool
	for i := 0; i+1 < len(set); i += 2 {
		for r := set[i]; r <= set[i+1] && r < 256; r++ {
			in[r] = true
		}
	}
	var b strings.Builder
	b.WriteString("[")
	empty := true
	for lo := 0; lo < 256; lo++ {
		if in[lo] == negate || lo == '/' {
			continue
		}
		hi := lo
		for hi+1 < 256 && in[hi+1] != negate && hi+1 != '/' {
			hi++
		}
		b.WriteString(`\x{` + strconv.FormatInt(int64(lo), 16) + `}-\x{` + strconv.FormatInt(int64(hi), 16) + `}`)
		empty = false
		lo = hi
	}
	if empty {
		return `[^\x00-\x{10FFFF}]` // matches nothing
	}
	b.WriteString("]")
	return b.String()
}
