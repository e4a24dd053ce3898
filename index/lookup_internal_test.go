package index

import (
	"fmt"
	"slices"
	"testing"
)

// A change that puts a new path twice, removes it and puts it again, or
// puts paths that sort among the table's, leaves every live file found
// by its path and the table consistent, whether the change is applied in
// one piece or a change at a time (knobs.commitChunk 1): an id put and not yet
// placed in the order is found all the same (Index.adding), and none is
// left there once the change is applied.
func TestLookupAcrossAChange(t *testing.T) {
	t.Parallel()
	for _, chunk := range []int{256, 1} {
		t.Run(fmt.Sprint("chunk ", chunk), func(t *testing.T) {
			root := writeTree(t, map[string]string{"b.txt": "b\n", "d/e.txt": "e\n", "f.txt": "f\n"})
			ix := mustBuildWith(t, root, knobsWith(func(k *knobs) { k.commitChunk = chunk }))
			put := func(p string) change {
				return change{path: p, f: File{Path: p, Size: int64(len(p)), ModTime: 1}, tris: []uint32{0x61626310}} // "abc", a line bit
			}
			chs := []change{
				put("a.txt"), put("c.txt"), put("a.txt"), // twice in one change
				put("d/a.txt"), {path: "d/a.txt", remove: true}, put("d/a.txt"),
				put("b.txt"), // already in the table
				{path: "f.txt", remove: true},
				put("z.txt"), put("c.txt"),
			}
			if err := ix.commit(chs, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := ix.Check(); err != nil {
				t.Fatal(err)
			}
			if len(ix.adding) != 0 {
				t.Errorf("left put and not ordered: %v", ix.adding)
			}
			var live []string
			for _, id := range ix.order {
				live = append(live, ix.files[id].Path)
			}
			want := []string{"a.txt", "b.txt", "c.txt", "d/a.txt", "d/e.txt", "z.txt"}
			if !slices.Equal(live, want) {
				t.Fatalf("live files %q, want %q", live, want)
			}
			ids := map[uint32]bool{}
			for _, p := range want {
				id, ok := ix.lookup(p)
				if !ok || ix.files[id].Path != p || ids[id] {
					t.Errorf("lookup(%q) = %d, %v (path %q)", p, id, ok, ix.files[id].Path)
				}
				ids[id] = true
			}
			if _, ok := ix.lookup("f.txt"); ok {
				t.Error("the removed f.txt is still found")
			}
		})
	}
}
