package grep

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// runString spells a class run as its bytes and length, "" for none.
func runString(c *classRun) string {
	if c == nil {
		return ""
	}
	var b []byte
	for i, in := range c.in {
		if in {
			b = append(b, byte(i))
		}
	}
	return string(b) + "×" + string(rune('0'+c.n))
}

func TestRequiredRun(t *testing.T) {
	t.Parallel()
	const digits = "0123456789"
	for _, c := range []struct {
		pattern string
		fold    bool
		want    string
	}{
		{`\w+\d{4}\w*`, false, digits + "×4"},
		{`\w+\d{4}\w*`, true, digits + "×4"},
		{`[A-Z]{3,}`, false, "ABCDEFGHIJKLMNOPQRSTUVWXYZ×3"},
		{`(\d\d)[.,]?(\d\d)`, false, ",." + digits + "×4"},
		{`\d{3}.\d{3}`, false, digits + "×3"},
		{`[a-j]{4}`, true, "ABCDEFGHIJabcdefghij×4"},
		{`^\d{3}$`, false, digits + "×3"},
		{`\b\d{3}\b`, false, digits + "×3"},
		{`(?:\d{3})+`, false, ""}, // a repeated sequence is not read
		{`[0-9]?[0-9]?`, false, ""},
		// Case folding that leaves ASCII (the Kelvin sign, the long s)
		// ends a run: such a match may hold a multi-byte letter.
		{`[a-z]{5}`, true, ""},
		{`[k-n]{5}`, true, ""},
		{`\d\dk?\d\d`, true, ""},                 // "12\u212a34" holds no four in a row
		{`[s-t][s-t]\d{3}`, true, digits + "×3"}, // the class (?i)[s-t] holds ſ: the run is the digits
		// Nothing, or too common, to look for.
		{`\w+`, false, ""},
		{`\w{3}`, false, ""},
		{`.{8}`, false, ""},
		{`[^a]{8}`, false, ""},
		{`[à-ÿ]{4}`, false, ""},
		{`\d|x`, false, ""},
	} {
		m, err := CompileMatcher(c.pattern, MatchOptions{CaseSensitive: !c.fold})
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if m.lits != nil {
			t.Fatalf("%q: has literals %q; the case is about patterns without", c.pattern, m.Literals())
		}
		if got := runString(m.run); got != c.want {
			t.Errorf("%q fold=%v: run %q, want %q", c.pattern, c.fold, got, c.want)
		}
	}
	// A pattern with a literal keeps the literal prefilter.
	if m, _ := CompileMatcher(`foo\d{4}`, MatchOptions{CaseSensitive: true}); m.lits == nil || m.run != nil {
		t.Errorf(`foo\d{4}: literals %q, run %q`, m.Literals(), runString(m.run))
	}
	// Multiline patterns have no prefilter.
	if m, _ := CompileMatcher(`\d{4}`, MatchOptions{Multiline: true}); m.run != nil {
		t.Errorf(`multiline \d{4}: run %q`, runString(m.run))
	}
}

// findRunNaive is classRun.find by looking at every byte.
func findRunNaive(c *classRun, buf []byte, from int) int {
	n := 0
	for i := from; i < len(buf); i++ {
		if !c.in[buf[i]] {
			n = 0
			continue
		}
		if n++; n == c.n {
			return i - c.n + 1
		}
	}
	return -1
}

func TestClassRunFind(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20000 {
		c := &classRun{n: 1 + r.IntN(6)}
		for _, b := range "0123" {
			c.in[b] = true
		}
		buf := make([]byte, r.IntN(40))
		for i := range buf {
			buf[i] = "0123ab\n\xff"[r.IntN(8)]
			if r.IntN(3) == 0 {
				buf[i] = '0' // long runs
			}
		}
		from := r.IntN(len(buf) + 1)
		if got, want := c.find(buf, from), findRunNaive(c, buf, from); got != want {
			t.Fatalf("trial %d: find(%q, %d) with n=%d = %d, want %d", trial, buf, from, c.n, got, want)
		}
	}
}

// checkScanLines fails t unless m.Scan reports exactly the lines of hay
// m's regexp matches, each on its own.
func checkScanLines(t *testing.T, m *Matcher, hay []byte) {
	t.Helper()
	if got, want := scanLines(m, hay), regexpLines(m.re, hay); !slices.Equal(got, want) {
		t.Fatalf("pattern %q hay %q: Scan %v, lines %v", m.re, hay, got, want)
	}
}

func TestClassRunScan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern string
		fold    bool
		hay     string
	}{
		{`\w+\d{4}\w*`, false, "x1234\n1234\nab123 4567\nid_20260101 ok\n\n9999"},
		{`[A-Z]{3,}`, false, "ABC\nAB C\nxABCy\nAB\nXYZW"},
		{`[a-j]{4}`, true, "abcd\nABCD\naBcD\nabc\n"},
		{`(\d\d)[.,]?(\d\d)`, false, "12.34\n1,234\n12,3\n\n00.00,00\n1234"},
		{`^\d{3}$`, false, "123\n1234\n 123\n123 \n999"},
	} {
		m, err := CompileMatcher(c.pattern, MatchOptions{CaseSensitive: !c.fold})
		if err != nil || m.run == nil {
			t.Fatalf("%q: run %v, error %v", c.pattern, m.run, err)
		}
		checkScanLines(t, m, []byte(c.hay))
	}
}

// FuzzClassRun checks that the class-run prefilter drops no line the
// regexp matches, for any pattern and text.
func FuzzClassRun(f *testing.F) {
	for _, s := range []string{`\w+\d{4}\w*`, `[A-Z]{3,}`, `(\d\d)[.,]?(\d\d)`, `[a-j]{4}`, `\b\d{3}\b`, `[k-n]{5}`, `[0-9a-f]{8}`} {
		f.Add(s, []byte("x1234 AB KKK\nid_2026 \u212a\u212aK 12-34\n\tabcd\t\t\xff999"), false)
		f.Add(s, []byte("ABCD efgh 0000\n"), true)
	}
	f.Fuzz(func(t *testing.T, pattern string, hay []byte, fold bool) {
		if len(pattern) > 64 || len(hay) > 4<<10 {
			return
		}
		m, err := CompileMatcher(pattern, MatchOptions{CaseSensitive: !fold})
		if err != nil || m.run == nil {
			return
		}
		checkScanLines(t, m, hay)
		// The same text with every byte of the class's runs repeated, so
		// runs are found.
		var more []byte
		for _, b := range hay {
			more = append(more, b)
			if m.run.in[b] {
				more = append(more, bytes.Repeat([]byte{b}, m.run.n)...)
			}
		}
		checkScanLines(t, m, more)
	})
}
