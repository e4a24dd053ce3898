package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/indexd/indexd/rpc"
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
		checkParsed(t, line, req, rerr)
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

// checkParsed is FuzzParseRequest's oracle: the line decoded on its own
// (a generic JSON decode) is a valid request exactly when parseRequest
// accepted it, and then its method, id and params are what was parsed.
func checkParsed(t *testing.T, line []byte, req request, rerr *rpc.Error) {
	t.Helper()
	var m map[string]any
	obj := json.Unmarshal(line, &m) == nil && len(bytes.TrimSpace(line)) > 0 && bytes.TrimSpace(line)[0] == '{'
	method, isStr := m["method"].(string)
	params, hasParams := m["params"]
	id, hasID := m["id"]
	okParams := !hasParams || params == nil
	switch params.(type) {
	case map[string]any, []any:
		okParams = true
	}
	okID := !hasID
	if hasID {
		switch id.(type) {
		case nil, string, float64:
			okID = true
		}
	}
	if s, ok := id.(string); ok && !utf8.ValidString(s) {
		okID = false
	}
	valid := obj && m["jsonrpc"] == "2.0" && isStr && okParams && okID && utf8.Valid(line)
	if valid != (rerr == nil) {
		// Invalid UTF-8 inside a string that is not the id is accepted by
		// both decoders alike; only the id's bytes are checked.
		if !(rerr == nil && !utf8.Valid(line)) {
			t.Fatalf("%q: parseRequest error %v, but the oracle says valid=%v", line, rerr, valid)
		}
	}
	if rerr != nil {
		return
	}
	if req.method != method {
		t.Fatalf("%q: method %q, oracle %q", line, req.method, method)
	}
	same := func(what string, raw json.RawMessage, want any) {
		var got any
		if raw != nil {
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%q: %s %q does not decode: %v", line, what, raw, err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %s %v, oracle %v", line, what, got, want)
		}
	}
	same("params", req.params, params)
	same("id", req.id, id)
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
		line, ok := requestLine(method, json.RawMessage(params))
		if !ok {
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
		if string(req.id) != "1" || !bytes.Equal(req.params, want.Bytes()) {
			t.Fatalf("round trip of %q/%q: id %s params %s", method, params, req.id, req.params)
		}
		// Invalid UTF-8 goes over the wire as U+FFFD, as []rune has it.
		if req.method != string([]rune(method)) {
			t.Fatalf("method %q came back as %q", method, req.method)
		}
	})
}

// requestLine returns the line a new Client sends for a call of method
// with params, and false when it sends none (the request is too large).
func requestLine(method string, params json.RawMessage) ([]byte, bool) {
	nc, server := net.Pipe()
	defer server.Close()
	c := rpc.NewClient(nc)
	defer c.Close()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), method, params, nil) }()
	linec := make(chan []byte, 1)
	go func() {
		line, _ := bufio.NewReader(server).ReadBytes('\n')
		linec <- line
	}()
	select {
	case <-errc:
		return nil, false
	case line := <-linec:
		return line, true
	}
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
	// The client takes a success response apart without reading its
	// result (rpc.SplitResult): it must agree with the full decode, and
	// take every success response to an id it sends (a uint64).
	id, result, ok := rpc.SplitResult(b[:len(b)-1])
	wantID, idErr := strconv.ParseUint(string(m["id"]), 10, 64)
	switch {
	case ok && (m["result"] == nil || idErr != nil || id != wantID || !bytes.Equal(result, m["result"])):
		t.Fatalf("SplitResult(%q) = %d, %q; the response decodes to id %s, result %s", b, id, result, m["id"], m["result"])
	case !ok && m["result"] != nil && idErr == nil:
		t.Fatalf("SplitResult(%q) refused a success response", b)
	}
}

// FuzzPartialLine: the client takes a "partial" notification apart
// without reading its data (rpc.SplitPartial); for any data a handler
// sends and any id, it agrees with the full decode of the line the server
// writes.
func FuzzPartialLine(f *testing.F) {
	for _, d := range []string{`{"matches":[{"file":"a","line":1,"text":"x}}"}]}`, `"}}"`, `[1, 2]`, `{}`, `null`, "\"\xff\""} {
		f.Add(uint64(7), d)
	}
	f.Fuzz(func(t *testing.T, id uint64, data string) {
		if !json.Valid([]byte(data)) {
			return
		}
		line, err := partialLine(json.RawMessage(strconv.FormatUint(id, 10)), []byte(data))
		if err != nil {
			t.Fatalf("partialLine(%q): %v", data, err)
		}
		var m struct {
			Params struct {
				ID   uint64          `json:"id"`
				Data json.RawMessage `json:"data"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		gotID, got, ok := rpc.SplitPartial(bytes.TrimSuffix(line, []byte("\n")))
		if !ok || gotID != id || !bytes.Equal(got, m.Params.Data) {
			t.Fatalf("SplitPartial(%q) = %d, %q, %v; the line decodes to %d, %q", line, gotID, got, ok, id, m.Params.Data)
		}
	})
}
