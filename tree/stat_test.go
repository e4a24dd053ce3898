package tree

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
)

func TestNanosClamps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sec, nsec, want int64
	}{
		{0, 0, 0},
		{1, 5, 1_000_000_005},
		{-1, 5, -999_999_995},
		{9223372036, 854775807, math.MaxInt64},    // the last representable instant
		{9223372036, 854775808, math.MaxInt64},    // one past it
		{10485849600, 0, math.MaxInt64},           // 2302-04-13
		{-9223372036, -854775808, math.MinInt64},  // the first representable instant
		{-9223372036, -854775809, math.MinInt64},  // one before it
		{-9223372036, 0, -9223372036_000_000_000}, // in range
		{-12000000000, 0, math.MinInt64},          // 1589
		{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 7, time.Date(1900, 1, 1, 0, 0, 0, 7, time.UTC).UnixNano()},
	} {
		if got := Nanos(c.sec, c.nsec); got != c.want {
			t.Errorf("Nanos(%d, %d) = %d, want %d", c.sec, c.nsec, got, c.want)
		}
	}
}

// Walk reports the lstat fields the index revalidates by, and mtimes
// outside the int64 nanosecond range clamped so that they sort where they
// belong.
func TestWalkInfoFields(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"future.txt", "past.txt", "now.txt"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A second link, outside the tree: Nlink is the lstat's.
	if err := os.Link(filepath.Join(root, "now.txt"), filepath.Join(t.TempDir(), "link")); err != nil {
		t.Fatal(err)
	}
	// os.Chtimes goes through UnixNano, which wraps for 2300: set the
	// times with utimensat directly.
	y2300 := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	y1900 := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	for n, mt := range map[string]time.Time{"future.txt": y2300, "past.txt": y1900} {
		ts := unix.Timespec{Sec: mt.Unix()}
		if err := unix.UtimesNano(filepath.Join(root, n), []unix.Timespec{ts, ts}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]Entry{}
	_, err = Walk(context.Background(), root, "", ignore.Open(root), Options{Info: true}, func(e Entry) error {
		got[e.Rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("walk found %v", got)
	}
	for n, e := range got {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(root, n), &st); err != nil {
			t.Fatal(err)
		}
		want := Entry{Rel: n, Size: int64(len(n)), ModTime: Nanos(st.Mtim.Unix()), Ctime: Nanos(st.Ctim.Unix()), Ino: st.Ino, Dev: uint64(st.Dev), Nlink: uint32(st.Nlink), Info: true}
		if e != want {
			t.Errorf("%s: entry %+v, want %+v", n, e, want)
		}
	}
	if n := got["now.txt"].Nlink; n != 2 {
		t.Errorf("now.txt Nlink = %d, want 2", n)
	}
	if m := got["future.txt"].ModTime; m != math.MaxInt64 {
		t.Errorf("2300 mtime = %d, want MaxInt64", m)
	}
	// ext4 stores 1901-12-13 for 1900 (its range starts at -2^31 s): the
	// stat comparison above checks the value, this the sign.
	if m := got["past.txt"].ModTime; m >= 0 {
		t.Errorf("1900 mtime = %d, want a negative time", m)
	}
	if !(got["past.txt"].ModTime < got["now.txt"].ModTime && got["now.txt"].ModTime < got["future.txt"].ModTime) {
		t.Errorf("mtimes out of order: 1900 %d, now %d, 2300 %d", got["past.txt"].ModTime, got["now.txt"].ModTime, got["future.txt"].ModTime)
	}
}

// Options.InfoWhen narrows Info to the directories listed while it says
// so: asked once per directory, it gates every file listed there, and
// Entry.Info says which entries carry the lstat's fields.
func TestWalkInfoWhen(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a/1.txt", "a/2.txt", "b/1.txt", "b/2.txt", "top.txt"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	for _, tc := range []struct {
		name string
		when func() bool
		info map[string]bool // by entry
	}{
		{"never", func() bool { calls.Add(1); return false }, map[string]bool{}},
		{"always", func() bool { calls.Add(1); return true }, map[string]bool{"a/1.txt": true, "a/2.txt": true, "b/1.txt": true, "b/2.txt": true, "top.txt": true}},
	} {
		calls.Store(0)
		_, err := Walk(context.Background(), root, "", ignore.Open(root), Options{Info: true, InfoWhen: tc.when, Workers: 1}, func(e Entry) error {
			if e.Info != tc.info[e.Rel] {
				t.Errorf("%s: %s Info %v, want %v", tc.name, e.Rel, e.Info, tc.info[e.Rel])
			}
			if !e.Info && (e.Size != 0 || e.ModTime != 0 || e.Ino != 0) {
				t.Errorf("%s: %s carries lstat fields without Info: %+v", tc.name, e.Rel, e)
			}
			if e.Info && e.Size != int64(len(e.Rel)) {
				t.Errorf("%s: %s size %d, want %d", tc.name, e.Rel, e.Size, len(e.Rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("%s: InfoWhen asked %d times, want once per directory (3)", tc.name, n)
		}
	}
}
