package query

import (
	"testing"
)

func TestLowerIntoAllBytes(t *testing.T) {
	src := make([]byte, 256*3+5)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, len(src))
	lowerInto(dst, src)
	for i, c := range src {
		exp := c
		if 'A' <= c && c <= 'Z' {
			exp = c + 32
		}
		if dst[i] != exp {
			t.Fatalf("byte %#x: got %#x want %#x", c, dst[i], exp)
		}
	}
}

func BenchmarkLowerInto(b *testing.B) {
	src := make([]byte, 32<<10)
	for i := range src {
		src[i] = byte('A' + i%50)
	}
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		lowerInto(dst, src)
	}
}
