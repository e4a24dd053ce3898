package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/jsonread"
	"github.com/indexd/indexd/internal/lineread"
	"github.com/indexd/indexd/rpc"
)

// replyStall is how long a response may wait for room in the reply
// budget while its connection's writer is stuck in one write, before it
// is replaced by a CodeRepliesUnread error; and how long a line may wait
// for room in the server's budget before a connection whose writer has
// been stuck for evictStall is dropped to make room (see conn.admit).
// evictStall is long enough that a client reading slowly on a loaded
// machine, or a pager paused a moment, is not taken for one that has
// stopped.
const (
	replyStall = time.Second
	evictStall = 10 * time.Second
)

// shortLine is the size up to which a line for a connection that holds
// nothing in the reply budget is queued whatever the server's budget
// holds: a ping's answer, an error, is never held up by other clients'
// answers.
const shortLine = 4 << 10

// Server serves the protocol on stream connections. The zero value of
// each field selects its default; set a timeout to a negative value to
// disable it.
type Server struct {
	// Handler answers requests. Required.
	Handler rpc.Handler

	// IdleTimeout drops a connection that has been quiet (no bytes
	// received, no answer sent) for this long while none of its requests
	// is in flight, or that has sent nothing for this long in the middle
	// of a request line. A client waiting for a slow answer is never
	// dropped. Default 5 min.
	IdleTimeout time.Duration
	// WriteTimeout bounds the writing of one response; a client that
	// stops reading its answers, and sends nothing meanwhile, is dropped
	// after it (one that reads nothing but sends, as rpc.Client's
	// keep-alive does, is waited for). Default 1 min.
	WriteTimeout time.Duration
	// DrainTimeout is how long Serve, once its context is cancelled, lets
	// in-flight requests finish before it cancels their contexts. Negative:
	// cancel them at once. Default 10 s.
	DrainTimeout time.Duration
	// MaxRequestSize is the longest request line accepted, in bytes,
	// without its newline. Default 1 MiB.
	MaxRequestSize int
	// MaxInFlight bounds the requests of one connection handled at once;
	// the connection is not read while the bound is reached. Default 64.
	MaxInFlight int
	// MaxConnReplyBytes bounds the bytes one connection holds in the
	// reply budget, and MaxReplyBytes those of all connections together:
	// the responses and notifications waiting to be written, and what
	// the handlers of their requests have reserved for answers they are
	// building (Reserve). A line that does not fit waits while its
	// connection's writer makes progress; a response is replaced by a
	// short CodeRepliesUnread error once that writer has been stuck in
	// one write for a second, and a line that has waited a second for
	// room in the server's budget gets it by the dropping of a connection
	// whose writer has been stuck for ten while its client sent nothing
	// (the one holding most). A
	// connection holding nothing always gets a short line (4 KiB at
	// most) in, and a longer one if the server's budget has room for it
	// (or, larger than that budget, once the server holds nothing else).
	// A connection stops being read while it holds half its budget, or
	// holds anything while half the server's budget is used. Defaults 16
	// MiB and 128 MiB.
	MaxConnReplyBytes int
	MaxReplyBytes     int

	// CheckPeer vets each accepted connection; one it rejects is closed
	// without a word. Nil means SameUser: only the server's own uid may
	// connect.
	CheckPeer func(net.Conn) error
	// Logf, if set, receives one line per dropped connection, rejected
	// peer and handler panic.
	Logf func(format string, args ...any)

	// testHookWatching, if set, is called each time the hang-up watch
	// (see conn.watchHangup) finds the peer still there.
	testHookWatching func()
	// replyStall and evictStall override the constants in tests (0:
	// the constants).
	replyStall, evictStall time.Duration

	// state holds the counters of a serving server (see Stats); Serve's
	// copy of the configuration shares it.
	state *serverState
}

// stateMu guards Server.state's creation.
var stateMu sync.Mutex

// st returns the server's counters, creating them on first use.
func (s *Server) st() *serverState {
	stateMu.Lock()
	defer stateMu.Unlock()
	if s.state == nil {
		s.state = &serverState{changed: make(chan struct{}), conns: make(map[*conn]struct{})}
	}
	return s.state
}

// ServerStats are a server's counters at one moment.
type ServerStats struct {
	Conns int // connections open
	// ReplyBytes is the bytes of the responses and notifications waiting
	// to be written (the one being written included) on every
	// connection; QueuedReplies is their number.
	ReplyBytes    int64
	QueuedReplies int
	// ReservedBytes is the bytes handlers hold reserved for the answers
	// they are building (Reserve). ReplyBytes and ReservedBytes are what
	// the server's reply budget (MaxReplyBytes) bounds.
	ReservedBytes int64
	// PeakReplyBytes is the most ReplyBytes has been, PeakUsedBytes the
	// most ReplyBytes and ReservedBytes have been together, and
	// PeakConnReplyBytes the most one connection has held of both.
	PeakReplyBytes     int64
	PeakUsedBytes      int64
	PeakConnReplyBytes int64
	// RepliesReplaced counts the responses replaced by a
	// CodeRepliesUnread error, ReservationsRefused the reservations that
	// did not fit, and Evicted the connections dropped to make room for
	// others' lines.
	RepliesReplaced     int64
	ReservationsRefused int64
	Evicted             int64
}

