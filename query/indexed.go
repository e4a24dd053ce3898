package query

import (
	"container/heap"
	"context"
	"errors"
	"io/fs"
	"math"
	"path"
	"regexp/syntax"
	"slices"
	"strings"
	"time"

	csindex "github.com/google/codesearch/index"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/tree"
)

// Index is the index as Indexed reads it; package index's Index
// implements it. CandidateLines lists the files that may answer a query,
// in one call whose options say what the query is (Glob's listing by
// path, Grep's candidates by content, each with the eighths of it where
// a match may be); Estimate says what it knows of them
// without listing them (for Grep's newest-first prefixes); Visibility is
// the index's record of what a walk would not show, from which Indexed
// answers as a walk would about ignored and hidden entries.
type Index interface {
	CandidateLines(o index.CandidateOptions, fn func(f *index.File, lines index.Eighths) bool)
	Estimate(o index.CandidateOptions, newest int) index.Extent
	Visibility() index.Visibility
}

var _ Index = (*index.Index)(nil)

// Indexed is the Searcher that answers from an index: Glob from the path
// table, Grep from trigram candidates read live. What the index does not
// hold is answered by Walker, and the result says so. Its answers equal
// Walker's (the differential tests hold it to that) apart from the work
// statistics (visited, files_scanned, candidates).
type Indexed struct {
	Index Index
	// Live lists subtrees (root-relative directories) the index is not
	// kept current for, such as directories that could not be watched:
	// each query walks the ones it reaches and merges them with the
	// index's answer, which then says fallback_reason "watch_limit". A
	// query inside one of them is answered by the walk alone.
	Live []string
	// Blocks, if not nil, keeps block filters of the large files a Grep
	// reads, so that later ones read only the blocks that may match (see
	// index/blocks.go).
	Blocks *index.BlockCache

	// newestFrom, if > 0, replaces newestFirstFiles: this package's tests
	// try the newest files first on small trees.
	newestFrom int
}

// liveSplit returns the Live subtrees strictly below dir, or inside=true
// when dir is itself in one.
func (s Indexed) liveSplit(dir string) (below []string, inside bool) {
	d := walkStart(dir)
	for _, l := range s.Live {
		switch {
		case d == l || strings.HasPrefix(d, l+"/"):
			return nil, true
		case d == "" || strings.HasPrefix(l, d+"/"):
			below = append(below, l)
		}
	}
	return below, false
}

// underAny reports whether the root-relative path p lies in one of dirs.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// reach answers whether a walk of dir would enter a subtree below it:
// every directory on the way, the subtree included, must pass descend (a
// nil descend passes every directory) and not be hidden (the
// classifier's verdict, as the index recorded it: hiddenDir) unless the
// query lets its name through (allow). Each directory's answer is
// remembered, so asking for many paths costs one step per distinct
// directory, not one per component of each path; with a nil descend, a
// path with no hidden name on the way costs none.
type reach struct {
	dir, start    string
	descend       func(string) bool
	allow         func(string) bool
	includeHidden bool
	hiddenDir     func(string) bool
	seen          map[string]bool
}

func newReach(dir string, descend, allow func(string) bool, includeHidden bool, hiddenDir func(string) bool) *reach {
	return &reach{dir: dir, start: walkStart(dir), descend: descend, allow: allow, includeHidden: includeHidden, hiddenDir: hiddenDir}
}

// entered reports whether the walk lists the directory sub (root-relative,
// dir itself or below it).
func (r *reach) entered(sub string) bool {
	if len(sub) <= len(r.start) {
		return sub == r.start
	}
	if r.descend == nil && !index.HiddenPath(sub) {
		return true // no directory refused, none hidden on the way
	}
	v, ok := r.seen[sub] // nil until a first answer: most queries ask none
	if !ok {
		name := path.Base(sub)
		hidden := !r.includeHidden && strings.HasPrefix(name, ".") && r.hiddenDir(sub)
		v = r.entered(parentOf(sub)) && (r.descend == nil || r.descend(relTo(r.dir, sub))) && (!hidden || r.allow(name))
		if r.seen == nil {
			r.seen = make(map[string]bool)
		}
		r.seen[sub] = v
	}
	return v
}

