package index

// What the index answers a query with: the files that may answer it
// (Candidates, one call whatever the query: Glob's listing by path or
// Grep's by content), what it knows of them without listing them
// (Estimate), and what a walk would not have shown (Visibility). A
// caller reads files live: the index only narrows.

import (
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	csindex "github.com/google/codesearch/index"
)

// CandidateOptions say which files Candidates lists.
type CandidateOptions struct {
	// Dir is the root-relative directory the files are under ("" or "."
	// for all).
	Dir string
	// Prefix: only the paths that start with it, relative to Dir (a
	// glob's leading directories, which every match starts with; "" for
	// any).
	Prefix string
	// Enter, if not nil, is asked about each directory below Dir (its
	// path relative to Dir, without a trailing slash; parents before
	// children, at most once each), and a directory it refuses is passed
	// over whole, by a binary search past its paths. It applies to a
	// listing by path (Content nil), not to the newer files listed first
	// (Newer). It must not call the index.
	Enter func(sub string) bool
	// Content, if not nil, is the trigram query of a regexp
	// (csindex.RegexpQuery): the files are then the regular, non-binary
	// ones that may hold a match, in no particular order, every file
	// whose trigrams the index does not know among them. Nil: every file
	// under Dir, in path order.
	Content *csindex.Query
	// Phrases, with Content and OneLine: phrases every match holds one
	// of (nil: none known); a file where no eighth holds the trigrams of
	// one of them with the query's, by their masks, is left out.
	Phrases *Phrases
	// OneLine, with Content: every match lies within one line (a search
	// outside multiline mode), so a file where no eighth holds all the
	// trigrams a match needs, by their masks, is left out.
	OneLine bool
	// LinesFrom, with OneLine: CandidateLines works out the eighths of
	// the files of at least LinesFrom bytes whatever it takes, and may
	// tell AllEighths of smaller ones rather than read more than ruling
	// them out needs (each phrase, such as each case variant of a
	// case-insensitive literal).
	LinesFrom int64
	// Newer: only the files whose ModTime is Since or later. With
	// Content, the base's ids are told by their mtime before their
	// masks are read, so a query that settles among the newest files
	// costs what they cost, not what all its candidates would. Without
	// Content, they are listed first, in no particular order, every
	// directory entered; with ThenOlder the others follow, by path, so a
	// caller that takes the newer files whatever their path and the
	// others by path can stop as soon as it has enough of the others
	// (Glob's sort "recent").
	Newer     bool
	Since     int64
	ThenOlder bool
	// SincePath, with Newer and Content, when not "": of the files whose
	// ModTime is Since, only those whose path sorts before it (byte
	// order). Grep's order is mtime descending, then path, so such files
	// are still a prefix of it where many files share an mtime (a tree
	// unpacked from an archive), see Extent.SincePath.
	SincePath string
}

// newer selects the files from a point of Grep's order on (mtime
// descending, then path): ModTime after since, or at since with a path
// before path ("": any path). since math.MinInt64 selects every file.
type newer struct {
	since int64
	path  string
}

// all reports whether nw selects every file.
func (nw newer) all() bool { return nw.since == math.MinInt64 }

// admits reports whether nw selects f.
func (nw newer) admits(f *File) bool {
	return f.ModTime > nw.since || f.ModTime == nw.since && (nw.path == "" || f.Path < nw.path)
}

// Candidates calls fn with each file o selects, until fn returns false,
// all of them from one state of the table. fn must not keep f nor call
// ix.
func (ix *Index) Candidates(o CandidateOptions, fn func(f *File) bool) {
	ix.CandidateLines(o, func(f *File, _ Eighths) bool { return fn(f) })
}

// Eighths is a set of a file's eighths, bit e for eighth e: the lines
// that start in bytes [⌈e·n/8⌉, ⌈(e+1)·n/8⌉) of the n bytes it held when
// it was indexed (its File's Size; see trigram.go, "Masks").
type Eighths uint8

// AllEighths holds every line of a file.
const AllEighths Eighths = allLines

// EighthOf returns the eighth of a file of n bytes in which the line
// starting at byte start (0 ≤ start ≤ n) lies: the masks' rule (8 for
// start = n, a line past the end, which no trigram is in).
func EighthOf(start, n int64) int { return int(8 * uint64(start) / uint64(n)) }

