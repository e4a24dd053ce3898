package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/rpc/server"
	"github.com/indexd/indexd/tool"
)

// shortLine is the slack of the reply budget: a connection holding
// nothing always gets a line of this size in (rpc/server's shortLine).
const shortLine = 4 << 10

// manyMatches writes a tree whose every one of 400 files holds 50 lines
// matching "needle": 20,000 matches, some 1.5 MB of them as JSON.
func manyMatches(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	for i := range 400 {
		var b strings.Builder
		for j := range 50 {
			fmt.Fprintf(&b, "line %d of file %d holds the needle we look for\n", j, i)
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%9, i)] = b.String()
	}
	return writeTree(t, files)
}

const (
	allNeedles   = 400 * 50
	needleArgs   = `{"pattern":"needle","limit":0,"timeout_ms":60000}`
	answerBudget = 1 << 20
	connBudget   = 256 << 10
)

// tookMS matches the time an envelope's text gives.
var tookMS = regexp.MustCompile(`Took \d+ms`)

// sameButTime compares two envelopes but for the time they took.
func sameButTime(a, b []byte) bool {
	norm := func(js []byte) string {
		var m map[string]any
		if json.Unmarshal(js, &m) != nil {
			return string(js)
		}
		if st, ok := m["stats"].(map[string]any); ok {
			st["time_ms"] = 0
		}
		if c, ok := m["context"].(map[string]any); ok {
			delete(c, "clock") // the daemons differ
		}
		if t, ok := m["text"].(string); ok {
			m["text"] = tookMS.ReplaceAllString(t, "Took 0ms")
		}
		out, _ := json.Marshal(m)
		return string(out)
	}
	return norm(a) == norm(b)
}

