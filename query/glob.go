package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/glob"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/tree"
)

// RecentWindow is how new a file must be to come first with sort "recent"
// (docs/tools.md, "Glob").
const RecentWindow = 24 * time.Hour

// GlobResult is what a Searcher found for a Glob: the run for the envelope
// and the entries ignore rules left out, for the hint.
type GlobResult struct {
	Run     envelope.GlobRun
	Skipped []tree.Skip
}

// resolveGlob resolves a tool's path parameter (what names it in errors)
// against the caller's directory, recording it in ectx, and normalizes
// and compiles the glob pattern relative to it.
func (t *Tools) resolveGlob(ectx *envelope.Context, path, what, pattern string, caseSensitive bool) (dir, pat string, g *glob.Pattern, err *envelope.Error) {
	if dir, err = t.resolveDir(ectx.Cwd, path, what); err != nil {
		return
	}
	ectx.PathResolved = dir
	if pat, err = normalizeGlob(t.Voice, pattern, t.WS.Abs(dir), t.WS.givenAbs(dir)); err != nil {
		return
	}
	g, err = compileGlob(pat, !caseSensitive)
	return
}

func (t *Tools) glob(ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope {
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, elapsedMS(start))
	}
	p, err := decodeGlob(a, t.rules())
	if err != nil {
		return fail(err)
	}
	dir, pat, g, err := t.resolveGlob(&ectx, p.Path, "Search root", p.Pattern, p.CaseSensitive)
	if err != nil {
		return fail(err)
	}
	ectx.PatternNormalized = pat
	filter, err := CompileFilter(p.Filter, t.Voice)
	if err != nil {
		return fail(err)
	}
	q := &GlobQuery{WS: t.WS, Dir: dir, Params: p, Pattern: pat, Glob: g, Filter: filter, Start: start}
	ectx.Clock = t.clock(ctx, p.Sync)
	searcher, fresh, err := t.changedSince(ctx, p.ChangedSince, p.Sync, dir, p.IncludeIgnored)
	if err != nil {
		return fail(err)
	}
	res, runErr := searcher.Glob(ctx, q)
	if runErr != nil {
		return fail(internal(runErr))
	}
	run := res.Run
	if s := t.newAnswerSink(p.Limit, tool.GlobMaxLimit, ectx.Cwd); s != nil {
		for paths := run.Data.Paths; len(paths) > 0; {
			n := min(len(paths), BatchSize)
			if !s.take(Batch{Paths: slices.Clone(paths[:n])}) {
				break
			}
			paths = paths[n:]
		}
		run.Data.Paths = s.data.Paths
		if s.stream != nil {
			run.Streamed = s.kept
		}
		if s.cut {
			run.Data.AbortedReason = envelope.AbortMemoryLimit
		}
	}
	run.Stats.TimeMS = elapsedMS(start)
	run.Limit, run.LimitGiven, run.Voice, run.NoMaxLimit = p.Limit, a.given("limit"), t.Voice, t.Unlimited
	found := len(run.Data.Paths)+run.Streamed > 0
	couldMatch := func(s tree.Skip) bool {
		r := relTo(dir, s.Rel)
		if s.IsDir {
			return q.descend(r) || q.match(r)
		}
		return q.match(r)
	}
	run.Data.Unreadable = unreadable(dir, res.Skipped, nil, couldMatch)
	run.Hints = skipHints(t.Voice, res.Skipped, found, couldMatch, func(name string) bool { return p.IncludeHidden || g.AllowHidden(name) })
	if !found {
		if h := depthHint(ctx, searcher, q); h != "" {
			run.Hints = append(run.Hints, h)
		}
	}
	if fresh != "" {
		run.Data.FreshInstance = true
		run.Hints = append(run.Hints, freshHint(fresh))
	}
	return envelope.Glob(ectx, run)
}

// depthHintLimit bounds the files depthHint counts.
const depthHintLimit = 10000

