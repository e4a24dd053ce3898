package grep

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/pairindex"
)

// Matcher finds the lines of a file's contents that Grep reports.
//
// Line semantics are ripgrep's: unless multiline is set, a match never spans
// a line break. The pattern is parsed with ^ and $ matching at line
// boundaries and rewritten so that no character class, nor ".", matches
// "\n"; a match found anywhere in the buffer therefore lies within one line,
// and the whole buffer can be searched in one pass instead of line by line
// (or in pieces of whole lines, each on its own: see chunk.go). \A and \z
// are rewritten to ^ and $, so each line is its own text for them too, as
// in ripgrep, wherever the search starts.
//
// Before running the regexp, Matcher looks for literals every match must
// contain (one of a small set, found by walking the parsed pattern) with
// the scan kernel (kernel.go), which is many times faster than the regexp
// engine, and runs the regexp only on the lines holding one, and one of
// each further set the pattern requires (up to maxAlso: the other pieces
// of a concatenation, "func " beside "handler(" in func \w+Handler\(,
// looked for on the line by the kernel too); when the pattern is nothing
// but a literal, its occurrences are the matches and the regexp does not
// run at all. Case-insensitive literals are matched under ASCII case
// folding, in place; a letter whose case folding leaves ASCII (k and s
// fold with the Kelvin sign and the long s) or a non-ASCII letter with
// case is expanded into its variants when they are few, and otherwise
// splits the literal rather than being trusted, so the prefilter never
// drops a line the regexp would match. So does U+FFFD, which the regexp
// also matches on each byte of invalid UTF-8.
type Matcher struct {
	re     *regexp.Regexp
	syntax *syntax.Regexp
	lits   *litSet // every match contains one of these; nil: no prefilter
	// also: further sets each match holds one of, checked on a line that
	// holds one of lits before the regexp runs on it (a regexp under case
	// folding costs many times the kernel's look).
	also []*litSet
	// litOnly: the pattern is the literal set exactly (one literal, its
	// variants spelled out), so an occurrence is a match.
	litOnly bool
	// run: with no literals, a run of one class of bytes every match
	// holds (classrun.go); nil: none worth looking for.
	run       *classRun
	multiline bool
}

// MatchOptions say how to read a Grep pattern.
type MatchOptions struct {
	CaseSensitive bool
	FixedStrings  bool
	Multiline     bool

	// oneAnchor: literals are searched for by one anchor even where
	// pairindex could take two at once (this package's tests try both
	// on machines that have the vector search).
	oneAnchor bool
}

// Syntax returns the parsed pattern, with the line rewrite applied, so the
// index plans its trigram query from exactly what the matcher runs.
func (m *Matcher) Syntax() *syntax.Regexp { return m.syntax }

// Literals returns byte strings one of which every match holds (as
// they are, or under ASCII case folding when the pattern is
// case-insensitive), or nil when no such set is known (multiline
// patterns among them). The index narrows its candidates by them.
func (m *Matcher) Literals() [][]byte {
	if m.lits == nil {
		return nil
	}
	out := make([][]byte, len(m.lits.finders))
	for i, f := range m.lits.finders {
		out[i] = f.lit
	}
	return out
}

// ErrLineBreak is the error of a pattern that spells out a line break,
// which no line holds outside multiline mode.
var ErrLineBreak = errors.New("grep: the pattern matches a line break; set multiline to match across lines")

// CompileMatcher compiles a Grep pattern. Its errors are ErrLineBreak and
// the regexp parser's (*syntax.Error), as the parser words them.
func CompileMatcher(pattern string, o MatchOptions) (*Matcher, error) {
	expr := pattern
	if o.FixedStrings {
		expr = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl &^ syntax.OneLine
	if !o.CaseSensitive {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, err
	}
	if !o.Multiline {
		if hasLiteralNewline(tree) {
			return nil, ErrLineBreak
		}
		noNewline(tree)
	}
	tree = tree.Simplify()
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re, syntax: tree, multiline: o.Multiline}
	if !o.Multiline {
		info := analyze(tree)
		set := info.exact
		if set == nil {
			set = info.req
		}
		if usable(set) {
			lits := make([][]byte, len(set))
			for i, s := range set {
				lits[i] = []byte(s)
			}
			pair := pairindex.Fast && !o.oneAnchor
			m.lits = newLitSet(lits, info.fold, pair)
			m.litOnly = tree.Op == syntax.OpLiteral && info.exact != nil
			if info.exact == nil {
				m.also = alsoSets(set, info.also, info.fold, pair)
			}
		} else {
			m.run = requiredRun(tree)
		}
	}
	return m, nil
}

