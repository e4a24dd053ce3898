package mcp

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestTooDeep(t *testing.T) {
	for _, tc := range []struct {
		line string
		max  int
		want bool
	}{
		{`[[[]]]`, 3, false},
		{`[[[[]]]]`, 3, true},
		{`{"a":{"b":[1]}}`, 3, false},
		{`{"a":{"b":[[1]]}}`, 3, true},
		{`["[[[[", "\"[[[["]`, 1, false}, // brackets in strings do not count
		{`["\\", [[1]]]`, 2, true},       // an escaped backslash ends no string
		{strings.Repeat("[", 100000), MaxDepth, true},
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), MaxDepth, false},
	} {
		if got := tooDeep([]byte(tc.line), tc.max); got != tc.want {
			t.Errorf("tooDeep(%.40q, %d) = %v", tc.line, tc.max, got)
		}
	}
}

func TestDecodeLine(t *testing.T) {
	for _, tc := range []struct {
		line    string
		code    int // 0: a message
		id      string
		message string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, 0, "", ""},
		{"\x00", jsonrpc.CodeParseError, "", "parse error: invalid JSON"},
		{"{\"a\":\"\xc3\"}", jsonrpc.CodeParseError, "", "parse error: not UTF-8"},
		{strings.Repeat("{\"a\":", MaxDepth+1), jsonrpc.CodeParseError, "", "parse error: nested deeper than 512 levels"},
		{`[]`, jsonrpc.CodeInvalidRequest, "", "invalid request: batch requests are not supported"},
		{`"ping"`, jsonrpc.CodeInvalidRequest, "", "invalid request: not a JSON object"},
		{`{"jsonrpc":"2.0","id":"a","method":5}`, jsonrpc.CodeInvalidRequest, `"a"`, "invalid request: "},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "", "invalid request: "},
	} {
		msg, bad := decodeLine([]byte(tc.line))
		switch {
		case tc.code == 0:
			if bad != nil || msg == nil {
				t.Errorf("%.40q: %+v", tc.line, bad)
			}
		case bad == nil:
			t.Errorf("%.40q: decoded as %T", tc.line, msg)
		case bad.code != tc.code || string(bad.id) != tc.id || !strings.HasPrefix(bad.message, tc.message) || (!strings.HasSuffix(tc.message, ": ") && bad.message != tc.message):
			t.Errorf("%.40q: code %d, id %s, %q; want %d, %s, %q", tc.line, bad.code, bad.id, bad.message, tc.code, tc.id, tc.message)
		}
	}
}

// Close ends a Read waiting for input that never comes.
func TestLineConnClose(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	c, err := (&lineTransport{in: inR, out: io.Discard, logf: func(string, ...any) {}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("Read after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return after Close")
	}
}