// Stats returns the server's counters (all zero before Serve).
func (s *Server) Stats() ServerStats {
	st := s.st()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ServerStats
}

// serverState is the reply budget of one server, over every
// connection, and the server's counters.
type serverState struct {
	mu sync.Mutex // guards the fields below
	ServerStats
	// changed is closed (and replaced) whenever the budget's use drops,
	// waking the lines and readers waiting for room.
	changed chan struct{}
	// conns are the connections open, among which a stuck one is
	// dropped to make room (evictStalled).
	conns map[*conn]struct{}
}

// hold counts n more bytes held for a connection that held connHeld
// before (reserved if reserve is set, else one more line queued) when
// fits allows it given the server's use, and reports whether it did.
// The check and the count are one step under mu: two connections cannot
// both take the last room. It also returns the channel closed when the
// use drops.
func (st *serverState) hold(n, connHeld int64, reserve bool, fits func(total int64) bool) (bool, <-chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if fits != nil && !fits(st.ReplyBytes+st.ReservedBytes) {
		return false, st.changed
	}
	if reserve {
		st.ReservedBytes += n
	} else {
		st.ReplyBytes += n
		st.QueuedReplies++
		st.PeakReplyBytes = max(st.PeakReplyBytes, st.ReplyBytes)
	}
	st.PeakUsedBytes = max(st.PeakUsedBytes, st.ReplyBytes+st.ReservedBytes)
	st.PeakConnReplyBytes = max(st.PeakConnReplyBytes, connHeld+n)
	return true, st.changed
}

// release counts n bytes fewer held (reserved, or one line queued).
func (st *serverState) release(n int64, reserve bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if reserve {
		st.ReservedBytes -= n
	} else {
		st.ReplyBytes -= n
		st.QueuedReplies--
	}
	close(st.changed)
	st.changed = make(chan struct{})
}

// used returns the bytes held and the channel closed when they drop.
func (st *serverState) used() (int64, <-chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ReplyBytes + st.ReservedBytes, st.changed
}

func (st *serverState) count(f func(*ServerStats)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.ServerStats)
}

// register adds (or, with add false, removes) an open connection.
func (st *serverState) register(c *conn, add bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if add {
		st.conns[c] = struct{}{}
		st.Conns++
	} else {
		delete(st.conns, c)
		st.Conns--
	}
}

// evictStalled drops the connection, other than except, whose writer
// has been stuck in one write for stall or longer while nothing came
// from its client, and that holds the most queued bytes, and reports
// whether there was one. Its queue is released once its writer sees the
// connection closed. A client that keeps sending while it reads nothing
// (rpc.Client's keep-alive while its caller is busy: indexctl writing to
// a pager left on one page) is alive and is never dropped (nor by the
// write timeout, see writeOut).
func (st *serverState) evictStalled(except *conn, stall time.Duration) bool {
	st.mu.Lock()
	conns := make([]*conn, 0, len(st.conns))
	for c := range st.conns {
		if c != except {
			conns = append(conns, c)
		}
	}
	st.mu.Unlock()
	var (
		victim *conn
		most   int64
		stuck  time.Duration
	)
	for _, c := range conns {
		c.qmu.Lock()
		silent := time.Since(time.Unix(0, c.heard())) >= stall
		if !c.dead && !c.evicted && !c.writing.IsZero() && time.Since(c.writing) >= stall && silent && c.queued > most {
			victim, most, stuck = c, c.queued, time.Since(c.writing)
		}
		c.qmu.Unlock()
	}
	if victim == nil {
		return false
	}
	victim.qmu.Lock()
	taken := victim.evicted
	victim.evicted = true
	victim.qmu.Unlock()
	if taken {
		return true // another waiter's victim: its room is coming
	}
	victim.cfg.logf("rpc: dropped a connection that has read and sent nothing for %v: other clients' answers needed the room its %d bytes of responses held", stuck.Round(time.Millisecond), most)
	st.count(func(s *ServerStats) { s.Evicted++ })
	victim.cancel()
	victim.nc.Close() // its writer fails, and drops its queue
	return true
}

// Serve accepts connections on ln and answers their requests until ctx is
// cancelled or Accept fails for good, then closes ln and shuts down
// gracefully: connections are no longer read (requests not yet read are
// never answered), in-flight requests may finish and have their responses
// written until DrainTimeout, after which their contexts are cancelled;
// Serve returns once every connection is closed and every handler call
// has returned. It returns nil after ctx was cancelled, else Accept's
// error.
//
// Goroutines: Serve owns one goroutine per connection and waits for all
// of them; each connection's goroutine owns the goroutines of its
// requests (one per request) and its writer, and waits for them before it
// closes the connection. Handlers must return once their context is cancelled, or
// Serve cannot return.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Handler == nil {
		return errors.New("rpc: Server.Handler is nil")
	}
	cfg := s.withDefaults()
	// hard is every request's ancestor context. It keeps ctx's values but
	// not its cancellation: cancelling ctx starts a drain, and hard is
	// cancelled only when the drain times out.
	hard, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()
	stopAccept := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccept()

	var (
		mu       sync.Mutex // guards conns and stopping
		conns    = make(map[*conn]struct{})
		stopping bool
		wg       sync.WaitGroup // connection goroutines
	)
	var err error
	var delay time.Duration // backoff after a resource-exhaustion Accept error
	for {
		nc, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			if temporary(aerr) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				cfg.logf("rpc: accept: %v; retrying in %v", aerr, delay)
				t := time.NewTimer(delay)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				continue
			}
			err = aerr
			break
		}
		delay = 0
		c := newConn(hard, &cfg, nc)
		mu.Lock()
		conns[c] = struct{}{}
		if stopping {
			c.stop()
		}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.serve()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
	ln.Close()

	mu.Lock()
	stopping = true
	for c := range conns {
		c.stop()
	}
	mu.Unlock()
	if cfg.DrainTimeout < 0 {
		hardCancel()
	} else {
		t := time.AfterFunc(cfg.DrainTimeout, hardCancel)
		defer t.Stop()
	}
	wg.Wait()
	return err
}

