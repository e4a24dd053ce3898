package query_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// Helpers for the differential tests against ripgrep (diff_rg_test.go).
//
// ripgrep is the reference for what is searched and what is matched. Its
// command lines mirror our defaults: hidden names skipped, ignore files
// applied as docs/product.md ("What is skipped") says, each name of
// ignore.DefaultDirs excluded as a directory ("--glob '!NAME/'"),
// case-insensitive unless asked.
//
// Our Grep's include is not passed as rg's --glob: rg's globs override
// every ignore rule and hiddenness (`rg --glob '*.go'` prints a
// gitignored or hidden .go file), while our include only filters what the
// ignore rules let through. The include is applied to rg's output instead,
// with the semantics docs/tools.md ("Grep") gives it.

// diffRg returns the path of rg, skipping the test when it is missing
// (failing it on CI, where a missing rg would hide the comparison).
func diffRg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("rg (ripgrep) is not on PATH; the differential tests need it on CI")
		}
		t.Skip("rg (ripgrep) is not on PATH")
	}
	return p
}

// diffPair is one Grep hit: a root-relative file and a 1-based line.
type diffPair struct {
	File string
	Line int
}

func (p diffPair) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// diffGrep is one Grep query, in our parameters.
type diffGrep struct {
	Pattern       string
	Path          string // "" for "."
	Include       string
	CaseSensitive bool
	Fixed         bool
	// RgPattern, if set, is what rg is given instead of the ASCII rewrite
	// of Pattern (see diffASCII).
	RgPattern string
	// RgExtra are more rg arguments (--invert-match).
	RgExtra []string
}

func (c diffGrep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pattern %q", c.Pattern)
	if c.Path != "" {
		fmt.Fprintf(&b, " path %q", c.Path)
	}
	if c.Include != "" {
		fmt.Fprintf(&b, " include %q", c.Include)
	}
	if c.CaseSensitive {
		b.WriteString(" case-sensitive")
	}
	if c.Fixed {
		b.WriteString(" fixed")
	}
	return b.String()
}

func (c diffGrep) path() string {
	if c.Path == "" {
		return "."
	}
	return c.Path
}

// diffOurGrep runs the walk engine and returns its (file, line) pairs. The
// limit is the maximum, 1000; a truncated or aborted answer fails the
// test, as the comparison needs every match.
func diffOurGrep(t testing.TB, tools *query.Tools, c diffGrep) map[diffPair]bool {
	t.Helper()
	args := map[string]any{"pattern": c.Pattern, "path": c.path(), "limit": tool.GrepMaxLimit,
		"case_sensitive": c.CaseSensitive, "fixed_strings": c.Fixed, "timeout_ms": tool.GrepMaxTimeoutMS}
	if c.Include != "" {
		args["include"] = c.Include
	}
	env := diffRun(t, tools, tool.Grep, args)
	d, ok := env.Data.(*envelope.GrepData)
	if !ok {
		t.Fatalf("%v: Grep data is %T", c, env.Data)
	}
	if d.Truncated || d.AbortedReason != "" {
		t.Fatalf("%v: our Grep was truncated=%v aborted=%q: pick a rarer pattern (limit %d)",
			c, d.Truncated, d.AbortedReason, tool.GrepMaxLimit)
	}
	out := map[diffPair]bool{}
	for _, m := range d.Matches {
		out[diffPair{m.File, m.Line}] = true
	}
	return out
}

// diffOurGlob runs the walk engine's Glob and returns its paths.
func diffOurGlob(t testing.TB, tools *query.Tools, pattern, dir string) []string {
	t.Helper()
	env := diffRun(t, tools, tool.Glob, map[string]any{"pattern": pattern, "path": dir, "limit": tool.GlobMaxLimit})
	d, ok := env.Data.(*envelope.GlobData)
	if !ok {
		t.Fatalf("Glob %q in %q: data is %T", pattern, dir, env.Data)
	}
	if d.Truncated || d.AbortedReason != "" {
		t.Fatalf("Glob %q in %q: truncated=%v aborted=%q: narrow the pattern (limit %d)",
			pattern, dir, d.Truncated, d.AbortedReason, tool.GlobMaxLimit)
	}
	return slices.Clone(d.Paths)
}

