package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"src/main.go", "src/main.go"},
		{"docs/café/日本語.md", "docs/café/日本語.md"},
		{"a b\tc", "a b\tc"}, // TAB alone is safe
		{"src\nauth.go:1: password = \"hunter2\"", `"src\nauth.go:1: password = \"hunter2\""`},
		{"a\rb", `"a\rb"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"nel\u0085x", `"nel\xc2\x85x"`},
		{"del\x7f", `"del\x7f"`},
		{"nul\x00", `"nul\x00"`},
		{"a\xff.txt", `"a\xff.txt"`},
		{"a\xfe.txt", `"a\xfe.txt"`},
		{"tab\tand\nnewline", `"tab\tand\nnewline"`},
		{`back\slash`, `"back\\slash"`},
		{`"lead`, `"\"lead"`},
		{`"x"`, `"\"x\""`},
		{`mid"dle`, `"mid\"dle"`},
		{"é\xc3", `"é\xc3"`}, // a cut UTF-8 sequence
		{"\u00a0nbsp \ufffd", "\u00a0nbsp \ufffd"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := Unquote(Name(tc.in)); got != tc.in {
			t.Errorf("Unquote(Name(%q)) = %q", tc.in, got)
		}
	}
}

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\tfmt.Println(\"a\\n\")", "\tfmt.Println(\"a\\n\")"},
		{`"name","age"`, `"name","age"`}, // does not read as a quoted form
		{`"unterminated`, `"unterminated`},
		{`"a\qb"`, `"a\qb"`}, // \q is no escape
		{`"hello\n"`, `"\"hello\\n\""`},
		{`""`, `"\"\""`},
		{"\x1b[31mred\x1b[0m\r", `"\x1b[31mred\x1b[0m\r"`},
		{"caf\xe9", `"caf\xe9"`},
		{"plain", "plain"},
	}
	for _, tc := range tests {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := Unquote(Line(tc.in)); got != tc.in {
			t.Errorf("Unquote(Line(%q)) = %q", tc.in, got)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"a\xff.txt"`, "a\xff.txt", true},
		{`"a\xFF\x0a"`, "a\xff\n", true},
		{`"\n\r\t\\\""`, "\n\r\t\\\"", true},
		{`"raw	tab"`, "raw\ttab", true},
		{`""`, "", true},
		{`"`, "", false},
		{`abc`, "", false},
		{`"abc`, "", false},
		{`"a"b"`, "", false},
		{`"a\"`, "", false},
		{`"a\x4"`, "", false},
		{`"a\x4g"`, "", false},
		{`"a\u0041"`, "", false},
		{`"a\`, "", false},
	}
	for _, tc := range tests {
		got, ok := Parse(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%s) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if !ok && Unquote(tc.in) != tc.in {
			t.Errorf("Unquote(%s) = %q, want it unchanged", tc.in, Unquote(tc.in))
		}
	}
}

// FuzzQuote: Unquote undoes Name and Line; what they print is valid UTF-8
// with no unsafe character (so no raw newline, CR, ESC, other C0 but TAB,
// DEL or C1); and they leave a string alone exactly when their rule says.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{
		"", "a", "src\nauth.go:1: x", "\r", "\x1b[31m", "\u0085", "\x7f", "a\xff", "\xc2", `"x"`,
		`"a\xff"`, `\`, "\t", `"`, `""`, `"\"`, "é", "\xef\xbf\xbd", "\xed\xa0\x80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Any input decodes without panicking; a quoted form decodes to
		// a string whose quoted form decodes the same.
		if raw, ok := Parse(s); ok && Unquote(quoted(raw)) != raw {
			t.Fatalf("Parse(%q) = %q does not survive quoting", s, raw)
		}
		for _, q := range []struct {
			name  string
			fn    func(string) string
			plain bool // s is expected to come out as it is
		}{
			{"Name", Name, Safe(s) && !strings.ContainsAny(s, `\"`)},
			{"Line", Line, Safe(s) && !isQuoted(s)},
		} {
			out := q.fn(s)
			if got := Unquote(out); got != s {
				t.Fatalf("Unquote(%s(%q)) = %q", q.name, s, got)
			}
			if (out == s) != q.plain {
				t.Fatalf("%s(%q) = %q: plain = %v, want %v", q.name, s, out, out == s, q.plain)
			}
			if !utf8.ValidString(out) || !Safe(out) {
				t.Fatalf("%s(%q) = %q is not safe", q.name, s, out)
			}
			for _, r := range out {
				if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
					t.Fatalf("%s(%q) = %q holds %U", q.name, s, out, r)
				}
			}
			if out != s && strings.ContainsRune(out, '\t') {
				t.Fatalf("%s(%q) = %q: a quoted form holds a raw TAB", q.name, s, out)
			}
		}
	})
}