func (s *Server) withDefaults() Server {
	s.st() // created before the copy, which reads it
	cfg := *s
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = rpc.DefaultIdleTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = rpc.DefaultWriteTimeout
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = rpc.DefaultDrainTimeout
	}
	if cfg.MaxRequestSize <= 0 {
		cfg.MaxRequestSize = rpc.DefaultMaxRequestSize
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = rpc.DefaultMaxInFlight
	}
	if cfg.CheckPeer == nil {
		cfg.CheckPeer = SameUser
	}
	if cfg.MaxConnReplyBytes <= 0 {
		cfg.MaxConnReplyBytes = rpc.DefaultMaxConnReplyBytes
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = rpc.DefaultMaxReplyBytes
	}
	if cfg.evictStall <= 0 {
		cfg.evictStall = evictStall
	}
	if cfg.replyStall <= 0 {
		cfg.replyStall = replyStall
	}
	cfg.state = s.st()
	return cfg
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// temporary reports whether an Accept error is a shortage that may pass
// (out of file descriptors or memory, an aborted handshake).
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// aLongTimeAgo is a read deadline that interrupts a blocked read at once.
var aLongTimeAgo = time.Unix(1, 0)

// conn is one client connection.
type conn struct {
	cfg *Server
	nc  net.Conn
	// ctx is the context of the connection's requests, cancelled when the
	// client hangs up, a response cannot be written, or the server's drain
	// times out (through its parent).
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex    // guards stopping, watchOver and the read deadline
	stopping  bool          // reading has been stopped for good
	watchOver bool          // the hang-up watch has ended (see watchHangup)
	stopc     chan struct{} // closed when stopping is set

	dmu sync.Mutex // serialises setting the write deadline (see setWriteDeadline)

	// The responses waiting to be written, in order, and the writer
	// goroutine's state; guarded by qmu (taken before the server's
	// state.mu; never two connections' at once).
	qmu      sync.Mutex
	queue    []outgoing
	queued   int64         // bytes in queue, plus the response being written
	reserved int64         // bytes the requests' handlers have reserved (Reserve)
	roomc    chan struct{} // closed (and replaced) when what the connection holds drops or the writer dies
	writing  time.Time     // when the write in progress started; zero if none
	dead     bool          // a write failed: responses are dropped
	evicted  bool          // dropped to make room (evictStalled): its writer is about to fail
	closing  bool          // no more responses will come: the writer ends once the queue is empty
	wake     chan struct{} // wakes the writer (capacity 1)
	wdone    chan struct{} // closed when the writer has ended

	reqs       sync.WaitGroup // the request goroutines
	sem        chan struct{}  // one token per request in flight
	turn       chan struct{}  // holds a token while a request has the connection's turn (TakeTurn)
	inflight   atomic.Int32   // requests whose response has not been written yet
	lastActive atomic.Int64   // when bytes were last read or a response written (UnixNano)
	lastHeard  atomic.Int64   // when bytes were last read, or seen waiting to be (UnixNano; see heard)
	inq        atomic.Int64   // the receive queue's length at heard's last look
}

// outgoing is a response waiting to be written.
type outgoing struct {
	line []byte
	req  bool // the answer to a request counted in inflight
}

