package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/indexd/indexd/internal/clock"
	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/lineread"
)

// Client errors.
var (
	// ErrClosed: the Client was closed; calls in flight and later calls
	// fail with it.
	ErrClosed = errors.New("rpc: client closed")
	// ErrConnLost: the connection to the server broke (the server went
	// away, or its answer could not be read). Wrapped with the cause.
	ErrConnLost = errors.New("rpc: connection to the daemon lost")
)

// maxResponseSize bounds one response line read by a Client; a longer one
// breaks the connection (the daemon's responses are far smaller).
const maxResponseSize = 256 << 20

// Defaults of the Dialer's timeouts.
const (
	// DefaultConnectTimeout is Dialer.ConnectTimeout's default.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultAnswerTimeout is Dialer.AnswerTimeout's default.
	DefaultAnswerTimeout = 10 * time.Second
)

// ErrNoAnswer is wrapped by the error of a call the server did not answer
// in time (a *NoAnswerError): it went silent for the Client's answer
// timeout, or the call's context reached its deadline.
var ErrNoAnswer = errors.New("rpc: the daemon did not answer")

// NoAnswerError is the error of a Call the server did not answer in time.
// errors.Is(err, ErrNoAnswer) holds, and so does errors.Is(err,
// context.DeadlineExceeded) when the call's deadline passed.
type NoAnswerError struct {
	Socket string        // the server's socket
	Method string        // the method called
	Waited time.Duration // the answer timeout (Silent), else how long the call waited until its deadline
	// Silent: nothing at all came from the server for Waited, not even
	// the answer to a ping (else the server was alive but the call's
	// deadline passed first).
	Silent bool
	err    error // the context's error when the deadline passed
}

func (e *NoAnswerError) Error() string {
	if e.Silent {
		return fmt.Sprintf("indexd did not answer within %v (socket %s)", roundWait(e.Waited), e.Socket)
	}
	return fmt.Sprintf("indexd did not answer the %s request within %v (socket %s)", e.Method, roundWait(e.Waited), e.Socket)
}

// Is makes errors.Is(err, ErrNoAnswer) hold.
func (e *NoAnswerError) Is(target error) bool { return target == ErrNoAnswer }

// Unwrap returns the context's error when the call's deadline passed.
func (e *NoAnswerError) Unwrap() error { return e.err }

