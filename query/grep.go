package query

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/tree"
)

// BinarySniffBytes is how much of a file is checked for a NUL byte to
// call it binary (as git and ripgrep do): the engine's (package grep).
const BinarySniffBytes = grep.BinarySniffBytes

// GrepResult is what a Searcher found for a Grep.
type GrepResult struct {
	Run     envelope.GrepRun
	Skipped []tree.Skip
}

func (t *Tools) grep(ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope {
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, elapsedMS(start))
	}
	if v, ok := a["pattern"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			ectx.Pattern = s
		}
	}
	p, err := decodeGrep(a, t.rules())
	if err != nil {
		return fail(err)
	}
	ectx.SortedBy = "mtime_desc"
	m, err := compileMatcher(p, t.Voice)
	if err != nil {
		return fail(err)
	}
	inc, err := compileInclude(p.Include)
	if err != nil {
		return fail(err)
	}
	filter, err := CompileFilter(p.Filter, t.Voice)
	if err != nil {
		return fail(err)
	}
	inc = inc.WithFilter(filter)
	dir, err := t.resolveDir(ectx.Cwd, p.Path, "Search root")
	if err != nil {
		return fail(err)
	}
	ectx.PathResolved = dir
	q := &GrepQuery{WS: t.WS, Dir: dir, Params: p, Matcher: m, Include: inc, Start: start, Sizes: t.GrepSizes}
	sink := t.newAnswerSink(p.Limit, tool.GrepMaxLimit, ectx.Cwd)
	if sink != nil {
		q.Sink = sink.takeGrep
	}
	ectx.Clock = t.clock(ctx, p.Sync)
	searcher, fresh, err := t.changedSince(ctx, p.ChangedSince, p.Sync, dir, p.IncludeIgnored)
	if err != nil {
		return fail(err)
	}
	res, runErr := searcher.Grep(ctx, q)
	if runErr != nil {
		return fail(internal(runErr))
	}
	run := res.Run
	if sink != nil {
		// The scan counted what it handed over; the answer is what the
		// sink kept.
		run.Data.Matches, run.Data.Files, run.Data.Counts = sink.data.Matches, sink.data.Files, sink.data.Counts
		run.Data.Truncated = sink.truncated
		run.Stats.MatchedFiles, run.Stats.MatchedLines = sink.files, sink.lines
		run.Streamed = 0
		if sink.stream != nil {
			run.Streamed = sink.kept
		}
		if sink.cut {
			run.Data.AbortedReason = envelope.AbortMemoryLimit
		}
	}
	run.Stats.TimeMS = elapsedMS(start)
	run.Limit, run.LimitGiven, run.Voice, run.TimeoutMS = p.Limit, a.given("limit"), t.Voice, p.TimeoutMS
	run.Data.Mode = p.OutputMode
	couldMatch := func(s tree.Skip) bool {
		r := relTo(dir, s.Rel)
		if s.IsDir {
			return inc.Descend(r)
		}
		return inc.Match(r)
	}
	run.Data.Unreadable = unreadable(dir, res.Skipped, run.Data.Unreadable, couldMatch)
	run.Hints = skipHints(t.Voice, res.Skipped, len(run.Data.Matches)+len(run.Data.Files)+len(run.Data.Counts)+run.Streamed > 0, couldMatch,
		func(name string) bool { return p.IncludeHidden || inc.AllowHidden(name) })
	if fresh != "" {
		run.Data.FreshInstance = true
		run.Hints = append(run.Hints, freshHint(fresh))
	}
	return envelope.Grep(ectx, run)
}

// Grep walks q.Dir for the files the query admits, orders them newest
// first and scans them.
//
// The walk does not stat the files the prescan reads, and waits for the
// prescan's queue rather than list past it: the prescan takes the mtime
// and size of a file with something to report from the file it opened
// (one fstat, no path lookup), and a file with nothing needs none when
// the answer is not truncated. Once the prescan stops reading (it holds
// the results that settle the answer), the walk stats what it lists
// from then on, and the files listed before that are stat'd after the
// walk (grep.Prescan.Finish). Either way Scan orders files by the mtime they
// had when first looked at, as before.
func (Walker) Grep(ctx context.Context, q *GrepQuery) (*GrepResult, error) {
	ctx, cancel := q.deadline(ctx)
	defer cancel()
	s := q.search(nil)
	var files []grep.File
	pre := grep.StartPrescan(ctx, s)
	opts := grepWalkOptions(q)
	opts.InfoWhen = pre.Stopped
	st, err := tree.Walk(ctx, q.WS.Root, walkStart(q.Dir), dirRules(q.WS, q.Dir), opts, func(e tree.Entry) error {
		if e.Type.IsRegular() && q.Include.Match(relTo(q.Dir, e.Rel)) {
			files = append(files, grep.File{Rel: e.Rel, ModTime: e.ModTime, Size: e.Size, NoInfo: !e.Info})
			pre.Offer(files[len(files)-1], !e.Info)
		}
		return nil
	})
	if ready, ferr := pre.Finish(files, err == nil); err == nil {
		files, err = ready, ferr
	}
	timedOut := false
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		timedOut = true
	default:
		return nil, err
	}
	res := &GrepResult{Skipped: st.Skipped}
	if !timedOut {
		res.Run = runOf(grep.Scan(ctx, s, files))
	} else {
		res.Run.Data.AbortedReason = envelope.AbortTimeout
	}
	res.Run.Stats.Ignored = st.Ignored
	return res, nil
}