// touch records activity on the connection.
func (c *conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

// quiet returns how long the connection has been without activity.
func (c *conn) quiet() time.Duration {
	return time.Duration(time.Now().UnixNano() - c.lastActive.Load())
}

// activityReader records each successful read as activity.
type activityReader struct{ c *conn }

func (r activityReader) Read(p []byte) (int, error) {
	n, err := r.c.nc.Read(p)
	if n > 0 {
		now := time.Now().UnixNano()
		r.c.lastActive.Store(now)
		r.c.lastHeard.Store(now)
	}
	return n, err
}

func newConn(parent context.Context, cfg *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(parent)
	return &conn{
		cfg:    cfg,
		nc:     nc,
		ctx:    ctx,
		cancel: cancel,
		stopc:  make(chan struct{}),
		sem:    make(chan struct{}, cfg.MaxInFlight),
		turn:   make(chan struct{}, 1),
		roomc:  make(chan struct{}),
		wake:   make(chan struct{}, 1),
		wdone:  make(chan struct{}),
	}
}

// serve runs the connection: it reads and dispatches requests until the
// client hangs up or reading is stopped, then waits for the requests in
// flight and for their responses to be written (or dropped) and closes
// the connection.
//
// Goroutines: serve starts the connection's writer (writeLoop) and one
// goroutine per request; it waits for the request goroutines, then tells
// the writer that no more responses will come and waits for it to end.
func (c *conn) serve() {
	c.cfg.state.register(c, true)
	defer c.cfg.state.register(c, false)
	defer c.nc.Close()
	defer c.cancel()
	// Once the requests are cancelled (the drain timed out), a response
	// still being written gets a short deadline: a client that does not
	// read must not hold up Serve's return. Deferred before the wait for
	// the writer, so that it stays armed during that wait (a writer
	// blocked on a client that never reads, with every request done, is
	// exactly what the drain's cancellation must cut).
	defer context.AfterFunc(c.ctx, func() {
		c.dmu.Lock()
		defer c.dmu.Unlock()
		c.nc.SetWriteDeadline(time.Now().Add(cancelledWriteTimeout))
	})()
	go c.writeLoop()
	defer func() {
		c.qmu.Lock()
		c.closing = true
		c.qmu.Unlock()
		c.signalWriter()
		<-c.wdone
	}()
	if err := c.cfg.CheckPeer(c.nc); err != nil {
		c.cfg.logf("rpc: rejected connection: %v", err)
		return
	}
	eof := c.readLoop()
	if c.inflight.Load() > 0 && c.ctx.Err() == nil {
		// Either the client has closed its side for writing (eof) or
		// reading has stopped (the server drains, the connection was
		// dropped). At end of input the client may only have half-closed
		// and still be waiting for its answers (like
		// `echo REQ | socat - UNIX-CONNECT:...`), so keep the requests
		// running unless it hangs up entirely; and a client that hangs up
		// while the server drains has its requests cancelled at once.
		c.watchHangup(eof)
	}
	c.reqs.Wait()
}

// stop stops reading the connection for good; a blocked read returns at
// once. Requests already dispatched carry on.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return
	}
	c.stopping = true
	close(c.stopc)
	c.nc.SetReadDeadline(aLongTimeAgo)
}

// arm sets the read deadline for the next read (none if timeout <= 0). It
// reports false once reading has been stopped, so a stop can never be
// overwritten by a later deadline.
func (c *conn) arm(timeout time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return false
	}
	var d time.Time
	if timeout > 0 {
		d = time.Now().Add(timeout)
	}
	c.nc.SetReadDeadline(d)
	return true
}

// readLoop reads and dispatches request lines. It returns true if it
// stopped at end of input, false if it stopped for any other reason
// (reading stopped, idle timeout, a read error).
func (c *conn) readLoop() (eof bool) {
	lr := lineread.New(activityReader{c}, 64<<10, c.cfg.MaxRequestSize)
	idle := c.cfg.IdleTimeout
	c.touch()
	timeout := idle
	for {
		if !c.arm(timeout) {
			return false
		}
		timeout = idle
		line, err := lr.Next()
		switch {
		case err == nil:
			if !c.dispatch(line) {
				return false
			}
		case errors.Is(err, lineread.ErrTooLong):
			c.send(appendError(nil, nil, rpc.Errorf(rpc.CodeInvalidRequest, "request too large (limit %d bytes)", c.cfg.MaxRequestSize)))
		case errors.Is(err, io.EOF):
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			if c.isStopping() {
				return false
			}
			quiet := c.quiet()
			switch {
			case quiet < idle:
				timeout = idle - quiet // there was activity since the deadline was set
			case lr.Partial():
				c.cfg.logf("rpc: dropped a connection stalled mid-request for %v", quiet.Round(time.Millisecond))
				return false
			case c.inflight.Load() == 0:
				c.cfg.logf("rpc: dropped a connection idle for %v", quiet.Round(time.Millisecond))
				return false
			}
			// Otherwise the client is waiting for answers: wait with it.
		default:
			if !c.isStopping() && !errors.Is(err, net.ErrClosed) {
				c.cfg.logf("rpc: read: %v", err)
			}
			return false
		}
	}
}

func (c *conn) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// watchHangup waits until the requests in flight are done or the client
// hangs up entirely, whichever comes first; a hang-up cancels them. eof
// says reading ended at the end of the client's input (rather than being
// stopped). The watch reads nothing: it only polls the socket, so it runs
// whether or not reading has been stopped, and a stop (the server
// starting its drain) does not end it.
func (c *conn) watchHangup(eof bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.reqs.Wait()
		c.mu.Lock()
		c.watchOver = true
		c.nc.SetReadDeadline(aLongTimeAgo) // ends the wait below
		c.mu.Unlock()
		c.stop()
	}()
	defer func() { <-done }()
	rc, err := syscallConn(c.nc)
	if err != nil || !hangupDetectable {
		// Half-close and hang-up cannot be told apart: treat end of
		// input as a hang-up.
		if eof {
			c.cancel()
		}
		return
	}
	for {
		c.mu.Lock()
		over := c.watchOver
		if !over {
			c.nc.SetReadDeadline(time.Time{})
		}
		c.mu.Unlock()
		if over {
			return
		}
		gone := rc.Read(func(fd uintptr) bool {
			if hungUp(fd) {
				return true
			}
			if c.cfg.testHookWatching != nil {
				c.cfg.testHookWatching()
			}
			return false
		})
		if gone == nil {
			c.cancel()
			return
		}
		if !errors.Is(gone, os.ErrDeadlineExceeded) {
			return
		}
		// Interrupted: by the end of the requests (over), or by a stop
		// (its read deadline), after which the watch goes on.
	}
}