// Eight clients (four under -race) ask at once for every match of a tree
// whose answer is larger than the daemon's whole reply budget, as
// indexctl --json --all does (client.Daemon.Query, streamed and put back
// together), and as many more ask for it whole as a script could
// (unlimited, not streamed).
// What the daemon holds of answers, queued or being built, stays within
// the budget (but for a short line) all along; indexctl's answers are
// complete, each the envelope the daemon would have built whole; the
// others are complete or cut short and say so (memory_limit), never
// complete-looking.
func TestAnswerBurstStaysWithinBudget(t *testing.T) {
	t.Parallel()
	root := manyMatches(t)
	var srv *server.Server
	cfg := Config{MaxAnswerBytes: answerBudget, MaxConnAnswerBytes: connBudget, hooks: &testHooks{server: func(s *server.Server) { srv = s }}}
	td := startDaemon(t, cfg)
	td.index(root, true)

	// The whole answer, as a daemon with room for it builds it (its
	// collector with a budget that never refuses).
	big := startDaemon(t, Config{MaxAnswerBytes: 1 << 30, MaxConnAnswerBytes: 1 << 30})
	big.index(root, true)
	whole := big.call(tool.MethodGrep, rpc.ToolParams{Root: root, Args: json.RawMessage(needleArgs), Unlimited: true})
	if a := decodeAnswer(t, whole); a.Status != envelope.StatusSuccess || len(a.data.Matches) != allNeedles {
		t.Fatalf("the whole answer: %s, %d matches", a.Status, len(a.data.Matches))
	}

	clients := 8
	if testtree.RaceEnabled {
		clients = 4 // CI runs the 8 without -race
	}
	var wg sync.WaitGroup
	streamed := make([][]byte, clients)
	raw := make([][]byte, clients)
	errs := make(chan error, 2*clients)
	for i := range clients {
		wg.Go(func() {
			var warned strings.Builder
			d := &client.Daemon{Socket: td.cfg.SocketPath, Stderr: &warned,
				// This test's binary is the daemon's build (Config.Build):
				// the daemon answers, and no engine is ever started.
				Engine: client.SelfEngine(),
				Fallback: func(context.Context, client.Request, envelope.FallbackReason) (json.RawMessage, error) {
					return nil, errors.New(warned.String())
				}}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			res, err := d.Query(ctx, client.Request{Tool: "Grep", Root: root, Cwd: ".", Args: json.RawMessage(needleArgs), Unlimited: true})
			streamed[i] = res
			if err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			c := dialDaemon(t, td.cfg.SocketPath)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			var res json.RawMessage
			if err := c.Call(ctx, tool.MethodGrep, rpc.ToolParams{Root: root, Args: json.RawMessage(needleArgs), Unlimited: true}, &res); err != nil {
				errs <- err
			}
			raw[i] = res
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for i, res := range streamed {
		if !sameButTime(res, whole) {
			a, w := decodeAnswer(t, res), decodeAnswer(t, whole)
			t.Errorf("indexctl's answer %d is not the whole answer:\n%s %s %.200q %s\n%s %s %.200q %s", i, a.Status, a.Stats, a.Text, a.data.Matches[0], w.Status, w.Stats, w.Text, w.data.Matches[0])
		}
	}
	cut := 0
	for i, res := range raw {
		a := decodeAnswer(t, res)
		var d struct {
			AbortedReason string `json:"aborted_reason"`
		}
		json.Unmarshal(a.Raw.Data, &d)
		switch {
		case a.Status == envelope.StatusSuccess && len(a.data.Matches) == allNeedles && d.AbortedReason == "":
		case d.AbortedReason == envelope.AbortMemoryLimit && len(a.data.Matches) < allNeedles &&
			(a.Status == envelope.StatusPartial && strings.Contains(a.Text, "[Partial: the answer outgrew the memory") ||
				a.Status == envelope.StatusError && a.Error.Code == envelope.CodeExecution):
			cut++
		default:
			t.Errorf("answer %d, not streamed: %s, %d matches, aborted %q: %.300s", i, a.Status, len(a.data.Matches), d.AbortedReason, a.Text)
		}
	}
	st := srv.Stats()
	if st.PeakUsedBytes > answerBudget+shortLine {
		t.Errorf("the daemon held %d bytes of answers at once, budget %d", st.PeakUsedBytes, answerBudget)
	}
	if cut == 0 || st.ReservationsRefused < int64(cut) {
		t.Errorf("%d answers cut, %d reservations refused: an answer four times a connection's budget went through whole", cut, st.ReservationsRefused)
	}
	if st.ReplyBytes != 0 || st.ReservedBytes != 0 {
		t.Errorf("held after the answers: %+v", st)
	}
	m := td.status("").Memory
	if m == nil || m.AnswerPeakBytes != st.PeakUsedBytes || m.AnswerBudgetBytes != answerBudget || m.AnswersCut != st.ReservationsRefused {
		t.Errorf("status memory %+v, server %+v", m, st)
	}
}

// Sixteen clients each pipeline 64 streams of every match and read
// nothing. What the daemon holds of answers stays within its budget (but
// for a short line); each connection's streams are made one at a time,
// so at most 16 searches run for them; and a ping on another connection
// is answered meanwhile.
func TestStalledStreamsStayWithinBudget(t *testing.T) {
	t.Parallel()
	const clients, pipelined = 16, 64
	root := manyMatches(t)
	var srv *server.Server
	var running, most atomic.Int64
	cfg := Config{MaxAnswerBytes: 512 << 10, MaxConnAnswerBytes: 128 << 10, hooks: &testHooks{
		server: func(s *server.Server) { srv = s },
		unlimited: func(delta int) {
			n := running.Add(int64(delta))
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		},
	}}
	td := startDaemon(t, cfg)
	td.index(root, true)

	params, err := json.Marshal(rpc.ToolParams{Root: root, Args: json.RawMessage(needleArgs), Unlimited: true, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	var stalled []net.Conn
	defer func() {
		for _, c := range stalled {
			c.Close()
		}
	}()
	for i := range clients {
		c, err := net.Dial("unix", td.cfg.SocketPath)
		if err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
		w := bufio.NewWriter(c)
		for j := range pipelined {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"grep","params":%s}`+"\n", i*pipelined+j, params)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Until what the stalled clients hold fills most of the budget.
	if !settle(func() bool { return srv.Stats().ReplyBytes >= 256<<10 }) {
		t.Fatalf("the stalled streams never filled the budget: %+v", srv.Stats())
	}

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	other := dialDaemon(t, td.cfg.SocketPath)
	defer other.Close()
	if err := other.Ping(ctx); err != nil {
		t.Fatalf("a ping on another connection: %v", err)
	}

	st := srv.Stats()
	if st.PeakUsedBytes > 512<<10+shortLine {
		t.Errorf("the daemon held %d bytes of answers at once, budget %d", st.PeakUsedBytes, 512<<10)
	}
	if n := most.Load(); n > clients {
		t.Errorf("%d unlimited answers were made at once for %d connections", n, clients)
	}
}
