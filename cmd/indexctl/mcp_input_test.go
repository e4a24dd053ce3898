package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMCPMalformedInput: every line of the client's input that is not a
// JSON-RPC message is answered with the JSON-RPC error it calls for, and
// the session goes on, answering the valid requests between them; only
// the end of the input ends it.
func TestMCPMalformedInput(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, true)
	root := mcpTree(t)
	cmd, stdin, stdout := e.start("mcp", "--root", root)
	defer cmd.Process.Kill()
	replies := make(chan string, 64)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
		close(replies)
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing %.40q: %v", line, err)
		}
	}
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			StructuredContent struct {
				Data struct {
					Paths []string `json:"paths"`
				} `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	recv := func() (reply, string) {
		t.Helper()
		select {
		case line, ok := <-replies:
			if !ok {
				t.Fatal("indexctl mcp ended its output")
			}
			var r reply
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &r); err != nil || json.Unmarshal([]byte(line), &m) != nil || string(m["jsonrpc"]) != `"2.0"` || len(m) != 3 {
				t.Fatalf("not a JSON-RPC response: %s", line)
			}
			return r, line
		case <-time.After(time.Minute):
			t.Fatal("no reply from indexctl mcp")
			panic("unreachable")
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if r, line := recv(); string(r.ID) != "1" || r.Result == nil {
		t.Fatalf("initialize: %s", line)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	huge := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Grep","arguments":{"pattern":"` + strings.Repeat("a", 20<<20) + `"}}}`
	for i, tc := range []struct {
		name, line string
		code       int
		id         string
		message    string
	}{
		{"NUL", "\x00", -32700, "null", "parse error: invalid JSON"},
		{"100k-deep nesting", strings.Repeat("[", 100000), -32700, "null", "parse error: nested deeper than 512 levels"},
		{"20 MB line", huge, -32700, "null", "parse error: line longer than 4194304 bytes"},
		{"lone {", "{", -32700, "null", "parse error: invalid JSON"},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", -32700, "null", "parse error: not UTF-8"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":3,"method":"ping"} x`, -32700, "null", "parse error: invalid JSON"},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, "null", "invalid request: batch requests are not supported"},
		{"not an object", `42`, -32600, "null", "invalid request: not a JSON object"},
		{"empty object", `{}`, -32600, "null", `invalid request: invalid message version tag ""; expected "2.0"`},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, "5", `invalid request: invalid message version tag "1.0"; expected "2.0"`},
	} {
		send(tc.line)
		r, line := recv()
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id || r.Error.Message != tc.message {
			t.Errorf("%s: got %.300s\nwant code %d, id %s, message %q", tc.name, line, tc.code, tc.id, tc.message)
		}
		// And the session goes on.
		id := 100 + i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Glob","arguments":{"pattern":"**/*.go"}}}`, id))
		r, line = recv()
		if string(r.ID) != fmt.Sprint(id) || r.Result == nil || !slices.Equal(r.Result.StructuredContent.Data.Paths, []string{"a.go"}) {
			t.Errorf("after %s: %s", tc.name, line)
		}
	}
	// Blank lines are skipped; only the end of input ends the session.
	send("")
	send(`{"jsonrpc":"2.0","id":999,"method":"ping"}`)
	if r, line := recv(); string(r.ID) != "999" || r.Result == nil {
		t.Errorf("ping: %s", line)
	}
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("indexctl mcp at end of input: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("indexctl mcp did not exit at end of input")
	}
}
