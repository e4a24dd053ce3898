package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// TestPartial: a handler's Notify calls reach the caller of CallStream in
// order, before the response, also when they add up to more than the
// connection's reply budget (the handler waits for the client to read);
// Call ignores them; outside a request Notify fails.
func TestPartial(t *testing.T) {
	t.Parallel()
	const parts = 200
	h := rpc.Methods{"count": func(ctx context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		for i := range parts {
			// 4 KiB each: 800 KiB in all, four times the budget below.
			if err := Notify(ctx, map[string]any{"i": i, "pad": fmt.Sprintf("%4096d", i)}); err != nil {
				return nil, rpc.Errorf(rpc.CodeInternalError, "notify: %v", err)
			}
		}
		return json.RawMessage(`"done"`), nil
	}}
	ts := startServer(t, h, func(s *Server) { s.MaxConnReplyBytes = 200 << 10 })
	c, err := rpc.Dialer{}.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var got []int
	var res json.RawMessage
	err = c.CallStream(context.Background(), "count", nil, &res, func(data json.RawMessage) {
		var p struct{ I int }
		if err := json.Unmarshal(data, &p); err != nil {
			t.Errorf("part %s: %v", data, err)
		}
		got = append(got, p.I)
	})
	if err != nil || string(res) != `"done"` {
		t.Fatalf("CallStream: %s, %v", res, err)
	}
	want := make([]int, parts)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("parts %v, want 0..%d in order", got, parts-1)
	}

	// Call on the same connection: the parts are dropped, the answer comes.
	if err := c.Call(context.Background(), "count", nil, &res); err != nil || string(res) != `"done"` {
		t.Fatalf("Call: %s, %v", res, err)
	}
	if err := Notify(context.Background(), 1); !errors.Is(err, ErrNoRequest) {
		t.Errorf("Notify outside a request: %v", err)
	}
}

// TestPausedStreamReader: a CallStream whose caller is busy with a part
// (writing it to a pager left on one page) for longer than both the
// client's answer timeout and the server's write timeout loses nothing:
// the client does not count its own pause as the server's silence, and
// its keep-alive shows the server, blocked writing to it, that it is
// alive.
func TestPausedStreamReader(t *testing.T) {
	t.Parallel()
	const parts = 64
	h := rpc.Methods{"count": func(ctx context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		for i := range parts {
			// 64 KiB each, 4 MiB in all: far more than the socket holds,
			// so the server's writer blocks while the client pauses.
			if err := Notify(ctx, map[string]any{"i": i, "pad": fmt.Sprintf("%65536d", i)}); err != nil {
				return nil, rpc.Errorf(rpc.CodeInternalError, "notify: %v", err)
			}
		}
		return json.RawMessage(`"done"`), nil
	}}
	// The keep-alive comes every 250 ms, four times in a write timeout;
	// the connection's budget is small, so its reader stops and the
	// keep-alive lies unread in the socket.
	const writeTimeout = time.Second
	ts := startServer(t, h, func(s *Server) { s.WriteTimeout = writeTimeout; s.MaxConnReplyBytes = 128 << 10 })
	c, err := rpc.Dialer{AnswerTimeout: 500 * time.Millisecond}.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	got := 0
	var res json.RawMessage
	err = c.CallStream(context.Background(), "count", nil, &res, func(data json.RawMessage) {
		if got == 0 {
			// The pause under test: several of each timeout.
			time.Sleep(4 * writeTimeout)
		}
		got++
	})
	if err != nil || string(res) != `"done"` {
		t.Fatalf("CallStream after a pause: %s, %v (%d parts)", res, err, got)
	}
	if got != parts {
		t.Fatalf("%d parts, want %d", got, parts)
	}
}