// CandidateLines is Candidates, also telling, with a Content query, the
// eighths of each file in which the line of a match may start (see
// OneLine; AllEighths when the index cannot tell, and for a Racy file).
// The lines outside them hold no match as long as the file is unchanged
// since it was indexed: its size, mtime, ctime, inode and device still
// f's, which the caller checks before it trusts them, as it would the
// index's word that a file holds no match at all.
func (ix *Index) CandidateLines(o CandidateOptions, fn func(f *File, lines Eighths) bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	all := func(f *File) bool { return fn(f, AllEighths) }
	switch {
	case o.Content != nil:
		nw := newer{since: math.MinInt64}
		if o.Newer {
			nw = newer{o.Since, o.SincePath}
		}
		ix.eachCandidate(o.Content, o.Phrases, lineScope{o.OneLine, o.LinesFrom}, dirPrefix(o.Dir)+o.Prefix, nw, fn)
	case !o.Newer:
		ix.eachEntering(o.Dir, o.Prefix, o.Enter, all)
	default:
		lo := dirPrefix(o.Dir) + o.Prefix
		stopped := false
		ix.eachNewer(o.Since, func(id uint32) bool {
			f := &ix.files[id]
			stopped = f.Path != "" && strings.HasPrefix(f.Path, lo) && !all(f)
			return !stopped
		})
		if !stopped && o.ThenOlder {
			ix.eachEntering(o.Dir, o.Prefix, o.Enter, func(f *File) bool { return f.ModTime >= o.Since || all(f) })
		}
	}
}

// eachNewer calls fn, in id order, with each id whose file has ModTime
// since or later (its packed mtime; a free id's is 0), until fn returns
// false. Caller holds mu. (The mtimes are as many as the ids: Check;
// the bound only keeps a broken invariant from reading past the table.)
func (ix *Index) eachNewer(since int64, fn func(id uint32) bool) {
	for id, t := range ix.mtimes[:min(len(ix.mtimes), len(ix.files))] {
		if t >= since && !fn(uint32(id)) {
			return
		}
	}
}

// eachEntering calls fn, in path order, with each file whose path is
// under dir and starts with prefix (relative to dir), entering only the
// directories enter lets in (CandidateOptions.Enter; nil: all), until fn
// returns false. Caller holds mu.
func (ix *Index) eachEntering(dir, prefix string, enter func(sub string) bool, fn func(*File) bool) {
	base := dirPrefix(dir)
	lo := base + prefix
	i, _ := slices.BinarySearchFunc(ix.order, lo, ix.pathSearch)
	// entered holds the directories entered that hold the current path,
	// outermost first, each with its trailing slash: in path order a
	// directory's files are contiguous, so it is a stack.
	var entered []string
	for i < len(ix.order) {
		f := &ix.files[ix.order[i]]
		if !strings.HasPrefix(f.Path, lo) {
			return
		}
		if enter != nil {
			rel := f.Path[len(base):]
			for len(entered) > 0 && !strings.HasPrefix(rel, entered[len(entered)-1]) {
				entered = entered[:len(entered)-1]
			}
			refused := ""
			for start := len(last(entered)); ; {
				j := strings.IndexByte(rel[start:], '/')
				if j < 0 {
					break
				}
				d := rel[:start+j+1]
				if !enter(d[:len(d)-1]) {
					refused = d
					break
				}
				entered = append(entered, d)
				start += j + 1
			}
			if refused != "" {
				// The first path past the directory's: its name followed
				// by the byte after '/'.
				past := base + refused[:len(refused)-1] + "0"
				k, _ := slices.BinarySearchFunc(ix.order[i:], past, ix.pathSearch)
				i += k
				continue
			}
		}
		if !fn(f) {
			return
		}
		i++
	}
}

// last returns the last of ss, "" if there is none.
func last(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[len(ss)-1]
}

func dirPrefix(dir string) string {
	if dir == "" || dir == "." {
		return ""
	}
	return dir + "/"
}

