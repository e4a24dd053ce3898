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
	"slices"
	"strings"
	"sync"
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
// CodeRepliesUnread errors, the clients are dropped (after the write
// deadline, or before it to make room for another's response), another
// client is served meanwhile, and every goroutine ends once they have
// gone.
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
			if strings.Contains(msg, "could not be written") || strings.Contains(msg, "has read and sent nothing") {
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
		// Dropped at the write deadline, or earlier to make room for
		// another's response.
		msg := recvSignal(t, dropped, "a client that does not read to be dropped")
		if !strings.Contains(msg, "i/o timeout") && !strings.Contains(msg, "other clients' answers needed the room") {
			t.Errorf("drop: %s", msg)
		}
	}
	good.ping()

	// Over the budgets, only the short error lines that replace
	// responses (one per request in flight at most).
	const errLines = rpc.DefaultMaxInFlight * 512
	st := srv.Stats()
	if st.PeakConnReplyBytes > perConn+errLines {
		t.Errorf("one connection held %d bytes of responses, budget %d", st.PeakConnReplyBytes, perConn)
	}
	if st.PeakUsedBytes > total+clients*errLines {
		t.Errorf("the server held %d bytes of responses, budget %d", st.PeakUsedBytes, total)
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
// writer makes progress. A writer stuck in one write would have its
// responses replaced after replyStall: the stall is set past the test's
// own deadline, so that a reader slowed by a loaded machine is not taken
// for one that has stopped (a second was not always enough).
func TestReadingClientGetsAllBigAnswers(t *testing.T) {
	t.Parallel()
	const replySize = 256 << 10
	m := testMethods()
	big := json.RawMessage(`"` + strings.Repeat("y", replySize) + `"`)
	m["big"] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) { return big, nil }
	var srv *Server
	ts := startServer(t, m, func(s *Server) {
		srv = s
		s.MaxConnReplyBytes = replySize
		s.MaxReplyBytes = 2 * replySize
		s.replyStall, s.evictStall = 2*wait, 2*wait
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

// Clients that pipeline many streamed answers each and read none: what
// the server holds for them (queued and reserved) stays within its
// budget, but for the short lines that never wait (shortLine); a client
// that reads is answered meanwhile, its ping at once and a large answer
// too (a connection that read nothing for the stall is dropped to make
// room); each connection's streams are made one at a time (TakeTurn);
// and everything ends once the clients have gone.
func TestStalledStreamsStayWithinBudget(t *testing.T) {
	const (
		clients   = 16
		requests  = 64
		partSize  = 48 << 10
		parts     = 128 // 6 MiB a stream: far more than a socket holds
		perConn   = 64 << 10
		total     = 256 << 10
		bigAnswer = 200 << 10
		stall     = 50 * time.Millisecond
	)
	if l, err := net.Listen("unix", filepath.Join(t.TempDir(), "warm.sock")); err == nil {
		l.Close()
	}
	base := runtime.NumGoroutine()

	var (
		mu              sync.Mutex
		turns, maxTurns int
	)
	pad := strings.Repeat("p", partSize)
	m := testMethods()
	m["stream"] = func(ctx context.Context, _ json.RawMessage) (json.RawMessage, *rpc.Error) {
		release, err := TakeTurn(ctx)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "turn: %v", err)
		}
		defer release()
		mu.Lock()
		turns++
		maxTurns = max(maxTurns, turns)
		mu.Unlock()
		defer func() {
			mu.Lock()
			turns--
			mu.Unlock()
		}()
		for i := range parts {
			if err := Notify(ctx, map[string]any{"i": i, "pad": pad}); err != nil {
				return nil, rpc.Errorf(rpc.CodeInternalError, "notify: %v", err)
			}
		}
		return json.RawMessage(`"done"`), nil
	}
	big := json.RawMessage(`"` + strings.Repeat("b", bigAnswer) + `"`)
	m["big"] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) { return big, nil }
	var srv *Server
	ts := startServer(t, m, func(s *Server) {
		srv = s
		s.MaxConnReplyBytes = perConn
		s.MaxReplyBytes = total
		s.replyStall, s.evictStall = stall, stall
	})

	var stalled []*rawClient
	for i := range clients {
		rc := dialRaw(t, ts.path)
		stalled = append(stalled, rc)
		var reqs strings.Builder
		for j := range requests {
			fmt.Fprintf(&reqs, `{"jsonrpc":"2.0","id":%d,"method":"stream"}`+"\n", i*requests+j)
		}
		rc.send(strings.TrimSuffix(reqs.String(), "\n"))
	}
	// Wait until the lines of stalled clients, their writers stuck for the
	// stall, leave no room for the large answer: it then gets in only by
	// the dropping of one of them. The budget is full at first too, before
	// the writers have begun; they then fill the clients' sockets, and the
	// answer could find room meanwhile without anyone being dropped. (Not
	// "most of the budget": stalled connections waiting for room drop
	// stuck ones too, and may leave fewer lines than fill it.)
	deadline := time.Now().Add(wait)
	for stuckBytes(srv, stall) <= total-bigAnswer {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled streams never held the budget with their writers stuck (%d bytes): %+v", stuckBytes(srv, stall), srv.Stats())
		}
		runtime.Gosched()
	}
	evicted := srv.Stats().Evicted

	good := dialRaw(t, ts.path)
	good.ping()
	good.send(`{"jsonrpc":"2.0","id":"big","method":"big"}`)
	if r := good.recv(); string(r.ID) != `"big"` || len(r.Result) != bigAnswer+2 {
		t.Fatalf("a reading client's large answer: %.200s", r.line)
	}
	good.ping()

	st := srv.Stats()
	if st.PeakUsedBytes > total+shortLine {
		t.Errorf("the server held %d bytes, budget %d", st.PeakUsedBytes, total)
	}
	if st.Evicted == evicted {
		t.Errorf("no stalled connection was dropped for the reading client's answer: %+v", st)
	}
	mu.Lock()
	if maxTurns > clients {
		t.Errorf("%d streams were made at once by %d connections", maxTurns, clients)
	}
	mu.Unlock()

	for _, rc := range append(stalled, good) {
		rc.c.Close()
	}
	waitGoroutines(t, base+1) // + startServer's Serve goroutine
	if st := srv.Stats(); st.ReplyBytes != 0 || st.ReservedBytes != 0 || st.QueuedReplies != 0 {
		t.Errorf("after the clients left: %+v", st)
	}
}

