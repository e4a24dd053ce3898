package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/jsonread"
)

// A command-line answer beyond the agent tools' limits (--all, a large
// --limit) that the caller wants whole (--json prints one envelope) is
// not asked of the daemon whole: built there, it would be held in the daemon's
// memory, several copies of it, until written, and the daemon's reply budget
// cuts such an answer short once it outgrows it (docs/protocol.md, "Memory:
// the reply budget"). The daemon streams it instead, each part carrying the
// lines its results add to the envelope's text (rpc.ToolParams.BatchText), and
// the answer is put back together here, in the client's own memory: the
// response's envelope, whose data holds an empty list, with the parts' lists
// in order in that list, and its text followed by "\n" and the parts' texts
// (when any result came). The result is the envelope the daemon would have
// built whole, byte for byte.

// wholeAnswer collects the parts of a streamed answer.
type wholeAnswer struct {
	key   string          // the data's list the parts fill: paths, matches, files or counts
	items []byte          // their elements as the parts carried them, comma separated
	text  strings.Builder // the parts' texts, in order
	err   error           // the first malformed part
}

// add takes one part (a query.Batch as JSON).
func (w *wholeAnswer) add(data json.RawMessage) {
	if w.err != nil {
		return
	}
	r := jsonread.NewReader(data)
	r.Object(func(key []byte) {
		switch k := string(key); k {
		case "paths", "matches", "files", "counts":
			if w.key != "" && w.key != k {
				w.err = fmt.Errorf("malformed response: a part of the answer holds %s, an earlier one %s", k, w.key)
			}
			w.key = k
			r.Array(func() {
				if len(w.items) > 0 {
					w.items = append(w.items, ',')
				}
				w.items = append(w.items, r.Raw()...)
			})
		case "text":
			w.text.WriteString(r.String())
		default:
			r.Skip()
		}
	})
	r.End()
	if err := r.Err(); err != nil && w.err == nil {
		w.err = fmt.Errorf("malformed response: a part of the answer: %w", err)
	}
}

// envelope returns the whole envelope: res (the response's envelope,
// compact JSON as the daemon sends it) with the parts' results put in.
// Without parts it returns res as it is.
func (w *wholeAnswer) envelope(res []byte) ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.key == "" {
		return res, nil
	}
	out := make([]byte, 0, len(res)+len(w.items)+2*w.text.Len()+64)
	filled := false
	r := jsonread.NewReader(res)
	out, err := rewriteObject(out, r, func(out []byte, key string) ([]byte, bool) {
		switch key {
		case "text":
			t := r.String()
			if w.text.Len() > 0 {
				t += "\n" + w.text.String()
			}
			return jsonenc.AppendString(out, t), true
		case "data":
			out, _ = rewriteObject(out, r, func(out []byte, key string) ([]byte, bool) {
				if key != w.key {
					return out, false
				}
				if raw := r.Raw(); string(raw) != "[]" {
					return append(out, raw...), true // not the empty list of a streamed answer
				}
				filled = true
				out = append(append(out, '['), w.items...)
				return append(out, ']'), true
			})
			return out, true
		}
		return out, false
	})
	if err != nil {
		return nil, fmt.Errorf("malformed response: %w", err)
	}
	if !filled {
		return nil, errors.New("malformed response: the envelope of a streamed answer has no empty data." + w.key)
	}
	return out, nil
}

// rewriteObject copies the object r reads to out, compact, passing each
// member to member first: it either reads the value itself, appends what
// stands for it and reports true, or reads nothing and reports false,
// when the value is copied as it is. It returns out and r's error.
func rewriteObject(out []byte, r *jsonread.Reader, member func(out []byte, key string) ([]byte, bool)) ([]byte, error) {
	out = append(out, '{')
	first := true
	r.Object(func(key []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(jsonenc.AppendString(out, string(key)), ':')
		var done bool
		if out, done = member(out, string(key)); !done {
			out = append(out, r.Raw()...)
		}
	})
	return append(out, '}'), r.Err()
}