// enteredParent reports whether the walk lists the directory holding
// rel (root-relative, below dir): entered(parentOf(rel)), without
// cutting rel when no directory is refused and none of its components is
// hidden (plain: !index.HiddenPath(rel), which the index tells of its
// records), as for most of the index's ignored entries (skips asks it of
// each of them, thousands in a large tree).
func (r *reach) enteredParent(rel string, plain bool) bool {
	if r.descend == nil && len(rel) > len(r.start) && plain {
		return true // none of the parent's components is hidden either
	}
	return r.entered(parentOf(rel))
}

// plan says how to answer a query of dir: the Live subtrees below it to
// walk and merge, or a reason to leave it all to the walk ("" if the index
// can answer).
func (s Indexed) plan(dir string, includeIgnored bool) (live []string, reason envelope.FallbackReason) {
	if includeIgnored || s.Index.Visibility().Ignored(walkStart(dir)) {
		return nil, envelope.ReasonIgnoredPaths
	}
	live, inside := s.liveSplit(dir)
	if inside {
		return nil, envelope.ReasonWatchLimit
	}
	return live, ""
}

// Glob answers from the path table, bounded by the time breaker only.
func (s Indexed) Glob(ctx context.Context, q *GlobQuery) (*GlobResult, error) {
	p := q.Params
	live, r := s.plan(q.Dir, p.IncludeIgnored)
	if r != "" {
		res, err := Walker{}.Glob(ctx, q)
		if res != nil {
			res.Run.Data.Fallback = envelope.Fallback{Used: true, Reason: r}
		}
		return res, err
	}
	ctx, cancel := globDeadline(ctx, q)
	defer cancel()
	g := q.Glob
	depth := dirDepth(q.Dir)
	var hits []globHit
	var res GlobResult
	// The table is in path order: with sort "path" the first limit+1 hits
	// settle the answer (unless walked subtrees add theirs).
	enough := func() bool { return p.Sort == SortPath && len(live) == 0 && len(hits) > p.Limit }
	// With sort "recent", files older than the window come after the
	// newer ones, by path: the table's order. The index hands over the
	// newer files first, then the older ones by path, so once limit+1 of
	// those are hits the rest cannot change the answer (orderGlob's
	// window ends later, so a file older here is older there too). With
	// subtrees to walk, every file is visited.
	cutoff := time.Now().Add(-RecentWindow).UnixNano()
	recent := p.Sort == SortRecent && len(live) == 0
	older := 0
	visited := 0
	visit := func(f *index.File, old bool) bool {
		visited++
		if visited%1024 == 0 && ctx.Err() != nil {
			res.Run.Data.AbortedReason = envelope.AbortTimeLimit
			return false
		}
		rel := relTo(q.Dir, f.Path)
		if !visible(f.Hidden, rel, depth, p.IncludeHidden, g.AllowHidden) || !q.match(rel) || underAny(f.Path, live) {
			return true
		}
		// A link is listed when it points to a file inside the root now.
		if f.Mode&fs.ModeSymlink == 0 || tree.LinkToFileInside(q.WS.Root, q.WS.Abs(f.Path)) {
			hits = append(hits, globHit{f.Path, f.ModTime})
			if old {
				older++
			}
		}
		return !enough() && !(old && older > p.Limit)
	}
	// Directories no match can lie in are passed over, as the walk
	// passes them over.
	o := index.CandidateOptions{Dir: q.Dir, Prefix: g.LiteralPrefix(), Enter: q.enter()}
	if recent {
		o.Newer, o.Since, o.ThenOlder = true, cutoff, true
	}
	s.Index.CandidateLines(o, func(f *index.File, _ index.Eighths) bool { return visit(f, recent && f.ModTime < cutoff) })
	walkedIgnored := 0
	var walkedSkips []tree.Skip
	reached := newReach(q.Dir, q.enter(), g.AllowHidden, p.IncludeHidden, s.Index.Visibility().HiddenDir)
	for _, sub := range live {
		if res.Run.Data.AbortedReason != "" || !reached.entered(sub) {
			continue
		}
		res.Run.Data.Fallback = envelope.Fallback{Used: true, Reason: envelope.ReasonWatchLimit}
		st, err := tree.Walk(ctx, q.WS.Root, sub, dirRules(q.WS, sub), globWalkOptions(q), func(e tree.Entry) error {
			if (e.Type&fs.ModeSymlink == 0 || e.LinkToFile) && q.match(relTo(q.Dir, e.Rel)) {
				hits = append(hits, globHit{e.Rel, e.ModTime})
			}
			return nil
		})
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
			res.Run.Data.AbortedReason = envelope.AbortTimeLimit
		case err != nil:
			return nil, err
		}
		visited += st.Visited
		walkedIgnored += st.Ignored
		walkedSkips = append(walkedSkips, st.Skipped...)
	}
	res.Run.Data.Paths, res.Run.Data.Truncated = orderGlob(hits, p)
	res.Run.Stats.Visited = visited
	res.Run.Stats.Ignored, res.Skipped = s.skips(reached, len(hits) == 0, live, walkedSkips)
	res.Run.Stats.Ignored += walkedIgnored
	return &res, nil
}

