// Package jsonenc encodes JSON as every layer of indexd writes it:
// encoding/json without HTML escaping, so that code such as "a < b" or a
// pattern such as "<div>" reaches the socket, the envelope and --json
// output as written rather than as "\u003c".
package jsonenc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/indexd/indexd/internal/jsonread"
)

// Marshal is json.Marshal without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// AppendString appends s as a JSON string, exactly as Marshal writes it:
// '"' and '\' escaped, the control characters as \b, \f, \n, \r, \t or
// \u00XX, U+2028 and U+2029 as \u2028 and \u2029, each byte that is not
// UTF-8 as \ufffd, everything else (HTML's <, > and & too) as it is. For
// the long lists of the answers, which Marshal would encode by reflection;
// runs of plain ASCII are passed eight bytes at a time (jsonread.PlainRun).
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = jsonread.PlainRun(s, i, true); i == len(s) {
			break // the rest is plain ASCII
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