func diffRun(t testing.TB, tools *query.Tools, name string, args map[string]any) *envelope.Envelope {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	env := tools.Run(context.Background(), name, ".", raw)
	if env.Status == envelope.StatusError {
		t.Fatalf("%s %s: %s", name, raw, env.Text)
	}
	return env
}

// diffRgDefaults, when set, replaces the default list's globs in
// diffRgBase: a test of a git work tree, where the list skips only the
// directories in which git tracks nothing, names those (anchored).
var diffRgDefaults []string

// diffRgBase returns the arguments every rg run starts with.
func diffRgBase() []string {
	args := []string{"--no-config", "--color", "never", "--null"}
	if diffRgDefaults != nil {
		for _, d := range diffRgDefaults {
			args = append(args, "--glob", "!/"+d+"/")
		}
		return args
	}
	names := make([]string, 0, len(ignore.DefaultDirs))
	for n := range ignore.DefaultDirs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		args = append(args, "--glob", "!"+n+"/")
	}
	return args
}

// diffRgCmd runs rg in root and returns its standard output; exit status 1
// (nothing found) is not an error.
func diffRgCmd(t testing.TB, rg, root string, args []string) []byte {
	t.Helper()
	cmd := exec.Command(rg, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("rg %q in %s: %v\n%s", args, root, err, stderr.String())
		}
	}
	return out
}

// diffRgGrep runs rg for c and returns its (file, line) pairs, include
// applied.
func diffRgGrep(t testing.TB, rg, root string, c diffGrep) map[diffPair]bool {
	t.Helper()
	args := append(diffRgBase(), "--line-number", "--no-heading", "--with-filename")
	if c.CaseSensitive {
		args = append(args, "--case-sensitive")
	} else {
		args = append(args, "--ignore-case")
	}
	pat := c.Pattern
	switch {
	case c.Fixed:
		args = append(args, "--fixed-strings")
	case c.RgPattern != "":
		pat = c.RgPattern
	default:
		pat = diffASCII(t, c.Pattern)
	}
	args = append(args, c.RgExtra...)
	args = append(args, "--regexp", pat, "--", c.path())
	out := diffRgCmd(t, rg, root, args)
	inc := diffInclude(t, c.Include)
	res := map[diffPair]bool{}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		// A record is "PATH\x00LINE:TEXT\n"; PATH may hold ':' and TEXT
		// anything but '\n'.
		rec, err := r.ReadBytes('\n')
		if len(rec) > 0 {
			file, rest, ok := bytes.Cut(rec, []byte{0})
			num, _, ok2 := bytes.Cut(rest, []byte{':'})
			n, err := strconv.Atoi(string(num))
			if !ok || !ok2 || err != nil {
				t.Fatalf("rg: unexpected output line %q", rec)
			}
			rel := path.Clean(string(file))
			if inc(relTo(c.path(), rel)) {
				res[diffPair{rel, n}] = true
			}
		}
		if err == io.EOF {
			break
		}
	}
	return res
}

// diffRgFiles lists the files rg searches under dir (root-relative).
func diffRgFiles(t testing.TB, rg, root, dir string, extra ...string) []string {
	t.Helper()
	args := append(diffRgBase(), "--files")
	args = append(args, extra...)
	args = append(args, "--", dir)
	out := diffRgCmd(t, rg, root, args)
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, path.Clean(f))
		}
	}
	slices.Sort(files)
	return files
}

