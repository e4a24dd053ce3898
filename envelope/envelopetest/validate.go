// Package envelopetest checks that bytes are a well-formed indexd response
// envelope (docs/product.md, "The envelope"). Tests anywhere in the module
// pass every envelope they see through Validate.
package envelopetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/quote"
)

// Codes are the error codes an envelope may carry (docs/product.md, "The
// envelope").
var Codes = map[string]bool{
	"NOT_FOUND":         true,
	"ACCESS_DENIED":     true,
	"PERMISSION_DENIED": true,
	"INVALID_PARAM":     true,
	"TIMEOUT":           true,
	"INTERNAL_ERROR":    true,
	"EXECUTION_ERROR":   true,
	"IS_DIRECTORY":      true,
	"BINARY_FILE":       true,
	"CONFLICT":          true,
}

// Validate reports (with t.Errorf) every way js breaks the envelope rules:
//
//   - one JSON object whose top-level keys are exactly status, data, text,
//     stats and context, plus error if and only if status is "error", each
//     key once;
//   - status is "success", "partial" or "error";
//   - data is an object (never null), text a string;
//   - stats is an object with an integer time_ms >= 0;
//   - context is an object with a string cwd and params_input present,
//     and path_resolved, when present, a relative POSIX path (cwd and
//     path_resolved are names in their printed form, see below);
//   - error is {"code": one of Codes, "message": a non-empty string};
//   - the paths in data (paths, files, matches[].file, counts[].file) are
//     relative and POSIX: no leading "/", no "\", no ".." segment. A path
//     in the quoted form of internal/quote (the printed form of a name
//     with a control character, a byte that is not UTF-8, a backslash or
//     a double quote) is checked as the name it stands for, which may hold
//     a backslash.
func Validate(t testing.TB, js []byte) {
	t.Helper()
	for _, p := range Problems(js) {
		t.Errorf("envelope: %s\n%s", p, js)
	}
}

// Problems returns what is wrong with js as an envelope, nil if nothing.
func Problems(js []byte) []string {
	var v validator
	v.check(js)
	return v.problems
}

type validator struct{ problems []string }

func (v *validator) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) check(js []byte) {
	keys, err := topLevelKeys(js)
	if err != nil {
		v.fail("not a single JSON object: %v", err)
		return
	}
	top := map[string]json.RawMessage{}
	for _, k := range keys {
		if _, dup := top[k.name]; dup {
			v.fail("duplicate top-level key %q", k.name)
		}
		top[k.name] = k.value
	}
	allowed := map[string]bool{"status": true, "data": true, "text": true, "stats": true, "context": true, "error": true}
	for k := range top {
		if !allowed[k] {
			v.fail("unexpected top-level key %q", k)
		}
	}
	for _, k := range []string{"status", "data", "text", "stats", "context"} {
		if _, ok := top[k]; !ok {
			v.fail("missing top-level key %q", k)
		}
	}

	var status string
	if raw, ok := top["status"]; ok {
		if json.Unmarshal(raw, &status) != nil {
			v.fail("status is not a string: %s", raw)
		}
		switch status {
		case "success", "partial", "error":
		default:
			v.fail("status %q is not success, partial or error", status)
		}
	}
	_, hasErr := top["error"]
	switch {
	case status == "error" && !hasErr:
		v.fail(`status "error" without an error key`)
	case status != "error" && hasErr:
		v.fail("error key with status %q", status)
	}

	if raw, ok := top["data"]; ok {
		data, ok := object(raw)
		if !ok {
			v.fail("data is not an object: %s", raw)
		} else {
			v.checkDataPaths(data)
		}
	}
	if raw, ok := top["text"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			v.fail("text is not a string: %s", raw)
		}
	}
	if raw, ok := top["stats"]; ok {
		v.checkStats(raw)
	}
	if raw, ok := top["context"]; ok {
		v.checkContext(raw)
	}
	if raw, ok := top["error"]; ok {
		v.checkError(raw)
	}
}

func (v *validator) checkStats(raw json.RawMessage) {
	stats, ok := object(raw)
	if !ok {
		v.fail("stats is not an object: %s", raw)
		return
	}
	tm, ok := stats["time_ms"]
	if !ok {
		v.fail("stats has no time_ms")
		return
	}
	if !isNonNegInt(tm) {
		v.fail("stats.time_ms is not a non-negative integer: %s", tm)
	}
}

