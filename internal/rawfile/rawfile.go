// Package rawfile reads files the cheap way, for scanning many of them:
// raw open, read and close system calls and nothing else in the common
// case. os.File would add an fstat, a poller registration and a cleanup
// per file, which is a third of the cost of grepping a source tree.
//
// Files are opened beneath the workspace root through a rooted.Root: no
// component may be a symlink, so a file (or a directory on its path)
// swapped for a link after a walk is not read through. They are opened
// O_NONBLOCK (a FIFO swapped in does not block: its read fails with
// EAGAIN); a device swapped in is read only up to the caller's limit.
//
// Reader.Read reads a whole file into memory. A large file is read
// incrementally instead: Open it, take its first part with
// Reader.ReadPrefix (one read for a small file, which then needs nothing
// more), and read the rest with File.Read into a buffer of the caller's.
package rawfile

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
)

// ErrTooLarge: the file holds more than the caller's limit.
var ErrTooLarge = errors.New("rawfile: file larger than the limit")

// File is a file open for reading through a raw descriptor. It is not
// safe for concurrent use.
type File struct {
	fd   int
	path string // for errors
}

// Open opens the file at rel beneath root. Close it when done.
func Open(root *rooted.Root, rel string) (*File, error) {
	fd, err := root.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	return &File{fd: fd, path: root.Path() + "/" + rel}, nil
}

// Read reads up to len(p) bytes, as io.Reader does: at the end of the file
// it returns 0, io.EOF. Errors are *os.PathError.
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: f.path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// ReadAt reads up to len(p) bytes at offset off without moving the
// file's position; at or past the end of the file it returns 0, io.EOF.
// Errors are *os.PathError.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Pread(f.fd, p, off)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "pread", Path: f.path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// ReadFullAt reads len(p) bytes at offset off, fewer only at the end of
// the file (without io.EOF), without moving the file's position.
func (f *File) ReadFullAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := f.ReadAt(p[n:], off+int64(n))
		n += m
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Stat returns the open file's status (fstat). Errors are
// *os.PathError.
func (f *File) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(f.fd, &st)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return st, &os.PathError{Op: "fstat", Path: f.path, Err: err}
		}
		return st, nil
	}
}

// Close closes the descriptor.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// Reader reads files into one reusable buffer; it is not safe for
// concurrent use.
type Reader struct {
	buf []byte
}

// Read returns the contents of the file at rel beneath root, whose size
// was sizeHint when it was listed (a guess is fine), or an error: the
// open's or read's (wrapped *os.PathError), or ErrTooLarge past limit
// bytes. The result is valid until the next call.
//
// A regular file's read returns less than asked only at its end, so a read
// shorter than the buffer proves EOF without another call: one read for a
// file that did not grow.
func (r *Reader) Read(root *rooted.Root, rel string, sizeHint int64, limit int) ([]byte, error) {
	f, err := Open(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, eof, err := r.ReadPrefix(f, sizeHint, limit)
	if err != nil {
		return nil, err
	}
	if !eof {
		return nil, ErrTooLarge
	}
	return data, nil
}

// ReadPrefix reads f from its current position into the reusable buffer
// until the end of the file or until it holds more than limit bytes, and
// returns what it read and whether that is all of the file (eof). Without
// eof the result holds more than limit bytes (a little more: the buffer
// grows in steps) and the rest of the file is still to be read from f.
// sizeHint is the file's expected size, as for Read. The result is valid
// until the next call.
func (r *Reader) ReadPrefix(f *File, sizeHint int64, limit int) (data []byte, eof bool, err error) {
	want := int(min(max(sizeHint, 0), int64(limit))) + 1
	if cap(r.buf) < want {
		r.buf = make([]byte, 0, want+want/8+512)
	}
	buf := r.buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				r.buf = buf[:0]
				return buf, false, nil
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		if err == io.EOF {
			break
		}
		if err != nil {
			r.buf = buf[:0]
			return nil, false, err
		}
		buf = buf[:len(buf)+n]
		if len(buf) < cap(buf) {
			break
		}
	}
	r.buf = buf[:0]
	if len(buf) > limit {
		return buf, false, nil
	}
	return buf, true, nil
}

// Release drops the reader's buffer if it is larger than keep bytes, so
// that one large file does not pin its size in memory for as long as the
// reader lives.
func (r *Reader) Release(keep int) {
	if cap(r.buf) > keep {
		r.buf = nil
	}
}
