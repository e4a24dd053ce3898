package glob

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Fuzz tests. Run one for a while with, e.g.:
//
//	go test -run XXX -fuzz FuzzGlobMatch -fuzztime 20s ./glob

// FuzzGlobMatch: CompileGlob, Match, Descend and AllowHidden never panic,
// and Descend never prunes a directory holding a match: when Match(p) holds
// for a clean relative path p, Descend holds for each of p's parent
// directories (otherwise the walk would lose the match). The same for
// Grep's include filter.
func FuzzGlobMatch(f *testing.F) {
	for _, s := range []struct {
		pat, path string
		fold      bool
	}{
		{"**/*.go", "a/b/c.go", false}, {"**/x", "x", false}, {"src/**/*.ts", "src/a/b.ts", false},
		{"*.{ts,tsx}", "a.tsx", false}, {"{a,b/c}/d", "b/c/d", false}, {"[a-z]/?.go", "q/x.go", true},
		{".github/**/*.yml", ".github/w/ci.yml", false}, {"a\\[1\\].txt", "a[1].txt", false},
		{"A/**/B", "a/x/b", true}, {"**", "a/b", false}, {"a/**", "a/b/c", false},
		{"a/**/b/**/c", "a/b/c", false}, {"*/**", "x/y", false}, {"{a,b}/**/c", "b/c", false},
		{"[!.]*/*", "x/y", false}, {"a**/b", "ab/b", false}, {"**/", "a/", false},
		{"\\*/x", "*/x", false}, {"{a,{b,c/d}}/e", "c/d/e", false}, {"[/]x", "/x", false},
		{"a***/b", "a/b", false}, {"a***/**", "a/b.go", false}, {"[0\\/]", "0", false},
	} {
		f.Add(s.pat, s.path, s.fold)
	}
	f.Fuzz(func(t *testing.T, pat, p string, fold bool) {
		g, err := Compile(pat, fold)
		if err != nil {
			if !errors.Is(err, ErrBadPattern) {
				t.Fatalf("Compile(%q): %v", pat, err)
			}
			return
		}
		m := g.Match(p)
		if g.rawNeeds { // the needs looked for in the raw path: as in its matchKey form
			slow := *g
			slow.rawNeeds = false
			if slow.Match(p) != m {
				t.Fatalf("Compile(%q).Match(%q) = %v with the needs looked for in the raw path, %v in its matchKey form", pat, p, m, !m)
			}
		}
		g.Descend(p)
		g.AllowHidden(p)
		in, ierr := NewInclude(pat)
		if ierr == nil && in != nil {
			in.Match(p)
			in.Descend(p)
			in.AllowHidden(p)
		}
		if !cleanRel(p) {
			return
		}
		// The oracle: doublestar, the semantics docs/tools.md names, on the
		// patterns and paths both read the same way (valid UTF-8, no
		// case folding).
		if !fold && utf8.ValidString(pat) && utf8.ValidString(p) && doublestar.ValidatePattern(pat) {
			if want, err := doublestar.Match(pat, p); err == nil && want != m {
				t.Fatalf("Compile(%q).Match(%q) = %v, doublestar says %v", pat, p, m, want)
			}
		}
		dirs := parents(p)
		if m {
			for _, d := range dirs {
				if !g.Descend(d) {
					t.Fatalf("Compile(%q, fold=%v): Match(%q) but not Descend(%q)", pat, fold, p, d)
				}
			}
		}
		if ierr == nil && in != nil && in.Match(p) {
			for _, d := range dirs {
				if !in.Descend(d) {
					t.Fatalf("NewInclude(%q): Match(%q) but not Descend(%q)", pat, p, d)
				}
			}
		}
	})
}

// cleanRel reports whether p is a relative slash path with no empty, "."
// or ".." segments: the form the walk hands to Match.
func cleanRel(p string) bool {
	if p == "" {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// parents returns the proper parent directories of a clean relative path,
// shallowest first: "a/b/c" -> "a", "a/b".
func parents(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// FuzzMatchKey: matchKey is one to one and yields valid UTF-8, so globs
// matched in its form tell apart every two names.
func FuzzMatchKey(f *testing.F) {
	for _, s := range [][2]string{
		{"a\xff", "a\xfe"}, {"a\xff", "a\ufffd"}, {"\U0010FFFF", "\xff"}, {"\U0010FF7F\U0010FEFF", "\U0010FFFF"},
		{"é", "\xc3\xa9"}, {"\xc3", "\xc3\xa9"}, {"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := matchKey(a), matchKey(b)
		if !utf8.ValidString(ka) {
			t.Fatalf("matchKey(%q) = %q is not UTF-8", a, ka)
		}
		if a != b && ka == kb {
			t.Fatalf("matchKey(%q) = matchKey(%q) = %q", a, b, ka)
		}
		if utf8.ValidString(a) && !strings.ContainsFunc(a, func(r rune) bool { return r >= keyEsc }) && ka != a {
			t.Fatalf("matchKey(%q) = %q, want it unchanged", a, ka)
		}
	})
}