func (v *validator) checkContext(raw json.RawMessage) {
	ctx, ok := object(raw)
	if !ok {
		v.fail("context is not an object: %s", raw)
		return
	}
	var cwd string
	if c, ok := ctx["cwd"]; !ok {
		v.fail("context has no cwd")
	} else if json.Unmarshal(c, &cwd) != nil {
		v.fail("context.cwd is not a string: %s", c)
	} else if bad := badName(cwd); bad != "" {
		v.fail("context.cwd %q: %s", cwd, bad)
	}
	if p, ok := ctx["params_input"]; !ok {
		v.fail("context has no params_input")
	} else if !json.Valid(p) {
		v.fail("context.params_input is not JSON: %s", p)
	}
	if p, ok := ctx["path_resolved"]; ok {
		var s string
		if json.Unmarshal(p, &s) != nil {
			v.fail("context.path_resolved is not a string: %s", p)
		} else if bad := badName(s); bad != "" {
			v.fail("context.path_resolved %q: %s", s, bad)
		}
	}
}

func (v *validator) checkError(raw json.RawMessage) {
	e, ok := object(raw)
	if !ok {
		v.fail("error is not an object: %s", raw)
		return
	}
	var code, msg string
	if c, ok := e["code"]; !ok || json.Unmarshal(c, &code) != nil {
		v.fail("error.code missing or not a string: %s", raw)
	} else if !Codes[code] {
		v.fail("error.code %q is not a known code", code)
	}
	if m, ok := e["message"]; !ok || json.Unmarshal(m, &msg) != nil {
		v.fail("error.message missing or not a string: %s", raw)
	} else if msg == "" {
		v.fail("error.message is empty")
	}
	for k := range e {
		if k != "code" && k != "message" {
			v.fail("unexpected error key %q", k)
		}
	}
}

// checkDataPaths checks the root-relative paths the tools put in data.
func (v *validator) checkDataPaths(data map[string]json.RawMessage) {
	var paths []string
	var list []string
	if json.Unmarshal(data["paths"], &list) == nil {
		paths = append(paths, list...)
	}
	list = nil
	if json.Unmarshal(data["files"], &list) == nil {
		paths = append(paths, list...)
	}
	var withFile []struct {
		File string `json:"file"`
	}
	if json.Unmarshal(data["matches"], &withFile) == nil {
		for _, m := range withFile {
			paths = append(paths, m.File)
		}
	}
	withFile = nil
	if json.Unmarshal(data["counts"], &withFile) == nil {
		for _, m := range withFile {
			paths = append(paths, m.File)
		}
	}
	for _, p := range paths {
		if bad := badName(p); bad != "" {
			v.fail("data path %q: %s", p, bad)
		}
	}
}

// badName says what is wrong with p, a root-relative POSIX path in its
// printed form, "" if nothing. Outside the quoted form a backslash can only
// be a Windows separator; inside it, it is part of a name.
func badName(p string) string {
	if raw, ok := quote.Parse(p); ok {
		return badRel(raw, true)
	}
	return badRel(p, false)
}

// badRel says what is wrong with p as a root-relative POSIX path, "" if
// nothing.
func badRel(p string, backslashOK bool) string {
	switch {
	case p == "":
		return "empty"
	case strings.HasPrefix(p, "/"):
		return "absolute"
	case !backslashOK && strings.Contains(p, `\`):
		return "not POSIX (backslash)"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return `has a ".." segment`
		}
	}
	return ""
}

type member struct {
	name  string
	value json.RawMessage
}

// topLevelKeys decodes js as one JSON object, keeping every key in order
// (duplicates too, which a map would hide).
func topLevelKeys(js []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("starts with %v, not {", tok)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("key %v is not a string", tok)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("value of %q: %w", name, err)
		}
		out = append(out, member{name, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the object")
	}
	return out, nil
}

// object decodes raw as a JSON object; null and other values are not.
func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// isNonNegInt reports whether raw is a JSON integer >= 0 (no fraction, no
// exponent).
func isNonNegInt(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return false
	}
	if s == "0" {
		return true
	}
	if s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
