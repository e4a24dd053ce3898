package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// args is a tool's raw JSON arguments, decoded one key at a time so each
// bad value gets its own message. Unknown keys are ignored; a key whose
// value is null counts as absent (agents send null for "not given").
type args map[string]json.RawMessage

func decodeArgs(raw json.RawMessage) (args, *envelope.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return args{}, nil
	}
	var a args
	if raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
		return nil, invalid("Arguments must be a JSON object.")
	}
	for k, v := range a {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(a, k)
		}
	}
	return a, nil
}

func invalid(format string, v ...any) *envelope.Error {
	return envelope.Errorf(envelope.CodeInvalidParam, format, v...)
}

// pattern returns the required, non-empty "pattern" string.
func (a args) pattern() (string, *envelope.Error) {
	v, ok := a["pattern"]
	if !ok {
		return "", invalid("Missing required parameter 'pattern'.")
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", invalid("pattern must be a string.")
	}
	if s == "" {
		return "", invalid("Missing required parameter 'pattern'.")
	}
	return s, nil
}

// str returns an optional string parameter. msg is the error message for a
// value of another type.
func (a args) str(key, def, msg string) (string, *envelope.Error) {
	v, ok := a[key]
	if !ok {
		return def, nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", invalid("%s", msg)
	}
	return s, nil
}

// boolean returns an optional boolean parameter.
func (a args) boolean(key string, def bool) (bool, *envelope.Error) {
	v, ok := a[key]
	if !ok {
		return def, nil
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return false, invalid("%s must be a boolean.", key)
	}
	return b, nil
}

// integer returns an optional integer parameter in [lo, hi]. A JSON number
// with an integral value (5 or 5.0) is accepted; strings are not.
func (a args) integer(key string, def, lo, hi int, msg string) (int, *envelope.Error) {
	v, ok := a[key]
	if !ok {
		return def, nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, invalid("%s", msg)
	}
	return int(f), nil
}

// oneOf returns an optional string parameter that must be one of choices.
func (a args) oneOf(key, def string, choices ...string) (string, *envelope.Error) {
	msg := fmt.Sprintf("%s must be one of %q.", key, choices)
	s, err := a.str(key, def, msg)
	if err != nil {
		return "", err
	}
	for _, c := range choices {
		if s == c {
			return s, nil
		}
	}
	return "", invalid("%s", msg)
}

// strings returns an optional list of strings; a single string is taken as
// a list of one.
func (a args) strings(key string) ([]string, *envelope.Error) {
	v, ok := a[key]
	if !ok {
		return nil, nil
	}
	var list []*string
	if json.Unmarshal(v, &list) == nil && !slices.Contains(list, nil) {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = *s
		}
		return out, nil
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		return []string{one}, nil
	}
	return nil, invalid("%s must be a list of strings.", key)
}

// Limits from the seeds and SPEC §6–8.
const (
	GlobDefaultLimit = 50
	GlobMaxLimit     = envelope.GlobMaxLimit
	GrepDefaultLimit = 100
	GrepMaxLimit     = 1000
	LSDefaultLimit   = 100
	LSMaxLimit       = 200
	MaxContext       = 20
	// GlobMaxVisited and GlobMaxDuration are the walk's breakers (seed 000
	// §5.2); Glob's text quotes them.
	GlobMaxVisited    = envelope.GlobMaxVisited
	GlobMaxDurationMS = envelope.GlobMaxDurationMS
	// GrepDefaultTimeoutMS is Grep's timeout (seed 001 §5.1).
	GrepDefaultTimeoutMS = tool.GrepDefaultTimeoutMS
	GrepMaxTimeoutMS     = tool.GrepMaxTimeoutMS
	// MaxLineBytes is the longest line text returned; longer lines are cut
	// and marked with LineCutMark.
	MaxLineBytes = 2000
	LineCutMark  = " [... line truncated]"
)

// Unlimited is the limit of a query held to no limit: one from the
// command line (Tools.Unlimited) that gave none, or gave 0.
const Unlimited = math.MaxInt32

// limit returns the optional "limit" in [1, hi], def when absent. Under
// the command line's rules (unlimited) a limit is any from 1 up, and a
// limit of 0, or none, is Unlimited: as rg and fd, the command line has
// no default cap.
func (a args) limit(def, hi int, unlimited bool) (int, *envelope.Error) {
	if !unlimited {
		return a.integer("limit", def, 1, hi, fmt.Sprintf("limit must be an integer between 1 and %d.", hi))
	}
	if v, ok := a["limit"]; ok {
		var f float64
		if json.Unmarshal(v, &f) == nil && f == 0 {
			return Unlimited, nil
		}
	}
	return a.integer("limit", Unlimited, 1, Unlimited, "limit must be a non-negative integer (0: no limit).")
}

// GlobParams are Glob's checked parameters.
type GlobParams struct {
	Pattern        string
	Path           string
	Limit          int
	IncludeHidden  bool
	IncludeIgnored bool
	CaseSensitive  bool
	Sort           string // "path" or "recent"
	// NoBreakers lifts the walk's entry and time breakers (GlobMaxVisited,
	// GlobMaxDurationMS): the command line's rules (Tools.Unlimited).
	NoBreakers bool
	// Sync (default true) asks an index-backed answer to wait for the
	// read-your-writes barrier first; false trades freshness for latency.
	Sync bool
	// Filter: type, type_not and glob.
	Filter FilterParams
}

