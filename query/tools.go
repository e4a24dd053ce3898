// Package query answers the three agent tools, Glob, Grep and LS, for one
// workspace (SPEC §3–8): it decodes and checks parameters, resolves paths
// inside the root (the security boundary), applies the ignore rules, runs
// the query and builds the envelope.
//
// Glob and Grep are answered by a Searcher. Walker, the uncached walk of
// the live tree, is the reference implementation; the index-backed
// searcher must return exactly what it returns. LS always reads the live
// directory.
//
// Ordering rules: Glob's paths are in byte order of the root-relative path
// (or, with sort "recent", files changed in the last 24 hours newest first,
// then the rest by path); Grep's matches are by file mtime, newest first,
// then path, then line; LS lists directories first, then by name.
package query

import (
	"context"
	"encoding/json"
	"time"

	"github.com/indexd/indexd/envelope"
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
	Glob    *GlobPattern
	Start   time.Time
}

// GrepQuery is a checked Grep request.
type GrepQuery struct {
	WS      *Workspace
	Dir     string // resolved search directory, root-relative
	Params  GrepParams
	Matcher *Matcher
	Include *Include // nil: every file
	Start   time.Time
}

// Tools answers tool calls for one workspace.
type Tools struct {
	WS       *Workspace
	Searcher Searcher
	// Changes is the root's change journal (nil: none is kept): it gives
	// the envelopes their context.clock and answers Changes and
	// changed_since.
	Changes ChangeLog
}

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

// internal turns an unexpected failure into an envelope error.
func internal(err error) *envelope.Error {
	return envelope.Errorf(envelope.CodeInternal, "%v", err)
}

func elapsedMS(start time.Time) int64 { return time.Since(start).Milliseconds() }