func syscallConn(nc net.Conn) (syscall.RawConn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("rpc: %T has no file descriptor", nc)
	}
	return sc.SyscallConn()
}

// dispatch handles one request line: a protocol fault is answered at
// once, a request or notification is handed to its own goroutine. It
// reports false if reading has been stopped meanwhile.
func (c *conn) dispatch(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return true // blank lines between requests are tolerated
	}
	req, rerr := parseRequest(line)
	if rerr != nil {
		c.send(appendError(nil, req.id, rerr))
		return true
	}
	if !c.waitRoom() {
		return false
	}
	select {
	case c.sem <- struct{}{}:
	case <-c.stopc:
		return false
	}
	c.inflight.Add(1)
	c.reqs.Add(1)
	go c.handle(req)
	return true
}

func (c *conn) handle(req request) {
	defer func() {
		<-c.sem
		c.reqs.Done()
	}()
	rs := &reqState{c: c, id: req.id}
	result, herr := c.call(req, rs)
	if rs.turn != nil {
		rs.turn() // not given back by the handler
	}
	c.unreserve(rs) // the answer is built: what it held is the response now
	if req.id == nil {
		c.inflight.Add(-1)
		return // a notification: no response, whatever happened
	}
	var b []byte
	if herr != nil {
		b = appendError(nil, req.id, herr)
	} else {
		b = appendResult(nil, req.id, result)
	}
	result = nil
	c.queueReply(b, req.id, true)
}

// call runs the handler, turning a panic into an internal error. The
// handler of a request (not a notification) may send parts of its answer
// before its response (Notify), reserve room for the answer it builds
// (Reserve) and take its connection's turn (TakeTurn).
func (c *conn) call(req request, rs *reqState) (result json.RawMessage, herr *rpc.Error) {
	defer func() {
		if r := recover(); r != nil {
			c.cfg.logf("rpc: handler panic in %q: %v\n%s", req.method, r, debug.Stack())
			result, herr = nil, rpc.Errorf(rpc.CodeInternalError, "internal error: %v", r)
		}
	}()
	ctx := c.ctx
	if req.id != nil {
		ctx = context.WithValue(ctx, reqKey{}, rs)
	}
	return c.cfg.Handler.Handle(ctx, req.method, req.params)
}

// reqState is what a request's handler holds of its connection: the
// room it has reserved in the reply budget.
type reqState struct {
	c        *conn
	id       json.RawMessage
	reserved int64  // guarded by c.qmu
	turn     func() // gives back the connection's turn, once taken (TakeTurn)
}

type reqKey struct{}

// ErrNoRequest is Notify's error outside the handling of a request.
var ErrNoRequest = errors.New("rpc: no request to send a part of the answer to")

// Notify sends data (marshalled as JSON) to the client as a "partial"
// notification naming the request ctx is handling, ahead of its response.
// It waits while the reply budget has no room for it (the client reads
// at its own pace) and fails once the connection has failed or ctx ends.
func Notify(ctx context.Context, data any) error {
	rs, _ := ctx.Value(reqKey{}).(*reqState)
	if rs == nil {
		return ErrNoRequest
	}
	var line []byte
	if a, ok := data.(Appender); ok {
		line = partialLineOf(rs.id, a)
	} else {
		b, err := jsonenc.Marshal(data)
		if err != nil {
			return err
		}
		if line, err = partialLine(rs.id, b); err != nil {
			return err
		}
	}
	if err := rs.c.queuePartial(line); err != nil {
		return err
	}
	return ctx.Err()
}

// Appender is data that writes itself as JSON on one line in UTF-8 (its
// strings escaped as jsonenc.AppendString does), which Notify sends as
// it is, without encoding/json's reflection and checks.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// Reserve counts n bytes more toward the answer the request ctx is
// handling is building, in the reply budget (Server.MaxConnReplyBytes,
// MaxReplyBytes), and reports true; or reports false, counting nothing,
// when they do not fit: its connection would hold more than its budget
// (its lines waiting to be written and its requests' reservations), or
// the server more than its own. It never waits: room held by answers
// being built comes back only when they are done, so an answer that
// does not fit is cut short (and says so), never left waiting. A
// request's reservations are released when its handler returns, before
// its response is queued (which counts it). Outside the handling of a
// request, Reserve reports true.
func Reserve(ctx context.Context, n int64) bool {
	rs, _ := ctx.Value(reqKey{}).(*reqState)
	if rs == nil {
		return true
	}
	c := rs.c
	c.qmu.Lock()
	defer c.qmu.Unlock()
	held := c.queued + c.reserved
	ok := !c.dead
	if ok {
		ok, _ = c.cfg.state.hold(n, held, true, func(total int64) bool {
			return held+n <= int64(c.cfg.MaxConnReplyBytes) && total+n <= int64(c.cfg.MaxReplyBytes)
		})
	}
	if !ok {
		c.cfg.state.count(func(s *ServerStats) { s.ReservationsRefused++ })
		return false
	}
	c.reserved += n
	rs.reserved += n
	return true
}

