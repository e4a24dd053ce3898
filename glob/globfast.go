package glob

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A compiled glob segment. Most real patterns are made of "**", literal
// names, "*.ext" and "prefix*"; those are matched with string operations
// instead of doublestar's rune-by-rune matcher, which is most of Glob's
// time on a path table. Anything else in a segment (classes, braces, "?",
// escapes, several "*") is matched by doublestar one component at a time,
// which is its own semantics since such a segment never holds "/".
type segment struct {
	kind segKind
	lit  string // segLiteral, segSuffix, segPrefix: the literal part
	pat  string // segGlob: the segment
}

type segKind uint8

const (
	segLiteral  segKind = iota // name == lit
	segSuffix                  // "*lit"
	segPrefix                  // "lit*"
	segStar                    // "*": any one component
	segGlob                    // doublestar on one component
	segGlobstar                // "**": zero or more components
)

// compileSegments returns the fast form of a pattern split at "/", or nil
// when the shape is not supported (a trailing "**", empty segments), in
// which case doublestar matches the whole path.
func compileSegments(segs []string) []segment {
	if len(segs) == 0 || segs[len(segs)-1] == "**" {
		return nil
	}
	out := make([]segment, len(segs))
	for i, s := range segs {
		switch {
		case s == "":
			return nil
		case s == "**":
			out[i] = segment{kind: segGlobstar}
		case s == "*":
			out[i] = segment{kind: segStar}
		case !strings.ContainsAny(s, `*?[{\`):
			out[i] = segment{kind: segLiteral, lit: s}
		case s[0] == '*' && !strings.ContainsAny(s[1:], `*?[{\`):
			out[i] = segment{kind: segSuffix, lit: s[1:]}
		case s[len(s)-1] == '*' && !strings.ContainsAny(s[:len(s)-1], `*?[{\`):
			out[i] = segment{kind: segPrefix, lit: s[:len(s)-1]}
		default:
			out[i] = segment{kind: segGlob, pat: s}
		}
	}
	return out
}

func (s *segment) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.lit
	case segSuffix:
		return strings.HasSuffix(name, s.lit)
	case segPrefix:
		return strings.HasPrefix(name, s.lit)
	case segStar:
		return true
	}
	return doublestar.MatchUnvalidated(s.pat, name)
}

// literalNeeds returns strings every path matching segs contains: the
// literal segments, the literal part of "lit*", the runs of two or more
// literal bytes between the "*" and "?" of other segments ("zzz" and
// ".go" of "zzz*.go"; not in a segment holding a class, a brace or an
// escape), and the literal suffix of the last segment. Checking them first
// rejects most of a path table without the segment matcher.
func literalNeeds(segs []segment) (contains []string, suffix string) {
	for _, s := range segs {
		switch s.kind {
		case segLiteral, segPrefix:
			contains = append(contains, s.lit)
		case segGlob:
			if strings.ContainsAny(s.pat, `[{\`) {
				break
			}
			for _, run := range strings.FieldsFunc(s.pat, func(r rune) bool { return r == '*' || r == '?' }) {
				if len(run) >= 2 {
					contains = append(contains, run)
				}
			}
		}
	}
	if last := segs[len(segs)-1]; last.kind == segSuffix || last.kind == segLiteral {
		suffix = last.lit
	}
	return contains, suffix
}

// matchSegments reports whether path (slash separated, no leading or
// trailing slash) matches the compiled segments.
func matchSegments(segs []segment, path string) bool {
	for i := range segs {
		s := &segs[i]
		if s.kind == segGlobstar {
			rest := segs[i+1:]
			for {
				if matchSegments(rest, path) {
					return true
				}
				j := strings.IndexByte(path, '/')
				if j < 0 {
					return false
				}
				path = path[j+1:]
			}
		}
		j := strings.IndexByte(path, '/')
		comp := path
		if j >= 0 {
			comp = path[:j]
		}
		if !s.match(comp) {
			return false
		}
		if i == len(segs)-1 {
			return j < 0
		}
		if j < 0 {
			return false
		}
		path = path[j+1:]
	}
	return false
}