// hasLiteralNewline reports whether the pattern spells out a "\n".
func hasLiteralNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasLiteralNewline(s) {
			return true
		}
	}
	return false
}

// noNewline rewrites re in place so that nothing in it matches "\n", and
// the text anchors are line anchors.
func noNewline(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			re.Op = syntax.OpNoMatch
		}
		re.Rune = out
	}
	for _, s := range re.Sub {
		noNewline(s)
	}
}

// ---- required-literal analysis ----

// maxSet bounds the literal sets the analysis keeps.
const maxSet = 16

// litInfo is what the analysis knows of the strings a subexpression
// matches: exact (every match is one of these; nil if unknown) and req
// (every match contains one of these; nil if nothing is known), and
// beside req, also: further sets every match contains one of each of
// (the other pieces of a concatenation). fold says a case-folded literal
// went in, so the strings are meant case-insensitively and are compared
// after ASCII lowercasing.
type litInfo struct {
	exact []string
	req   []string
	also  [][]string
	fold  bool
}

func analyze(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, utf8.RuneError) {
			// U+FFFD also matches any byte of invalid UTF-8: only the
			// pieces between such runes are literal.
			return piecesInfo(re)
		}
		if re.Flags&syntax.FoldCase == 0 {
			return litInfo{exact: []string{string(re.Rune)}}
		}
		// Case-insensitive: each rune stands for its case-folding orbit as
		// the kernel's ASCII case folding sees it ("a" for a/A, "k" and
		// the Kelvin sign for k, "é" and "É" for é). Small products are
		// an exact set; otherwise the longest piece of runes that fold
		// only within ASCII is required.
		set := []string{""}
		for _, r := range re.Rune {
			vs := foldVariants(r)
			if len(set)*len(vs) > maxSet {
				set = nil
				break
			}
			next := make([]string, 0, len(set)*len(vs))
			for _, a := range set {
				for _, v := range vs {
					next = append(next, a+v)
				}
			}
			set = next
		}
		if set != nil {
			return litInfo{exact: set, fold: true}
		}
		return piecesInfo(re)
	case syntax.OpCharClass:
		if classHas(re.Rune, utf8.RuneError) {
			return litInfo{} // it matches invalid UTF-8 too
		}
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 4 {
				return litInfo{}
			}
		}
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set = append(set, string(r))
			}
		}
		return litInfo{exact: set}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: []string{""}}
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpPlus:
		return analyze(re.Sub[0]).asReq()
	case syntax.OpRepeat:
		if re.Min == 0 {
			return litInfo{}
		}
		return analyze(re.Sub[0]).asReq()
	case syntax.OpConcat:
		return analyzeConcat(re.Sub)
	case syntax.OpAlternate:
		var out litInfo
		allExact := true
		for _, s := range re.Sub {
			in := analyze(s)
			out.fold = out.fold || in.fold
			if in.exact == nil {
				allExact = false
			}
			if allExact {
				out.exact = append(out.exact, in.exact...)
			}
			b := in.best()
			if b == nil {
				return litInfo{}
			}
			out.req = append(out.req, b...)
		}
		if !allExact || len(out.exact) > maxSet {
			out.exact = nil
		}
		if len(out.req) > maxSet {
			out.req = nil
		}
		return out
	}
	return litInfo{}
}

// piecesInfo is what a literal too varied to spell out in full requires:
// its longest piece of runes each matched by one byte string (under
// ASCII case folding, if the literal is folded).
func piecesInfo(re *syntax.Regexp) litInfo {
	fold := re.Flags&syntax.FoldCase != 0
	pieces := foldSafePieces(re.Rune, fold)
	if len(pieces) == 0 {
		return litInfo{}
	}
	best := 0
	for i, p := range pieces {
		if len(p) > len(pieces[best]) {
			best = i
		}
	}
	in := litInfo{req: []string{pieces[best]}, fold: fold}
	for i, p := range pieces {
		if i != best {
			in.also = append(in.also, []string{p})
		}
	}
	return in
}

// classHas reports whether the class ranges rs hold r.
func classHas(rs []rune, r rune) bool {
	for i := 0; i+1 < len(rs); i += 2 {
		if rs[i] <= r && r <= rs[i+1] {
			return true
		}
	}
	return false
}

