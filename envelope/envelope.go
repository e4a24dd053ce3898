// Package envelope owns the response every indexd tool returns: its types,
// the one rule that decides its status, and the text rendering an LLM reads.
//
// An Envelope serialises to a JSON object with exactly the keys status, data,
// text, stats and context, plus error when (and only when) status is "error".
// That is guaranteed by construction: Data and Stats are sealed interfaces
// implemented only by this package's tool types, and Envelope.MarshalJSON
// writes the keys itself. Clients that decode envelopes use Raw.
//
// File names in data, context and text are in their printed form
// (internal/quote): as they are, or — when a name holds a control
// character, a byte that is not UTF-8, a backslash or a double quote — a
// double-quoted C-style string that Unquote turns back into the name's
// bytes. Lines of files are printed in text by quote.Line. So no name or
// line can forge the structure of text, and a name that is not valid
// UTF-8 survives JSON.
//
// This package is a leaf: it imports nothing of indexd's but the leaf
// internal/quote.
package envelope

import (
	"encoding/json"
	"fmt"

	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/quote"
)

// Status is the envelope's verdict on a tool run.
type Status string

// The three statuses (docs/product.md, "The envelope").
const (
	// StatusSuccess: complete, no truncation, no discount, no error.
	StatusSuccess Status = "success"
	// StatusPartial: usable but discounted (truncated, a breaker fired with
	// results, Grep served by the fallback).
	StatusPartial Status = "partial"
	// StatusError: no valid result.
	StatusError Status = "error"
)

// Code is an envelope error code.
type Code string

// The error codes a tool may return (docs/product.md, "The envelope").
const (
	CodeNotFound         Code = "NOT_FOUND"
	CodeAccessDenied     Code = "ACCESS_DENIED"
	CodePermissionDenied Code = "PERMISSION_DENIED"
	CodeInvalidParam     Code = "INVALID_PARAM"
	CodeTimeout          Code = "TIMEOUT"
	CodeInternal         Code = "INTERNAL_ERROR"
	CodeExecution        Code = "EXECUTION_ERROR"
	CodeIsDirectory      Code = "IS_DIRECTORY"
	CodeBinaryFile       Code = "BINARY_FILE"
	CodeConflict         Code = "CONFLICT"
)

// Error is the envelope's structured error. It is also a Go error, so the
// layers below can return it and the tool layer can find it with errors.As.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Context says what the tool was asked and where it ran. The constructors
// (Glob, Grep, LS, Fail) take Cwd, PathResolved and PatternNormalized raw
// and write them in their printed form (quote.Name for the paths,
// quote.Line for the pattern).
type Context struct {
	// Cwd is the working directory relative to the root, "." at the root.
	Cwd string `json:"cwd"`
	// ParamsInput is the tool's arguments exactly as received.
	ParamsInput json.RawMessage `json:"params_input"`
	// PathResolved is the resolved search path relative to the root (POSIX),
	// set once a path was resolved.
	PathResolved string `json:"path_resolved,omitempty"`
	// PatternNormalized is Glob's pattern in POSIX form.
	PatternNormalized string `json:"pattern_normalized,omitempty"`
	// Pattern is Grep's regular expression as given.
	Pattern string `json:"pattern,omitempty"`
	// SortedBy is Grep's result order, always "mtime_desc".
	SortedBy string `json:"sorted_by,omitempty"`
	// Clock is the root's clock token when the answer was taken (package
	// journal): give it to Changes as since, or to Glob and Grep as
	// changed_since, to learn what changed after this answer. Present only
	// when the daemon keeps a change journal for the root (its index is
	// ready): a direct walk and a root still building have none.
	Clock string `json:"clock,omitempty"`
}

// quoted returns ctx with its names in their printed form.
func (ctx Context) quoted() Context {
	ctx.Cwd = quote.Name(ctx.Cwd)
	ctx.PathResolved = quote.Name(ctx.PathResolved)
	ctx.PatternNormalized = quote.Line(ctx.PatternNormalized)
	return ctx
}

