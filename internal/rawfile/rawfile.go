// Package rawfile reads whole files the cheap way, for scanning many of
// them: raw open, read and close system calls and nothing else in the
// common case. os.File would add an fstat, a poller registration and a
// cleanup per file, which is a third of the cost of grepping a source tree.
//
// Files are opened with O_NOFOLLOW (a symlink swapped in after a walk is
// not read through) and O_NONBLOCK (a FIFO swapped in does not block: its
// read fails with EAGAIN). A device swapped in is read only up to the
// caller's limit.
package rawfile

import "syscall"

const openFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// Reader reads files into one reusable buffer; it is not safe for
// concurrent use.
type Reader struct {
	buf []byte
}

// Read returns the contents of the file at abs, whose size was sizeHint
// when it was listed (a guess is fine), or ok=false if it cannot be read or
// is longer than limit bytes. The result is valid until the next Read.
//
// A regular file's read returns less than asked only at its end, so a read
// shorter than the buffer proves EOF without another call: one read for a
// file that did not grow.
func (r *Reader) Read(abs string, sizeHint int64, limit int) (data []byte, ok bool) {
	fd, err := open(abs)
	if err != nil {
		return nil, false
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
				return nil, false
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) < cap(buf) {
			break
		}
	}
	r.buf = buf[:0]
	if len(buf) > limit {
		return nil, false
	}
	return buf, true
}

func open(abs string) (int, error) {
	for {
		fd, err := syscall.Open(abs, openFlags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