// eachCandidate calls fn with each regular, non-binary file whose path
// starts with pre that may hold a match of the trigram query q (and of
// one of ph, when not nil; within one line, when ls.oneLine) that nw
// selects, and the eighths of it where a match's line may start (see
// lineScope), until fn returns false. Caller holds mu.
func (ix *Index) eachCandidate(q *csindex.Query, ph *Phrases, ls lineScope, pre string, nw newer, fn func(f *File, lines Eighths) bool) {
	stopped := false
	add := func(id uint32, lines uint8) {
		if stopped || int(id) >= len(ix.files) {
			return // the table is checked on open, the lists only by their CRC
		}
		f := &ix.files[id]
		if f.Path == "" || !f.Mode.IsRegular() || f.Flags&Binary != 0 || !nw.admits(f) || !strings.HasPrefix(f.Path, pre) {
			return
		}
		if f.Flags&Racy != 0 {
			lines = allLines // read when its status could not vouch for it
		}
		stopped = !fn(f, Eighths(lines))
	}
	q = normalizeQuery(q)
	ids, lines, all := ix.evalBaseSafe(q, ph, ls, nw, pre)
	switch {
	case all && !nw.all(): // the newer files only, not a pass over the table
		ix.eachNewer(nw.since, func(id uint32) bool {
			if ix.delta[id] == nil && !ix.unknown[id] {
				add(id, allLines)
			}
			return !stopped
		})
	case all:
		for _, id := range ix.order {
			if ix.delta[id] == nil && !ix.unknown[id] {
				add(id, allLines)
			}
		}
	default:
		for i, id := range ids {
			if !ix.stale[id] && !ix.unknown[id] {
				l := uint8(allLines)
				if lines != nil {
					l = lines[i]
				}
				add(id, l)
			}
		}
	}
	// The delta: its slices name the files that may match, and only
	// those are looked up.
	var f *maskFilter
	made := false // f is made for the first delta set that needs it
	ix.dsl.each(q, func(id uint32) {
		if stopped || ix.unknown[id] || !nw.admits(&ix.files[id]) {
			return
		}
		tris := ix.delta[id]
		if !matchSet(q, tris) {
			return
		}
		if !made {
			f, made = newMaskFilter(q, ph, ls, nil, nil, ix.files, ix.nexts), true
		}
		l := uint8(allLines)
		if f != nil {
			l = f.keepPacked(id, tris)
		}
		if l != 0 {
			add(id, l)
		}
	})
	for id := range ix.unknown { // trigrams unknown: always a candidate
		add(id, allLines)
	}
}

// newerMask returns the bitmap of the ids whose file nw selects, among
// those under pre when nw has a path: a pass over the packed mtimes (8 MB
// at a million files), each compared into its bit a word of 64 ids at a
// time (no call and no branch an id), in parts on up to four processors
// for a large table (goroutines that end before it returns), and, with
// a path, over the paths under pre that sort before it. Caller holds mu.
// (As eachNewer, it reads no mtime past the table.)
func (ix *Index) newerMask(nw newer, pre string) []uint64 {
	w := make([]uint64, (len(ix.mtimes)+63)/64)
	ts := ix.mtimes[:min(len(ix.mtimes), len(ix.files))]
	from := nw.since // the first mtime selected whatever the path
	if nw.path != "" {
		from++ // at since, only those before the path, below
	}
	fill := func(lo, hi int) { // words lo to hi
		for i := lo * 64; i < min(hi*64, len(ts)); i += 64 {
			var word uint64
			for j, t := range ts[i:min(i+64, len(ts))] {
				var b uint64
				if t >= from {
					b = 1
				}
				word |= b << j
			}
			w[i/64] = word
		}
	}
	per := newerPartMin
	if ix.k.newerPart > 0 {
		per = ix.k.newerPart
	}
	switch parts := min(runtime.GOMAXPROCS(0), 4, len(ts)/per); {
	case nw.path != "" && nw.since == math.MaxInt64:
		// none is newer
	case parts > 1:
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { fill(p*len(w)/parts, (p+1)*len(w)/parts) })
		}
		wg.Wait()
	default:
		fill(0, len(w))
	}
	if nw.path != "" {
		lo, _ := slices.BinarySearchFunc(ix.order, pre, ix.pathSearch)
		hi, _ := slices.BinarySearchFunc(ix.order, nw.path, ix.pathSearch)
		for _, id := range ix.order[lo:max(lo, hi)] {
			if ix.mtimes[id] == nw.since {
				w[id/64] |= 1 << (id % 64)
			}
		}
	}
	return w
}

// newerPartMin is how many files newerMask compares in each goroutine
// at least: at a million files, four parts on four processors (it ran
// 0.84 ms on one).
const newerPartMin = 1 << 17

