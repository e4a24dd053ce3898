package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/jsonenc"

	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/tool"
)

// param is one tool parameter a flag can set. The flag's name is the
// parameter's name in kebab case (include_hidden → --include-hidden).
//
// Flags default to their type's zero value, and only the flags given on
// the command line reach the tool, so the tool's own defaults apply and
// params_input shows exactly what was given.
//
// Several flags may set one parameter (-i, -s and --case-sensitive set
// case_sensitive; -l, -c and --output-mode set output_mode): the one given
// last on the command line wins, as in ripgrep.
type param struct {
	key   string    // the tool's parameter name (snake_case)
	short string    // one-letter alias, "" for none
	kind  tool.Kind // the parameter's JSON type; a Strings flag may be repeated
	usage string    // one line; a word in backquotes names the flag's value
	// name is the flag's name when it is not the key in kebab case.
	name string
	// fixed, for a flag that takes no value, is the JSON value the
	// parameter gets when the flag is given (-l: "files_with_matches").
	fixed string
}

func (p param) flag() string {
	if p.name != "" {
		return p.name
	}
	return strings.ReplaceAll(p.key, "_", "-")
}

// flagOrder records the order in which flags were given, so that of the
// flags setting one parameter the last wins.
type flagOrder struct {
	n  int
	at map[string]int // flag name → position of its last use
}

// recorded is a flag's value that notes each use in a flagOrder.
type recorded struct {
	flag.Getter
	name  string
	order *flagOrder
}

func (r *recorded) Set(s string) error {
	r.order.n++
	r.order.at[r.name] = r.order.n
	return r.Getter.Set(s)
}