// depthHint is the note of an empty answer to a pattern that stays in one
// directory ('*.go': '*' and '?' never cross '/'), which a user of fd or
// of a shell's globstar may have meant at any depth: how many files
// '**/PATTERN' matches below, when any do ("" otherwise). The count is
// the same search's, with the same filters and rules.
func depthHint(ctx context.Context, s Searcher, q *GlobQuery) string {
	if strings.Contains(q.Pattern, "/") || strings.Contains(q.Pattern, "**") {
		return ""
	}
	deep := "**/" + q.Pattern
	g, err := glob.Compile(deep, !q.Params.CaseSensitive)
	if err != nil {
		return ""
	}
	dq := *q
	dq.Pattern, dq.Glob = deep, g
	dq.Params.Limit, dq.Params.Sort = depthHintLimit, SortPath
	res, rerr := s.Glob(ctx, &dq)
	if rerr != nil || len(res.Run.Data.Paths) == 0 {
		return ""
	}
	n := strconv.Itoa(len(res.Run.Data.Paths)) + " files"
	switch {
	case len(res.Run.Data.Paths) == 1:
		n = "1 file"
	case res.Run.Data.Truncated || res.Run.Data.AbortedReason != "":
		n = "more than " + n
	}
	return fmt.Sprintf("[Info: No file directly in '%s' matches '%s' ('*' and '?' stay within one directory); '%s' matches %s below it.]",
		quote.Name(q.Dir), quote.Name(q.Pattern), quote.Name(deep), n)
}

// Walker is the Searcher that walks the live tree: the reference every
// other Searcher must agree with, and the fallback when the index cannot be
// trusted.
type Walker struct{}

// Glob walks q.Dir, bounded by the visited-entry and time breakers.
func (Walker) Glob(ctx context.Context, q *GlobQuery) (*GlobResult, error) {
	ctx, cancel := globDeadline(ctx, q)
	defer cancel()
	p := q.Params
	var hits []globHit
	st, err := tree.Walk(ctx, q.WS.Root, walkStart(q.Dir), dirRules(q.WS, q.Dir), globWalkOptions(q), func(e tree.Entry) error {
		if e.Type&fs.ModeSymlink != 0 && !e.LinkToFile {
			return nil
		}
		if q.match(relTo(q.Dir, e.Rel)) {
			hits = append(hits, globHit{e.Rel, e.ModTime})
		}
		return nil
	})
	var res GlobResult
	switch {
	case err == nil:
	case errors.Is(err, tree.ErrCountLimit):
		res.Run.Data.AbortedReason = envelope.AbortCountLimit
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		res.Run.Data.AbortedReason = envelope.AbortTimeLimit
	default:
		return nil, err
	}
	res.Run.Data.Paths, res.Run.Data.Truncated = orderGlob(hits, p)
	res.Run.Stats.Visited = st.Visited
	res.Run.Stats.Ignored = st.Ignored
	res.Skipped = st.Skipped
	return &res, nil
}

// globWalkOptions are the walk's options for a Glob query.
func globWalkOptions(q *GlobQuery) tree.Options {
	p, g := q.Params, q.Glob
	return tree.Options{
		IncludeHidden:  p.IncludeHidden,
		IncludeIgnored: p.IncludeIgnored,
		AllowHidden:    g.AllowHidden,
		Descend:        func(rel string) bool { return q.descend(relTo(q.Dir, rel)) },
		Info:           p.Sort == SortRecent,
		ResolveLinks:   true,
		MaxVisited:     maxVisited(p),
	}
}

// maxVisited is the walk's entry breaker (0: none): lifted under the
// command line's rules, and never below the limit.
func maxVisited(p GlobParams) int {
	if p.NoBreakers {
		return 0
	}
	return max(envelope.GlobMaxVisited, p.Limit)
}

// globDeadline is Glob's time breaker, lifted (to ctx's own deadline)
// under the command line's rules.
func globDeadline(ctx context.Context, q *GlobQuery) (context.Context, context.CancelFunc) {
	if q.Params.NoBreakers {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, q.Start.Add(envelope.GlobMaxDurationMS*time.Millisecond))
}

// globHit is one matching file: root-relative path and mtime (with sort
// "recent").
type globHit struct {
	rel string
	mod int64
}