// Grep narrows the files to the index's candidates for the pattern's
// trigram query, then scans them live in Grep's order.
func (s Indexed) Grep(ctx context.Context, q *GrepQuery) (*GrepResult, error) {
	p := q.Params
	live, r := s.plan(q.Dir, p.IncludeIgnored)
	if r != "" {
		res, err := Walker{}.Grep(ctx, q)
		if res != nil {
			res.Run.Data.Fallback = envelope.Fallback{Used: true, Reason: r}
		}
		return res, err
	}
	ctx, cancel := q.deadline(ctx)
	defer cancel()
	depth := dirDepth(q.Dir)
	tq := trigramQuery(q.Matcher.Syntax())
	ph := index.NewPhrases(q.Matcher.Literals())
	if p.Invert {
		tq, ph = &csindex.Query{Op: csindex.QAll}, nil // a line without the pattern can be in any file
	}
	var blocks grep.Blocks
	if s.Blocks != nil && !p.Invert && !p.Multiline && p.Before == 0 && p.After == 0 {
		blocks = s.Blocks.Query(q.WS.Root, tq)
	}
	search := q.search(blocks)
	var files []grep.File
	var read grep.Known // the files grepNewest read
	o := index.CandidateOptions{Dir: walkStart(q.Dir), Content: tq, Phrases: ph, OneLine: !p.Multiline, LinesFrom: search.ProbeMin()}
	candidates := func(since int64, sincePath string) []grep.File {
		files = files[:0]
		o.Newer, o.Since, o.SincePath = since != math.MinInt64, since, sincePath
		s.Index.CandidateLines(o, func(f *index.File, lines index.Eighths) bool {
			rel := relTo(q.Dir, f.Path)
			if q.Include.Match(rel) && visible(f.Hidden, rel, depth, p.IncludeHidden, q.Include.AllowHidden) && !underAny(f.Path, live) {
				g := read.File(f.Path, f.ModTime, f.Size)
				g.Eighths, g.Indexed = uint8(lines), grep.Stamp{Ctime: f.Ctime, Ino: f.Ino, Dev: f.Dev}
				files = append(files, g)
			}
			return true
		})
		return files
	}
	var run envelope.GrepRun
	settled := false
	if len(live) == 0 && q.Sink == nil && p.Limit != Unlimited {
		literal := q.Matcher.Syntax().Op == syntax.OpLiteral // inverted, tq is QAll: dense
		run, settled = s.grepNewest(ctx, q.Dir, search, tq, literal, candidates, &read)
	}
	var fb envelope.Fallback
	walkedIgnored := 0
	var walkedSkips []tree.Skip
	reached := newReach(q.Dir, includeEnter(q.Include), q.Include.AllowHidden, p.IncludeHidden, s.Index.Visibility().HiddenDir)
	if !settled {
		files = candidates(math.MinInt64, "")
		timedOut := false
		for _, sub := range live {
			if timedOut || !reached.entered(sub) {
				continue
			}
			fb = envelope.Fallback{Used: true, Reason: envelope.ReasonWatchLimit}
			st, err := tree.Walk(ctx, q.WS.Root, sub, dirRules(q.WS, sub), grepWalkOptions(q), func(e tree.Entry) error {
				if e.Type.IsRegular() && q.Include.Match(relTo(q.Dir, e.Rel)) {
					files = append(files, grep.File{Rel: e.Rel, ModTime: e.ModTime, Size: e.Size})
				}
				return nil
			})
			switch {
			case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
				timedOut = true
			case err != nil:
				return nil, err
			}
			walkedIgnored += st.Ignored
			walkedSkips = append(walkedSkips, st.Skipped...)
		}
		run = runOf(grep.Scan(ctx, search, files))
		if timedOut && run.Data.AbortedReason == "" {
			// The walk stopped short: files it never listed were not
			// searched, whatever the scan of those it did found.
			run.Data.AbortedReason = envelope.AbortTimeout
		}
	}
	n := len(files)
	res := &GrepResult{Run: run}
	res.Run.Data.Fallback = fb
	res.Run.Stats.Candidates = &n
	found := len(res.Run.Data.Matches)+len(res.Run.Data.Files)+len(res.Run.Data.Counts) > 0
	res.Run.Stats.Ignored, res.Skipped = s.skips(reached, !found, live, walkedSkips)
	res.Run.Stats.Ignored += walkedIgnored
	return res, nil
}