// Extent is what Estimate knows of the candidates of a query without
// listing them.
type Extent struct {
	// Files is how many files the table holds under Dir.
	Files int
	// Bound is at most how many base files Content can name (the
	// stream's bound: an AND's shortest list, an OR's lists summed);
	// All: Content constrains nothing (or is nil). A bound near Files
	// says the candidates are dense, so the newest of them are worth
	// trying first.
	Bound int
	All   bool
	// Since, for newest more than 0: an mtime such that about newest of
	// the files under Dir have it or a later one (math.MinInt64 when
	// there are not more than newest, or newest is 0), estimated from
	// the mtimes of at most newestSample files evenly spaced in path
	// order. The files at Since or later are a prefix of Grep's order
	// (mtime descending), whatever the estimate's error.
	Since int64
	// SincePath, when not "": many files share the mtime Since (an
	// archive's files), so that the files at Since or later would be
	// many more than newest; of those at Since, about the number wanted
	// sort before SincePath (CandidateOptions.SincePath), and those
	// still make a prefix of Grep's order (then by path).
	SincePath string
}

// Estimate returns the extent of the candidates of o (its Dir and
// Content) and, when newest is more than 0, the mtime from which about
// the newest newest files under Dir are.
func (ix *Index) Estimate(o CandidateOptions, newest int) Extent {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	lo, hi := ix.orderRange(o.Dir)
	e := Extent{Files: hi - lo, All: true, Since: math.MinInt64}
	if o.Content != nil && !readBase(func() {
		s, all := ix.stream(normalizeQuery(o.Content))
		if e.All = all; s != nil {
			e.Bound = s.size()
		}
	}) {
		e.Bound, e.All = 0, true
	}
	if newest > 0 {
		e.Since, e.SincePath = ix.newestSince(lo, hi, newest)
	}
	return e
}

// orderRange returns the range of ix.order holding the files under dir
// ("" or "." for all): one run of the sorted paths. Caller holds mu.
func (ix *Index) orderRange(dir string) (lo, hi int) {
	pre := dirPrefix(dir)
	if pre == "" {
		return 0, len(ix.order)
	}
	lo, _ = slices.BinarySearchFunc(ix.order, pre, ix.pathSearch)
	hi = lo + sort.Search(len(ix.order)-lo, func(i int) bool { return !strings.HasPrefix(ix.files[ix.order[lo+i]].Path, pre) })
	return lo, hi
}

// newestSample is how many files Estimate looks at for Extent.Since.
const newestSample = 4096

// newestSince is Extent.Since and Extent.SincePath for the files
// ix.order[lo:hi] and k newest. Caller holds mu.
func (ix *Index) newestSince(lo, hi, k int) (since int64, path string) {
	n := hi - lo
	if k >= n || k <= 0 {
		return math.MinInt64, ""
	}
	m := min(n, newestSample)
	at := func(i int) uint32 { return ix.order[lo+int(int64(i)*int64(n)/int64(m))] }
	ts := make([]int64, m) // in path order
	for i := range ts {
		ts[i] = ix.mtimes[at(i)]
	}
	sorted := slices.Sorted(slices.Values(ts))
	want := int(int64(k) * int64(m) / int64(n)) // the samples the prefix should hold, but one
	since = sorted[m-1-want]
	newer, tied := 0, 0
	for _, t := range ts {
		if t > since {
			newer++
		} else if t == since {
			tied++
		}
	}
	if newer+tied <= 2*(want+1) {
		return since, ""
	}
	// The samples are evenly spaced in path order, so the files at since
	// before the j'th sample at since are about j·n/m: cut past the
	// tied sample that completes the prefix.
	j := want - newer + 1 // newer ≤ want: sorted[m-1-want] is since
	for i, t := range ts {
		if t == since {
			if j == 0 {
				return since, ix.files[at(i)].Path
			}
			j--
		}
	}
	return since, ""
}

// Skipped is a record of what a walk without include_hidden or
// include_ignored would report as skipped: an entry the ignore rules
// pruned from the index, or (Hidden) a directory with a hidden name, which
// the index holds (its files are in the table) but a walk that does not
// include hidden entries skips. Hidden directories are recorded because a
// hidden directory holding no file would otherwise leave no trace.
// Default marks a directory pruned by the default list alone
// (ignore.Verdict.Default), which answers name found or not. Denied
// marks a directory the index could not list for want of permission
// (tree.Skip.Denied): it holds nothing under it, and answers that could
// have found something there are partial and name it.
type Skipped struct {
	Path    string
	IsDir   bool
	Hidden  bool
	Default bool
	Denied  bool
}

