package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/internal/lineread"
)

// MaxLineLength bounds one message on the server's input, in bytes (not
// counting its newline). A longer line is skipped without being held in
// memory and answered with a parse error.
const MaxLineLength = 4 << 20

// MaxDepth bounds the nesting of arrays and objects in one message; a
// message nested deeper is answered with a parse error.
const MaxDepth = 512

// lineTransport is the server's stdio transport: newline-delimited
// JSON-RPC, like the SDK's IOTransport, except that a line that is not a
// message is answered, not fatal. The SDK's transport ends the session at
// the first line it cannot decode; this one reads the input line by line
// with a bounded buffer, checks each line (UTF-8, nesting depth, JSON,
// one JSON-RPC message) and answers a bad line itself with the JSON-RPC
// error it calls for (id null unless the line's id could be read), its
// writes serialised with the SDK's. Only the end of the input ends the
// session. Batches (JSON arrays) are refused: MCP dropped them in
// protocol 2025-06-18.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	// logf reports each bad line.
	logf func(msg string, args ...any)
}

// Connect implements sdk.Transport.
func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{
		in:       t.in,
		out:      t.out,
		logf:     t.logf,
		incoming: make(chan lineResult),
		closed:   make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// lineConn is a lineTransport's connection.
type lineConn struct {
	in   io.Reader
	out  io.Writer
	logf func(msg string, args ...any)

	wmu sync.Mutex // serialises writes to out

	// incoming carries what the read goroutine read: a message, or the
	// error (io.EOF at the end of input) after which it has exited.
	incoming  chan lineResult
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

type lineResult struct {
	msg jsonrpc.Message
	err error
}

// badLine is a line that is not a message: the error to answer it with.
type badLine struct {
	id      json.RawMessage // the line's id when it could be read, else nil (null)
	code    int
	message string
}

// readLoop reads the input until its end (or Close), handing messages to
// Read and answering bad lines.
func (c *lineConn) readLoop() {
	lr := lineread.New(c.in, 64<<10, MaxLineLength)
	for {
		var res lineResult
		line, err := lr.Next()
		var bad *badLine
		switch {
		case errors.Is(err, lineread.ErrTooLong):
			bad = &badLine{code: jsonrpc.CodeParseError, message: fmt.Sprintf("parse error: line longer than %d bytes", MaxLineLength)}
		case err != nil:
			res.err = err
		default:
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue // blank lines between messages are tolerated
			}
			res.msg, bad = decodeLine(line)
		}
		if bad != nil {
			c.logf("answered a malformed line from the client", "code", bad.code, "error", bad.message)
			if err := c.reject(bad); err != nil {
				res.err = err
			} else {
				continue
			}
		}
		select {
		case c.incoming <- res:
		case <-c.closed:
			return
		}
		if res.err != nil {
			return
		}
	}
}

// decodeLine decodes one line (not blank, without its newline) as a
// JSON-RPC message, or says why it is not one.
func decodeLine(line []byte) (jsonrpc.Message, *badLine) {
	parseError := func(msg string) *badLine {
		return &badLine{code: jsonrpc.CodeParseError, message: "parse error: " + msg}
	}
	switch {
	case !utf8.Valid(line):
		return nil, parseError("not UTF-8")
	case tooDeep(line, MaxDepth):
		return nil, parseError(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	case !json.Valid(line):
		return nil, parseError("invalid JSON")
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, &badLine{code: jsonrpc.CodeInvalidRequest, message: "invalid request: batch requests are not supported"}
	default:
		return nil, &badLine{code: jsonrpc.CodeInvalidRequest, message: "invalid request: not a JSON object"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &badLine{id: lineID(line), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}
	}
	return msg, nil
}

// lineID returns the id of a JSON object line when it is a string or a
// number (to echo in an error), else nil.
func lineID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	switch c := m.ID[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return m.ID
	}
	return nil
}

// tooDeep reports whether arrays and objects nest deeper than max in
// line, which need not be valid JSON.
func tooDeep(line []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range line {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			if depth++; depth > max {
				return true
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return false
}

var nullID = json.RawMessage("null")

// reject answers a bad line.
func (c *lineConn) reject(bad *badLine) error {
	id := bad.id
	if id == nil {
		id = nullID
	}
	e, err := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{bad.code, bad.message})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":`)
	b.Write(e)
	b.WriteString("}\n")
	return c.write(b.Bytes())
}

func (c *lineConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(b)
	return err
}

// Read implements sdk.Connection: the next message, or io.EOF once the
// input has ended or the connection is closed.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements sdk.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: encoding a message: %w", err)
	}
	return c.write(append(data, '\n'))
}

// Close implements sdk.Connection. It closes the input if it can be
// closed, which may unblock the read goroutine (standard input cannot
// always be interrupted: then the goroutine ends with the process).
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			err = cl.Close()
		}
	})
	return err
}

// SessionID implements sdk.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }
