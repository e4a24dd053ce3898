package journal

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func entries(j *Journal, pos uint64) ([]Change, []uint64, bool) {
	var cs []Change
	var ps []uint64
	ok := j.Since(pos, func(p uint64, c Change) bool {
		cs = append(cs, c)
		ps = append(ps, p)
		return true
	})
	return cs, ps, ok
}

func TestRoundTrip(t *testing.T) {
	j := New(0)
	in := []Change{
		{Path: "a/b/c.go", Kind: Created, Mtime: 1_700_000_000_123456789},
		{Path: "a/b/d.go", Kind: Modified, Mtime: 1_600_000_000_000000001, Hidden: 0},
		{Path: ".git/x", Kind: Deleted, Mtime: 0, Hidden: 1, Link: true},
		{Path: "a/.cache/é\xff", Kind: Created, Mtime: -5, Hidden: 2, Ignored: true},
	}
	j.Append(in)
	got, pos, ok := entries(j, 1)
	if !ok || !slices.Equal(got, in) || !slices.Equal(pos, []uint64{1, 2, 3, 4}) {
		t.Fatalf("Since(1) = %v %+v %v, want %+v at 1..4", ok, got, pos, in)
	}
	got, _, ok = entries(j, 3)
	if !ok || !slices.Equal(got, in[2:]) {
		t.Fatalf("Since(3) = %v %+v, want %+v", ok, got, in[2:])
	}
	if got, _, ok := entries(j, 5); !ok || len(got) != 0 {
		t.Fatalf("Since(end) = %v %+v, want ok and nothing", ok, got)
	}
	for _, bad := range []uint64{0, 6} {
		if _, _, ok := entries(j, bad); ok {
			t.Errorf("Since(%d) answered; before the start or past the end must not be", bad)
		}
	}
}

func TestNet(t *testing.T) {
	j := New(0)
	j.Append([]Change{
		{Path: "keep", Kind: Modified, Mtime: 1},
		{Path: "tmp", Kind: Created, Mtime: 2},
		{Path: "old", Kind: Deleted, Mtime: 3},
		{Path: "tmp", Kind: Deleted, Mtime: 2},
		{Path: "re", Kind: Deleted, Mtime: 4},
		{Path: "re", Kind: Created, Mtime: 5},
		{Path: "new", Kind: Created, Mtime: 6},
		{Path: "new", Kind: Modified, Mtime: 7},
		{Path: "keep", Kind: Modified, Mtime: 8},
	})
	got, ok := j.Net(1)
	want := []Change{ // most recent last change first
		{Path: "keep", Kind: Modified, Mtime: 8},
		{Path: "new", Kind: Created, Mtime: 7},
		{Path: "re", Kind: Modified, Mtime: 5},
		{Path: "old", Kind: Deleted, Mtime: 3},
	}
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("Net(1) = %v\n%+v, want\n%+v", ok, got, want)
	}
	got, _ = j.Net(5)
	want = []Change{{Path: "keep", Kind: Modified, Mtime: 8}, {Path: "new", Kind: Created, Mtime: 7}, {Path: "re", Kind: Modified, Mtime: 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("Net(5) = %+v, want %+v", got, want)
	}
}

func TestBoundDropsOldestBlocks(t *testing.T) {
	j := New(4 * BlockBytes)
	for i := range 200_000 {
		j.Append([]Change{{Path: fmt.Sprintf("dir%d/file%d.go", i%97, i), Kind: Modified, Mtime: int64(i)}})
	}
	start, end := j.Positions()
	if end != 200_001 {
		t.Fatalf("end = %d, want 200001", end)
	}
	if j.Bytes() > 4*BlockBytes || start == 1 {
		t.Fatalf("bytes %d (bound %d), start %d: the bound was not kept", j.Bytes(), 4*BlockBytes, start)
	}
	if _, ok := j.Net(start - 1); ok {
		t.Error("a position before the start answered")
	}
	got, pos, ok := entries(j, start)
	if !ok || len(got) != int(end-start) || pos[0] != start || got[len(got)-1].Path != "dir82/file199999.go" {
		t.Fatalf("Since(start): ok %v, %d entries from %v, want %d", ok, len(got), pos[:1], end-start)
	}
}

func TestTruncate(t *testing.T) {
	j := New(0)
	j.Append([]Change{{Path: "a", Kind: Created}})
	_, end := j.Positions()
	j.Truncate()
	for _, p := range []uint64{1, end} {
		if _, ok := j.Net(p); ok {
			t.Errorf("Net(%d) answered after Truncate", p)
		}
	}
	_, end = j.Positions()
	j.Append([]Change{{Path: "b", Kind: Created}})
	if got, ok := j.Net(end); !ok || len(got) != 1 || got[0].Path != "b" {
		t.Errorf("after Truncate: Net(%d) = %v %+v", end, ok, got)
	}
}

func TestClockToken(t *testing.T) {
	// A fixed instance, not NewInstance's: the bad tokens below depend on
	// the token's length (TestClockTokenTrailingByte covers each).
	c := Clock{Instance: 0x8c2f_3a4b_5d6e_7f01, Root: RootID("/src/repo"), Journal: 3, Pos: 1 << 40}
	s := c.String()
	got, err := ParseClock(s)
	if err != nil || got != c {
		t.Fatalf("ParseClock(%q) = %+v, %v; want %+v", s, got, err, c)
	}
	if RootID("/src/repo") == RootID("/src/repo2") {
		t.Error("two roots share an id")
	}
	if NewInstance() == 0 {
		t.Error("NewInstance returned 0")
	}
	for _, bad := range []string{"", "c", "x" + s[1:], s + "A", s[:len(s)-1], "c!!!", "c" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := ParseClock(bad); err == nil {
			t.Errorf("ParseClock(%q) accepted", bad)
		}
	}
}

// millionChanges appends 1,000,000 modifications of paths shaped like a
// source tree's (batches of 1,000 sorted paths, as the watcher appends
// them) to a journal bounded by max.
func millionChanges(max int) *Journal {
	j := New(max)
	batch := make([]Change, 0, 1000)
	for i := range 1_000_000 {
		batch = append(batch, Change{
			Path:  fmt.Sprintf("src/module%02d/package%03d/file%04d_impl.go", i/100_000, (i/1000)%1000, i%1000),
			Kind:  Modified,
			Mtime: 1_763_000_000_000_000_000 + int64(i)*1_234_567,
		})
		if len(batch) == cap(batch) {
			j.Append(batch)
			batch = batch[:0]
		}
	}
	return j
}

// TestMemoryPerMillion states the memory of 1M journaled changes (the
// blocks' allocations; their headers add 64 bytes per 68 KiB) and checks
// that it stays under the default bound, so the default keeps at least
// that many changes of such paths.
func TestMemoryPerMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("1M appends")
	}
	j := millionChanges(1 << 30)
	b := j.Bytes()
	t.Logf("1,000,000 changes of 45-byte paths: %d bytes in blocks (%.1f per change)", b, float64(b)/1e6)
	if b > DefaultMaxBytes {
		t.Errorf("1M changes take %d bytes, over the default bound %d", b, DefaultMaxBytes)
	}
	if start, _ := j.Positions(); start != 1 {
		t.Errorf("start %d: entries dropped under a 1 GiB bound", start)
	}
}

// One Append that brings many blocks (the watcher appends a whole batch
// at once) leaves the journal within its bound, as many single appends
// do: the oldest blocks are dropped until it fits, and what is kept is
// the batch's last entries, in order.
func TestBoundOneAppendManyBlocks(t *testing.T) {
	const max = 4 * BlockBytes // room for 3 blocks of blockCap
	j := New(max)
	for round := range 2 {
		_, end0 := j.Positions()
		batch := make([]Change, 30_000) // some 20 blocks
		for i := range batch {
			batch[i] = Change{Path: fmt.Sprintf("round%d/dir%03d/file%05d.go", round, i%113, i), Kind: Modified, Mtime: int64(i)}
		}
		j.Append(batch)
		start, end := j.Positions()
		if end != end0+uint64(len(batch)) {
			t.Fatalf("round %d: end %d, want %d", round, end, end0+uint64(len(batch)))
		}
		if got := j.Bytes(); got != 3*blockCap {
			t.Fatalf("round %d: %d bytes held, want 3 blocks (%d) under the bound %d", round, got, 3*blockCap, max)
		}
		kept := int(end - start)
		if start <= end0 || kept <= 0 || kept > len(batch) {
			t.Fatalf("round %d: kept [%d, %d) of the batch appended at %d", round, start, end, end0)
		}
		got, pos, ok := entries(j, start)
		if !ok || !slices.Equal(got, batch[len(batch)-kept:]) || pos[0] != start {
			t.Fatalf("round %d: Since(start) gives %d entries from %v, want the batch's last %d", round, len(got), pos[:min(1, len(pos))], kept)
		}
		if _, _, ok := entries(j, start-1); ok {
			t.Fatalf("round %d: the position before the start answered", round)
		}
	}
}

// A token with a byte after its four fields is not one, nor is one cut
// short, whatever its fields (instances chosen so that the token's length
// in base64 varies: with a random one, an appended character sometimes
// made a length base64 refuses, and the trailing byte went untested).
func TestClockTokenTrailingByte(t *testing.T) {
	for _, c := range []Clock{
		{Instance: 1, Root: 2, Journal: 3, Pos: 4},
		{Instance: 1 << 63, Root: RootID("/src/repo"), Journal: 3, Pos: 1 << 40},
		{Instance: ^uint64(0), Root: ^uint64(0), Journal: ^uint64(0), Pos: ^uint64(0)},
		{Instance: 0x1234, Root: 0, Journal: 1, Pos: 1},
	} {
		s := c.String()
		if got, err := ParseClock(s); err != nil || got != c {
			t.Fatalf("ParseClock(%q) = %+v, %v; want %+v", s, got, err, c)
		}
		raw, err := base64.RawURLEncoding.DecodeString(s[1:])
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range []byte{0, 1, 0x7f, 0x80} {
			bad := "c" + base64.RawURLEncoding.EncodeToString(append(slices.Clip(raw), extra))
			if got, err := ParseClock(bad); !errors.Is(err, ErrBadToken) {
				t.Errorf("ParseClock(%q), %+v with the byte %#x after it: %+v, %v; want ErrBadToken", bad, c, extra, got, err)
			}
		}
		for n := 1; n < len(raw); n++ {
			cut := "c" + base64.RawURLEncoding.EncodeToString(raw[:n])
			if got, err := ParseClock(cut); !errors.Is(err, ErrBadToken) {
				t.Errorf("ParseClock(%q), %+v cut to %d bytes: %+v, %v; want ErrBadToken", cut, c, n, got, err)
			}
		}
	}
}