// roundWait rounds a wait for messages: to the second from 10 s, to the
// millisecond below (the timeouts are round numbers; the waits measured
// up to a deadline are a hair off them).
func roundWait(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// Conn is a Client's connection to the server: a net.Conn serves, and
// Dial's is a Unix socket held in an *os.File, whose reads and writes go
// through the runtime's poller (so the Client links no network stack).
type Conn interface {
	io.ReadWriteCloser
	SetWriteDeadline(t time.Time) error
}

// aLongTimeAgo is a deadline long past, which interrupts a write.
var aLongTimeAgo = time.Unix(1, 0)

// A Dialer connects Clients. The zero value uses the defaults; a negative
// timeout disables it.
type Dialer struct {
	// ConnectTimeout bounds the connection and the peer check, when the
	// context has no earlier deadline. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// AnswerTimeout is how long a call waits while nothing at all comes
	// from the server (no byte of any response) before failing with a
	// *NoAnswerError; it bounds the writing of a request too. Halfway
	// through such a silence the Client sends a ping, which a live server
	// answers at once even while the call is slow, so only a server that
	// is gone or hung (or has stopped reading: shutting down, or with
	// every one of the connection's MaxInFlight requests running) makes
	// a call fail this way. A call's own deadline comes from its context.
	// Default DefaultAnswerTimeout.
	AnswerTimeout time.Duration
	// Clock times the answer timeout's silences (nil: the system's
	// clock). The deadlines of writes, which the kernel keeps, and of
	// the calls' contexts stay on the system's clock.
	Clock clock.Clock

	// backlog, if set, is called each time a connection waits for room in
	// the server's backlog (this package's tests).
	backlog func()
}

func (d Dialer) connectTimeout() time.Duration {
	if d.ConnectTimeout == 0 {
		return DefaultConnectTimeout
	}
	return d.ConnectTimeout
}

func (d Dialer) answerTimeout() time.Duration {
	if d.AnswerTimeout == 0 {
		return DefaultAnswerTimeout
	}
	return max(d.AnswerTimeout, 0)
}

// Client is a connection to a server. It is safe for concurrent use:
// calls from many goroutines are pipelined on the one connection and each
// is matched to its response by id, whatever order the server answers in.
type Client struct {
	nc     Conn
	socket string        // the server's address, for messages
	answer time.Duration // the answer timeout (see Dialer.AnswerTimeout); 0: none
	clock  clock.Clock   // times the silences (Dialer.Clock)
	done   chan struct{} // closed when the reader goroutine has exited

	lastRead atomic.Int64 // when bytes last came from the server (UnixNano, clock)
	// inPartial is set while the reader goroutine is in a CallStream's
	// onPartial: the caller is busy with what came (writing it to a
	// slow or paused reader of its own), so the server's silence is
	// not counted meanwhile.
	inPartial atomic.Bool

	wmu sync.Mutex // serialises request writes

	mu      sync.Mutex               // guards the fields below
	pending map[uint64]chan response // calls waiting for their response, by id
	nextID  uint64                   // the last id used
	err     error                    // set once the client can no longer call; then pending is empty
	closed  bool                     // Close was called

	// partial holds, by id, the calls of CallStream that take the
	// "partial" notifications of their answer.
	partial map[uint64]func(json.RawMessage)
}

// response is what a waiting call receives.
type response struct {
	result json.RawMessage
	err    error // an *Error from the server, or a transport error
}

// Dial connects to the server on the Unix socket at path, with the
// default timeouts (see Dialer). The server must run as the current user
// (its uid, from SO_PEERCRED, is the current one).
func Dial(ctx context.Context, path string) (*Client, error) {
	return Dialer{}.Dial(ctx, path)
}

// Dial connects to the server on the Unix socket at path. The server must
// run as the current user (its uid, from SO_PEERCRED, is the current one).
func (d Dialer) Dial(ctx context.Context, path string) (*Client, error) {
	dctx := ctx
	if t := d.connectTimeout(); t > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	nc, err := dialUnix(dctx, path, d.backlog)
	if err != nil {
		if ctx.Err() == nil && dctx.Err() != nil {
			return nil, fmt.Errorf("%w: connecting to %s took over %v", ErrNoAnswer, path, d.connectTimeout())
		}
		return nil, err
	}
	c := d.NewClient(nc)
	c.socket = path
	return c, nil
}

// NewClient returns a Client speaking on nc with the default timeouts
// (see Dialer). It owns nc from now on, and starts the goroutine reading
// responses; Close stops it.
func NewClient(nc Conn) *Client {
	return Dialer{}.NewClient(nc)
}

// NewClient returns a Client speaking on nc with d's answer timeout. It
// owns nc from now on, and starts the goroutine reading responses; Close
// stops it.
// Its messages name no socket (a Client of Dial's names its path).
func (d Dialer) NewClient(nc Conn) *Client {
	c := &Client{
		nc:      nc,
		answer:  d.answerTimeout(),
		clock:   clock.Or(d.Clock),
		done:    make(chan struct{}),
		pending: make(map[uint64]chan response),
	}
	c.lastRead.Store(c.clock.Now().UnixNano())
	go c.readLoop()
	return c
}

// Close closes the connection. Calls in flight return ErrClosed; the
// server cancels the requests it is still working on. Close waits for the
// reader goroutine to exit.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	err := c.nc.Close()
	<-c.done
	return err
}

// Call calls method with params and waits for the response. params is
// marshalled to JSON (nil sends no params; a json.RawMessage is sent as
// is). On success the result is stored in *result if result is not nil.
// A JSON-RPC error response is returned as an *Error; a call not answered
// in time (the Client's answer timeout, or ctx's deadline) as a
// *NoAnswerError; any other error is ctx's, ErrClosed, or wraps
// ErrConnLost.
//
// Cancelling ctx abandons the call (its response is discarded when it
// comes); the server keeps working on it until the connection closes.
func (c *Client) Call(ctx context.Context, method string, params any, result *json.RawMessage) error {
	return c.call(ctx, method, params, result, nil)
}

