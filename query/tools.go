// Package query is the tool layer: it answers the agent tools of the table
// (package tool: Glob, Grep, LS, Changes) for one workspace (docs/tools.md,
// docs/product.md). It decodes and checks a call's parameters (params.go),
// resolves paths inside the root (resolve.go: the security boundary), runs
// the query and builds the envelope, or hands a command line's results to a
// Sink as they come (answer.go).
//
// Glob and Grep are answered by a Searcher. Walker, the uncached walk of
// the live tree, is the reference implementation; Indexed answers from an
// index through a narrow interface (Index: one candidates call with
// options, an estimate, and a visibility view) and must return exactly
// what the walk returns. Both glue the walk or the index to the engines,
// which know nothing of the tools: package glob matches Glob's patterns,
// Grep's include and the file filters, and package grep finds Grep's
// lines. LS always reads the live directory; Changes reads the root's
// change journal (changes.go, changedsince.go).
//
// Ordering rules: Glob's paths are in byte order of the root-relative path
// (or, with sort "recent", files changed in the last 24 hours newest first,
// then the rest by path); Grep's matches are by file mtime, newest first,
// then path, then line; LS lists directories first, then by name.
package query

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/glob"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/tool"
)

// Searcher runs checked Glob and Grep queries. Implementations: Walker (the
// live tree, the reference) and Indexed (the index, with the walk for
// what it cannot answer).
type Searcher interface {
	Glob(ctx context.Context, q *GlobQuery) (*GlobResult, error)
	Grep(ctx context.Context, q *GrepQuery) (*GrepResult, error)
}

// GlobQuery is a checked Glob request.
type GlobQuery struct {
	WS     *Workspace
	Dir    string // resolved search directory, root-relative ("." for the root)
	Params GlobParams
	// Pattern is the normalized pattern (relative to Dir), Glob its
	// compiled form.
	Pattern string
	Glob    *glob.Pattern
	Filter  *glob.Filter // type, type_not and glob; nil: none
	Start   time.Time
}

// match reports whether the file rel (relative to Dir) is a result.
func (q *GlobQuery) match(rel string) bool { return q.Glob.Match(rel) && q.Filter.Match(rel) }

// descend reports whether the directory rel (relative to Dir) can hold a
// result.
func (q *GlobQuery) descend(rel string) bool { return q.Glob.Descend(rel) && q.Filter.Descend(rel) }

// enter is descend, or nil when descend is true of every directory (for
// index.CandidateOptions.Enter).
func (q *GlobQuery) enter() func(rel string) bool {
	if q.Glob.DescendsAll() && q.Filter.DescendsAll() {
		return nil
	}
	return q.descend
}

// includeEnter is in.Descend, or nil when Descend is true of every
// directory (for reach).
func includeEnter(in *glob.Include) func(rel string) bool {
	if in.DescendsAll() {
		return nil
	}
	return in.Descend
}

// GrepQuery is a checked Grep request.
type GrepQuery struct {
	WS      *Workspace
	Dir     string // resolved search directory, root-relative
	Params  GrepParams
	Matcher *grep.Matcher
	Include *glob.Include // nil: every file
	Start   time.Time
	// Sink, if set, takes the results in the answer's order as the scan
	// completes them, instead of the answer's data (Tools.Sink, through
	// an answerSink). It reports false once it wants no more: the scan
	// then stops, its answer ending before the batch refused.
	Sink func(grep.Batch) bool
	// Sizes, if set, replaces the engine's scanning sizes
	// (Tools.GrepSizes).
	Sizes *grep.Sizes
}

// deadline bounds ctx by the query's time limit, when it has one
// (timeout_ms; none by default on the command line).
func (q *GrepQuery) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if q.Params.TimeoutMS <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, q.Start.Add(time.Duration(q.Params.TimeoutMS)*time.Millisecond))
}

// Tools answers tool calls for one workspace.
type Tools struct {
	WS       *Workspace
	Searcher Searcher
	// Changes is the root's change journal (nil: none is kept): it gives
	// the envelopes their context.clock and answers Changes and
	// changed_since.
	Changes ChangeLog
	// Unlimited puts a call under the command line's rules, as rg's and
	// fd's: no default limit (a limit of 0, or none, is Unlimited; any
	// other is taken as given), no default time limit (Grep's timeout_ms
	// applies only when given), and Glob's entry and time breakers
	// lifted. Scripts want whole answers, or to be told they are not;
	// the agent tools keep their limits (docs/product.md, "Limits").
	Unlimited bool
	// Voice words the answers' hints and messages for their reader: the
	// agents' (the zero value) or the command line's (CLIVoice).
	Voice envelope.Voice
	// Sink, with Unlimited, takes the results of a Glob or a Grep whose
	// limit is beyond the agent tools' maximum (tool.GlobMaxLimit,
	// tool.GrepMaxLimit; no limit included) in batches, in the answer's order,
	// instead of the envelope's data, which then holds none (its text
	// and stats count them all): Grep's as the scan completes them,
	// Glob's once the search is done. The caller sends them on as they
	// come, and no envelope proportional to the result is built. LS lists
	// one directory and keeps its data. (answer.go says more.)
	Sink func(Batch)
	// BatchText: each Batch handed to Sink also holds, in Text, the
	// lines its results add to the envelope's text (envelope.Lines), so
	// that a client can put the whole envelope back together.
	BatchText bool
	// Budget, with Unlimited and no Sink, bounds the memory of a Glob's
	// or a Grep's answer whose limit is beyond the agent tools' maximum:
	// its results are collected in batches, each charged to Budget
	// first (n bytes); once Budget refuses one, the search stops and the
	// answer says it was cut (envelope.AbortMemoryLimit). Nil: such an
	// answer is built whole, unbounded (a one-shot process: the direct
	// walk).
	Budget func(n int64) bool
	// GrepSizes, if set, replaces the Grep engine's scanning sizes
	// (grep.Sizes): tests shrink them so that small files cross every
	// boundary.
	GrepSizes *grep.Sizes
}

