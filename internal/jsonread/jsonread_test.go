package jsonread

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// valid reports whether Skip and End take b, and checks that Valid
// agrees.
func valid(b []byte) bool {
	r := NewReader(b)
	r.Skip()
	r.End()
	if Valid(b) != (r.Err() == nil) {
		panic(fmt.Sprintf("Valid(%q) = %v, Skip and End: %v", b, Valid(b), r.Err()))
	}
	return r.Err() == nil
}

var validCases = []string{
	`0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`, `""`, `"a\"b\\c\/d\b\f\n\r\t\u00e9"`,
	` [ ] `, `{}`, `{"a":[1,{"b":null}],"c":"d"}`, "\t\n\r 1 \r\n",
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, "\"\xff\xfe\"", "\"\xe2\x82\"", `"é"`,
	// Invalid:
	``, ` `, `01`, `1.`, `.5`, `1e`, `1e+`, `-`, `+1`, `tru`, `nul`, `truex`, `[1,]`, `[,1]`, `{"a"}`,
	`{"a":1,}`, `{a:1}`, `{"a":1 "b":2}`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", "\"\x00\"",
	`[1] [2]`, `{"a":1}}`, `]`, `"\`, `"\'"`, `[`, `{"a":`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("valid(%q) = %v, json.Valid %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if !valid([]byte(deep)) || !json.Valid([]byte(deep)) {
		t.Errorf("%d nested arrays: valid %v, json.Valid %v; want both true", maxDepth, valid([]byte(deep)), json.Valid([]byte(deep)))
	}
	deeper := "[" + deep + "]"
	if valid([]byte(deeper)) || json.Valid([]byte(deeper)) {
		t.Errorf("%d nested arrays: valid %v, json.Valid %v; want both false", maxDepth+1, valid([]byte(deeper)), json.Valid([]byte(deeper)))
	}
}

func TestStringAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		checkString(t, []byte(c))
	}
}

// checkString checks that String and End read b as json.Unmarshal reads
// it into a string: the same value, or both fail.
func checkString(t *testing.T, b []byte) {
	t.Helper()
	r := NewReader(b)
	got := r.String()
	r.End()
	var want string
	werr := json.Unmarshal(b, &want)
	if (r.Err() == nil) != (werr == nil) || r.Err() == nil && got != want {
		t.Errorf("String(%q) = %q, %v; json.Unmarshal: %q, %v", b, got, r.Err(), want, werr)
	}
	if r.Err() != nil && !errors.Is(r.Err(), ErrSyntax) {
		t.Errorf("String(%q): error %v does not wrap ErrSyntax", b, r.Err())
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := valid(b), json.Valid(b); got != want {
			t.Errorf("valid(%q) = %v, json.Valid %v", b, got, want)
		}
		r := NewReader(b)
		raw := r.Raw()
		if r.End(); r.Err() == nil && string(raw) != strings.Trim(string(b), " \t\r\n") {
			t.Errorf("Raw(%q) = %q", b, raw)
		}
	})
}

func FuzzString(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkString(t, b)
		// And as an object's key and an array's element.
		checkMember(t, b)
	})
}

// checkMember checks that b as the key and the value of an object's
// member reads as encoding/json reads it into a map.
func checkMember(t *testing.T, b []byte) {
	t.Helper()
	doc := []byte(`{` + string(b) + `:[` + string(b) + `]}`)
	got := map[string][]string{}
	r := NewReader(doc)
	r.Object(func(key []byte) { got[string(key)] = r.Strings() })
	r.End()
	var want map[string][]string
	werr := json.Unmarshal(doc, &want)
	if (r.Err() == nil) != (werr == nil) || r.Err() == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("reading %q: %q, %v; json.Unmarshal: %q, %v", doc, got, r.Err(), want, werr)
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"-7", -7, true}, {" 42 ", 42, true}, {"null", 0, true},
		{"1.0", 0, false}, {"1e2", 0, false}, {"99999999999999999999", 0, false}, {`"1"`, 0, false}, {"", 0, false},
	} {
		r := NewReader([]byte(tc.in))
		got := r.Int()
		r.End()
		var want int
		werr := json.Unmarshal([]byte(tc.in), &want)
		if got != tc.want || (r.Err() == nil) != tc.ok || (werr == nil) != tc.ok {
			t.Errorf("Int(%q) = %d, %v (json.Unmarshal: %v); want %d, ok %v", tc.in, got, r.Err(), werr, tc.want, tc.ok)
		}
	}
}

// A document read through Object, Array, Strings, String, Int and Skip,
// and the errors of reads that do not read what their caller wants.
func TestObjectAndArray(t *testing.T) {
	doc := `{"s":"x","n":3,"l":["a","b"],"e":[],"z":null,"o":{"k":[1,{"d":true}]},"m":[{"f":"p","i":1},{"f":"q","i":2}]}`
	type item struct {
		f string
		i int
	}
	var (
		s      string
		n      int
		l, e   []string
		z      []string
		raw    []byte
		items  []item
		others []string
	)
	r := NewReader([]byte(doc))
	r.Object(func(key []byte) {
		switch string(key) {
		case "s":
			s = r.String()
		case "n":
			n = r.Int()
		case "l":
			l = r.Strings()
		case "e":
			e = r.Strings()
		case "z":
			z = r.Strings()
		case "o":
			raw = r.Raw()
		case "m":
			r.Array(func() {
				var it item
				r.Object(func(k []byte) {
					switch string(k) {
					case "f":
						it.f = r.String()
					case "i":
						it.i = r.Int()
					default:
						r.Skip()
					}
				})
				items = append(items, it)
			})
		default:
			others = append(others, string(key))
			r.Skip()
		}
	})
	r.End()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if s != "x" || n != 3 || !reflect.DeepEqual(l, []string{"a", "b"}) || e == nil || len(e) != 0 || z != nil ||
		string(raw) != `{"k":[1,{"d":true}]}` || !reflect.DeepEqual(items, []item{{"p", 1}, {"q", 2}}) || others != nil {
		t.Errorf("read %q, %d, %q, %q, %q, %s, %v, %q", s, n, l, e, z, raw, items, others)
	}

	for _, tc := range []struct {
		doc  string
		read func(r *Reader)
	}{
		{`{"a":1}`, func(r *Reader) { r.Object(func([]byte) {}) }},            // the member's value not read
		{`[1,2]`, func(r *Reader) { r.Array(func() {}) }},                     // an element not read
		{`["a",1]`, func(r *Reader) { r.Strings() }},                          // not a string
		{`{"a":1}`, func(r *Reader) { r.Array(func() { r.Skip() }) }},         // not an array
		{`[1]`, func(r *Reader) { r.Object(func([]byte) { r.Skip() }) }},      // not an object
		{`"abc`, func(r *Reader) { _ = r.String() }},                          // unterminated
		{`{"a":1}x`, func(r *Reader) { r.Object(func([]byte) { r.Skip() }) }}, // trailing data
	} {
		r := NewReader([]byte(tc.doc))
		tc.read(r)
		r.End()
		if !errors.Is(r.Err(), ErrSyntax) {
			t.Errorf("reading %s: error %v, want ErrSyntax", tc.doc, r.Err())
		}
		// After an error, reads do nothing.
		if r.Next() != 0 || r.String() != "" || r.Int() != 0 || r.Raw() != nil {
			t.Errorf("reading %s: a read after the error returned a value", tc.doc)
		}
	}
}

// A string is read eight bytes at a time where none is a quote, a
// backslash or a control character: each of those, and a non-ASCII byte,
// at every offset of strings up to 40 bytes long reads as encoding/json
// says.
func TestStringAtEveryOffset(t *testing.T) {
	for n := range 41 {
		for p := range n {
			for _, c := range []byte{'"', '\\', 0x01, 0x1f, 0x7f, 0x80, 0xff, ' '} {
				s := []byte(strings.Repeat("a", n))
				s[p] = c
				b := append(append([]byte{'"'}, s...), '"')
				if got, want := valid(b), json.Valid(b); got != want {
					t.Fatalf("valid(%q) = %v, json.Valid %v", b, got, want)
				}
			}
		}
	}
}

// StringAs reads what String reads, and gives back prev itself (no new
// string) when the bytes are the same.
func TestStringAs(t *testing.T) {
	for _, tc := range []struct{ text, prev, want string }{
		{`"a.go"`, "a.go", "a.go"},
		{`"a.go"`, "b.go", "a.go"},
		{`"a\tb"`, "a\tb", "a\tb"},
		{`"\u00e9"`, "é", "é"},
		{`null`, "x", ""},
		{`""`, "", ""},
	} {
		r := NewReader([]byte(tc.text))
		got := r.StringAs(tc.prev)
		if r.End(); r.Err() != nil || got != tc.want {
			t.Errorf("StringAs(%s, %q) = %q, %v; want %q", tc.text, tc.prev, got, r.Err(), tc.want)
		}
	}
	prev, text := "same/file.go", []byte(`"same/file.go"`)
	as := testing.AllocsPerRun(100, func() { _ = NewReader(text).StringAs(prev) })
	str := testing.AllocsPerRun(100, func() { _ = NewReader(text).String() })
	if as >= str {
		t.Errorf("StringAs of the same bytes allocates %v times, String %v", as, str)
	}
	r := NewReader([]byte(`7`))
	if r.StringAs("x"); r.Err() == nil {
		t.Error("StringAs of a number: no error")
	}
}

// Strings are scanned eight bytes at a time (PlainRun): each byte a
// reader must stop at — a quote, a backslash escape, a control
// character, a byte of UTF-8 or of none — at each offset of the first
// words and at the tail, in strings of every length around them, reads
// as encoding/json reads it.
func TestStringWordBoundaries(t *testing.T) {
	stops := []string{`\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", "é", "\xff", `"`, "\x7f", " "}
	for n := range 20 {
		for at := 0; at <= n; at++ {
			for _, s := range stops {
				body := strings.Repeat("a", at) + s + strings.Repeat("b", n-at)
				b := []byte(`"` + body + `"`)
				checkString(t, b)
				if got, want := valid(b), json.Valid(b); got != want {
					t.Errorf("valid(%q) = %v, json.Valid %v", b, got, want)
				}
			}
		}
	}
}
