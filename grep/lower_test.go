package grep

import (
	"encoding/binary"
	"testing"
)

func TestLowerWordAllBytes(t *testing.T) {
	t.Parallel()
	src := make([]byte, 256*3+8)
	for i := range src {
		src[i] = byte(i)
	}
	for off := 0; off+8 <= len(src); off++ {
		w := binary.LittleEndian.Uint64(src[off:])
		var got [8]byte
		binary.LittleEndian.PutUint64(got[:], lowerWord(w))
		for i, c := range src[off : off+8] {
			exp := c
			if 'A' <= c && c <= 'Z' {
				exp = c + 32
			}
			if got[i] != exp {
				t.Fatalf("byte %#x at %d of a word: got %#x want %#x", c, i, got[i], exp)
			}
		}
	}
}