// unreserve releases what a request reserved.
func (c *conn) unreserve(rs *reqState) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if rs.reserved == 0 {
		return
	}
	c.reserved -= rs.reserved
	c.cfg.state.release(rs.reserved, true)
	rs.reserved = 0
	c.signalRoom()
}

// TakeTurn waits until no other request of the connection sending the
// request ctx is handling has the connection's turn, takes it and
// returns the function that gives it back (once the answer is out: a
// stream's last part queued; it is given back when the handler returns
// in any case). Call it on the handler's goroutine. A handler takes the turn for an
// answer of no set size (indexctl's --all, a stream): a connection's
// such answers are made one at a time, in turn (requests waiting for the
// turn are served first come, first served), so that a client that
// pipelines many and reads none makes the server hold one answer's
// work, not the work of all of them. It fails once ctx ends. Outside the
// handling of a request it returns at once.
func TakeTurn(ctx context.Context) (release func(), err error) {
	rs, _ := ctx.Value(reqKey{}).(*reqState)
	if rs == nil {
		return func() {}, nil
	}
	select {
	case rs.c.turn <- struct{}{}:
		var once sync.Once
		rs.turn = func() { once.Do(func() { <-rs.c.turn }) }
		return rs.turn, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errConnDead is queuePartial's error once a write on the connection has
// failed.
var errConnDead = errors.New("rpc: the connection failed")

// errStalled is admit's answer when a response may be replaced: its
// connection's writer has been stuck for replyStall.
var errStalled = errors.New("rpc: the connection's writer is stuck")

// queuePartial queues a "partial" notification for the request id, waiting
// for room in the reply budget as long as the connection lives (unlike a
// response, it is never replaced: a slow reader is reading the answer).
func (c *conn) queuePartial(b []byte) error {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.admit(outgoing{line: b}, false)
}

// partialPrefix starts a "partial" notification's line, its id following.
const partialPrefix = `{"jsonrpc":"2.0","method":"` + rpc.MethodPartial + `","params":{"id":`

// partialLineOf is partialLine for data that writes itself (Appender).
func partialLineOf(id json.RawMessage, data Appender) []byte {
	b := append(append([]byte(partialPrefix), id...), `,"data":`...)
	return append(data.AppendJSON(b), "}}\n"...)
}

// partialLine is the line of a "partial" notification for the request
// id carrying data, in the form rpc.SplitPartial takes apart.
func partialLine(id json.RawMessage, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(partialPrefix)
	buf.Write(id)
	buf.WriteString(`,"data":`)
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	buf.WriteString("}}\n")
	return toValidUTF8(buf.Bytes()), nil
}

// send queues a protocol error's response line, whatever the budget (it
// is short).
func (c *conn) send(b []byte) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.dead {
		return
	}
	c.push(outgoing{line: b})
}

// queueReply queues the response line b to the request id for the writer.
// If it does not fit in the reply budget (see Server.MaxConnReplyBytes) it
// waits for room while the writer makes progress (admit); once the writer
// has been stuck in one write for replyStall, the response is replaced by
// a short CodeRepliesUnread error, so a client that does not read holds
// no more than the budget. After a failed write responses are dropped.
func (c *conn) queueReply(b []byte, id json.RawMessage, req bool) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	switch err := c.admit(outgoing{line: b, req: req}, true); {
	case err == nil:
	case errors.Is(err, errStalled):
		c.cfg.state.count(func(s *ServerStats) { s.RepliesReplaced++ })
		b = appendError(nil, id, rpc.Errorf(rpc.CodeRepliesUnread,
			"response dropped: %d bytes of earlier responses on this connection are still unread (the server holds at most %d); read the responses before sending more requests",
			c.queued, c.cfg.MaxConnReplyBytes))
		c.push(outgoing{line: b, req: req})
	default:
		if req {
			c.inflight.Add(-1) // dropped: the connection is dead
		}
	}
}

// fits reports whether a line of n bytes may be queued for c while the
// server holds total bytes in its budget: it fits in the connection's
// budget and the server's; or the connection holds nothing and the line
// is short, or fits in the server's budget, or is larger than that
// budget and the server holds nothing else. c.qmu is held.
func (c *conn) fits(n, total int64) bool {
	held := c.queued + c.reserved
	maxAll := int64(c.cfg.MaxReplyBytes)
	if held+n <= int64(c.cfg.MaxConnReplyBytes) && total+n <= maxAll {
		return true
	}
	return held == 0 && (n <= shortLine || total+n <= maxAll || total == 0)
}

