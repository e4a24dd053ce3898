package server

import (
	"testing"
	"time"
)

// A client that hangs up while the server drains (its request read,
// reading stopped) has its request cancelled at once, not when the drain
// times out.
func TestHangUpDuringDrainCancels(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	cancelled := make(chan string, 1)
	watching := make(chan struct{}, 1)
	ts := startServer(t, blockingMethods(started, nil, cancelled), func(s *Server) {
		s.DrainTimeout = time.Hour
		s.testHookWatching = func() {
			select {
			case watching <- struct{}{}:
			default:
			}
		}
	})
	rc := dialRaw(t, ts.path)
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"slow","params":["a"]}`)
	recvSignal(t, started, "the request")
	ts.cancel() // the drain starts: the connection is no longer read
	recvSignal(t, watching, "the server to watch the connection during the drain")
	rc.c.Close()
	if got := recvSignal(t, cancelled, "the request's cancellation"); got != `["a"]` {
		t.Errorf("cancelled %s", got)
	}
	ts.stop(t)
}