// grepNewest looks for the answer of the search of dir among its newest
// candidates first (newestFirst; candidates(since, path) lists those with
// an mtime after since, or at since with a path before path: "" for any,
// see index.Extent). settled says it found it there, or ran out
// of time: run is then the answer. Otherwise it sets *read to what it
// read, and candidates gives it to the scan of all the candidates
// (grep.Known), so a prefix read whole without settling is the start of
// the next one, and no file is read twice.
func (s Indexed) grepNewest(ctx context.Context, dir string, search *grep.Search, tq *csindex.Query, literal bool, candidates func(since int64, path string) []grep.File, read *grep.Known) (run envelope.GrepRun, settled bool) {
	need := search.Limit + 1 // the results that settle the answer: lines, or files
	var last index.Extent
	for k, all := s.newestFirst(tq, literal, dir, need); k > 0 && k <= all/newestFirstMost; {
		e := s.Index.Estimate(index.CandidateOptions{Dir: walkStart(dir)}, k)
		if e.Since == math.MinInt64 || e.Since == last.Since && e.SincePath == last.SincePath {
			break // all files, or the same prefix again
		}
		last = e
		res, done := grep.ScanRead(ctx, search, candidates(e.Since, e.SincePath))
		run = runOf(res)
		if res.Truncated || !done.Complete() {
			return run, true
		}
		*read = done.Known()
		// The next prefix holds twice the files that would give the
		// results still missing at the rate this one gave them.
		have := len(res.Matches) + len(res.Files) + len(res.Counts)
		k = int(min(int64(k)*2*int64(need)/int64(max(have, 1)), int64(all)))
	}
	return run, false
}

// newestFirstFiles is how many files the index must hold under a Grep's
// directory before newestFirst tries the newest of them first.
const newestFirstFiles = 1 << 15

// newestFirstMost bounds the prefixes: one holding more than
// 1/newestFirstMost of the files is not tried, the candidates are taken
// all at once.
const newestFirstMost = 4

