// Package jsonread reads JSON text held in a byte slice value by value,
// without reflection: for a client that decodes each response once, in a
// fresh process, where encoding/json's first use of each type (and its
// validating pass ahead of the decoding one) costs more than the data.
//
// A Reader keeps its first error: once a read fails, every later read
// does nothing and returns a zero value, so a caller checks Err once, at
// the end. The grammar is RFC 8259's, as encoding/json's: Skip and End
// accept exactly what json.Valid does (FuzzValid), and String decodes a
// string exactly as json.Unmarshal does, invalid UTF-8 and lone
// surrogates becoming U+FFFD (FuzzString). Unlike json.Unmarshal into a
// struct, keys are the caller's to match, and a caller matching them
// with == takes only the exact name.
package jsonread

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax is wrapped by every error of a Reader.
var ErrSyntax = errors.New("invalid JSON")

// maxDepth is how deeply Skip follows nested arrays and objects, as
// encoding/json's scanner.
const maxDepth = 10000

// Reader reads the JSON text b.
type Reader struct {
	b     []byte
	i     int // the next byte to read
	depth int
	err   error
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first error of the reads so far.
func (r *Reader) Err() error { return r.err }

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", ErrSyntax, what, r.i)
	}
}

// Next returns the first byte of the next value ('{', '[', '"', 't', 'f',
// 'n', '-' or a digit, if the text is valid), after any whitespace; 0 at
// the end of the text or after an error.
func (r *Reader) Next() byte {
	if r.err != nil {
		return 0
	}
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// End reads the end of the text: nothing but whitespace may follow the
// value read.
func (r *Reader) End() {
	if r.Next(); r.i < len(r.b) {
		r.fail("data after the value")
	}
}

// null reads null if it is next.
func (r *Reader) null() bool {
	if r.Next() != 'n' {
		return false
	}
	r.literal("null")
	return r.err == nil
}

func (r *Reader) literal(lit string) {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		r.fail("invalid literal")
		return
	}
	r.i += len(lit)
}

// Object reads an object, calling fn with the key of each member in
// turn; fn reads the member's value (Skip if it is not wanted), with
// exactly one read. The key is valid during the call only. null reads as
// an object without members.
func (r *Reader) Object(fn func(key []byte)) {
	r.seq('{', '}', func() {
		if r.Next() != '"' {
			r.fail("want a key")
			return
		}
		key := r.str()
		if r.Next() != ':' {
			r.fail("want ':'")
			return
		}
		r.i++
		if r.err == nil {
			fn(key)
		}
	})
}

// Array reads an array, calling fn for each element in turn; fn reads
// the element, with exactly one read. null reads as an empty array.
func (r *Reader) Array(fn func()) {
	r.seq('[', ']', func() {
		start := r.i
		fn()
		if r.err == nil && r.i == start {
			r.fail("element not read")
		}
	})
}

// seq reads an object or an array (by its open and close bytes), calling
// item to read each member or element; null reads as an empty one.
func (r *Reader) seq(open, close byte, item func()) {
	if r.null() {
		return
	}
	if r.Next() != open {
		r.fail("want " + string(open))
		return
	}
	r.i++
	if r.Next() == close {
		r.i++
		return
	}
	for r.err == nil {
		item()
		switch r.Next() {
		case ',':
			r.i++
		case close:
			r.i++
			return
		default:
			r.fail("want ',' or " + string(close))
		}
	}
}

// Strings reads an array of strings; null reads as nil.
func (r *Reader) Strings() []string {
	var l []string
	if r.Next() == '[' {
		l = []string{}
	}
	r.Array(func() { l = append(l, r.String()) })
	return l
}

// String reads a string; null reads as "".
func (r *Reader) String() string {
	if r.null() {
		return ""
	}
	if r.Next() != '"' {
		r.fail("want a string")
		return ""
	}
	return string(r.str())
}

// StringAs reads a string as String does, returning prev itself when the
// string holds the same bytes: no allocation for a value that repeats
// (the file of each of a file's matches).
func (r *Reader) StringAs(prev string) string {
	if r.null() {
		return ""
	}
	if r.Next() != '"' {
		r.fail("want a string")
		return ""
	}
	if b := r.str(); string(b) != prev {
		return string(b)
	}
	return prev
}

// Int reads a number that is an integer in int's range; null reads as 0.
func (r *Reader) Int() int {
	if r.null() {
		return 0
	}
	start := r.i
	r.number()
	if r.err != nil {
		return 0
	}
	n, err := strconv.Atoi(string(r.b[start:r.i]))
	if err != nil {
		r.i = start
		r.fail("want an integer")
		return 0
	}
	return n
}

// Skip reads a value of any kind, checking its syntax.
func (r *Reader) Skip() {
	switch r.Next() {
	case '{':
		r.nest(func() { r.Object(func([]byte) { r.Skip() }) })
	case '[':
		r.nest(func() { r.Array(r.Skip) })
	case '"':
		r.skipStr()
	case 't':
		r.literal("true")
	case 'f':
		r.literal("false")
	case 'n':
		r.literal("null")
	case 0:
		r.fail("want a value")
	default:
		r.number()
	}
}

