package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// waitGoroutines waits until no more goroutines run than base.
func waitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, baseline %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// Clients that pipeline many requests with large answers and never read
// them: the responses the server holds stay within the budgets (per
// connection, and in all), responses beyond them are replaced by short
// CodeRepliesUnread errors, the clients are dropped after the write
// deadline, another client is served meanwhile, and every goroutine ends
// once they have gone.
func TestNonReadingClientsStayWithinBudget(t *testing.T) {
	const (
		replySize = 64 << 10
		perConn   = 512 << 10
		total     = 768 << 10
		clients   = 3
		requests  = 200
	)
	// The baseline, with the network poller already set up.
	if l, err := net.Listen("unix", filepath.Join(t.TempDir(), "warm.sock")); err == nil {
		l.Close()
	}
	base := runtime.NumGoroutine()

	handled := make(chan struct{}, clients*requests)
	m := testMethods()
	big := json.RawMessage(`"` + strings.Repeat("z", replySize) + `"`)
	m["big"] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
		handled <- struct{}{}
		return big, nil
	}
	dropped := make(chan string, clients)
	var srv *Server
	ts := startServer(t, m, func(s *Server) {
		srv = s
		s.MaxConnReplyBytes = perConn
		s.MaxReplyBytes = total
		s.WriteTimeout = 2 * time.Second
		s.replyStall = 50 * time.Millisecond
		s.Logf = func(format string, args ...any) {
			msg := fmt.Sprintf(format, args...)
			if strings.Contains(msg, "could not be written") {
				dropped <- msg
			}
		}
	})

	var bad []*rawClient
	for i := range clients {
		rc := dialRaw(t, ts.path)
		var reqs strings.Builder
		for j := range requests {
			fmt.Fprintf(&reqs, `{"jsonrpc":"2.0","id":%d,"method":"big"}`+"\n", i*requests+j)
		}
		if _, err := io.WriteString(rc.c, reqs.String()); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, rc)
	}
	recvSignal(t, handled, "a big request to be handled")

	// Another client is served while they hold their budgets.
	good := dialRaw(t, ts.path)
	good.ping()

	for range clients {
		msg := recvSignal(t, dropped, "a client that does not read to be dropped")
		if !strings.Contains(msg, "i/o timeout") {
			t.Errorf("drop: %s", msg)
		}
	}
	good.ping()

	st := srv.Stats()
	if st.PeakConnReplyBytes > perConn {
		t.Errorf("one connection held %d bytes of responses, budget %d", st.PeakConnReplyBytes, perConn)
	}
	// A connection with nothing waiting always gets one response in,
	// whatever the total: at most one response per connection over it.
	if st.PeakReplyBytes > total+clients*(replySize+100) {
		t.Errorf("the server held %d bytes of responses, budget %d", st.PeakReplyBytes, total)
	}
	if st.RepliesReplaced == 0 {
		t.Error("no response was replaced by an error")
	}

	// Each dropped client finds what fitted in the socket, responses or
	// CodeRepliesUnread errors, then the end of the connection.
	for _, rc := range bad {
		rc.c.SetReadDeadline(time.Now().Add(wait))
		lines := 0
		for {
			line, err := rc.r.ReadString('\n')
			if err != nil {
				if !errors.Is(err, io.EOF) && !isReset(err) {
					t.Fatalf("reading a dropped connection: %v", err)
				}
				break
			}
			lines++
			var r struct {
				Result json.RawMessage
				Error  *rpc.Error
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("response %.80q: %v", line, err)
			}
			if r.Error != nil && r.Error.Code != rpc.CodeRepliesUnread || r.Error == nil && len(r.Result) != replySize+2 {
				t.Errorf("response %.200q", line)
			}
		}
		if lines >= requests {
			t.Errorf("a client that did not read got all %d responses", lines)
		}
		rc.c.Close()
	}
	good.c.Close()
	waitGoroutines(t, base+1) // + startServer's Serve goroutine
	if st := srv.Stats(); st.ReplyBytes != 0 || st.QueuedReplies != 0 {
		t.Errorf("after the clients left: %+v", st)
	}
}

// A client that reads, pipelining requests whose answers together exceed
// its budget, gets every answer: a response waits for room while the
// writer makes progress.
func TestReadingClientGetsAllBigAnswers(t *testing.T) {
	const replySize = 256 << 10
	m := testMethods()
	big := json.RawMessage(`"` + strings.Repeat("y", replySize) + `"`)
	m["big"] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) { return big, nil }
	var srv *Server
	ts := startServer(t, m, func(s *Server) {
		srv = s
		s.MaxConnReplyBytes = replySize
		s.MaxReplyBytes = 2 * replySize
	})
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const calls = 40
	errs := make(chan error, calls)
	for range calls {
		go func() {
			var res json.RawMessage
			err := c.Call(context.Background(), "big", nil, &res)
			if err == nil && len(res) != replySize+2 {
				err = fmt.Errorf("answer of %d bytes", len(res))
			}
			errs <- err
		}()
	}
	for range calls {
		if err := recvSignal(t, errs, "an answer"); err != nil {
			t.Error(err)
		}
	}
	if st := srv.Stats(); st.RepliesReplaced != 0 || st.PeakConnReplyBytes > 2*replySize {
		t.Errorf("stats %+v", st)
	}
}
