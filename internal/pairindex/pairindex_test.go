package pairindex

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// naive is the definition Index is held to.
func naive(s []byte, d int, a, b Class) int {
	for i := 0; i+d < len(s); i++ {
		if a.Has(s[i]) && b.Has(s[i+d]) {
			return i
		}
	}
	return -1
}

func TestClass(t *testing.T) {
	for c := range 256 {
		for x := range 256 {
			want := x == c
			if got := Byte(byte(c)).Has(byte(x)); got != want {
				t.Fatalf("Byte(%#x).Has(%#x) = %v", c, x, got)
			}
			l := byte(c) | 0x20
			isLetter := 'a' <= l && l <= 'z'
			if isLetter {
				want = byte(x)|0x20 == l && ('a' <= x|0x20 && x|0x20 <= 'z')
			}
			if got := Letter(byte(c)).Has(byte(x)); got != want {
				t.Fatalf("Letter(%#x).Has(%#x) = %v, want %v", c, x, got, want)
			}
		}
	}
}

func TestIndexCases(t *testing.T) {
	fm := func(s string) []byte { return []byte(s) }
	long := make([]byte, 100)
	for i := range long {
		long[i] = '.'
	}
	at := func(i int, s string) []byte {
		b := append([]byte(nil), long...)
		copy(b[i:], s)
		return b
	}
	for _, tc := range []struct {
		name string
		s    []byte
		d    int
		a, b Class
		want int
	}{
		{"empty", nil, 0, Byte('a'), Byte('a'), -1},
		{"d past the end", fm("ab"), 2, Byte('a'), Byte('b'), -1},
		{"adjacent", fm("xxab"), 1, Byte('a'), Byte('b'), 2},
		{"same place", fm("xxa"), 0, Byte('a'), Byte('a'), 2},
		{"first byte only", fm("axxxx"), 1, Byte('a'), Byte('b'), -1},
		{"letter either case", fm("..F..M"), 3, Letter('f'), Letter('m'), 2},
		{"not the other letter", fm("..F..@"), 3, Letter('f'), Letter('`'), -1},
		{"vector: first place", at(0, "func main"), 5, Byte('f'), Byte('m'), 0},
		{"vector: place 31", at(31, "func main"), 5, Byte('f'), Byte('m'), 31},
		{"vector: place 32", at(32, "func main"), 5, Byte('f'), Byte('m'), 32},
		{"vector: last place", at(94, "f....m"), 5, Byte('f'), Byte('m'), 94},
		{"vector: second byte out of range", at(95, "f...."), 5, Byte('f'), Byte('.'), -1},
		{"vector: none", long, 7, Byte('f'), Byte('m'), -1},
		{"vector: leftmost of two", at(40, "fXXm...fm"), 3, Byte('f'), Byte('m'), 40},
	} {
		if got := Index(tc.s, tc.d, tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Index = %d, want %d", tc.name, got, tc.want)
		}
		if got := naive(tc.s, tc.d, tc.a, tc.b); got != tc.want {
			t.Errorf("%s: naive = %d, want %d (the case is wrong)", tc.name, got, tc.want)
		}
	}
}

// randomCase returns a haystack over a small alphabet (so pairs occur)
// and two classes drawn from it.
func randomCase(r *rand.Rand) ([]byte, int, Class, Class) {
	alpha := []byte("aAbB.\x00\xff`@")[:2+r.IntN(8)]
	s := make([]byte, r.IntN(300))
	for i := range s {
		s[i] = alpha[r.IntN(len(alpha))]
	}
	if r.IntN(4) == 0 { // mostly one byte, the pair rare
		for i := range s {
			if r.IntN(50) != 0 {
				s[i] = '.'
			}
		}
	}
	class := func() Class {
		c := alpha[r.IntN(len(alpha))]
		if r.IntN(2) == 0 {
			return Letter(c)
		}
		return Byte(c)
	}
	return s, r.IntN(70), class(), class()
}

func TestIndexRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		s, d, a, b := randomCase(r)
		if got, want := Index(s, d, a, b), naive(s, d, a, b); got != want {
			t.Fatalf("Index(%q, %d, %+v, %+v) = %d, want %d", s, d, a, b, got, want)
		}
	}
}

// TestIndexReadsOnlyItsBytes puts s against an unreadable page, at
// every length and distance near the vector step: a read past s faults.
func TestIndexReadsOnlyItsBytes(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Skip(err)
	}
	for i := range page {
		mem[i] = '.'
	}
	for n := range 200 {
		s := mem[page-n : page]
		for d := range 70 {
			if got := Index(s, d, Byte('f'), Byte('m')); got != -1 {
				t.Fatalf("len %d d %d: %d", n, d, got)
			}
			if n > d && d > 0 {
				s[n-1-d], s[n-1] = 'f', 'm'
				if got, want := Index(s, d, Byte('f'), Byte('m')), n-1-d; got != want {
					t.Fatalf("len %d d %d: %d, want %d", n, d, got, want)
				}
				s[n-1-d], s[n-1] = '.', '.'
			}
		}
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("xx func main() {}"), 5, byte('f'), byte(0), byte('m'), byte(0))
	f.Add([]byte("..F..M.............................................."), 3, byte('f'), byte(0x20), byte('m'), byte(0x20))
	f.Fuzz(func(t *testing.T, s []byte, d int, a, ao, b, bo byte) {
		if d < 0 || d > 1<<16 {
			return
		}
		ca, cb := Class{a, ao}, Class{b, bo}
		if got, want := Index(s, d, ca, cb), naive(s, d, ca, cb); got != want {
			t.Fatalf("Index(%q, %d, %+v, %+v) = %d, want %d", s, d, ca, cb, got, want)
		}
	})
}

// BenchmarkIndexNone measures the vector loop's speed: 1 MiB with no
// pair in it.
func BenchmarkIndexNone(b *testing.B) {
	s := make([]byte, 1<<20)
	for i := range s {
		s[i] = byte('a' + i%7)
	}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if Index(s, 5, Byte('f'), Letter('m')) != -1 {
			b.Fatal("found")
		}
	}
}

// BenchmarkIndexShort measures a call's fixed cost, which a caller
// pays once per candidate place: a pair at the end of a short buffer. (A
// first version moved each class's byte into a vector register through
// a legacy SSE instruction between 256-bit ones, and each call cost
// 340 ns here instead of 5.)
func BenchmarkIndexShort(b *testing.B) {
	for _, n := range []int{64, 256, 4096} {
		s := bytes.Repeat([]byte{'a'}, n)
		s[n-6], s[n-1] = 'f', 'm'
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if Index(s, 5, Byte('f'), Byte('m')) != n-6 {
					b.Fatal("not found")
				}
			}
		})
	}
}
