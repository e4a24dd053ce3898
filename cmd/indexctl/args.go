package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/tool"
)

// kind is the type of a tool parameter's flag.
type kind int

const (
	kindString  kind = iota
	kindInt          // a JSON number
	kindBool         // a JSON boolean
	kindStrings      // a JSON list of strings; the flag may be repeated
)

// param is one tool parameter a flag can set. The flag's name is the
// parameter's name in kebab case (include_hidden → --include-hidden).
//
// Flags default to their type's zero value, and only the flags given on
// the command line reach the tool, so the tool's own defaults apply and
// params_input shows exactly what was given.
type param struct {
	key   string // the tool's parameter name (snake_case)
	short string // one-letter alias, "" for none
	kind  kind
	usage string // one line; a word in backquotes names the flag's value
}

func (p param) flag() string { return strings.ReplaceAll(p.key, "_", "-") }

func (p param) define(fs *pflag.FlagSet) {
	switch p.kind {
	case kindString:
		fs.StringP(p.flag(), p.short, "", p.usage)
	case kindInt:
		fs.IntP(p.flag(), p.short, 0, p.usage)
	case kindBool:
		fs.BoolP(p.flag(), p.short, false, p.usage)
	case kindStrings:
		// StringArray, not StringSlice: a glob such as "*.{go,md}" holds
		// commas that must not split it.
		fs.StringArrayP(p.flag(), p.short, nil, p.usage)
	}
}

// value returns the flag's parsed value as JSON (a string as sendable
// makes it for cmd).
func (p param) value(cmd *command, fs *pflag.FlagSet) (json.RawMessage, error) {
	var (
		v   any
		err error
	)
	switch p.kind {
	case kindString:
		var s string
		s, err = fs.GetString(p.flag())
		v = sendable(cmd, p.key, s)
	case kindInt:
		v, err = fs.GetInt(p.flag())
	case kindBool:
		v, err = fs.GetBool(p.flag())
	case kindStrings:
		v, err = fs.GetStringArray(p.flag())
	}
	if err != nil {
		return nil, err
	}
	return marshal(v)
}

// marshal is json.Marshal without HTML escaping, so a pattern such as
// "<div>" reaches the tool (and params_input) as written.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Parameters several tools share, so each is described once.

func pathParam(usage string) param {
	return param{key: "path", kind: kindString, usage: usage}
}

func limitParam(usage string) param {
	return param{key: "limit", kind: kindInt, usage: usage}
}

func includeHiddenParam(verb string) param {
	return param{key: "include_hidden", kind: kindBool,
		usage: verb + " names starting with '.' too"}
}

func includeIgnoredParam(verb string) param {
	return param{key: "include_ignored", kind: kindBool,
		usage: verb + " what ignore rules leave out too (.gitignore, .ignore, node_modules, build, ...)"}
}

// toolArgs builds the JSON object of tool arguments: the --args object if
// one was given (argsValue, "-" to read it from stdin), then the
// positional argument, then every flag given on the command line, each
// replacing the key of the same name. Keys keep the order in which they
// first appear.
func toolArgs(cmd *command, fs *pflag.FlagSet, argsValue string, positional []string, stdin io.Reader) (json.RawMessage, error) {
	obj := &object{}
	if fs.Changed("args") {
		src := []byte(argsValue)
		if argsValue == "-" {
			var err error
			if src, err = io.ReadAll(stdin); err != nil {
				return nil, fmt.Errorf("--args -: reading standard input: %w", err)
			}
		}
		var err error
		if obj, err = parseObject(src); err != nil {
			return nil, fmt.Errorf("--args: %w", err)
		}
	}
	if len(positional) > 0 {
		v, err := marshal(sendable(cmd, cmd.positional, positional[0]))
		if err != nil {
			return nil, err
		}
		obj.set(cmd.positional, v)
	}
	for _, p := range cmd.params {
		if !fs.Changed(p.flag()) {
			continue
		}
		v, err := p.value(cmd, fs)
		if err != nil {
			return nil, err
		}
		obj.set(p.key, v)
	}
	return obj.MarshalJSON()
}

// sendable returns a string argument as JSON can carry it. A file name
// typed in a shell need not be UTF-8 ($'a\xff.txt'), which a JSON string
// cannot hold: such a value of a parameter that names files (path,
// include, Glob's pattern) is sent in its quoted form (internal/quote),
// which the tools unquote back to the same bytes. Anything else is sent as
// it is.
func sendable(cmd *command, key, v string) string {
	names := key == "path" || key == "include" || (key == "pattern" && cmd.tool == tool.Glob)
	if !names || utf8.ValidString(v) {
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
		kb, err := marshal(k)
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