// newestFirst says how a Grep of dir with the trigram query tq, settled
// by need results, first looks for its answer among the newest files:
// k, how many of the files under dir the first prefix holds (0: take
// all the candidates at once), of all. A Grep with a limit reads its
// candidates in Grep's order, newest first, and stops at limit+1
// results; the candidates with an mtime at or after the k'th newest
// file's (index.Extent.Since) are a prefix of that order, so when their
// scan finds limit+1 results, its answer is the whole query's
// (truncated); when not, a larger prefix is tried, sized by the results
// this one gave, then all, each reusing the hits of the one before.
// Worth it when the candidates are many more than the need: then the
// newest few files settle most queries, and enumerating, filtering and
// ordering the candidates costs what those files cost, not what all of
// them would. Two cases:
//
//   - dense candidates (a common phrase, or no trigram at all: the
//     trigram bound leaves out at most an eighth of the files): the
//     first prefix holds the newest 1/64 of the files, or fewer for a
//     small need (firstPrefix);
//   - sparse ones of a pattern that is one literal (literal: a string,
//     in either case, or fixed strings) whose trigram bound is at least
//     newestFirstSparse times the need (`func main` at a million files,
//     limit 1000): the first prefix is sized by the bound
//     (sparsePrefix), and holds at most a quarter of the files. Not for
//     two literals or more: their bound may be many times their
//     candidates (`EXPORT_SYMBOL.*kmalloc` on the kernel: 11 files),
//     and a prefix that falls short costs one more evaluation of the
//     lists.
//
// The trigram bound tells at most the density of the whole tree's
// candidates, not of the newest files', and a prefix that holds too few
// costs only its candidates' enumeration (the files it read are not
// read again) before the next. The Grep's candidates statistic counts
// those of the prefix that answered.
func (s Indexed) newestFirst(tq *csindex.Query, literal bool, dir string, need int) (k, all int) {
	e := s.Index.Estimate(index.CandidateOptions{Dir: walkStart(dir), Content: tq}, 0)
	from := newestFirstFiles
	if s.newestFrom > 0 {
		from = s.newestFrom
	}
	switch {
	case e.Files < from:
		return 0, e.Files
	case e.All || e.Bound >= e.Files/8:
		return firstPrefix(e.Files, need), e.Files
	case literal && e.Bound/newestFirstSparse >= need:
		return sparsePrefix(e.Files, e.Bound, need), e.Files
	}
	return 0, e.Files
}

// newestFirstSparse is how many times the need a sparse query's trigram
// bound must be for its Grep to try the newest files first.
const newestFirstSparse = 64

// sparsePrefix returns how many of files the first prefix of a Grep
// with sparse candidates holds: 2·newestFirstSlack files a result
// needed at the density its trigram bound gives (files/bound files a
// candidate). The bound usually counts more files than the candidates
// (the masks and the query's other lists cut it: 80,737 for 10,454 for
// `func main` at a million files; though it counts the base's files
// only, tree-wide), so the prefix holds fewer candidates than that,
// about twice the need there: one prefix settles it, where a prefix
// that falls short costs one more evaluation of the lists. With
// bound ≥ newestFirstSparse·need it holds at most a quarter of the
// files (newestFirstMost).
func sparsePrefix(files, bound, need int) int {
	return int(int64(2*newestFirstSlack) * int64(need) * int64(files) / int64(max(bound, 1)))
}

// firstPrefix returns how many of files the first prefix of a Grep that
// needs need results holds: newestFirstSlack files a result (at least
// newestFirstLeast), at most 1/64 of them.
func firstPrefix(files, need int) int {
	return min(files/64, max(newestFirstLeast, newestFirstSlack*min(need, files)))
}

// newestFirstSlack is how many files the first prefix holds for each
// result a Grep needs, newestFirstLeast the fewest it holds.
const (
	newestFirstSlack = 8
	newestFirstLeast = 1024
)