// Visibility is the index's view of what a walk that includes neither
// hidden nor ignored entries would not show: the entries the ignore rules
// pruned (which the index does not hold), the directories with hidden
// names it records and the files with hidden names it holds.
// Each call reads the index as it is then; it is safe for concurrent use.
type Visibility struct{ ix *Index }

// Visibility returns the index's view of what a walk would not show.
func (ix *Index) Visibility() Visibility { return Visibility{ix} }

// Ignored reports whether rel (root-relative) is, or is inside, a subtree
// the ignore rules pruned: the index does not hold it.
func (v Visibility) Ignored(rel string) bool {
	ix := v.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, p := range ancestorsAndSelf(rel) {
		if i, ok := slices.BinarySearchFunc(ix.ignored, p, cmpSkipped); ok && !ix.ignored[i].Hidden && !ix.ignored[i].Denied {
			return true
		}
	}
	return false
}

func cmpSkipped(s Skipped, p string) int { return strings.Compare(s.Path, p) }

// HiddenDir reports whether the index records rel (root-relative) as a
// hidden directory: a directory with a hidden name that no ignore rule
// whitelists, the classifier's verdict when the index last saw it.
func (v Visibility) HiddenDir(rel string) bool { return v.record(rel).Hidden }

// DeniedDir reports whether the index records rel (root-relative) as a
// directory it may not list (Skipped.Denied): it holds nothing under it.
func (v Visibility) DeniedDir(rel string) bool { return v.record(rel).Denied }

// record returns the record of rel (the zero Skipped if there is none).
func (v Visibility) record(rel string) Skipped {
	ix := v.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if i, ok := slices.BinarySearchFunc(ix.ignored, rel, cmpSkipped); ok {
		return ix.ignored[i]
	}
	return Skipped{}
}

// Skipped calls fn with each record under dir (root-relative; "" or "."
// for all), in path order: the entries the ignore rules pruned, the
// directories with hidden names (Skipped.Hidden) and those that could
// not be listed (Skipped.Denied); and with plain, !HiddenPath(s.Path),
// worked out once when the records change, not by each call (a Grep
// asks it of each record, thousands at a million files). fn must not
// call the index.
func (v Visibility) Skipped(dir string, fn func(s Skipped, plain bool)) {
	ix := v.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	pre := dirPrefix(dir)
	i, _ := slices.BinarySearchFunc(ix.ignored, pre, cmpSkipped)
	for ; i < len(ix.ignored) && strings.HasPrefix(ix.ignored[i].Path, pre); i++ {
		fn(ix.ignored[i], ix.plain[i])
	}
}

// setIgnored makes recs (sorted by path) the records of ignored entries,
// and works out which are plain (Skipped). Caller holds mu for writing,
// or owns ix.
func (ix *Index) setIgnored(recs []Skipped) {
	ix.ignored = recs
	ix.plain = make([]bool, len(recs))
	for i, s := range recs {
		ix.plain[i] = !HiddenPath(s.Path)
	}
}

// HiddenPath reports whether a component of rel (clean, slash separated)
// has a hidden name: one starting with ".". It looks for the dots alone
// (a vectorised search for each).
func HiddenPath(rel string) bool {
	for i := 0; ; i++ {
		j := strings.IndexByte(rel[i:], '.')
		if j < 0 {
			return false
		}
		if i += j; i == 0 || rel[i-1] == '/' {
			return true
		}
	}
}

// HiddenFiles calls fn, in path order, for each file under dir
// (root-relative; "" or "." for all) whose own name is hidden
// (File.HiddenName: what a walk without include_hidden skips by name),
// until fn returns false. It visits only those files, not the table. fn
// must not call the index.
func (v Visibility) HiddenFiles(dir string, fn func(*File) bool) {
	ix := v.ix
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	pre := dirPrefix(dir)
	i, _ := slices.BinarySearchFunc(ix.hidden, pre, ix.pathSearch)
	for ; i < len(ix.hidden); i++ {
		f := &ix.files[ix.hidden[i]]
		if !strings.HasPrefix(f.Path, pre) || !fn(f) {
			return
		}
	}
}
