package lineread

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	const max = 20
	tests := []struct {
		name, in string
		want     []string // "!" for ErrTooLong
	}{
		{"empty", "", nil},
		{"lines", "a\nbb\n\nccc\n", []string{"a", "bb", "", "ccc"}},
		{"last line without newline", "a\nb", []string{"a", "b"}},
		{"exactly max", strings.Repeat("x", max) + "\nok\n", []string{strings.Repeat("x", max), "ok"}},
		{"one over", strings.Repeat("x", max+1) + "\nok\n", []string{"!", "ok"}},
		{"far over, longer than the buffer", strings.Repeat("y", 1000) + "\nok\n", []string{"!", "ok"}},
		{"over at end of input", "ok\n" + strings.Repeat("z", 100), []string{"ok", "!"}},
		{"several over", strings.Repeat("a", 50) + "\n" + strings.Repeat("b", 50) + "\nc\n", []string{"!", "!", "c"}},
		{"crlf kept for the JSON parser", "a\r\n", []string{"a\r"}},
	}
	for _, tc := range tests {
		for _, r := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", strings.NewReader(tc.in)},
			{"byte at a time", iotest.OneByteReader(strings.NewReader(tc.in))},
		} {
			lr := New(r.r, 16, max) // bufio's minimum size: lines span buffers
			var got []string
			for {
				line, err := lr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if errors.Is(err, ErrTooLong) {
					got = append(got, "!")
					continue
				}
				if err != nil {
					t.Fatalf("%s/%s: %v", tc.name, r.name, err)
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("%s/%s: got %q, want %q", tc.name, r.name, got, tc.want)
			}
		}
	}
}

// A read error mid-line (a deadline the caller rides out) keeps the bytes
// read so far; the next call continues the line.
func TestLineReaderResumes(t *testing.T) {
	errTimeout := errors.New("timeout")
	parts := []string{`{"a":`, "", `1}` + "\n" + `{"b"`, "", `:2}` + "\n"}
	i := 0
	r := readerFunc(func(p []byte) (int, error) {
		if i == len(parts) {
			return 0, io.EOF
		}
		s := parts[i]
		i++
		if s == "" {
			return 0, errTimeout
		}
		return copy(p, s), nil
	})
	lr := New(r, 16, 100)
	var got []string
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errTimeout) {
			if !lr.Partial() {
				t.Error("partial() = false mid-line")
			}
			got = append(got, "timeout")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	if want := `timeout|{"a":1}|timeout|{"b":2}`; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