// Raw reads a value of any kind, as Skip, and returns its text.
func (r *Reader) Raw() []byte {
	r.Next()
	start := r.i
	r.Skip()
	if r.err != nil {
		return nil
	}
	return r.b[start:r.i]
}

func (r *Reader) nest(read func()) {
	if r.depth++; r.depth > maxDepth {
		r.fail("nested too deeply")
		return
	}
	read()
	r.depth--
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *Reader) number() {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		r.fail("want a value")
		return
	}
	if i < len(b) && b[i] == '.' {
		if i++; i == len(b) || !isDigit(b[i]) {
			r.i = i
			r.fail("want a digit")
			return
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || !isDigit(b[i]) {
			r.i = i
			r.fail("want a digit")
			return
		}
		i = digits(b, i)
	}
	r.i = i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// Valid reports whether b is one JSON value, with whitespace around it
// only: json.Valid, faster (it reads strings without the per-byte state
// machine of encoding/json's scanner).
func Valid(b []byte) bool {
	r := Reader{b: b}
	r.Skip()
	r.End()
	return r.err == nil
}

// skipStr reads the string at r.i (its opening quote), checking its
// syntax only.
func (r *Reader) skipStr() {
	b := r.b
	for i := r.i + 1; i < len(b); i++ {
		i = PlainRun(b, i, false)
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			return
		case c < 0x20:
			r.i = i
			r.fail("control character in a string")
			return
		case c == '\\':
			if i+1 == len(b) {
				r.i = i
				r.fail("unterminated escape")
				return
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if hex4(b, i) < 0 {
					r.i = i
					r.fail("invalid \\u escape")
					return
				}
				i += 5
			default:
				r.i = i
				r.fail("invalid escape")
				return
			}
		}
	}
	r.i = len(b)
	r.fail("unterminated string")
}

// Words of eight bytes, for PlainRun.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// PlainRun returns the index of the first byte of s from i on that a
// string's reader or writer must look at: a quote, a backslash, a
// control character or, with nonASCII, a byte of 0x80 or more; len(s) if
// none. It tests eight bytes at a time: in each test below, the lowest
// byte flagged is one that qualifies (a borrow only flags bytes above
// it). jsonenc's AppendString passes the plain runs of what it writes
// with it.
func PlainRun[T ~string | ~[]byte](s T, i int, nonASCII bool) int {
	for ; i+8 <= len(s); i += 8 {
		_ = s[i+7]
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := x ^ ('"' * ones)
		bs := x ^ ('\\' * ones)
		m := (q-ones)&^q | (bs-ones)&^bs | (x-0x20*ones)&^x
		if nonASCII {
			m |= x
		}
		if m &= highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || nonASCII && c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// str reads the string at r.i (its opening quote) and returns its
// decoded bytes: a slice of the text when the string has no escape and
// nothing to replace, else a new slice.
func (r *Reader) str() []byte {
	b := r.b
	start := r.i + 1
	for i := start; i < len(b); i++ {
		i = PlainRun(b, i, true)
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			return b[start:i]
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return r.strSlow(start, i)
		}
	}
	r.i = len(b)
	r.fail("unterminated string")
	return nil
}

// strSlow decodes the string whose contents start at start, from i, its
// first byte that is not plain ASCII, as encoding/json's unquote does.
func (r *Reader) strSlow(start, i int) []byte {
	b := r.b
	// The decoded string is no longer than the quoted one, unless bytes
	// that are not UTF-8 become U+FFFD (then append grows it).
	end := i
	for end < len(b) && b[end] != '"' {
		if b[end] == '\\' {
			end++
		}
		end++
	}
	out := make([]byte, i-start, min(end, len(b))-start)
	copy(out, b[start:i])
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			r.i = i + 1
			return out
		case c < 0x20:
			r.i = i
			r.fail("control character in a string")
			return nil
		case c == '\\':
			if i+1 == len(b) {
				r.i = i
				r.fail("unterminated escape")
				return nil
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr := hex4(b, i)
				if rr < 0 {
					r.i = i
					r.fail("invalid \\u escape")
					return nil
				}
				i += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, hex4(b, i)); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
					rr = utf8.RuneError
				}
				out = utf8.AppendRune(out, rr)
				continue
			default:
				r.i = i
				r.fail("invalid escape")
				return nil
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			rr, size := utf8.DecodeRune(b[i:])
			if rr == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	r.i = len(b)
	r.fail("unterminated string")
	return nil
}

// hex4 returns the rune of the escape \uXXXX at b[i:], or -1 if there is
// none.
func hex4(b []byte, i int) rune {
	if len(b)-i < 6 || b[i] != '\\' || b[i+1] != 'u' {
		return -1
	}
	var rr rune
	for _, c := range b[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		rr = rr<<4 | rune(c)
	}
	return rr
}
