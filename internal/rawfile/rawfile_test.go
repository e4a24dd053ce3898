package rawfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
)

// ReadPrefix reads a small file whole in one go, and of a larger one more
// than the limit, the rest following from File.Read; ReadAt reads
// anywhere without moving the position; Read is ReadPrefix or
// ErrTooLarge.
func TestReadPrefix(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	root := testtree.Open(t, dir)
	var r Reader
	for _, hint := range []int64{0, 100, 10000, 1 << 20} {
		for _, limit := range []int{100, 9999, 10000, 1 << 20} {
			f, err := Open(root, "f")
			if err != nil {
				t.Fatal(err)
			}
			got, eof, err := r.ReadPrefix(f, hint, limit)
			if err != nil {
				t.Fatal(err)
			}
			if eof != (limit >= len(data)) || !eof && len(got) <= limit || !bytes.Equal(got, data[:len(got)]) {
				t.Fatalf("hint %d limit %d: %d bytes, eof %v", hint, limit, len(got), eof)
			}
			got = append([]byte(nil), got...)
			rest, err := io.ReadAll(f)
			if err != nil || !bytes.Equal(append(got, rest...), data) {
				t.Fatalf("hint %d limit %d: the rest does not follow (%v)", hint, limit, err)
			}
			b := make([]byte, 5)
			if n, err := f.ReadAt(b, 26*3+2); n != 5 || err != nil || string(b) != "cdefg" {
				t.Fatalf("ReadAt: %d %v %q", n, err, b)
			}
			if n, err := f.ReadAt(b, int64(len(data))); n != 0 || err != io.EOF {
				t.Fatalf("ReadAt at the end: %d %v", n, err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := r.Read(root, "f", 0, 9999); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read over the limit: %v", err)
	}
	if got, err := r.Read(root, "f", 0, 10000); err != nil || !bytes.Equal(got, data) {
		t.Errorf("Read: %d bytes, %v", len(got), err)
	}
	r.Release(100)
	if r.buf != nil {
		t.Error("Release kept a buffer over its size")
	}
}

// ReadFullAt reads exactly what was asked for, however the reads split,
// at any offset, without moving the position; fewer bytes, and no error,
// only at the end of the file.
func TestReadFullAt(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 70000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(testtree.Open(t, dir), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct{ off, n, want int }{
		{0, 70000, 70000}, {3, 65536, 65536}, {69990, 100, 10}, {70000, 5, 0}, {100, 0, 0},
	} {
		p := make([]byte, c.n)
		got, err := f.ReadFullAt(p, int64(c.off))
		if err != nil || got != c.want || !bytes.Equal(p[:got], data[c.off:c.off+got]) {
			t.Errorf("ReadFullAt(%d bytes at %d) = %d, %v; want %d bytes of the file", c.n, c.off, got, err, c.want)
		}
	}
	if rest, err := io.ReadAll(f); err != nil || !bytes.Equal(rest, data) {
		t.Errorf("the position moved: %d bytes read after, %v", len(rest), err)
	}
}
