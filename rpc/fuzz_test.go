package rpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"x","method":"glob","params":{"root":"/w","args":{"pattern":"*.go"}}}`,
	`{"jsonrpc":"2.0","method":"note","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping","params":null}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"id":-0.5e3,"method":"\u0070ing","jsonrpc":"2.0"}`,
	`{`, `"x"`, `null`, ` `,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xff\"]}",
}

// Any line gets either a request or an error, and the error response is
// one line of valid JSON echoing the id as read.
func FuzzParseRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return
		}
		req, rerr := parseRequest(line)
		if rerr == nil {
			resp := appendResult(nil, req.id, req.params)
			if req.id == nil {
				resp = appendResult(nil, nullID, req.params)
			}
			checkResponseLine(t, resp)
			return
		}
		checkResponseLine(t, appendError(nil, req.id, rerr))
	})
}

// A request the client encodes is parsed back to the same method and
// params by the server.
func FuzzRequestRoundTrip(f *testing.F) {
	f.Add("ping", []byte(`{"root":"/w"}`))
	f.Add("a\nb\"<>&\u2028", []byte("[1,\n  2]"))
	f.Add("", []byte(`{"s":"line\nbreak"}`))
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		p := bytes.TrimSpace(params)
		if !json.Valid(p) || (p[0] != '{' && p[0] != '[') {
			return
		}
		line, err := encodeRequest([]byte("42"), method, json.RawMessage(params))
		if err != nil {
			return // too large
		}
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("request is not one line: %q", line)
		}
		req, rerr := parseRequest(line[:len(line)-1])
		if rerr != nil {
			t.Fatalf("parse %q: %v", line, rerr)
		}
		var want bytes.Buffer
		json.Compact(&want, p)
		if string(req.id) != "42" || !bytes.Equal(req.params, want.Bytes()) {
			t.Fatalf("round trip of %q/%q: id %s params %s", method, params, req.id, req.params)
		}
		// Invalid UTF-8 goes over the wire as U+FFFD, as []rune has it.
		if req.method != string([]rune(method)) {
			t.Fatalf("method %q came back as %q", method, req.method)
		}
	})
}

func checkResponseLine(t *testing.T, b []byte) {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.IndexByte(b, '\n') != len(b)-1 {
		t.Fatalf("response is not one line: %q", b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || !utf8.Valid(b) {
		t.Fatalf("response is not JSON in UTF-8: %q", b)
	}
	if string(m["jsonrpc"]) != `"2.0"` || m["id"] == nil || len(m) != 3 {
		t.Fatalf("malformed response: %q", b)
	}
}