// orderGlob sorts hits in Glob's order and keeps the first limit.
func orderGlob(hits []globHit, p GlobParams) (paths []string, truncated bool) {
	if p.Sort == SortRecent {
		cutoff := time.Now().Add(-RecentWindow).UnixNano()
		slices.SortFunc(hits, func(a, b globHit) int {
			ar, br := a.mod >= cutoff, b.mod >= cutoff
			switch {
			case ar && br:
				return cmp.Or(cmp.Compare(b.mod, a.mod), strings.Compare(a.rel, b.rel))
			case ar != br:
				if ar {
					return -1
				}
				return 1
			}
			return strings.Compare(a.rel, b.rel)
		})
	} else {
		slices.SortFunc(hits, func(a, b globHit) int { return strings.Compare(a.rel, b.rel) })
	}
	if len(hits) > p.Limit {
		hits, truncated = hits[:p.Limit], true
	}
	paths = make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.rel
	}
	return paths, truncated
}

// Sort orders for Glob.
const (
	SortPath   = "path"
	SortRecent = "recent"
)

// dirRules returns the ignore rules in force for the entries of dir.
func dirRules(ws *Workspace, dir string) *ignore.Dir {
	r, err := rooted.Open(ws.Root)
	if err != nil {
		return ignore.Open(ws.Root) // the walk that follows fails on the same open
	}
	defer r.Close()
	return ignore.NewCache(r).At(walkStart(dir))
}

// walkStart converts a resolved directory ("." for the root) to the walk's
// form ("" for the root).
func walkStart(dir string) string {
	if dir == "." {
		return ""
	}
	return dir
}

// relTo returns the root-relative path rel relative to dir.
func relTo(dir, rel string) string {
	if dir == "." || dir == "" {
		return rel
	}
	return strings.TrimPrefix(rel, dir+"/")
}

// skipHints renders the info lines naming what was left out that could
// have matched (docs/product.md, "What is skipped"), with the parameter
// that includes it: the directories the default list alone skipped (in
// voice v), whose names the query would otherwise have let in (shown
// says whether it lets in a hidden name), in every answer, found or not
// (ripgrep would have searched them: a build/ or dist/ may hold source);
// and when nothing was found, whatever else ignore rules or hiddenness
// left out.
func skipHints(v envelope.Voice, skipped []tree.Skip, found bool, couldMatch func(tree.Skip) bool, shown func(name string) bool) []string {
	var def, ign, hid []string
	for _, s := range skipped {
		base := s.Rel[strings.LastIndexByte(s.Rel, '/')+1:]
		if s.Denied || vcsDirs[base] || (found && !s.Default) || !couldMatch(s) {
			continue
		}
		name := s.Rel
		if s.IsDir {
			name += "/"
		}
		name = quote.Name(name)
		switch {
		case s.Default && (!strings.HasPrefix(base, ".") || shown(base)):
			def = append(def, name)
		case found:
		case s.Hidden:
			hid = append(hid, name)
		default:
			ign = append(ign, name)
		}
	}
	var out []string
	if len(def) > 0 {
		out = append(out, "[Info: Directories on the default ignore list were skipped: "+listSome(def)+". "+v.Set("include_ignored", "true")+" to search them.]")
	}
	if len(ign) > 0 {
		out = append(out, "[Info: Ignored paths were skipped: "+listSome(ign)+". "+v.Set("include_ignored", "true")+" to search them.]")
	}
	if len(hid) > 0 {
		out = append(out, "[Info: Hidden paths were skipped: "+listSome(hid)+". "+v.Set("include_hidden", "true")+" to search them.]")
	}
	return out
}

// unreadable is an answer's list of what it could not read for want of
// permission (envelope.GlobData.Unreadable): the directories of skipped
// marked Denied that couldMatch lets in, or that are the query's
// directory dir itself (named with a trailing "/"), and files,
// root-relative, in path order.
func unreadable(dir string, skipped []tree.Skip, files []string, couldMatch func(tree.Skip) bool) []string {
	out := slices.Clone(files)
	for _, s := range skipped {
		if s.Denied && (s.Rel == dir || couldMatch(s)) {
			out = append(out, s.Rel+"/")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// vcsDirs are never suggested by a hint: nobody means to search them, and
// naming them on every empty answer in a repository is noise.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

func listSome(names []string) string {
	const show = 5
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:show], ", ") + ", …"
}
