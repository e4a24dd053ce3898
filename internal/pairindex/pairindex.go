// Package pairindex finds two bytes at a fixed distance from each other:
// the first place where a byte of one class is followed, d bytes on, by a
// byte of another. A literal searched for by two of its rarer bytes at
// once has far fewer candidate places than by one (for "func main", u
// and m four bytes apart occur once in 3,500 bytes of Go source, m alone
// once in 100), so the search runs at the speed of the vector loop
// rather than of one call per candidate; this is the "packed pair" of
// ripgrep's memchr crate.
//
// On amd64 with AVX2 the search compares 32 places per step; elsewhere it
// is a plain loop, and Fast is false so that callers can prefer another
// way.
package pairindex

// A Class is a set of bytes: c is in it when c|Or == Val. With Or zero it
// is the byte Val; with Or 0x20 and Val a lowercase ASCII letter it is
// that letter in either case (exactly those two bytes).
type Class struct{ Val, Or byte }

// Byte returns the class of c alone.
func Byte(c byte) Class { return Class{Val: c} }

// Letter returns the class of c (an ASCII letter) in either case; for
// any other byte, the class of c alone.
func Letter(c byte) Class {
	if l := c | 0x20; 'a' <= l && l <= 'z' {
		return Class{Val: l, Or: 0x20}
	}
	return Byte(c)
}

// Has reports whether c is in the class.
func (k Class) Has(c byte) bool { return c|k.Or == k.Val }

// vectorMin is the fewest places indexVector looks at (one vector).
const vectorMin = 32

// Index returns the least i with i+d < len(s) such that s[i] is in a and
// s[i+d] is in b, or -1 if there is none. d must not be negative.
func Index(s []byte, d int, a, b Class) int {
	if d < 0 {
		panic("pairindex: negative distance")
	}
	n := len(s) - d // the places to look at: [0, n)
	switch {
	case n <= 0:
		return -1
	case Fast && n >= vectorMin:
		return indexVector(&s[0], n, d, a.Val, a.Or, b.Val, b.Or)
	}
	return indexScalar(s, n, d, a, b)
}

// indexScalar is Index's plain loop over the places [0, n).
func indexScalar(s []byte, n, d int, a, b Class) int {
	for i := range n {
		if a.Has(s[i]) && b.Has(s[i+d]) {
			return i
		}
	}
	return -1
}