func decodeGlob(a args, unlimited bool) (p GlobParams, err *envelope.Error) {
	if p.Pattern, err = a.pattern(); err != nil {
		return
	}
	// A pattern of blanks is a mistake, not a search for files named
	// with spaces (gemini-cli's Glob refuses it too; '? ' finds those).
	// Grep keeps it: rg searches for the spaces.
	if strings.TrimSpace(p.Pattern) == "" {
		err = invalid("Missing required parameter 'pattern'.")
		return
	}
	if p.Path, err = a.str("path", ".", "path must be a string."); err != nil {
		return
	}
	if p.Limit, err = a.limit(GlobDefaultLimit, GlobMaxLimit, unlimited); err != nil {
		return
	}
	p.NoBreakers = unlimited
	if p.IncludeHidden, err = a.boolean("include_hidden", false); err != nil {
		return
	}
	if p.IncludeIgnored, err = a.boolean("include_ignored", false); err != nil {
		return
	}
	if p.CaseSensitive, err = a.boolean("case_sensitive", true); err != nil {
		return
	}
	if p.Sync, err = a.boolean("sync", true); err != nil {
		return
	}
	if p.Filter, err = decodeFilter(a); err != nil {
		return
	}
	p.Sort, err = a.oneOf("sort", "path", "path", "recent")
	return
}

// GrepParams are Grep's checked parameters.
type GrepParams struct {
	Pattern       string
	Path          string
	Include       string
	CaseSensitive bool
	FixedStrings  bool
	Limit         int
	OutputMode    string
	Before, After int
	Multiline     bool
	// TimeoutMS is the search's time limit; 0 (the command line's
	// default, Tools.Unlimited) is none.
	TimeoutMS      int
	IncludeHidden  bool
	IncludeIgnored bool
	Sync           bool // as GlobParams.Sync
	Filter         FilterParams
	// Invert (invert_match, indexctl's -v) selects the lines that do not
	// match; not with Multiline.
	Invert bool
}

func decodeGrep(a args, unlimited bool) (p GrepParams, err *envelope.Error) {
	if p.Pattern, err = a.pattern(); err != nil {
		// Under the command line's rules an empty pattern is rg's: it
		// matches every line. For agents it is a missing one.
		if v, ok := a["pattern"]; !unlimited || !ok || json.Unmarshal(v, &p.Pattern) != nil || p.Pattern != "" {
			return
		}
		err = nil
	}
	if p.Path, err = a.str("path", ".", "path must be a string."); err != nil {
		return
	}
	if p.Include, err = a.str("include", "", "include must be a string if provided."); err != nil {
		return
	}
	if p.CaseSensitive, err = a.boolean("case_sensitive", false); err != nil {
		return
	}
	if p.FixedStrings, err = a.boolean("fixed_strings", false); err != nil {
		return
	}
	if p.Limit, err = a.limit(GrepDefaultLimit, GrepMaxLimit, unlimited); err != nil {
		return
	}
	if p.OutputMode, err = a.oneOf("output_mode", envelope.ModeContent, envelope.ModeContent, envelope.ModeFiles, envelope.ModeCount); err != nil {
		return
	}
	ctxMsg := func(k string) string { return fmt.Sprintf("%s must be an integer between 0 and %d.", k, MaxContext) }
	var c int
	if c, err = a.integer("context", 0, 0, MaxContext, ctxMsg("context")); err != nil {
		return
	}
	if p.Before, err = a.integer("context_before", c, 0, MaxContext, ctxMsg("context_before")); err != nil {
		return
	}
	if p.After, err = a.integer("context_after", c, 0, MaxContext, ctxMsg("context_after")); err != nil {
		return
	}
	if p.Multiline, err = a.boolean("multiline", false); err != nil {
		return
	}
	if p.Invert, err = a.boolean("invert_match", false); err != nil {
		return
	}
	if p.Invert && p.Multiline {
		err = invalid("invert_match cannot be combined with multiline.")
		return
	}
	defTimeout := GrepDefaultTimeoutMS
	if unlimited {
		defTimeout = 0 // the command line has no default time limit
	}
	if p.TimeoutMS, err = a.integer("timeout_ms", defTimeout, 1, GrepMaxTimeoutMS, fmt.Sprintf("timeout_ms must be an integer between 1 and %d.", GrepMaxTimeoutMS)); err != nil {
		return
	}
	if p.IncludeHidden, err = a.boolean("include_hidden", false); err != nil {
		return
	}
	if p.Sync, err = a.boolean("sync", true); err != nil {
		return
	}
	if p.Filter, err = decodeFilter(a); err != nil {
		return
	}
	p.IncludeIgnored, err = a.boolean("include_ignored", false)
	return
}

// LSParams are LS's checked parameters.
type LSParams struct {
	Path           string
	Offset         int
	Limit          int
	IncludeHidden  bool
	IncludeIgnored bool
	Ignore         []string
}

func decodeLS(a args, unlimited bool) (p LSParams, err *envelope.Error) {
	if p.Path, err = a.str("path", ".", "path must be a string."); err != nil {
		return
	}
	if p.Offset, err = a.integer("offset", 0, 0, math.MaxInt32, "offset must be a non-negative integer."); err != nil {
		return
	}
	if p.Limit, err = a.limit(LSDefaultLimit, LSMaxLimit, unlimited); err != nil {
		return
	}
	if p.IncludeHidden, err = a.boolean("include_hidden", false); err != nil {
		return
	}
	if p.IncludeIgnored, err = a.boolean("include_ignored", false); err != nil {
		return
	}
	p.Ignore, err = a.strings("ignore")
	return
}
