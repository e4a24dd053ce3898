package ignore

import (
	"bytes"
	"regexp"
	"strings"
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
// foo, and "[!a-z]" or "[^a-z]" negates a class. Lines that do not compile
// are skipped, as git skips them.
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
			ok = l.re.MatchString(rel)
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
	if s[0] == '!' {
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
	if strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\/`) {
		l.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" {
		return line{}, false
	}
	if strings.Contains(s, "/") {
		anchored = true
	}
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
	re, err := regexp.Compile(globRegexp(s))
	if err != nil {
		return line{}, false
	}
	l.kind, l.re = kindRegexp, re
	return l, true
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func trimTrailingSpaces(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == ' ' {
		if i >= 2 && s[i-2] == '\\' {
			break
		}
		i--
	}
	return s[:i]
}

// globRegexp translates a gitignore glob into an anchored regexp over a
// slash-separated path: "*" and "?" never match "/", "**/" matches zero or
// more directories, a trailing "/**" everything below, a lone "**"
// everything. Other "**" act as "*".
func globRegexp(g string) string {
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
				b.WriteString(`\[`)
				i++
			} else {
				b.WriteString(cls)
				i += n
			}
		case c == '\\':
			if i+1 < len(g) {
				b.WriteString(regexp.QuoteMeta(g[i+1 : i+2]))
				i += 2
			} else {
				b.WriteString(`\\`)
				i++
			}
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	return b.String()
}

// globClass translates the bracket expression at the start of g and returns
// it with the number of bytes it used, or 0 if it is not terminated.
func globClass(g string) (string, int) {
	var b strings.Builder
	b.WriteString("[")
	i := 1
	if i < len(g) && (g[i] == '!' || g[i] == '^') {
		b.WriteString("^")
		i++
	}
	first := true
	for i < len(g) {
		c := g[i]
		switch {
		case c == ']' && !first:
			if strings.HasPrefix(b.String(), "[^") {
				b.WriteString("/") // a negated class never matches the separator
			}
			b.WriteString("]")
			return b.String(), i + 1
		case c == '\\' && i+1 < len(g):
			b.WriteString(regexp.QuoteMeta(g[i+1 : i+2]))
			i += 2
		case c == '[' && strings.HasPrefix(g[i:], "[:"):
			end := strings.Index(g[i+2:], ":]")
			if end < 0 {
				b.WriteString(`\[`)
				i++
				break
			}
			b.WriteString(g[i : i+2+end+2]) // POSIX class, same syntax in RE2
			i += 2 + end + 2
		case c == '-':
			b.WriteString("-") // a range operator, or literal at either end: RE2 reads it the same way
			i++
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
			i++
		}
		first = false
	}
	return "", 0
}
