package jsonenc

import "testing"

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
