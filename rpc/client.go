package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
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

// Client is a connection to a server. It is safe for concurrent use:
// calls from many goroutines are pipelined on the one connection and each
// is matched to its response by id, whatever order the server answers in.
type Client struct {
	nc   net.Conn
	done chan struct{} // closed when the reader goroutine has exited

	wmu sync.Mutex // serialises request writes

	mu      sync.Mutex               // guards the fields below
	pending map[uint64]chan response // calls waiting for their response, by id
	nextID  uint64                   // the last id used
	err     error                    // set once the client can no longer call; then pending is empty
	closed  bool                     // Close was called
}

// response is what a waiting call receives.
type response struct {
	result json.RawMessage
	err    error // an *Error from the server, or a transport error
}

// Dial connects to the server on the Unix socket at path. The server must
// run as the current user (SameUser).
func Dial(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := SameUser(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return NewClient(nc), nil
}

// NewClient returns a Client speaking on nc, which it owns from now on. It
// starts the goroutine reading responses; Close stops it.
func NewClient(nc net.Conn) *Client {
	c := &Client{
		nc:      nc,
		done:    make(chan struct{}),
		pending: make(map[uint64]chan response),
	}
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
// A JSON-RPC error response is returned as an *Error; any other error is
// the context's, ErrClosed, or wraps ErrConnLost.
//
// Cancelling ctx abandons the call (its response is discarded when it
// comes); the server keeps working on it until the connection closes.
func (c *Client) Call(ctx context.Context, method string, params any, result *json.RawMessage) error {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	line, err := encodeRequest(strconv.AppendUint(nil, id, 10), method, params)
	if err == nil {
		err = c.write(ctx, line)
	}
	if err != nil {
		c.abandon(id)
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result != nil {
			*result = r.result
		}
		return nil
	case <-ctx.Done():
		c.abandon(id)
		return ctx.Err()
	}
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
	return c.write(ctx, line)
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

// write sends one request line. A write interrupted midway leaves half a
// line on the wire, so any write failure closes the connection.
func (c *Client) write(ctx context.Context, line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.nc.SetWriteDeadline(aLongTimeAgo) // interrupts the write
		close(fired)
	})
	_, err := c.nc.Write(line)
	if !stop() {
		// The deadline was set, maybe after the write completed: clear
		// it for the next writer.
		<-fired
		c.nc.SetWriteDeadline(time.Time{})
		if err != nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		c.nc.Close() // the reader notices, fails the pending calls and exits
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return ErrClosed
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrConnLost, err)
	}
	return nil
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
	m, err := marshalNoEscape(method)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`"method":`)
	buf.Write(m)
	if params != nil {
		var p []byte
		switch v := params.(type) {
		case json.RawMessage:
			p = v
		case []byte:
			p = v
		default:
			if p, err = marshalNoEscape(params); err != nil {
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

// readLoop reads responses and hands each to the call waiting for its id,
// until the connection fails or is closed.
func (c *Client) readLoop() {
	defer close(c.done)
	lr := newLineReader(c.nc, 64<<10, maxResponseSize)
	var err error
	for {
		var line []byte
		line, err = lr.next()
		if err != nil {
			break
		}
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
		}
		if json.Unmarshal(line, &r) != nil {
			err = fmt.Errorf("malformed response: %.100q", line)
			break
		}
		id, perr := strconv.ParseUint(string(r.ID), 10, 64)
		if perr != nil {
			// id null: the server could not read a request of ours.
			// Requests are built here, so this is not expected; which
			// call it belongs to is unknown, so it is dropped.
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch == nil {
			continue // abandoned
		}
		if r.Error != nil {
			ch <- response{err: r.Error}
		} else {
			ch <- response{result: r.Result}
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