// Data is a tool's payload: *GlobData, *GrepData or *LSData. The interface
// is sealed so an envelope can only carry the documented shapes.
type Data interface{ isData() }

// Stats is a tool's run statistics: *GlobStats, *GrepStats, *LSStats or
// *BaseStats. Every implementation carries time_ms.
type Stats interface{ base() *BaseStats }

// BaseStats is the part of stats every envelope has; error envelopes carry
// only this.
type BaseStats struct {
	TimeMS int64 `json:"time_ms"`
}

func (b *BaseStats) base() *BaseStats { return b }

// Envelope is one tool response. Build it with Glob, Grep, LS or Fail; the
// constructors decide Status and render Text, so the fields agree.
type Envelope struct {
	Status  Status
	Data    Data
	Text    string
	Stats   Stats
	Context Context
	Error   *Error
}

// MarshalJSON writes exactly the allowed top-level keys. A nil Data is
// written as {}, a nil Stats as {"time_ms":0}, and error appears only when
// Status is "error" (an error envelope without an Error gets INTERNAL_ERROR).
func (e *Envelope) MarshalJSON() ([]byte, error) {
	var data any = e.Data
	if e.Data == nil {
		data = struct{}{}
	}
	var stats any = e.Stats
	if e.Stats == nil {
		stats = &BaseStats{}
	}
	ctx := e.Context
	if ctx.Cwd == "" {
		ctx.Cwd = "."
	}
	if len(ctx.ParamsInput) == 0 || !json.Valid(ctx.ParamsInput) {
		ctx.ParamsInput = json.RawMessage("{}")
	}
	var eerr *Error
	switch e.Status {
	case StatusSuccess, StatusPartial:
	case StatusError:
		eerr = e.Error
		if eerr == nil {
			eerr = &Error{Code: CodeInternal, Message: "unknown error"}
		}
	default:
		return nil, fmt.Errorf("envelope: invalid status %q", e.Status)
	}
	// The members are marshalled one by one and joined: as one struct,
	// encoding/json would scan the output of the data's own MarshalJSON
	// again to compact it (for Grep, a second pass over the whole
	// answer: 0.2 ms of 1,000 matches).
	b := make([]byte, 0, 2*len(e.Text)+512)
	var err error
	member := func(key string, v any) {
		if err == nil {
			b = append(b, key...)
			b, err = appendJSON(b, v)
		}
	}
	member(`{"status":`, e.Status)
	member(`,"data":`, data)
	member(`,"text":`, e.Text)
	member(`,"stats":`, stats)
	member(`,"context":`, ctx)
	if eerr != nil {
		member(`,"error":`, eerr)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSON appends v as JSON: its own MarshalJSON's output if it has
// one (this package's, compact by construction), a string by
// jsonenc.AppendString (the text of 1,000 matches, 80 KB: no encoder and
// no copy), else jsonenc's Marshal.
func appendJSON(b []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return jsonenc.AppendString(b, s), nil
	}
	var js []byte
	var err error
	if m, ok := v.(json.Marshaler); ok {
		js, err = m.MarshalJSON()
	} else {
		js, err = jsonenc.Marshal(v)
	}
	return append(b, js...), err
}

// Raw is the decoded form of an envelope for clients (the CLI over the
// socket, tests): the payload stays JSON.
type Raw struct {
	Status  Status          `json:"status"`
	Data    json.RawMessage `json:"data"`
	Text    string          `json:"text"`
	Stats   json.RawMessage `json:"stats"`
	Context json.RawMessage `json:"context"`
	Error   *Error          `json:"error,omitempty"`
}

// Fail builds an error envelope. data may be nil.
func Fail(ctx Context, err *Error, timeMS int64) *Envelope {
	return &Envelope{
		Status:  StatusError,
		Text:    "Error: " + echo(err.Message),
		Stats:   &BaseStats{TimeMS: timeMS},
		Context: ctx.quoted(),
		Error:   err,
	}
}

// outcome is what a run produced, from which its status follows.
type outcome struct {
	results   int    // items returned
	truncated bool   // a further result exists beyond the limit
	aborted   string // a breaker or timeout fired ("" if not)
	discount  bool   // served in a way the tool counts as partial (Grep's fallback)
	// voice words the error; timeoutMS is Grep's time limit (0: none
	// or not Grep), for the command line's message.
	voice     Voice
	timeoutMS int
}

// decide is the one place that turns an outcome into a status
// (docs/product.md, "The envelope"): an abort with nothing found is a TIMEOUT
// error (EXECUTION_ERROR for a read error or the memory limit); truncation, an
// abort with results, a size limit (the rest of the tree was searched) or a
// discount is partial; anything else is success.
func decide(o outcome) (Status, *Error) {
	switch {
	case o.aborted == AbortSizeLimit:
		// Everything else was searched: an answer, discounted.
		return StatusPartial, nil
	case (o.aborted == AbortReadError || o.aborted == AbortMemoryLimit) && o.results == 0:
		return StatusError, &Error{Code: CodeExecution, Message: o.abortMessage()}
	case o.aborted != "" && o.results == 0:
		return StatusError, &Error{Code: CodeTimeout, Message: o.abortMessage()}
	case o.truncated || o.aborted != "" || o.discount:
		return StatusPartial, nil
	}
	return StatusSuccess, nil
}

// Abort reasons.
const (
	AbortCountLimit = "count_limit" // Glob's walk visited too many entries
	AbortTimeLimit  = "time_limit"  // Glob's time breaker
	AbortTimeout    = "timeout"     // Grep's timeout
	AbortReadError  = "read_error"  // Grep: a file or directory could not be read (out of descriptors, I/O error)
	AbortSizeLimit  = "size_limit"  // Grep: a file was searched only in part (multiline mode reads at most GrepMultilineMaxBytes of one)
	// AbortMemoryLimit: Glob and Grep, an answer of the command line's
	// (beyond the agent tools' limits) built whole in the daemon outgrew
	// the memory the daemon gives the answers it builds and queues (the
	// reply budget of docs/protocol.md); a stream never is.
	AbortMemoryLimit = "memory_limit"
)

// memoryLimitNote is the text's note for AbortMemoryLimit.
const memoryLimitNote = "[Partial: the answer outgrew the memory the daemon gives answers being built; results are incomplete. Ask for the results as a stream (indexctl does), or narrow the pattern or path.]"

// abortMessage is the error of a search cut short before it found
// anything, in the outcome's voice.
func (o outcome) abortMessage() string {
	if o.voice.CLI() {
		switch o.aborted {
		case AbortTimeout:
			if o.timeoutMS > 0 {
				return fmt.Sprintf("the search found nothing before its time limit (%s %d)", o.voice.Param("timeout_ms"), o.timeoutMS)
			}
		case AbortCountLimit:
			return fmt.Sprintf("the walk found nothing in the agent tools' %d entries (with --args); narrow the pattern or path, or drop --args", GlobMaxVisited)
		case AbortTimeLimit:
			return fmt.Sprintf("the walk found nothing in the agent tools' %d ms (with --args); narrow the pattern or path, or drop --args", GlobMaxDurationMS)
		}
	}
	switch o.aborted {
	case AbortCountLimit:
		return "Search aborted: visited more than the entry limit before finding any match. Narrow the pattern or path."
	case AbortReadError:
		return "Search failed: some files could not be read (out of file descriptors or an I/O error), so matches may be missing. Retry."
	case AbortMemoryLimit:
		return "The answer outgrew the memory the daemon gives answers being built (other large answers hold it). Ask for the results as a stream (indexctl does), narrow the pattern or path, or retry."
	default:
		return "Search timed out before finding any match. Narrow the pattern or path."
	}
}