// CallStream is Call for a method whose handler sends parts of its answer
// ahead of its response (Notify): onPartial gets the data of each, in
// order, on the client's reading goroutine (so a slow onPartial slows the
// server down, not the other way round), before Call returns. The data
// is the connection's buffer: valid until onPartial returns, and not
// checked to be JSON (its reader does that as it reads it).
func (c *Client) CallStream(ctx context.Context, method string, params any, result *json.RawMessage, onPartial func(data json.RawMessage)) error {
	return c.call(ctx, method, params, result, onPartial)
}

func (c *Client) call(ctx context.Context, method string, params any, result *json.RawMessage, onPartial func(json.RawMessage)) error {
	id, ch, err := c.register()
	if err != nil {
		return err
	}
	if onPartial != nil {
		c.mu.Lock()
		if c.partial == nil {
			c.partial = map[uint64]func(json.RawMessage){}
		}
		c.partial[id] = onPartial
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.partial, id)
			c.mu.Unlock()
		}()
	}
	line, err := encodeRequest(strconv.AppendUint(nil, id, 10), method, params)
	if err == nil {
		err = c.write(ctx, line, method)
	}
	if err != nil {
		c.abandon(id)
		return err
	}
	sentAt := time.Now() // for a deadline's message (ctxErr)
	sent := c.clock.Now()
	var (
		probes []uint64  // ids of the pings sent: abandoned on return
		probed time.Time // when the last ping was sent
	)
	defer func() {
		for _, p := range probes {
			c.abandon(p)
		}
	}()
	if c.answer > 0 {
		t := c.clock.NewTimer(c.answer / 2)
		defer t.Stop()
		// The silence is measured from the later of the request's sending
		// and the last bytes received. Halfway through, a ping; at the
		// end, failure.
		check := func() error {
			if c.inPartial.Load() {
				// The silence is ours: tell the server we are alive
				// (a notification, never answered), so that its writer,
				// blocked on us, keeps the connection.
				c.keepAlive(ctx)
				t.Reset(c.answer / 2)
				return nil
			}
			last := time.Unix(0, c.lastRead.Load())
			if last.Before(sent) {
				last = sent
			}
			quiet := c.clock.Now().Sub(last)
			if quiet >= c.answer {
				return &NoAnswerError{Socket: c.socket, Method: method, Waited: c.answer, Silent: true}
			}
			next := c.answer - quiet
			if quiet >= c.answer/2 {
				if probed.IsZero() || last.After(probed) {
					probed = c.clock.Now()
					if p, ok := c.probe(ctx); ok {
						probes = append(probes, p)
					}
				}
			} else {
				next = c.answer/2 - quiet
			}
			t.Reset(next)
			return nil
		}
		for {
			select {
			case r := <-ch:
				return r.into(result)
			case <-ctx.Done():
				c.abandon(id)
				return c.ctxErr(ctx, method, sentAt)
			case <-t.C():
				if err := check(); err != nil {
					c.abandon(id)
					return err
				}
			}
		}
	}
	select {
	case r := <-ch:
		return r.into(result)
	case <-ctx.Done():
		c.abandon(id)
		return c.ctxErr(ctx, method, sentAt)
	}
}

// into returns the response's error, or stores its result in *result.
func (r response) into(result *json.RawMessage) error {
	if r.err != nil {
		return r.err
	}
	if result != nil {
		*result = r.result
	}
	return nil
}

// ctxErr is the error of a call whose ctx is done: a *NoAnswerError when
// its deadline passed, else ctx's error.
func (c *Client) ctxErr(ctx context.Context, method string, sent time.Time) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		waited := time.Since(sent)
		if dl, ok := ctx.Deadline(); ok {
			waited = dl.Sub(sent)
		}
		return &NoAnswerError{Socket: c.socket, Method: method, Waited: waited, err: err}
	}
	return err
}

// register allocates a call's id and the channel its response will come
// on.
func (c *Client) register() (uint64, chan response, error) {
	ch := make(chan response, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, nil, c.err
	}
	c.nextID++
	c.pending[c.nextID] = ch
	return c.nextID, ch, nil
}

