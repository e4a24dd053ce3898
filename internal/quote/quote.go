// Package quote is the one rule by which indexd prints strings it does not
// control — file names and the lines of files — so that none can forge the
// structure of a tool's text or reach a terminal raw, and so that names
// that are not valid UTF-8 survive JSON without loss. It is a leaf: it
// imports nothing of indexd's, so the envelope can use it.
//
// # Unsafe characters
//
// A string is unsafe when it holds any of:
//
//   - a C0 control character other than TAB (U+0000–U+001F: NUL, newline,
//     CR, ESC, …);
//   - DEL (U+007F);
//   - a C1 control character (U+0080–U+009F, such as NEL U+0085);
//   - a byte that is not part of valid UTF-8.
//
// # The quoted form
//
// The quoted form of a string is a double quote, then each byte of the
// string written as follows, then a double quote:
//
//   - newline, CR, TAB as \n, \r, \t;
//   - backslash and double quote as \\ and \";
//   - every other byte of an unsafe character (both bytes of a C1
//     character's UTF-8 encoding; each byte that is not part of valid
//     UTF-8) as \xHH, two lowercase hexadecimal digits;
//   - everything else (printable ASCII, the UTF-8 of other characters,
//     non-ASCII letters included) as it is.
//
// A quoted form is therefore valid UTF-8 and holds no unsafe character and
// no raw TAB.
//
// # When a string is quoted
//
//   - A name (a path in data or text) is printed as it is unless it is
//     unsafe or holds a backslash or a double quote; then it is printed in
//     its quoted form (as git's core.quotePath does).
//   - A line of a file is printed as it is unless it is unsafe or already
//     reads as a quoted form (see Parse); then it is printed in its quoted
//     form. TABs, backslashes and quotes in ordinary code stay as written.
//
// # Reading back
//
// Unquote decodes a quoted form and returns any other string unchanged.
// Every string printed as it is does not read as a quoted form (a name
// holds no double quote; a line that reads as one is quoted), so
// Unquote(Name(s)) == s and Unquote(Line(s)) == s for every s: both
// mappings are injective, and the tools apply Unquote to the names they
// are given (path, include, Glob's pattern), so whatever they print can be
// named back.
package quote

import (
	"strings"
	"unicode/utf8"
)

// Name returns the name s as indexd prints it: s itself, or its quoted
// form when s is unsafe or holds a backslash or a double quote.
func Name(s string) string {
	if !nameNeeds(s) {
		return s
	}
	return quoted(s)
}

// Line returns the line s as indexd prints it: s itself, or its quoted
// form when s is unsafe or reads as a quoted form.
func Line(s string) string {
	if Safe(s) && !isQuoted(s) {
		return s
	}
	return quoted(s)
}

// Safe reports whether s holds no unsafe character: no C0 control but TAB,
// no DEL, no C1 control and no byte that is not part of valid UTF-8.
func Safe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeASCII(c) {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isC1(r) {
			return false
		}
		i += n
	}
	return true
}

// Unquote returns the string a quoted form stands for, and any other
// string unchanged. It undoes Name and Line.
func Unquote(s string) string {
	if raw, ok := Parse(s); ok {
		return raw
	}
	return s
}

// Parse decodes s if it reads as a quoted form: it starts and ends with a
// double quote, and between them every double quote is escaped and every
// backslash starts one of the escapes \n, \r, \t, \\, \" or \xHH (hex
// digits in either case); other bytes stand for themselves. ok is false
// when s does not read as a quoted form.
func Parse(s string) (raw string, ok bool) {
	if !isQuoted(s) {
		return "", false
	}
	body := s[1 : len(s)-1]
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '\\', '"':
			b.WriteByte(body[i])
		case 'x':
			b.WriteByte(unhex(body[i+1])<<4 | unhex(body[i+2]))
			i += 2
		}
	}
	return b.String(), true
}

// isQuoted reports whether s reads as a quoted form (the grammar of Parse).
func isQuoted(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	body := s[1 : len(s)-1]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			return false
		case '\\':
			i++
			if i >= len(body) {
				return false
			}
			switch body[i] {
			case 'n', 'r', 't', '\\', '"':
			case 'x':
				if i+2 >= len(body) || !isHex(body[i+1]) || !isHex(body[i+2]) {
					return false
				}
				i += 2
			default:
				return false
			}
		}
	}
	return true
}

// nameNeeds reports whether the name s must be printed quoted.
func nameNeeds(s string) bool {
	return strings.ContainsAny(s, `\"`) || !Safe(s)
}

// quoted returns the quoted form of s.
func quoted(s string) string {
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('"')
	esc := func(c byte) {
		b.WriteString(`\x`)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\\' || c == '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case unsafeASCII(c):
				esc(c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isC1(r) {
			for j := range n {
				esc(s[i+j])
			}
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// unsafeASCII reports whether the ASCII byte c is a C0 control other than
// TAB, or DEL.
func unsafeASCII(c byte) bool { return (c < 0x20 && c != '\t') || c == 0x7f }

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