// Batch is a run of results handed to a Sink. Names are in their printed
// form (internal/quote), as in an envelope; Cwd is the envelope's
// context.cwd, the caller's directory relative to the root. Text, with
// Tools.BatchText, is the lines the results add to the envelope's text
// (each led by "\n", see envelope.Lines): the whole answer's text is the
// envelope's, then "\n" and every batch's Text, in order, when any
// result came.
type Batch struct {
	Cwd     string               `json:"cwd"`
	Paths   []string             `json:"paths,omitempty"`
	Matches []envelope.GrepMatch `json:"matches,omitempty"`
	Files   []string             `json:"files,omitempty"`
	Counts  []envelope.FileCount `json:"counts,omitempty"`
	Text    string               `json:"text,omitempty"`
}

// AppendJSON appends the batch as JSON, exactly as encoding/json (with
// jsonenc's escaping) writes it, without reflection: a stream's batches
// are most of its daemon's work (rpc/server.Notify sends them as they
// are).
func (b *Batch) AppendJSON(dst []byte) []byte {
	dst = jsonenc.AppendString(append(dst, `{"cwd":`...), b.Cwd)
	if len(b.Paths) > 0 {
		dst = envelope.AppendStrings(append(dst, `,"paths":`...), b.Paths)
	}
	if len(b.Matches) > 0 {
		dst = envelope.AppendMatches(append(dst, `,"matches":`...), b.Matches)
	}
	if len(b.Files) > 0 {
		dst = envelope.AppendStrings(append(dst, `,"files":`...), b.Files)
	}
	if len(b.Counts) > 0 {
		dst = envelope.AppendCounts(append(dst, `,"counts":`...), b.Counts)
	}
	if b.Text != "" {
		dst = jsonenc.AppendString(append(dst, `,"text":`...), b.Text)
	}
	return append(dst, '}')
}

// BatchSize is how many results a Batch holds at most (Grep's may hold
// more: a file's matches are never split between two).
const BatchSize = grep.BatchSize

// rules are how t reads a call (decoder).
func (t *Tools) rules() rules { return rules{unlimited: t.Unlimited, voice: t.Voice} }

// CLIVoice is the command line's voice: a parameter is named by its flag
// (the tool table's, package tool).
var CLIVoice = envelope.Voice{Flag: func(param string) string {
	for _, s := range tool.Specs() {
		if p := s.Param(param); p != nil {
			return p.FlagName()
		}
	}
	return ""
}}

// NewDirect returns Tools answering from the live tree (no index).
func NewDirect(ws *Workspace) *Tools { return &Tools{WS: ws, Searcher: Walker{}} }

// Run answers one tool call. cwd is the caller's working directory
// relative to the root ("." at the root); raw is the tool's arguments as
// received. It always returns an envelope; failures are error envelopes.
func (t *Tools) Run(ctx context.Context, tool, cwd string, raw json.RawMessage) *envelope.Envelope {
	start := time.Now()
	ectx := envelope.Context{Cwd: ".", ParamsInput: raw}
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, time.Since(start).Milliseconds())
	}
	if cwd != "" && cwd != "." {
		rel, exists, err := t.WS.Resolve(".", cwd)
		if err != nil {
			return fail(err)
		}
		if !exists {
			return fail(envelope.Errorf(envelope.CodeNotFound, "Working directory '%s' does not exist.", cwd))
		}
		ectx.Cwd = rel
	}
	a, err := decodeArgs(raw)
	if err != nil {
		return fail(err)
	}
	spec, lerr := LookupTool(tool)
	if lerr != nil {
		return fail(envelope.Errorf(envelope.CodeInvalidParam, "Unknown tool '%s'.", tool))
	}
	return spec.run(t, ctx, ectx, a, start)
}

// internal turns an unexpected failure into an envelope error; a
// failure that is an envelope error (a Searcher refusing the call: the
// daemon serves too many roots, say) is that error.
func internal(err error) *envelope.Error {
	if ee, ok := errors.AsType[*envelope.Error](err); ok {
		return ee
	}
	return envelope.Errorf(envelope.CodeInternal, "%v", err)
}

func elapsedMS(start time.Time) int64 { return time.Since(start).Milliseconds() }