// admit queues o once it fits (fits), and returns nil. Meanwhile it
// waits, c.qmu released, for room: as c's writer writes, or as the
// server's budget drops. Once it has waited replyStall for room in the
// server's budget while c's own writer is not stuck, it drops a
// connection whose writer has been stuck for evictStall (evictStalled),
// and so on every replyStall: a client that reads is not held up long
// by one that does not. It returns
// errConnDead, queueing nothing, once the connection has failed;
// errStalled when replace is set and c's writer has been stuck in one
// write for replyStall (the caller replaces the response); for a
// notification (replace not set), the error of the connection's context
// once it ends. c.qmu is held.
func (c *conn) admit(o outgoing, replace bool) error {
	stall := c.cfg.replyStall
	n := int64(len(o.line))
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	var done <-chan struct{} // a notification is abandoned once its request is cancelled
	if !replace {
		done = c.ctx.Done()
	}
	since := time.Now() // waiting for room in the server's budget since
	for {
		if c.dead {
			return errConnDead
		}
		held := c.queued + c.reserved
		ok, changed := c.cfg.state.hold(n, held, false, func(total int64) bool { return c.fits(n, total) })
		if ok {
			c.append(o)
			return nil
		}
		var stuck time.Duration
		if !c.writing.IsZero() {
			stuck = time.Since(c.writing)
		}
		if replace && stuck >= stall {
			return errStalled
		}
		wait := stall
		if replace && stuck > 0 {
			wait = stall - stuck // then it is replaced
		}
		if stuck < stall && (held == 0 || held+n <= int64(c.cfg.MaxConnReplyBytes)) {
			// Only the server's budget keeps it out.
			if waited := time.Since(since); waited < stall {
				wait = min(wait, stall-waited)
			} else {
				c.qmu.Unlock()
				c.cfg.state.evictStalled(c, c.cfg.evictStall)
				c.qmu.Lock()
				since = time.Now()
				continue
			}
		} else {
			since = time.Now()
		}
		roomc := c.roomc
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		c.qmu.Unlock()
		var err error
		select {
		case <-roomc:
		case <-changed:
		case <-timer.C:
		case <-done:
			err = c.ctx.Err()
		}
		c.qmu.Lock()
		if err != nil {
			return err
		}
	}
}

// push queues o whatever the budget (a short line: a protocol error, a
// replaced response) and wakes the writer. c.qmu is held.
func (c *conn) push(o outgoing) {
	c.cfg.state.hold(int64(len(o.line)), c.queued+c.reserved, false, nil)
	c.append(o)
}

// append adds o, already counted in the server's budget, to the queue
// and wakes the writer. c.qmu is held.
func (c *conn) append(o outgoing) {
	c.queue = append(c.queue, o)
	c.queued += int64(len(o.line))
	c.signalWriter()
}

func (c *conn) signalWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// signalRoom wakes whoever waits for room on the connection. c.qmu is
// held.
func (c *conn) signalRoom() {
	close(c.roomc)
	c.roomc = make(chan struct{})
}

// done counts a response written or dropped. c.qmu is held.
func (c *conn) done(o outgoing) {
	c.queued -= int64(len(o.line))
	c.cfg.state.release(int64(len(o.line)), false)
	if o.req {
		c.inflight.Add(-1)
	}
}

// waitRoom is the reader's back-pressure: it waits while the connection
// has half its reply budget waiting to be written, or has anything
// waiting while half the server's budget is used. It reports false if
// reading has been stopped meanwhile.
func (c *conn) waitRoom() bool {
	for {
		c.qmu.Lock()
		total, changed := c.cfg.state.used()
		held := c.queued + c.reserved
		full := !c.dead && held > 0 &&
			(held >= int64(c.cfg.MaxConnReplyBytes)/2 || total >= int64(c.cfg.MaxReplyBytes)/2)
		roomc := c.roomc
		c.qmu.Unlock()
		if !full {
			return true
		}
		select {
		case <-roomc:
		case <-changed:
		case <-c.stopc:
			return false
		}
	}
}

// writeLoop is the connection's writer: it writes the queued responses in
// order, each with its write deadline, until serve says no more will come
// and the queue is empty. After a failed write (the client stopped
// reading for WriteTimeout, or hung up) it drops what is queued, cancels
// the connection's requests, stops reading and ends.
func (c *conn) writeLoop() {
	defer close(c.wdone)
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.closing {
			c.qmu.Unlock()
			<-c.wake
			c.qmu.Lock()
		}
		if len(c.queue) == 0 {
			c.qmu.Unlock()
			return
		}
		o := c.queue[0]
		c.queue[0] = outgoing{}
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.queue = nil // let the backing array go
		}
		c.writing = time.Now()
		c.qmu.Unlock()

		err := c.writeOut(o.line)

		c.qmu.Lock()
		c.writing = time.Time{}
		c.done(o)
		if err != nil {
			c.dead = true
			for _, q := range c.queue {
				c.done(q)
			}
			c.queue = nil
		}
		c.signalRoom()
		c.qmu.Unlock()
		if err != nil {
			if c.ctx.Err() == nil && !isClosedPeer(err) {
				c.cfg.logf("rpc: dropped a connection: a response could not be written: %v", err)
			}
			c.cancel()
			c.stop()
			return
		}
	}
}

// heard returns when the client was last heard from: when bytes of it
// were last read, or now, if more of them wait unread than at the last
// look. The second matters while the connection is not read (it holds
// its budget, or its requests are all in flight): the keep-alive of a
// client that reads nothing because its own reader is paused (rpc.Client
// writing to a pager left on one page) then lies in the socket's receive
// queue.
func (c *conn) heard() int64 {
	if n, ok := queuedInput(c.nc); ok && int64(n) != c.inq.Swap(int64(n)) && n > 0 {
		c.lastHeard.Store(time.Now().UnixNano())
	}
	return c.lastHeard.Load()
}

