package index

import (
	"slices"
	"testing"
)

// FuzzListDecode feeds arbitrary bytes to the list decoder: a cursor
// never panics nor yields ids out of order, whatever the bytes; and where
// check accepts a list, the cursor yields exactly the ids check saw, and
// a seek lands on the first of them at or past its target.
func FuzzListDecode(f *testing.F) {
	ids := []uint32{0, 3, 64, 65, 200, 511, 512, 1000}
	masks := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	f.Add(appendBlocks(nil, ids, masks), uint32(70))
	f.Add(appendBitmap(nil, ids, masks, 16), uint32(70))
	var many []uint32
	for id := uint32(0); id < 600; id += 2 {
		many = append(many, id)
	}
	f.Add(appendBlocks(nil, many, make([]byte, len(many))), uint32(301))
	f.Add(appendBitmap(nil, many, make([]byte, len(many)), 10), uint32(301))
	f.Fuzz(func(t *testing.T, b []byte, target uint32) {
		var got []uint32
		for c := listCursor(b); !c.done; c.next() {
			if len(got) > 0 && c.cur <= got[len(got)-1] || len(got) > len(b)*8 {
				t.Fatalf("ids out of order or too many: %v then %d", got[max(0, len(got)-3):], c.cur)
			}
			got = append(got, c.cur)
		}
		c := listCursor(b)
		c.seek(target)
		var checked []uint32
		if err := checkList(b, 1<<20, func(id uint32) error { checked = append(checked, id); return nil }); err != nil {
			return
		}
		if !slices.Equal(got, checked) {
			t.Fatalf("cursor %v, check %v", got, checked)
		}
		i, _ := slices.BinarySearch(got, target)
		if i == len(got) != c.done || !c.done && c.cur != got[i] {
			t.Fatalf("seek %d: at %d (done %v), want #%d of %v", target, c.cur, c.done, i, got)
		}
	})
}
