// Package jsonenc encodes JSON as every layer of indexd writes it:
// encoding/json without HTML escaping, so that code such as "a < b" or a
// pattern such as "<div>" reaches the socket, the envelope and --json
// output as written rather than as "\u003c".
package jsonenc

import (
	"bytes"
	"encoding/json"
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