// IsBoolFlag is the wrapped value's: a bool flag takes no argument.
func (r *recorded) IsBoolFlag() bool {
	b, ok := r.Getter.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (p param) define(fs *cliflag.FlagSet, order *flagOrder) {
	defer func() {
		if f := fs.Lookup(p.flag()); f != nil && order != nil {
			f.Value = &recorded{Getter: f.Value.(flag.Getter), name: p.flag(), order: order}
		}
	}()
	if p.fixed != "" {
		fs.BoolVar(new(bool), p.flag(), p.short, false, p.usage)
		return
	}
	switch p.kind {
	case tool.String:
		fs.StringVar(new(string), p.flag(), p.short, "", p.usage)
	case tool.Int:
		fs.IntVar(new(int), p.flag(), p.short, 0, p.usage)
	case tool.Bool:
		fs.BoolVar(new(bool), p.flag(), p.short, false, p.usage)
	case tool.Strings:
		// Each use adds one: a glob such as "*.{go,md}" holds commas that
		// must not split it.
		fs.StringsVar(new([]string), p.flag(), p.short, p.usage)
	}
}

// value returns the flag's parsed value as JSON (a string as sendable
// makes it for cmd).
func (p param) value(cmd *command, fs *cliflag.FlagSet) (json.RawMessage, error) {
	if p.fixed != "" {
		return json.RawMessage(p.fixed), nil
	}
	v := fs.Get(p.flag())
	if s, ok := v.(string); ok && p.kind == tool.String {
		v = sendable(cmd, p.key, s)
	}
	if l, ok := v.([]string); ok && l == nil {
		v = []string{}
	}
	return jsonenc.Marshal(v)
}

// tableParams returns the flags of the tool's parameters, from its table
// (tool.Spec.Params: name, type, short name, help), in the table's order,
// each followed by the command line's aliases of it (aliases, by the
// parameter's name: -i for case_sensitive, -l for output_mode, ...).
func tableParams(name string, aliases map[string][]param) []param {
	spec, err := tool.Lookup(name)
	if err != nil {
		panic(err) // the commands are the table's
	}
	var out []param
	for _, tp := range spec.Params {
		flag := tp.FlagName()
		if flag == "" {
			continue
		}
		p := param{key: tp.Name, short: tp.Short, usage: tp.Usage}
		if flag != strings.ReplaceAll(tp.Name, "_", "-") {
			p.name = flag
		}
		p.kind = tp.Kind
		out = append(append(out, p), aliases[tp.Name]...)
	}
	return out
}

// hiddenAlias is --hidden, rg's and fd's name for --include-hidden
// (short: fd's -H, for glob).
func hiddenAlias(short string) param {
	return param{key: "include_hidden", name: "hidden", short: short, kind: tool.Bool, usage: "as --include-hidden (rg's and fd's name)"}
}

// noIgnoreAlias is --no-ignore, rg's and fd's name for --include-ignored
// (short: fd's -I, for glob).
func noIgnoreAlias(short string) param {
	return param{key: "include_ignored", name: "no-ignore", short: short, kind: tool.Bool, usage: "as --include-ignored (rg's and fd's name)"}
}

// queryFlags are a query command's flags that are not tool parameters.
type queryFlags struct {
	args     string // --args
	all      bool   // --all
	word     bool   // -w
	lineNum  bool   // -n: accepted; line numbers are always shown
	typeList bool   // --type-list
	order    flagOrder

	// rg's and fd's habits.
	patterns     []string // -e, repeatable: every positional argument is then a PATH
	only         bool     // -o: print the matching parts of lines
	maxCount     int      // -m: at most N matching lines a file (0: no bound)
	null         bool     // -0: a NUL after each path instead of the separator
	files        bool     // --files: list the files a grep would search
	unrestricted int      // -u, -uu: fewer files skipped
	noop         bool     // -H, --no-heading: accepted, as the output already is so
}

// toolArgs builds the JSON object of tool arguments: the --args object if
// one was given (q.args, "-" to read it from stdin), then the positional
// argument (or the -e patterns), then every flag given on the command
// line, each replacing the key of the same name (of flags setting the
// same key, the last given wins). Keys keep the order in which they first
// appear. -w makes the pattern match whole words as rg's does; --all
// sends limit 0 (every result); the bound says whose the limit is: none
// by default (the command line's rules), the agents' with --args, the
// user's with --limit.
func toolArgs(cmd *command, fs *cliflag.FlagSet, q *queryFlags, positional []string, stdin io.Reader) (raw json.RawMessage, b bound, err error) {
	obj := &object{}
	b = noBound
	if fs.Changed("args") {
		b = agentBound
		argsValue := q.args
		src := []byte(argsValue)
		if argsValue == "-" {
			var err error
			if src, err = io.ReadAll(stdin); err != nil {
				return nil, agentBound, fmt.Errorf("--args -: reading standard input: %w", err)
			}
		}
		if obj, err = parseObject(src); err != nil {
			return nil, agentBound, fmt.Errorf("--args: %w", err)
		}
	}
	if len(q.patterns) > 0 {
		positional = []string{joinPatterns(q.patterns, fixedGiven(fs))}
	}
	if len(positional) > 0 {
		v, err := jsonenc.Marshal(sendable(cmd, cmd.positional, positional[0]))
		if err != nil {
			return nil, agentBound, err
		}
		obj.set(cmd.positional, v)
	}
	switch q.unrestricted {
	case 0:
	case 1, 2:
		obj.set("include_ignored", json.RawMessage("true"))
		if q.unrestricted == 2 || cmd.tool == tool.Glob { // fd's -u is both
			obj.set("include_hidden", json.RawMessage("true"))
		}
	default:
		return nil, agentBound, errors.New("-uuu (search binary files too) is not supported: binary files are always skipped")
	}
	for i, p := range cmd.params {
		if !fs.Changed(p.flag()) || !lastFor(cmd.params, i, fs, &q.order) {
			continue
		}
		if p.fixed != "" {
			if !fs.On(p.flag()) {
				continue // --files-with-matches=false: as if not given
			}
		}
		v, err := p.value(cmd, fs)
		if err != nil {
			return nil, agentBound, err
		}
		if p.fixed == smartCase {
			v = smartCaseSensitive(obj)
		}
		obj.set(p.key, v)
	}
	if len(q.patterns) > 1 && fixedGiven(fs) {
		obj.set("fixed_strings", json.RawMessage("false")) // joinPatterns quoted each
	}
	if q.word {
		if err := wordRegexp(obj); err != nil {
			return nil, agentBound, err
		}
	}
	if q.all {
		obj.set("limit", json.RawMessage("0"))
	}
	// A limit given on the command line is the user's: any, 0 for none
	// (the agent tools' bounds are for agents).
	if v, ok := obj.vals["limit"]; ok && (q.all || fs.Changed("limit")) {
		b = userBound
		if string(v) == "0" {
			b = noBound
		}
	}
	raw, err = obj.MarshalJSON()
	return raw, b, err
}

// bound is whose limit a query's results are held to.
type bound int

const (
	// agentBound: the tool's, as for agents (its default and maximum,
	// its time limit and breakers): with --args.
	agentBound bound = iota
	// userBound: --limit N, taken beyond the agents' maximum; no
	// default time limit or breaker, as noBound.
	userBound
	// noBound: the command line's default (and --all, --limit 0): every
	// result, with no time limit but a --timeout-ms given; Glob's and
	// Grep's are printed as they come (the answer can take long), and an
	// interrupt ends the query and flushes what was printed.
	noBound
)

// lastFor reports whether params[i] is, of the flags given that set its
// key, the one given last.
func lastFor(params []param, i int, fs *cliflag.FlagSet, order *flagOrder) bool {
	at := order.at[params[i].flag()]
	for j, o := range params {
		if j != i && o.key == params[i].key && fs.Changed(o.flag()) && order.at[o.flag()] > at {
			return false
		}
	}
	return true
}

// wordRegexp makes the pattern match whole words only (-w) as rg's -w
// does: a match must be preceded by the start of the line or a non-word
// character, and followed by the end of the line or a non-word character
// ((?:^|\W)(?:PATTERN)(?:$|\W); \b(?:PATTERN)\b is not the same: it
// takes "dev->" in "dev->x", where '>' and 'x' are a boundary). The
// pattern is quoted first if it was a fixed string (which it then no
// longer is).
func wordRegexp(obj *object) error {
	var pat string
	if err := json.Unmarshal(obj.vals["pattern"], &pat); err != nil || pat == "" {
		return nil // the tool reports the missing pattern
	}
	var fixed bool
	if v, ok := obj.vals["fixed_strings"]; ok && json.Unmarshal(v, &fixed) == nil && fixed {
		pat = regexp.QuoteMeta(pat)
		obj.set("fixed_strings", json.RawMessage("false"))
	}
	v, err := jsonenc.Marshal(wordPattern(pat))
	if err != nil {
		return err
	}
	obj.set("pattern", v)
	return nil
}

// filesArgs turns Grep's arguments into Glob's for --files: every file
// the search would read, under the same path and filters (an include
// becomes the pattern); what only concerns matching lines is dropped.
func filesArgs(raw json.RawMessage) (json.RawMessage, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	out := &object{}
	out.set("pattern", json.RawMessage(`"**"`))
	for _, k := range obj.keys {
		switch v := obj.vals[k]; k {
		case "path", "glob", "type", "type_not", "include_hidden", "include_ignored", "changed_since", "limit", "sync":
			out.set(k, v)
		case "include":
			var inc string
			if json.Unmarshal(v, &inc) != nil {
				return nil, errors.New("--include must be a string")
			}
			inc = quote.Unquote(inc) // as sent (sendable)
			if inc != "" && !strings.Contains(inc, "/") {
				inc = "**/" + inc
			}
			if inc != "" {
				p, err := jsonenc.Marshal(sendable(globCmd, "pattern", inc))
				if err != nil {
					return nil, err
				}
				out.set("pattern", p)
			}
		}
	}
	return out.MarshalJSON()
}

// wordPattern is pat wrapped for -w (wordRegexp).
func wordPattern(pat string) string { return wordPrefix + pat + wordSuffix }

// What wordPattern puts around a pattern.
const (
	wordPrefix = `(?:^|\W)(?:`
	wordSuffix = `)(?:$|\W)`
)

// joinPatterns makes one pattern of the -e patterns: any of them
// matches, each quoted when fixed (-F).
func joinPatterns(pats []string, fixed bool) string {
	if len(pats) == 1 {
		return pats[0]
	}
	parts := make([]string, len(pats))
	for i, p := range pats {
		if fixed {
			p = regexp.QuoteMeta(p)
		}
		parts[i] = "(?:" + p + ")"
	}
	return strings.Join(parts, "|")
}

// fixedGiven reports whether -F was given and left on.
func fixedGiven(fs *cliflag.FlagSet) bool {
	return fs.Changed("fixed-strings") && fs.On("fixed-strings")
}

// smartCase is the fixed value of -S: case_sensitive follows the pattern
// (smartCaseSensitive).
const smartCase = "smart"

// smartCaseSensitive is case_sensitive under -S, as rg's --smart-case:
// true when the pattern holds an upper-case letter that is a literal (not
// in an escape such as \W or \p{Lu}, a group's name or a flag), false
// otherwise.
func smartCaseSensitive(obj *object) json.RawMessage {
	var pat string
	_ = json.Unmarshal(obj.vals["pattern"], &pat)
	var fixed bool
	_ = json.Unmarshal(obj.vals["fixed_strings"], &fixed)
	if hasUpperLiteral(pat, fixed) {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

// hasUpperLiteral reports whether the pattern (a literal string when
// fixed) holds an upper-case letter that it matches as written.
func hasUpperLiteral(pat string, fixed bool) bool {
	if fixed {
		return strings.ToLower(pat) != pat
	}
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case c == '\\' && i+1 < len(pat):
			i++
			if (pat[i] == 'p' || pat[i] == 'P') && i+1 < len(pat) {
				if pat[i+1] == '{' {
					if j := strings.IndexByte(pat[i:], '}'); j >= 0 {
						i += j
					}
				} else {
					i++ // \pL: a one-letter class name
				}
			}
		case c == '(' && strings.HasPrefix(pat[i:], "(?"):
			// Flags, or a group's name: (?P<Name> or (?<Name>.
			end := strings.IndexAny(pat[i:], ":)>")
			if end < 0 {
				return false
			}
			i += end
		default:
			r, n := utf8.DecodeRuneInString(pat[i:])
			if unicode.IsUpper(r) {
				return true
			}
			i += n - 1
		}
	}
	return false
}

// sendable returns a string argument as the tools take it byte for byte.
// A file name typed in a shell need not be UTF-8 ($'a\xff.txt'), which a
// JSON string cannot hold; and one that is itself a complete quoted
// string ("sub", quotes included) would be unquoted by the tools into
// another name. Such a value of a parameter that names files (path,
// include, Glob's pattern) is sent in its quoted form (internal/quote),
// which the tools unquote back to the same bytes. Anything else is sent
// as it is.
func sendable(cmd *command, key, v string) string {
	names := key == "path" || key == "include" || (key == "pattern" && cmd.tool == tool.Glob)
	if !names || utf8.ValidString(v) && quote.Unquote(v) == v {
		return v
	}
	return quote.Name(v)
}

// object is a JSON object that keeps its keys in order, so the arguments a
// tool receives read as they were given. Values stay raw JSON.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

var errNotObject = errors.New("must be a JSON object")

// parseObject decodes one JSON object. A key given twice keeps its first
// position and its last value, as encoding/json would decode it.
func parseObject(data []byte) (*object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errNotObject
	}
	// Check the whole input first: encoding/json's messages say best what
	// is wrong with it.
	var whole any
	if err := json.Unmarshal(data, &whole); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end") {
			return nil, errors.New("invalid JSON: unexpected end of input")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, ok := whole.(map[string]any); !ok {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	obj := &object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		obj.set(key, v)
	}
	return obj, nil
}

func (o *object) set(key string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := jsonenc.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
