// Package rawfile reads whole files the cheap way, for scanning many of
// them: raw open, read and close system calls and nothing else in the
// common case. os.File would add an fstat, a poller registration and a
// cleanup per file, which is a third of the cost of grepping a source tree.
//
// Files are opened beneath the workspace root through a rooted.Root: no
// component may be a symlink, so a file (or a directory on its path)
// swapped for a link after a walk is not read through. They are opened
// O_NONBLOCK (a FIFO swapped in does not block: its read fails with
// EAGAIN); a device swapped in is read only up to the caller's limit.
package rawfile

import (
	"errors"
	"os"
	"syscall"

	"github.com/indexd/indexd/internal/rooted"
)

// ErrTooLarge: the file holds more than the caller's limit.
var ErrTooLarge = errors.New("rawfile: file larger than the limit")

// Reader reads files into one reusable buffer; it is not safe for
// concurrent use.
type Reader struct {
	buf []byte
}

// Read returns the contents of the file at rel beneath root, whose size
// was sizeHint when it was listed (a guess is fine), or an error: the
// open's or read's (wrapped *os.PathError), or ErrTooLarge past limit
// bytes. The result is valid until the next Read.
//
// A regular file's read returns less than asked only at its end, so a read
// shorter than the buffer proves EOF without another call: one read for a
// file that did not grow.
func (r *Reader) Read(root *rooted.Root, rel string, sizeHint int64, limit int) ([]byte, error) {
	fd, err := root.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	want := int(min(max(sizeHint, 0), int64(limit))) + 1
	if cap(r.buf) < want {
		r.buf = make([]byte, 0, want+want/8+512)
	}
	buf := r.buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, ErrTooLarge
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: root.Path() + "/" + rel, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) < cap(buf) {
			break
		}
	}
	r.buf = buf[:0]
	if len(buf) > limit {
		return nil, ErrTooLarge
	}
	return buf, nil
}