// diffRgGlob is the reference for Glob: rg's file list filtered by the
// pattern (doublestar semantics, relative to dir).
func diffRgGlob(t testing.TB, rg, root, pattern, dir string, extra ...string) []string {
	t.Helper()
	var out []string
	for _, f := range diffRgFiles(t, rg, root, dir, extra...) {
		ok, err := doublestar.Match(pattern, relTo(dir, f))
		if err != nil {
			t.Fatalf("doublestar.Match(%q): %v", pattern, err)
		}
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// diffInclude returns Grep's include filter as docs/tools.md defines it:
// without "/" it matches the base name, with "/" the path relative to the
// search path.
func diffInclude(t testing.TB, inc string) func(rel string) bool {
	t.Helper()
	if inc == "" {
		return func(string) bool { return true }
	}
	if !doublestar.ValidatePattern(inc) {
		t.Fatalf("bad include %q", inc)
	}
	return func(rel string) bool {
		if !strings.Contains(inc, "/") {
			rel = path.Base(rel)
		}
		ok, _ := doublestar.Match(inc, rel)
		return ok
	}
}

func relTo(dir, rel string) string {
	if dir == "." || dir == "" {
		return rel
	}
	return strings.TrimPrefix(rel, dir+"/")
}

// diffASCII rewrites Go's ASCII-only Perl classes and word boundaries
// (\w \W \d \D \s \S \b \B) for rg, whose versions are Unicode-aware:
// rg's \w matches "é" and its \b sees no boundary in "éword", Go's do.
// Outside a bracket the class becomes an explicit ASCII class, inside one
// its ASCII ranges; \b and \B become rg's ASCII forms (?-u:\b), (?-u:\B).
// Negated classes inside brackets have no such spelling and are refused.
func diffASCII(t testing.TB, p string) string {
	t.Helper()
	classes := map[byte]string{'w': "0-9A-Za-z_", 'd': "0-9", 's': `\t\n\f\r `}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			e := p[i+1]
			i++
			lower := e | 0x20
			if set, ok := classes[lower]; ok && (e == lower || !inClass) {
				switch {
				case inClass:
					b.WriteString(set)
				case e == lower:
					b.WriteString("[" + set + "]")
				default:
					b.WriteString("[^" + set + "]")
				}
				continue
			}
			if _, ok := classes[lower]; ok {
				t.Fatalf("diffASCII: %q: negated class \\%c inside brackets", p, e)
			}
			if !inClass && (e == 'b' || e == 'B') {
				b.WriteString(`(?-u:\` + string(e) + `)`)
				continue
			}
			b.WriteByte(c)
			b.WriteByte(e)
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A "]" right after "[" or "[^" is a member.
			if strings.HasPrefix(p[i+1:], "^") {
				b.WriteByte('^')
				i++
			}
			if strings.HasPrefix(p[i+1:], "]") {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && strings.HasPrefix(p[i:], "[:"):
			end := strings.Index(p[i:], ":]")
			b.WriteString(p[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// diffSpecial classifies the files of a tree whose treatment differs by
// design between the two tools, so comparisons can leave them out and say
// how many there were.
type diffSpecial struct {
	// LateNUL: a NUL byte, but none in the first 8 KiB. Ours scans the
	// whole file (binary means a NUL in the first query.BinarySniffBytes);
	// rg stops at the first buffer holding a NUL.
	LateNUL map[string]bool
	// BOM: starts with a UTF-16 byte order mark. rg decodes UTF-16 with
	// a BOM to UTF-8; ours matches the raw bytes (so UTF-16 text is
	// binary). A UTF-8 BOM both skip before matching: such files are
	// compared like any other.
	BOM map[string]bool

	root    string
	invalid map[string][]int // line numbers by file, see invalidLine
}

func (s *diffSpecial) String() string {
	return fmt.Sprintf("%d files with a NUL only past 8 KiB, %d with a byte order mark", len(s.LateNUL), len(s.BOM))
}

// invalidLine reports whether line n (1-based) of file is not valid UTF-8.
// Go's regexp reads each invalid byte as U+FFFD, so ".", "[^x]", \W...
// match it; rg's Unicode classes never match invalid UTF-8. Files are read
// when first asked about.
func (s *diffSpecial) invalidLine(t testing.TB, file string, n int) bool {
	t.Helper()
	lines, ok := s.invalid[file]
	if !ok {
		data, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if !utf8.Valid(line) {
				lines = append(lines, i+1)
			}
		}
		s.invalid[file] = lines
	}
	return slices.Contains(lines, n)
}

// diffScan reads every regular file under root (ignored or not) and
// classifies it.
func diffScan(t testing.TB, root string) *diffSpecial {
	t.Helper()
	s := &diffSpecial{LateNUL: map[string]bool{}, BOM: map[string]bool{}, root: root, invalid: map[string][]int{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if bytes.IndexByte(data, 0) >= query.BinarySniffBytes {
			s.LateNUL[rel] = true
		}
		if bytes.HasPrefix(data, []byte("\xFF\xFE")) || bytes.HasPrefix(data, []byte("\xFE\xFF")) {
			s.BOM[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// diffGrepResult is one compared query.
type diffGrepResult struct {
	Pairs   int // pairs both sides agree on
	Excused int // differing pairs explained by invalid UTF-8, each logged
	Left    int // pairs in files left out (diffSpecial.LateNUL, BOM), either side
}

// diffCompareGrep runs c on both sides and fails the test on any
// difference that no documented semantic difference explains; those that
// one does are logged one by one.
func diffCompareGrep(t testing.TB, rg, root string, tools *query.Tools, sp *diffSpecial, c diffGrep) diffGrepResult {
	t.Helper()
	ours := diffOurGrep(t, tools, c)
	theirs := diffRgGrep(t, rg, root, c)
	var onlyOurs, onlyRg []diffPair
	var res diffGrepResult
	for p := range ours {
		switch {
		case sp.LateNUL[p.File] || sp.BOM[p.File]:
			res.Left++
		case theirs[p]:
			res.Pairs++
		default:
			onlyOurs = append(onlyOurs, p)
		}
	}
	for p := range theirs {
		switch {
		case sp.LateNUL[p.File] || sp.BOM[p.File]:
			if !ours[p] {
				res.Left++
			}
		case !ours[p]:
			onlyRg = append(onlyRg, p)
		}
	}
	// A line that is not valid UTF-8 is matched differently by design
	// (see diffSpecial.invalidLine); say so for each such line.
	excuse := func(ps []diffPair, side string) []diffPair {
		var keep []diffPair
		for _, p := range ps {
			if sp.invalidLine(t, p.File, p.Line) {
				t.Logf("%v: %s matches only for %s: the line is not valid UTF-8 (Go's regexp reads an invalid byte as U+FFFD, rg's Unicode classes never match it)", c, p, side)
				res.Excused++
				continue
			}
			keep = append(keep, p)
		}
		return keep
	}
	onlyOurs, onlyRg = excuse(onlyOurs, "us"), excuse(onlyRg, "rg")
	if len(onlyOurs)+len(onlyRg) > 0 {
		t.Errorf("Grep %v in %s differs from rg (rg pattern %q): %d pairs agree\nonly ours: %s\nonly rg:   %s",
			c, root, diffRgPatternFor(t, c), res.Pairs, diffPairs(onlyOurs), diffPairs(onlyRg))
	}
	return res
}

func diffRgPatternFor(t testing.TB, c diffGrep) string {
	switch {
	case c.Fixed:
		return c.Pattern
	case c.RgPattern != "":
		return c.RgPattern
	}
	return diffASCII(t, c.Pattern)
}

// diffCompareGlob runs a Glob on both sides and fails on any difference.
// It returns the number of paths both found.
func diffCompareGlob(t testing.TB, rg, root string, tools *query.Tools, pattern, dir string, extra ...string) int {
	t.Helper()
	ours := diffOurGlob(t, tools, pattern, dir)
	theirs := diffRgGlob(t, rg, root, pattern, dir, extra...)
	slices.Sort(ours)
	onlyOurs, onlyRg := diffSetDiff(ours, theirs)
	if len(onlyOurs)+len(onlyRg) > 0 {
		t.Errorf("Glob %q in %q under %s differs from rg --files: %d paths agree\nonly ours: %s\nonly rg:   %s",
			pattern, dir, root, len(ours)-len(onlyOurs), diffFirst20(onlyOurs), diffFirst20(onlyRg))
	}
	return len(ours) - len(onlyOurs)
}

// diffSetDiff returns the elements only in a and only in b (both sorted).
func diffSetDiff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return
}

// diffFirst20 renders up to 20 items, sorted, and how many more there are.
func diffFirst20(items []string) string {
	s := slices.Sorted(slices.Values(items))
	if len(s) > 20 {
		return fmt.Sprintf("%q … and %d more", s[:20], len(s)-20)
	}
	return fmt.Sprintf("%q", s)
}

// diffPairs renders pairs for diffFirst20, in file then line order.
func diffPairs(ps []diffPair) string {
	slices.SortFunc(ps, func(a, b diffPair) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	s := make([]string, 0, min(len(ps), 20))
	for _, p := range ps[:min(len(ps), 20)] {
		s = append(s, p.String())
	}
	if len(ps) > 20 {
		return fmt.Sprintf("%q … and %d more", s, len(ps)-20)
	}
	return fmt.Sprintf("%q", s)
}