func analyzeConcat(subs []*syntax.Regexp) litInfo {
	var cands, also [][]string
	var fold bool
	cur := []string{""}
	curFold := false
	exactAll := true
	flush := func() {
		if cur != nil {
			cands = append(cands, cur)
			fold = fold || curFold
		}
		cur, curFold = nil, false
	}
	for _, s := range subs {
		in := analyze(s)
		if in.exact != nil && (cur == nil || len(cur)*len(in.exact) <= maxSet) {
			if cur == nil {
				cur = []string{""}
			}
			next := make([]string, 0, len(cur)*len(in.exact))
			for _, a := range cur {
				for _, b := range in.exact {
					next = append(next, a+b)
				}
			}
			cur, curFold = next, curFold || in.fold
			continue
		}
		exactAll = false
		flush()
		if in.exact != nil {
			cur, curFold = in.exact, in.fold
		} else if in.req != nil {
			cands = append(cands, in.req)
			fold = fold || in.fold
		}
		if in.also != nil {
			also = append(also, in.also...)
			fold = fold || in.fold
		}
	}
	if exactAll {
		return litInfo{exact: cur, fold: curFold}
	}
	flush()
	best := -1
	for i, c := range cands {
		if best < 0 || score(c) > score(cands[best]) {
			best = i
		}
	}
	if best < 0 {
		return litInfo{also: also, fold: fold}
	}
	for i, c := range cands {
		if i != best {
			also = append(also, c)
		}
	}
	// fold is conservative: if any chosen literal was folded, all are
	// compared under ASCII case folding, which loses nothing for the
	// exact ones.
	return litInfo{req: cands[best], also: also, fold: fold}
}

func (in litInfo) best() []string {
	if in.exact != nil {
		return in.exact
	}
	return in.req
}

func (in litInfo) asReq() litInfo { return litInfo{req: in.best(), also: in.also, fold: in.fold} }

// maxAlso bounds the further sets a line is checked for.
const maxAlso = 4

// alsoSets returns the sets of also worth a look (each literal two bytes
// or more; not req, not one already kept), the longest first, as litSets
// compared under ASCII case folding if fold, each literal found by two
// anchors at once if pair.
func alsoSets(req []string, also [][]string, fold, pair bool) []*litSet {
	var use [][]string
	for _, set := range also {
		if usable(set) && score(set) > 100 && !slices.Equal(set, req) && !slices.ContainsFunc(use, func(u []string) bool { return slices.Equal(u, set) }) {
			use = append(use, set)
		}
	}
	slices.SortStableFunc(use, func(a, b []string) int { return score(b) - score(a) })
	var out []*litSet
	for _, set := range use[:min(len(use), maxAlso)] {
		lits := make([][]byte, len(set))
		for i, l := range set {
			lits[i] = []byte(l)
		}
		out = append(out, newLitSet(lits, fold, pair))
	}
	return out
}

// score ranks a literal set as a prefilter: longer shortest member first.
func score(set []string) int {
	if len(set) == 0 {
		return -1
	}
	m := len(set[0])
	for _, s := range set[1:] {
		m = min(m, len(s))
	}
	return m*100 - len(set)
}

// usable reports whether a literal set is worth searching for.
func usable(set []string) bool {
	if len(set) == 0 || len(set) > maxSet {
		return false
	}
	for _, s := range set {
		if s == "" {
			return false
		}
	}
	return true
}

// foldSafePieces splits a literal at runes that one byte string cannot
// stand for: U+FFFD (it matches invalid UTF-8 too) and, if the literal is
// case-folded, runes whose case folding is not captured by ASCII folding
// (ASCII letters folding with non-ASCII ones, like k and s; non-ASCII
// letters with case). It keeps the pieces between them.
func foldSafePieces(rs []rune, fold bool) []string {
	var pieces []string
	var cur strings.Builder
	for _, r := range rs {
		if r != utf8.RuneError && (!fold || foldSafe(r)) {
			cur.WriteRune(r)
			continue
		}
		if cur.Len() > 0 {
			pieces = append(pieces, cur.String())
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		pieces = append(pieces, cur.String())
	}
	return pieces
}

// foldVariants returns the distinct forms of r's case-folding orbit after
// ASCII lowercasing.
func foldVariants(r rune) []string {
	vs := []string{lowerASCII(string(r))}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if v := lowerASCII(string(f)); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}

func foldSafe(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if r >= utf8.RuneSelf || f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ---- scanning ----

// lowerTable maps each byte to its ASCII lowercase.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return
}()

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerTable[c]
	}
	return string(b)
}

// Scanner holds one goroutine's reusable buffers for Matcher.Scan.
type Scanner struct {
	lits litScan
}