// stuckBytes returns the bytes held by the connections whose writer has
// been in one write for stall or longer (what evictStalled may free).
func stuckBytes(srv *Server, stall time.Duration) int64 {
	st := srv.st()
	st.mu.Lock()
	conns := make([]*conn, 0, len(st.conns))
	for c := range st.conns {
		conns = append(conns, c)
	}
	st.mu.Unlock()
	var n int64
	for _, c := range conns {
		c.qmu.Lock()
		if !c.writing.IsZero() && time.Since(c.writing) >= stall {
			n += c.queued
		}
		c.qmu.Unlock()
	}
	return n
}

// Reserve counts toward the budget of the connection and of the server,
// refuses what does not fit without waiting, and is released when the
// handler returns: the answer's response is then what is counted.
func TestReserve(t *testing.T) {
	t.Parallel()
	const (
		perConn = 64 << 10
		total   = 96 << 10
	)
	hold := make(chan struct{})
	held := make(chan []bool, 2)
	m := testMethods()
	m["reserve"] = func(ctx context.Context, _ json.RawMessage) (json.RawMessage, *rpc.Error) {
		var got []bool
		for range 4 {
			got = append(got, Reserve(ctx, 20<<10))
		}
		held <- got
		<-hold
		return json.RawMessage(`"ok"`), nil
	}
	var srv *Server
	ts := startServer(t, m, func(s *Server) {
		srv = s
		s.MaxConnReplyBytes = perConn
		s.MaxReplyBytes = total
	})
	a, b := dialRaw(t, ts.path), dialRaw(t, ts.path)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"reserve"}`)
	if got := recvSignal(t, held, "the first reservations"); !slices.Equal(got, []bool{true, true, true, false}) {
		t.Errorf("one connection's reservations: %v, want three of 20 KiB in its 64 KiB", got)
	}
	b.send(`{"jsonrpc":"2.0","id":2,"method":"reserve"}`)
	if got := recvSignal(t, held, "the second reservations"); !slices.Equal(got, []bool{true, false, false, false}) {
		t.Errorf("another connection's reservations: %v, want one of 20 KiB in the server's 96 KiB", got)
	}
	if st := srv.Stats(); st.ReservedBytes != 80<<10 || st.ReservationsRefused != 4 {
		t.Errorf("stats while held: %+v", st)
	}
	close(hold)
	for _, rc := range []*rawClient{a, b} {
		if r := rc.recv(); string(r.Result) != `"ok"` {
			t.Errorf("answer: %s", r.line)
		}
	}
	if st := srv.Stats(); st.ReservedBytes != 0 {
		t.Errorf("reservations left after the handlers returned: %+v", st)
	}
	if !Reserve(context.Background(), 1<<40) {
		t.Error("Reserve outside a request refused")
	}
}