// writeOut writes one response line, each attempt within the write
// deadline. An attempt that times out while the client keeps sending
// (rpc.Client's keep-alive while its caller is busy with what came: a
// pager left on one page) goes on with the rest: only a client silent
// through a whole attempt is dropped.
func (c *conn) writeOut(line []byte) error {
	for {
		c.heard() // the receive queue as the attempt starts
		start := time.Now().UnixNano()
		c.setWriteDeadline()
		n, err := c.nc.Write(line)
		if err == nil {
			c.touch()
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || c.ctx.Err() != nil || c.heard() < start {
			return err
		}
		line = line[n:]
	}
}

// isClosedPeer reports whether a write error means the client hung up.
func isClosedPeer(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// cancelledWriteTimeout bounds the writing of a response once the
// connection's requests have been cancelled.
const cancelledWriteTimeout = time.Second

// setWriteDeadline sets the deadline for writing one response.
func (c *conn) setWriteDeadline() {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	timeout := c.cfg.WriteTimeout
	if c.ctx.Err() != nil && (timeout <= 0 || timeout > cancelledWriteTimeout) {
		timeout = cancelledWriteTimeout
	}
	var d time.Time
	if timeout > 0 {
		d = time.Now().Add(timeout)
	}
	c.nc.SetWriteDeadline(d)
}

// request is a parsed request line.
type request struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage
}

var (
	jsonrpcVersion = []byte(`"2.0"`)
	nullID         = json.RawMessage("null")
)

// parseRequest parses one line. On a fault it returns the error to send
// and, in req.id, the request's id if it could be read (nil otherwise).
func parseRequest(line []byte) (request, *rpc.Error) {
	var req request
	if !json.Valid(line) {
		return req, rpc.Errorf(rpc.CodeParseError, "parse error: invalid JSON")
	}
	switch line[0] {
	case '{':
	case '[':
		return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: batch requests are not supported")
	default:
		return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: not a JSON object")
	}
	// A map, not a struct: member names are case-sensitive in JSON-RPC.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return req, rpc.Errorf(rpc.CodeParseError, "parse error: %v", err)
	}
	if id, ok := m["id"]; ok {
		switch id[0] {
		case '"':
			// Echoed as read, so it must be valid JSON text: UTF-8.
			if !utf8.Valid(id) {
				return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: id must be valid UTF-8")
			}
			req.id = id
		case 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			req.id = id
		default:
			return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: id must be a string, a number or null")
		}
	}
	if v, ok := m["jsonrpc"]; !ok || !bytes.Equal(v, jsonrpcVersion) {
		return req, rpc.Errorf(rpc.CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
	}
	method, ok := m["method"]
	if !ok {
		return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: missing method")
	}
	if method[0] != '"' || json.Unmarshal(method, &req.method) != nil {
		return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: method must be a string")
	}
	if p, ok := m["params"]; ok && p[0] != 'n' {
		if p[0] != '{' && p[0] != '[' {
			return req, rpc.Errorf(rpc.CodeInvalidRequest, "invalid request: params must be an object or an array")
		}
		req.params = p
	}
	return req, nil
}

// appendResult appends a success response line. A result that is not
// valid JSON becomes an internal error; one holding a newline is
// compacted so the response stays on one line, and invalid UTF-8 (which
// a result may carry from a request's params) becomes U+FFFD. (A result
// as encoding/json marshals it, on one line, is only checked:
// jsonread.Valid reads it several times faster than json.Compact
// rewrites it, 65 µs of a 300 µs glob of 200 paths.)
func appendResult(dst []byte, id, result json.RawMessage) []byte {
	if len(result) == 0 {
		result = nullID
	}
	buf := bytes.NewBuffer(dst)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":`)
	if bytes.IndexByte(result, '\n') < 0 && jsonread.Valid(result) {
		buf.Write(result)
	} else if err := json.Compact(buf, result); err != nil {
		return appendError(dst[:0], id, rpc.Errorf(rpc.CodeInternalError, "internal error: the handler returned invalid JSON"))
	}
	buf.WriteString("}\n")
	return toValidUTF8(buf.Bytes())
}

// replacementEscape is U+FFFD as a JSON escape.
var replacementEscape = []byte(`\ufffd`)

// toValidUTF8 replaces each run of invalid UTF-8 in a response line with
// the escape of U+FFFD. The line is valid JSON apart from its encoding,
// so invalid bytes can only be inside strings, where the escape is valid:
// the result is valid JSON text, which must be UTF-8 (RFC 8259).
func toValidUTF8(line []byte) []byte {
	if utf8.Valid(line) {
		return line
	}
	return bytes.ToValidUTF8(line, replacementEscape)
}

// appendError appends an error response line; a nil id is written as
// null.
func appendError(dst []byte, id json.RawMessage, e *rpc.Error) []byte {
	if id == nil {
		id = nullID
	}
	eb, err := jsonenc.Marshal(e)
	if err != nil { // only an invalid Data can fail
		eb, _ = jsonenc.Marshal(&rpc.Error{Code: e.Code, Message: e.Message})
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":`...)
	dst = append(dst, eb...)
	return toValidUTF8(append(dst, "}\n"...))
}
