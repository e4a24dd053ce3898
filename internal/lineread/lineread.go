// Package lineread reads newline-terminated lines with a bounded buffer,
// for the daemon's socket protocol (package rpc) and the MCP server's
// standard input (package mcp): a line longer than the limit is skipped
// without being held in memory and reported as ErrTooLong.
package lineread

import (
	"bufio"
	"errors"
	"io"
)

// ErrTooLong reports a line longer than the limit. The line has been
// consumed (up to and including its newline, or to the end of input) and
// the reader is positioned at the start of the next one.
var ErrTooLong = errors.New("line too long")

// Reader reads newline-terminated lines with a bounded buffer: a line
// longer than max is skipped without being held in memory (the bufio
// buffer's worth at a time), so a peer cannot make the reader allocate
// more than max plus the bufio buffer for one line.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte // the current line; reused between lines
	// skipping: the current line already exceeded max and is being
	// discarded (kept across calls so a read error mid-skip, such as an
	// idle timeout that the caller chooses to ride out, resumes the skip).
	skipping bool
}

// New returns a Reader of r with a bufio buffer of bufSize bytes and
// lines of at most max bytes (not counting the newline).
func New(r io.Reader, bufSize, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: max}
}

// Partial reports whether part of a line has been read.
func (lr *Reader) Partial() bool { return len(lr.buf) > 0 || lr.skipping }

// Next returns the next line without its trailing newline. The slice is
// valid until the next call. A final line without a newline at EOF is
// returned as a line; EOF itself is returned once no bytes remain. A line
// over the limit yields ErrTooLong. On any other error (a deadline, a
// closed connection) the bytes read so far are kept, and a later call
// continues the same line.
func (lr *Reader) Next() ([]byte, error) {
	if len(lr.buf) == 0 {
		lr.release()
	}
	for {
		frag, err := lr.br.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 && !lr.skipping && len(frag) <= lr.max+1 {
			// The whole line is in bufio's buffer: no copy.
			return frag[:len(frag)-1], nil
		}
		if !lr.skipping {
			if n := len(lr.buf) + len(frag); n > lr.max+1 { // +1: the newline is not part of the line
				lr.skipping = true
				lr.release()
			} else {
				if n > cap(lr.buf) {
					// Double, rather than append's gentler growth, to
					// keep the garbage of a large line near its size.
					b := make([]byte, len(lr.buf), min(max(2*cap(lr.buf), n), lr.max+1))
					copy(b, lr.buf)
					lr.buf = b
				}
				lr.buf = append(lr.buf, frag...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil, err == io.EOF && (len(lr.buf) > 0 || lr.skipping):
			if lr.skipping {
				lr.skipping = false
				return nil, ErrTooLong
			}
			line := lr.buf
			lr.buf = lr.buf[:0]
			if n := len(line); n > 0 && line[n-1] == '\n' {
				line = line[:n-1]
			}
			return line, nil
		default:
			return nil, err
		}
	}
}

// release drops a large line buffer so one big request does not pin its
// memory for the life of the connection.
func (lr *Reader) release() {
	if cap(lr.buf) > 64<<10 {
		lr.buf = nil
	} else {
		lr.buf = lr.buf[:0]
	}
}