// grepWalkOptions are the walk's options for a Grep query.
func grepWalkOptions(q *GrepQuery) tree.Options {
	return tree.Options{
		IncludeHidden:  q.Params.IncludeHidden,
		IncludeIgnored: q.Params.IncludeIgnored,
		AllowHidden:    q.Include.AllowHidden,
		Descend:        func(rel string) bool { return q.Include.Descend(relTo(q.Dir, rel)) },
		Info:           true,
	}
}

// compileMatcher compiles p's pattern, refusing one that is not a regexp
// (or that matches a line break outside multiline mode) with a message
// in voice v.
func compileMatcher(p GrepParams, v envelope.Voice) (*grep.Matcher, *envelope.Error) {
	m, err := grep.CompileMatcher(p.Pattern, grep.MatchOptions{CaseSensitive: p.CaseSensitive, FixedStrings: p.FixedStrings, Multiline: p.Multiline})
	switch {
	case errors.Is(err, grep.ErrLineBreak):
		return nil, invalid("Invalid regex pattern: it matches a line break; %s to match across lines", lowerFirst(v.Set("multiline", "true")))
	case err != nil:
		return nil, invalid("Invalid regex pattern: %v", err)
	}
	return m, nil
}

// search returns the engine's Search of q, reading large files through
// blocks (nil: none).
func (q *GrepQuery) search(blocks grep.Blocks) *grep.Search {
	p := &q.Params
	return &grep.Search{
		Root:    q.WS.Root,
		Matcher: q.Matcher,
		Mode:    modeOf(p.OutputMode),
		Limit:   p.Limit,
		Before:  p.Before,
		After:   p.After,
		Invert:  p.Invert,
		Sink:    q.Sink,
		Blocks:  blocks,
		Sizes:   q.Sizes,
	}
}

// modeOf is the engine's form of an output_mode.
func modeOf(outputMode string) grep.Mode {
	switch outputMode {
	case envelope.ModeFiles:
		return grep.ModeFiles
	case envelope.ModeCount:
		return grep.ModeCount
	}
	return grep.ModeContent
}

// runOf is the envelope's form of a scan's result.
func runOf(r grep.Result) envelope.GrepRun {
	var run envelope.GrepRun
	d, st := &run.Data, &run.Stats
	d.Matches, d.Files, d.Counts = matchesOf(r.Matches), r.Files, countsOf(r.Counts)
	d.Truncated = r.Truncated
	d.AbortedReason = abortedReason(r.Abort)
	d.Unreadable = r.Denied
	st.FilesScanned, st.BinarySkipped = r.FilesScanned, r.BinarySkipped
	st.MatchedFiles, st.MatchedLines = r.MatchedFiles, r.MatchedLines
	run.Streamed = r.Streamed
	return run
}

// abortedReason is the envelope's word for why a scan's answer is
// incomplete ("" when it is not).
func abortedReason(a grep.Abort) string {
	switch a {
	case grep.Timeout:
		return envelope.AbortTimeout
	case grep.ReadError:
		return envelope.AbortReadError
	case grep.SizeLimit:
		return envelope.AbortSizeLimit
	}
	return ""
}

// matchesOf is the envelope's form of the engine's matches (nil stays
// nil).
func matchesOf(ms []grep.Match) []envelope.GrepMatch {
	if ms == nil {
		return nil
	}
	out := make([]envelope.GrepMatch, len(ms))
	for i, m := range ms {
		out[i] = envelope.GrepMatch(m)
	}
	return out
}

// countsOf is the envelope's form of the engine's counts (nil stays nil).
func countsOf(cs []grep.Count) []envelope.FileCount {
	if cs == nil {
		return nil
	}
	out := make([]envelope.FileCount, len(cs))
	for i, c := range cs {
		out[i] = envelope.FileCount(c)
	}
	return out
}