// dirDepth returns the number of components of a resolved directory.
func dirDepth(dir string) int {
	if dir == "." || dir == "" {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// visible reports whether a walk of the directory at depth would reach the
// file at rel (relative to it) past hidden names: with includeHidden
// always; otherwise no component below the directory may be hidden (bits
// of the file's Hidden mask) unless allow lets its name through.
func visible(mask uint64, rel string, depth int, includeHidden bool, allow func(string) bool) bool {
	if includeHidden || mask>>min(depth, 63) == 0 {
		return true
	}
	for i, c := range strings.Split(rel, "/") {
		if mask&(1<<min(depth+i, 63)) != 0 && !allow(c) {
			return false
		}
	}
	return true
}

// skips answers what a walk of dir would report as skipped, from the
// index's records: how many ignored entries the walk would meet (those
// whose parent it would enter) and the list a walk keeps of them
// (tree.KeepSkip), in walk order: the directories the default list alone
// pruned always (every answer names them), and when wantList (the hints
// need the rest only for an empty result) the other ignored entries and
// the hidden ones — the recorded hidden directories and the files with a
// hidden name — whose parent the walk would enter and whose name the
// query does not let through. walked are the skips the walks of live
// subtrees reported, merged in.
func (s Indexed) skips(r *reach, wantList bool, live []string, walked []tree.Skip) (int, []tree.Skip) {
	hiddenSkip := func(p string) bool {
		return !underAny(p, live) && !r.allow(p[strings.LastIndexByte(p, '/')+1:]) && r.enteredParent(p, false) // p's name is hidden
	}
	var out skipList
	for _, sk := range walked {
		if wantList || sk.Default || sk.Denied {
			out.add(sk)
		}
	}
	ignored := 0
	vis := s.Index.Visibility()
	if r.start != "" && !underAny(r.start, live) && vis.DeniedDir(r.start) {
		out.add(tree.Skip{Rel: r.start, IsDir: true, Denied: true}) // as a walk of it would
	}
	vis.Skipped(r.start, func(sk index.Skipped, plain bool) {
		switch {
		case sk.Denied && !underAny(sk.Path, live) && r.entered(sk.Path):
			// A walk would have tried to list it (a hidden one only when
			// the query lets its name in).
			out.add(tree.Skip{Rel: sk.Path, IsDir: true, Denied: true})
		case sk.Denied && !sk.Hidden:
			// Not reached by the walk, and not an ignored entry either.
		case !sk.Hidden:
			if !underAny(sk.Path, live) && r.enteredParent(sk.Path, plain) {
				ignored++
				if wantList || sk.Default {
					out.add(tree.Skip{Rel: sk.Path, IsDir: sk.IsDir, Default: sk.Default})
				}
			}
		case wantList && !r.includeHidden && hiddenSkip(sk.Path):
			out.add(tree.Skip{Rel: sk.Path, IsDir: true, Hidden: true})
		}
	})
	if wantList && !r.includeHidden {
		vis.HiddenFiles(r.start, func(f *index.File) bool {
			if hiddenSkip(f.Path) {
				out.add(tree.Skip{Rel: f.Path, Hidden: true})
			}
			return true
		})
	}
	return ignored, out.kept()
}

// skipList collects skips for the list a walk keeps of them
// (tree.KeepSkip, in walk order): every Default or Denied one, and of the
// others only the tree.MaxSkips first in walk order, the others being
// kept only after fewer than that many. A Grep that finds nothing in a
// large tree lists thousands (5,230 at a million files, of which 2,559
// hidden files): sorting them all took half of such a Grep's 4.5 ms; a
// bounded heap of the first ones costs a comparison for most.
type skipList struct {
	must  []tree.Skip // Default or Denied
	first lastSkips   // the others, at most MaxSkips
}

func (l *skipList) add(sk tree.Skip) {
	switch {
	case sk.Default || sk.Denied:
		l.must = append(l.must, sk)
	case len(l.first) < tree.MaxSkips:
		heap.Push(&l.first, sk)
	case tree.Order(sk.Rel, l.first[0].Rel) < 0:
		l.first[0] = sk // the last of the MaxSkips first gives way
		heap.Fix(&l.first, 0)
	}
}

// lastSkips is a heap of skips whose root comes last in walk order.
type lastSkips []tree.Skip

func (h lastSkips) Len() int           { return len(h) }
func (h lastSkips) Less(i, j int) bool { return tree.Order(h[i].Rel, h[j].Rel) > 0 }
func (h lastSkips) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lastSkips) Push(x any)        { *h = append(*h, x.(tree.Skip)) }
func (h *lastSkips) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// kept returns the list a walk keeps of the skips added, in walk order:
// the same as tree.KeepSkip keeps of all of them sorted, since an entry
// past the MaxSkips first others has at least that many kept before it.
func (l *skipList) kept() []tree.Skip {
	out := append(l.must, l.first...)
	slices.SortFunc(out, func(a, b tree.Skip) int { return tree.Order(a.Rel, b.Rel) })
	kept := out[:0]
	for _, sk := range out {
		if tree.KeepSkip(len(kept), sk) {
			kept = append(kept, sk)
		}
	}
	return kept
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}
