package textdiff

import "testing"

func TestLines(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\nb\nc", "a\nB\nc", "first difference at line 2 (- want, + got):\n- b\n+ B\n"},
		{"a\nc", "a\nb\nc", "first difference at line 2 (- want, + got):\n+ b\n"},
		{"a\nb", "a", "first difference at line 2 (- want, + got):\n- b\n"},
		{"x", "y", "first difference at line 1 (- want, + got):\n- x\n+ y\n"},
	} {
		if d := Lines(c.want, c.got); d != c.diff {
			t.Errorf("Lines(%q, %q) =\n%s\nwant\n%s", c.want, c.got, d, c.diff)
		}
	}
}
