package server

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/clock"
	"github.com/indexd/indexd/internal/fakesock"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// callAsync calls method on c in a goroutine; the error comes on the
// channel.
func callAsync(ctx context.Context, c *rpc.Client, method string, params any) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, method, params, nil) }()
	return errc
}

// A server that accepts and never answers fails a call once it has been
// silent for the answer timeout, with an error naming the wait and the
// socket.
func TestClientNoAnswer(t *testing.T) {
	t.Parallel()
	path := fakesock.Mute(t)
	c, err := rpc.Dialer{AnswerTimeout: 100 * time.Millisecond}.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = recvSignal(t, callAsync(context.Background(), c, tool.MethodGlob, rpc.ToolParams{Root: "/w"}), "the unanswered call")
	var nae *rpc.NoAnswerError
	if !errors.As(err, &nae) || !errors.Is(err, rpc.ErrNoAnswer) || !nae.Silent || nae.Socket != path || nae.Method != tool.MethodGlob || nae.Waited != 100*time.Millisecond {
		t.Fatalf("call to a mute server: %#v", err)
	}
	if want := "indexd did not answer within 100ms (socket " + path + ")"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v is not the context's", err)
	}

	// A request the server does not even read: the write is bounded too
	// (1 MiB is more than the socket buffers hold).
	big := strings.Repeat("x", rpc.DefaultMaxRequestSize-100)
	err = recvSignal(t, callAsync(context.Background(), c, "echo", []string{big}), "the unread request")
	if !errors.As(err, &nae) || !nae.Silent || nae.Method != "echo" || nae.Waited != 100*time.Millisecond {
		t.Errorf("request never read: %#v", err)
	}
}

// The call's deadline, with no answer timeout, fails it the same way,
// naming the request.
func TestClientDeadline(t *testing.T) {
	t.Parallel()
	path := fakesock.Mute(t)
	c, err := rpc.Dialer{AnswerTimeout: -1}.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = recvSignal(t, callAsync(ctx, c, tool.MethodGrep, rpc.ToolParams{Root: "/w"}), "the call past its deadline")
	var nae *rpc.NoAnswerError
	if !errors.As(err, &nae) || !errors.Is(err, rpc.ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) || nae.Silent || nae.Waited <= 0 || nae.Waited > 50*time.Millisecond {
		t.Fatalf("call past its deadline: %#v", err)
	}
	if re := regexp.MustCompile(`^indexd did not answer the grep request within \d+ms \(socket ` + regexp.QuoteMeta(path) + `\)$`); !re.MatchString(err.Error()) {
		t.Errorf("message %q", err)
	}
	// Cancelled rather than timed out: the context's error.
	ctx, cancel = context.WithCancel(context.Background())
	errc := callAsync(ctx, c, rpc.MethodPing, nil)
	cancel()
	if err := recvSignal(t, errc, "the cancelled call"); err != context.Canceled {
		t.Errorf("cancelled call: %v", err)
	}
}

// A live server whose answer is slow is waited for: the pings sent in
// the silences are answered. The client's clock is a fake one, moved by
// the test once the client waits, so a loaded machine's slow ping answer
// cannot look like silence.
func TestClientSlowAnswer(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	pings := make(chan struct{}, 100)
	m := blockingMethods(started, release, nil)
	m[rpc.MethodPing] = func(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
		pings <- struct{}{}
		return rpc.Pong, nil
	}
	ts := startServer(t, m, nil)
	const answer = 10 * time.Second
	fake := clock.NewFake(time.Unix(1e9, 0))
	c, err := rpc.Dialer{AnswerTimeout: answer, Clock: fake}.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res json.RawMessage
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "slow", []int{1}, &res) }()
	recvSignal(t, started, "the slow call")
	// Five times half a silence passes, and the client pings; a moment
	// later something comes from the server (the answer to a ping of the
	// test's own, read before it returns). Five span more than twice the
	// answer timeout.
	for i := range 5 {
		select {
		case <-fake.Armed(1):
		case err := <-errc:
			t.Fatalf("round %d: the slow call ended: %v", i, err)
		case <-time.After(wait):
			t.Fatalf("round %d: timed out waiting for the call's timer", i)
		}
		fake.Advance(answer / 2)
		recvSignal(t, pings, "ping "+string(rune('1'+i)))
		fake.Advance(time.Millisecond)
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		recvSignal(t, pings, "the test's ping")
	}
	close(release)
	if err := recvSignal(t, errc, "the slow call's answer"); err != nil || string(res) != `"released"` {
		t.Fatalf("slow call: %v, %s", err, res)
	}
}
