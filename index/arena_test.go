package index

import (
	"fmt"
	"strings"
	"testing"
)

// The arena's strings hold the bytes they were made of, whatever is
// written after them (more paths, a new chunk, the caller's buffer) and
// however long they are.
func TestPathArena(t *testing.T) {
	t.Parallel()
	var a pathArena
	var want, got []string
	buf := make([]byte, 0, pathChunk)
	for i := range 60000 { // about 2.5 chunks
		p := fmt.Sprintf("dir%d/sub/file%06d.go", i%97, i)
		if i%5000 == 0 {
			p = strings.Repeat("long/", pathChunk/16/5+1) + p // past the arena's bound
		}
		buf = append(buf[:0], p...)
		want = append(want, p)
		got = append(got, a.string(buf))
		for j := range buf {
			buf[j] = 'x' // the caller's bytes (bbolt's page) are not the string's
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("path %d = %q, want %q", i, got[i], want[i])
		}
	}
	if s := a.string(nil); s != "" {
		t.Errorf("empty path = %q", s)
	}
}
