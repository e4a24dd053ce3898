package tree

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
)

func TestNanosClamps(t *testing.T) {
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
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"future.txt", "past.txt", "now.txt"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
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
		want := Entry{Rel: n, Size: int64(len(n)), ModTime: Nanos(st.Mtim.Unix()), Ctime: Nanos(st.Ctim.Unix()), Ino: st.Ino, Dev: st.Dev}
		if e != want {
			t.Errorf("%s: entry %+v, want %+v", n, e, want)
		}
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
