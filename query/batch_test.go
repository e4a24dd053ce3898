package query

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/jsonenc"
)

// A batch writes itself (AppendJSON) exactly as encoding/json, with
// jsonenc's escaping, writes it, whatever its strings hold.
func TestBatchAppendJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	parts := []string{"a", "/", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "<", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x82", " "}
	str := func() string {
		var s string
		for n := rng.IntN(8); n > 0; n-- {
			s += parts[rng.IntN(len(parts))]
		}
		return s
	}
	strs := func() []string {
		if rng.IntN(3) == 0 {
			return nil
		}
		l := make([]string, rng.IntN(4))
		for i := range l {
			l[i] = str()
		}
		return l
	}
	for range 3000 {
		b := Batch{Cwd: str(), Paths: strs(), Files: strs(), Text: str()}
		if rng.IntN(2) == 0 {
			for range rng.IntN(4) {
				b.Matches = append(b.Matches, envelope.GrepMatch{File: str(), Line: rng.IntN(1 << 30), Text: str(), Before: strs(), After: strs()})
			}
		}
		if rng.IntN(2) == 0 {
			for range rng.IntN(4) {
				b.Counts = append(b.Counts, envelope.FileCount{File: str(), Count: rng.IntN(1000)})
			}
		}
		type plain Batch
		want, err := jsonenc.Marshal((*plain)(&b))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON(%+v):\n got %s\nwant %s", b, got, want)
		}
	}
}
