package jsonenc

import (
	"strings"
	"testing"
)

// Marshal writes "<", ">" and "&" as they are, and no trailing newline
// (the Encoder's); otherwise as json.Marshal.
func TestMarshal(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"a < b && c > d", `"a < b && c > d"`},
		{map[string]any{"p": "<div>", "n": 1}, `{"n":1,"p":"<div>"}`},
		{[]string{"x\n\u2028"}, `["x\n\u2028"]`},
		{nil, `null`},
	} {
		got, err := Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%#v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("Marshal of a func: no error")
	}
}

// AppendString writes what Marshal writes of a string, byte for byte.
func TestAppendString(t *testing.T) {
	for _, s := range appendStringCases {
		checkAppendString(t, s)
	}
}

var appendStringCases = []string{
	"", "plain", "a < b && c > d", "q\"b\\s/", "\x00\x01\x07\b\f\n\r\t\x1f\x7f", "é😀", "\u2028\u2029", "\xff", "a\xe2\x82b", "\xed\xa0\x80", "\xf4\x90\x80\x80",
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Errorf("AppendString(%q) = %s, want %s", s, got[1:], want)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringCases {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

// AppendString passes eight plain bytes at a time: each byte that needs
// escaping or is not ASCII, at every offset of strings up to 40 bytes
// long, is written as Marshal writes it.
func TestAppendStringAtEveryOffset(t *testing.T) {
	for n := range 41 {
		for p := range n {
			for _, c := range []string{"\"", "\\", "\x01", "\x1f", "\x7f", "\x80", "\x9f", "\xff", "é", "\u2028", "<"} {
				s := strings.Repeat("a", p) + c + strings.Repeat("a", n-p)
				checkAppendString(t, s)
			}
		}
	}
}
