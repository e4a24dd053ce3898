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

// given reports whether the call gave key (not null).
func (a args) given(key string) bool {
	_, ok := a[key]
	return ok
}

// lowerFirst is s with its first letter in lower case, for a hint
// inside a sentence ("Set x=true" → "set x=true").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func invalid(format string, v ...any) *envelope.Error {
	return envelope.Errorf(envelope.CodeInvalidParam, format, v...)
}

// missingPattern is the error of a call without its pattern, in voice v: the
// message agents know (docs/tools.md); on the command line the argument is
// missing.
func missingPattern(v envelope.Voice) *envelope.Error {
	if v.CLI() {
		return invalid("missing PATTERN")
	}
	return invalid("Missing required parameter 'pattern'.")
}

// pattern reads the required "pattern" string: non-empty, but for
// allowEmpty, where a given "" is taken (rg's empty pattern, which
// matches every line).
func (d *decoder) pattern(allowEmpty bool) string {
	d.param("pattern")
	if d.err != nil {
		return ""
	}
	v, ok := d.a["pattern"]
	if !ok {
		d.fail(missingPattern(d.voice))
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		d.fail(invalid("%s must be a string.", d.voice.Param("pattern")))
		return ""
	}
	if s == "" && !allowEmpty {
		d.fail(missingPattern(d.voice))
	}
	return s
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

// Unlimited is the limit of a query held to no limit: one from the
// command line (Tools.Unlimited) that gave none, or gave 0.
const Unlimited = math.MaxInt32

// decoder reads a call's arguments by its tool's table of parameters
// (tool.Spec.Params): each parameter's type, default, bounds and choices,
// and the message of a value it does not take, are the table's, so the
// decoder agrees with the MCP schemas and the command line's flags, which
// are written from the same table (TestParamsAgree).
type decoder struct {
	a    args
	spec *tool.Spec
	// unlimited: the command line's rules (Tools.Unlimited).
	unlimited bool
	// voice words the messages (Tools.Voice).
	voice envelope.Voice
	// err is the first parameter found wrong: once it is set, the reads
	// return zero values and the call's answer is that error (a decode
	// reads its parameters in a row and checks err once, at the end).
	err *envelope.Error
}

// fail records err (nil: none) unless an earlier parameter was wrong.
func (d *decoder) fail(err *envelope.Error) {
	if d.err == nil {
		d.err = err
	}
}

// rules are how a call is read: under the command line's rules (no
// default limit or time limit: Tools.Unlimited) or the agents', and in
// whose voice its messages are (Tools.Voice).
type rules struct {
	unlimited bool
	voice     envelope.Voice
}

func newDecoder(a args, name string, r rules) *decoder {
	spec, err := tool.Lookup(name)
	if err != nil {
		panic(err) // the runners are the table's (registry.go)
	}
	return &decoder{a: a, spec: spec, unlimited: r.unlimited, voice: r.voice}
}

// param returns the table's parameter name. A decoder reading one its
// table lacks is a mistake of this package, which every test of the tool
// would meet first.
func (d *decoder) param(name string) *tool.Param {
	p := d.spec.Param(name)
	if p == nil {
		panic("query: " + d.spec.Name + " reads the parameter " + name + ", which its table lacks")
	}
	return p
}

// typeError is the message of a value p does not take, the parameter
// named in voice v (the table's own message, when it has one, starts
// with the name).
func typeError(p *tool.Param, v envelope.Voice) string {
	name := v.Param(p.Name)
	switch {
	case p.TypeError != "":
		return name + strings.TrimPrefix(p.TypeError, p.Name)
	case p.Kind == tool.Int && p.HasMax:
		return fmt.Sprintf("%s must be an integer between %d and %d.", name, p.Min, p.Max)
	case p.Kind == tool.Int:
		return fmt.Sprintf("%s must be a non-negative integer.", name)
	case p.Kind == tool.Bool:
		return name + " must be a boolean."
	case p.Kind == tool.Strings:
		return name + " must be a list of strings."
	case len(p.Enum) > 0:
		return fmt.Sprintf("%s must be one of %q.", name, p.Enum)
	}
	return name + " must be a string."
}

// str reads a string parameter.
func (d *decoder) str(name string) string {
	p := d.param(name)
	def, _ := p.Default.(string)
	if d.err != nil {
		return def
	}
	v, err := d.a.str(name, def, typeError(p, d.voice))
	d.fail(err)
	return v
}

// boolean reads a boolean parameter.
func (d *decoder) boolean(name string) bool {
	p := d.param(name)
	def, _ := p.Default.(bool)
	if d.err != nil {
		return def
	}
	b, err := d.a.boolean(name, def)
	if err != nil {
		d.fail(invalid("%s", typeError(p, d.voice)))
	}
	return b
}

// integer reads an integer parameter within its bounds, def when absent.
func (d *decoder) integer(name string, def int) int {
	p := d.param(name)
	if d.err != nil {
		return def
	}
	hi := math.MaxInt32
	if p.HasMax {
		hi = p.Max
	}
	n, err := d.a.integer(name, def, p.Min, hi, typeError(p, d.voice))
	d.fail(err)
	return n
}

// oneOf reads a string parameter that must be one of its choices.
func (d *decoder) oneOf(name string) string {
	p := d.param(name)
	def, _ := p.Default.(string)
	if d.err != nil {
		return def
	}
	s, err := d.a.oneOf(name, def, p.Enum...)
	if err != nil {
		d.fail(invalid("%s", typeError(p, d.voice)))
	}
	return s
}

// strings reads a list of strings (a single string is a list of one).
func (d *decoder) strings(name string) []string {
	p := d.param(name)
	if d.err != nil {
		return nil
	}
	l, err := d.a.strings(name)
	if err != nil {
		d.fail(invalid("%s", typeError(p, d.voice)))
	}
	return l
}

// limit reads "limit": in the table's bounds, its default when absent.
// Under the command line's rules a limit is any from 1 up, and a limit
// of 0, or none, is Unlimited: as rg and fd, the command line has no
// default cap.
func (d *decoder) limit() int {
	p := d.param("limit")
	if !d.unlimited {
		return d.integer("limit", p.Default.(int))
	}
	if d.err != nil {
		return Unlimited
	}
	if v, ok := d.a["limit"]; ok {
		var f float64
		if json.Unmarshal(v, &f) == nil && f == 0 {
			return Unlimited
		}
	}
	n, err := d.a.integer("limit", Unlimited, 1, Unlimited, d.voice.Param("limit")+" must be a non-negative integer (0: no limit).")
	d.fail(err)
	return n
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
	// NoBreakers lifts the walk's entry and time breakers (envelope.GlobMaxVisited,
	// envelope.GlobMaxDurationMS): the command line's rules (Tools.Unlimited).
	NoBreakers bool
	// Sync (default true) asks an index-backed answer to wait for the
	// read-your-writes barrier first; false trades freshness for latency.
	Sync bool
	// Filter: type, type_not and glob.
	Filter FilterParams
	// ChangedSince is a clock token: only the files changed since then
	// ("": every file).
	ChangedSince string
}

func decodeGlob(a args, r rules) (GlobParams, *envelope.Error) {
	var p GlobParams
	d := newDecoder(a, tool.Glob, r)
	p.Pattern = d.pattern(false)
	// A pattern of blanks is a mistake, not a search for files named
	// with spaces (gemini-cli's Glob refuses it too; '? ' finds those).
	// Grep keeps it: rg searches for the spaces.
	if strings.TrimSpace(p.Pattern) == "" {
		d.fail(missingPattern(r.voice))
	}
	p.Path = d.str("path")
	p.Limit = d.limit()
	p.NoBreakers = r.unlimited
	p.IncludeHidden = d.boolean("include_hidden")
	p.IncludeIgnored = d.boolean("include_ignored")
	p.CaseSensitive = d.boolean("case_sensitive")
	p.Sync = d.boolean("sync")
	p.Filter = decodeFilter(d)
	p.ChangedSince = d.str("changed_since")
	p.Sort = d.oneOf("sort")
	return p, d.err
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
	// ChangedSince is as GlobParams'.
	ChangedSince string
}

func decodeGrep(a args, r rules) (GrepParams, *envelope.Error) {
	var p GrepParams
	d := newDecoder(a, tool.Grep, r)
	// Under the command line's rules an empty pattern is rg's: it
	// matches every line. For agents it is a missing one.
	p.Pattern = d.pattern(r.unlimited)
	p.Path = d.str("path")
	p.Include = d.str("include")
	p.CaseSensitive = d.boolean("case_sensitive")
	p.FixedStrings = d.boolean("fixed_strings")
	p.Limit = d.limit()
	p.OutputMode = d.oneOf("output_mode")
	c := d.integer("context", 0)
	// context_before and context_after override context.
	p.Before = d.integer("context_before", c)
	p.After = d.integer("context_after", c)
	p.Multiline = d.boolean("multiline")
	p.Invert = d.boolean("invert_match")
	if p.Invert && p.Multiline {
		d.fail(invalid("%s cannot be combined with %s.", r.voice.Param("invert_match"), r.voice.Param("multiline")))
	}
	defTimeout := d.param("timeout_ms").Default.(int)
	if r.unlimited {
		defTimeout = 0 // the command line has no default time limit
	}
	p.TimeoutMS = d.integer("timeout_ms", defTimeout)
	p.IncludeHidden = d.boolean("include_hidden")
	p.Sync = d.boolean("sync")
	p.Filter = decodeFilter(d)
	p.ChangedSince = d.str("changed_since")
	p.IncludeIgnored = d.boolean("include_ignored")
	return p, d.err
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

func decodeLS(a args, r rules) (LSParams, *envelope.Error) {
	var p LSParams
	d := newDecoder(a, tool.LS, r)
	p.Path = d.str("path")
	p.Offset = d.integer("offset", 0)
	p.Limit = d.limit()
	p.IncludeHidden = d.boolean("include_hidden")
	p.IncludeIgnored = d.boolean("include_ignored")
	p.Ignore = d.strings("ignore")
	return p, d.err
}

// decodeFilter reads the file filters Glob and Grep share: type,
// type_not and glob.
func decodeFilter(d *decoder) FilterParams {
	return FilterParams{Types: d.strings("type"), TypesNot: d.strings("type_not"), Globs: d.strings("glob")}
}