// probe sends a ping whose answer nobody waits for: any bytes coming back
// show that the server is alive (see Dialer.AnswerTimeout). It reports
// the ping's id, for abandoning it, and whether it was sent.
func (c *Client) probe(ctx context.Context) (uint64, bool) {
	id, _, err := c.register()
	if err != nil {
		return 0, false
	}
	line, _ := encodeRequest(strconv.AppendUint(nil, id, 10), MethodPing, nil)
	if c.write(ctx, line, MethodPing) != nil {
		c.abandon(id)
		return 0, false
	}
	return id, true
}

// keepAlive sends a ping as a notification: the server does not answer
// it, but its bytes show the server that this client is alive while it
// reads nothing (it is busy with what came). A failure is left to the
// call: the connection is then lost.
func (c *Client) keepAlive(ctx context.Context) {
	line, _ := encodeRequest(nil, MethodPing, nil)
	_ = c.write(ctx, line, MethodPing)
}

// Notify sends a notification: a request without an id, which the server
// does not answer.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	line, err := encodeRequest(nil, method, params)
	if err != nil {
		return err
	}
	return c.write(ctx, line, method)
}

// Ping calls ping and waits for the answer.
func (c *Client) Ping(ctx context.Context) error {
	return c.Call(ctx, MethodPing, nil, nil)
}

// abandon forgets a call that will not wait for its response.
func (c *Client) abandon(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// write sends one request line, within the answer timeout. A write
// interrupted midway leaves half a line on the wire, so any write failure
// closes the connection.
func (c *Client) write(ctx context.Context, line []byte, method string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.answer > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.answer))
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.nc.SetWriteDeadline(aLongTimeAgo) // interrupts the write
		close(fired)
	})
	start := time.Now()
	_, err := c.nc.Write(line)
	if !stop() {
		// The deadline was set, maybe after the write completed.
		<-fired
		if err != nil {
			err = ctx.Err()
		}
	}
	c.nc.SetWriteDeadline(time.Time{}) // for the next writer
	if err != nil {
		c.nc.Close() // the reader notices, fails the pending calls and exits
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case c.closed:
			return ErrClosed
		case errors.Is(err, context.DeadlineExceeded):
			return c.ctxErr(ctx, method, start)
		case errors.Is(err, context.Canceled):
			return err
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server did not read the request for the answer timeout.
			return &NoAnswerError{Socket: c.socket, Method: method, Waited: c.answer, Silent: true}
		}
		return fmt.Errorf("%w: %v", ErrConnLost, err)
	}
	return nil
}

// readRecorder reads the connection, recording when bytes came.
type readRecorder struct{ c *Client }

func (r readRecorder) Read(p []byte) (int, error) {
	n, err := r.c.nc.Read(p)
	if n > 0 {
		r.c.lastRead.Store(r.c.clock.Now().UnixNano())
	}
	return n, err
}

// encodeRequest builds a request line; a nil id makes a notification.
func encodeRequest(id []byte, method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0",`)
	if id != nil {
		buf.WriteString(`"id":`)
		buf.Write(id)
		buf.WriteByte(',')
	}
	buf.WriteString(`"method":`)
	buf.Write(jsonenc.AppendString(nil, method))
	if params != nil {
		var p []byte
		var err error
		switch v := params.(type) {
		case json.RawMessage:
			p = v
		case []byte:
			p = v
		case json.Marshaler: // the protocol's params: no reflection
			if p, err = v.MarshalJSON(); err != nil {
				return nil, fmt.Errorf("rpc: params: %w", err)
			}
		default:
			if p, err = jsonenc.Marshal(params); err != nil {
				return nil, fmt.Errorf("rpc: params: %w", err)
			}
		}
		buf.WriteString(`,"params":`)
		if err := json.Compact(&buf, p); err != nil { // one line, and valid
			return nil, fmt.Errorf("rpc: params: %w", err)
		}
	}
	buf.WriteString("}\n")
	if buf.Len() > DefaultMaxRequestSize+1 {
		return nil, fmt.Errorf("rpc: request too large (%d bytes, limit %d)", buf.Len()-1, DefaultMaxRequestSize)
	}
	return buf.Bytes(), nil
}