// Scan calls fn with the byte range [start, end) of each line (without its
// newline) holding a match, in order; in multiline mode, the range of the
// lines a match spans. fn returns false to stop.
func (m *Matcher) Scan(sc *Scanner, buf []byte, fn func(start, end int) bool) {
	switch {
	case m.multiline:
		m.scanMultiline(buf, fn)
	case m.lits != nil:
		m.scanLiterals(sc, buf, fn)
	case m.run != nil:
		m.scanRun(buf, fn)
	default:
		m.scanRegexp(buf, fn)
	}
}

func lineStart(buf []byte, i int) int { return lastLineBreak(buf[:i]) + 1 }

// lastLineBreak returns the index of the last "\n" in b, or -1 if there
// is none. bytes.LastIndexByte reads a byte at a time, and a window or a
// chunk of one long line (a base64 fixture on one line, minified
// JavaScript) holds none: it read all of it, 64 KiB in some 25 µs. This
// looks for one a block at a time from the end with the vectorised
// IndexByte, and reads byte by byte only the block that holds it.
func lastLineBreak(b []byte) int {
	const block = 256
	for end := len(b); end > 0; {
		start := max(0, end-block)
		if bytes.IndexByte(b[start:end], '\n') >= 0 {
			return start + bytes.LastIndexByte(b[start:end], '\n')
		}
		end = start
	}
	return -1
}

func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(buf)
}

func (m *Matcher) scanRegexp(buf []byte, fn func(int, int) bool) {
	for pos := 0; pos <= len(buf); {
		loc := m.re.FindIndex(buf[pos:])
		if loc == nil {
			return
		}
		s := pos + loc[0]
		ls, le := lineStart(buf, s), lineEnd(buf, s)
		if ls == len(buf) {
			return // past the final newline (or in an empty file) there is no line
		}
		if !fn(ls, le) {
			return
		}
		pos = le + 1
	}
}

// scanLiterals finds the prefilter literals with the kernel and verifies
// their lines with the regexp (unless the literal is the whole pattern).
func (m *Matcher) scanLiterals(sc *Scanner, buf []byte, fn func(int, int) bool) {
	ls := &sc.lits
	ls.reset(m.lits, buf)
	for pos := 0; pos < len(buf); {
		at, _ := ls.find(pos)
		if at < 0 {
			return
		}
		start, end := lineStart(buf, at), lineEnd(buf, at)
		if (m.litOnly || m.holdsAlso(buf[start:end]) && m.re.Match(buf[start:end])) && !fn(start, end) {
			return
		}
		pos = end + 1
	}
}

// scanRun finds the class runs and verifies their lines with the regexp.
func (m *Matcher) scanRun(buf []byte, fn func(int, int) bool) {
	for pos := 0; pos < len(buf); {
		at := m.run.find(buf, pos)
		if at < 0 {
			return
		}
		start, end := lineStart(buf, at), lineEnd(buf, at)
		if m.re.Match(buf[start:end]) && !fn(start, end) {
			return
		}
		pos = end + 1
	}
}

// mayMatch reports whether b, a line or several, holds what the
// prefilter looks for: one of the literals, or the class run (true when
// the pattern has neither).
func (m *Matcher) mayMatch(b []byte) bool {
	switch {
	case m.lits != nil:
		return m.lits.contains(b) && m.holdsAlso(b)
	case m.run != nil:
		return m.run.contains(b)
	}
	return true
}

// holdsAlso reports whether b holds one literal of each of the further
// sets every match holds.
func (m *Matcher) holdsAlso(b []byte) bool {
	for _, s := range m.also {
		if !s.contains(b) {
			return false
		}
	}
	return true
}

func (m *Matcher) scanMultiline(buf []byte, fn func(int, int) bool) {
	multilineMatches(buf, m.re.FindIndex, fn)
}

// multilineMatches calls fn with the span of whole lines [ls, le) of each
// match in buf, in order, until fn returns false. find is given the rest
// of buf after the previous span and returns a match's location in it,
// nil for none (or to stop).
func multilineMatches(buf []byte, find func([]byte) []int, fn func(ls, le int) bool) {
	for pos := 0; pos <= len(buf); {
		loc := find(buf[pos:])
		if loc == nil {
			return
		}
		s, e := pos+loc[0], pos+loc[1]
		ls := lineStart(buf, s)
		if ls == len(buf) {
			return
		}
		last := e
		if e > s && buf[e-1] == '\n' {
			last = e - 1 // a match ending with the newline ends on that line
		}
		le := lineEnd(buf, last)
		if !fn(ls, le) {
			return
		}
		pos = le + 1
	}
}