// deliver hands r to the call waiting for id, if it has not given up.
func (c *Client) deliver(id uint64, r response) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// resultPrefix starts every success response the server writes, its id
// following (rpc/server's appendResult).
var resultPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// SplitResult takes a success response line in the exact form the server
// writes it, {"jsonrpc":"2.0","id":N,"result":RESULT}, apart without
// reading RESULT: a large answer is not scanned here only to be scanned
// again by whoever decodes it (which also finds it malformed, if it is).
// ok is false for any other line, which the caller decodes in full.
func SplitResult(line []byte) (id uint64, result []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, resultPrefix)
	if !ok {
		return 0, nil, false
	}
	id, rest, ok = cutID(rest)
	if !ok {
		return 0, nil, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`,"result":`))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return 0, nil, false
	}
	return id, rest[:len(rest)-1], true
}

// partialData hands the data of a "partial" notification for the call id
// to its onPartial, if it is a stream still waiting. The data is only
// valid during the call.
func (c *Client) partialData(id uint64, data []byte) {
	c.mu.Lock()
	fn := c.partial[id]
	c.mu.Unlock()
	if fn == nil {
		return
	}
	c.inPartial.Store(true)
	fn(data)
	c.lastRead.Store(c.clock.Now().UnixNano()) // the silence counts from now
	c.inPartial.Store(false)
}

// partialPrefix starts every "partial" notification the server writes,
// the request's id following (rpc/server's queuePartial).
var partialPrefix = []byte(`{"jsonrpc":"2.0","method":"` + MethodPartial + `","params":{"id":`)

// SplitPartial takes a "partial" notification line in the exact form the
// server writes it, {"jsonrpc":"2.0","method":"partial","params":{"id":N,
// "data":DATA}}, apart without reading DATA, as SplitResult does a
// response: a stream's batches are read once, by the caller's onPartial.
// ok is false for any other line.
func SplitPartial(line []byte) (id uint64, data []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, partialPrefix)
	if !ok {
		return 0, nil, false
	}
	id, rest, ok = cutID(rest)
	if !ok {
		return 0, nil, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`,"data":`))
	if !ok || len(rest) < 3 || rest[len(rest)-1] != '}' || rest[len(rest)-2] != '}' {
		return 0, nil, false
	}
	return id, rest[:len(rest)-2], true
}

// cutID reads a request id (digits, no leading zero) from the front of b.
func cutID(b []byte) (id uint64, rest []byte, ok bool) {
	n := 0
	for n < len(b) && n < 20 && '0' <= b[n] && b[n] <= '9' {
		n++
	}
	id, err := strconv.ParseUint(string(b[:n]), 10, 64)
	if err != nil || n > 1 && b[0] == '0' {
		return 0, nil, false
	}
	return id, b[n:], true
}

// readLoop reads responses and hands each to the call waiting for its id,
// until the connection fails or is closed.
func (c *Client) readLoop() {
	defer close(c.done)
	lr := lineread.New(readRecorder{c}, 64<<10, maxResponseSize)
	var err error
	for {
		var line []byte
		line, err = lr.Next()
		if err != nil {
			break
		}
		if id, result, ok := SplitResult(line); ok {
			c.deliver(id, response{result: bytes.Clone(result)})
			continue
		}
		if id, data, ok := SplitPartial(line); ok {
			c.partialData(id, data)
			continue
		}
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &r) != nil {
			err = fmt.Errorf("malformed response: %.100q", line)
			break
		}
		if r.ID == nil && r.Method == MethodPartial {
			var p struct {
				ID   uint64          `json:"id"`
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(r.Params, &p) == nil {
				c.partialData(p.ID, p.Data)
			}
			continue
		}
		id, perr := strconv.ParseUint(string(r.ID), 10, 64)
		if perr != nil {
			// id null: the server could not read a request of ours.
			// Requests are built here, so this is not expected; which
			// call it belongs to is unknown, so it is dropped.
			continue
		}
		if r.Error != nil {
			c.deliver(id, response{err: r.Error})
		} else {
			c.deliver(id, response{result: r.Result})
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.err = ErrClosed
	} else {
		c.err = fmt.Errorf("%w: %v", ErrConnLost, err)
		c.nc.Close()
	}
	for id, ch := range c.pending {
		ch <- response{err: c.err}
		delete(c.pending, id)
	}
}
