package rooted_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/internal/testtree"
)

// modes runs f once with openat2 and once resolving one component at a
// time, as on kernels without openat2.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("components", func(t *testing.T) {
		defer rooted.ForceComponentWalk()()
		f(t)
	})
}

// fixture makes root (with a file, a directory, links inside and out)
// and an outside directory holding a secret.
func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root + "/d/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{root + "/f.txt": "inside\n", root + "/d/sub/g.txt": "deep\n", outside + "/secret.txt": "SECRET\n"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		root + "/out": outside, root + "/in": "d", root + "/lf": "f.txt", root + "/d/up": "..",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestOpenFile(t *testing.T) {
	modes(t, func(t *testing.T) {
		root, _ := fixture(t)
		r := testtree.Open(t, root)
		for _, c := range []struct {
			rel     string
			want    string // contents, or "" for an error
			beneath bool   // the error is ErrNotBeneath
			invalid bool   // the error is ErrInvalidName
		}{
			{rel: "f.txt", want: "inside\n"},
			{rel: "d/sub/g.txt", want: "deep\n"},
			{rel: "/d/sub/g.txt/", want: "deep\n"},
			{rel: "out/secret.txt", beneath: true},
			{rel: "in/sub/g.txt", beneath: true},
			{rel: "lf", beneath: true},
			{rel: "d/up/f.txt", beneath: true},
			{rel: "../outside/secret.txt", invalid: true},
			{rel: "d/../f.txt", invalid: true},
			{rel: "d/./sub/g.txt", invalid: true},
			{rel: "f.txt\x00", invalid: true},
			{rel: "missing"},
		} {
			fd, err := r.OpenFile(c.rel)
			if c.want == "" {
				if err == nil {
					unix.Close(fd)
					t.Errorf("OpenFile(%q) succeeded, want an error", c.rel)
					continue
				}
				if got := errors.Is(err, rooted.ErrNotBeneath); got != c.beneath {
					t.Errorf("OpenFile(%q) = %v; ErrNotBeneath %v, want %v", c.rel, err, got, c.beneath)
				}
				if got := errors.Is(err, rooted.ErrInvalidName); got != c.invalid {
					t.Errorf("OpenFile(%q) = %v; ErrInvalidName %v, want %v", c.rel, err, got, c.invalid)
				}
				if !rooted.Gone(err) && !c.invalid {
					t.Errorf("OpenFile(%q) = %v, not Gone", c.rel, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("OpenFile(%q): %v", c.rel, err)
				continue
			}
			f := os.NewFile(uintptr(fd), c.rel)
			b, _ := io.ReadAll(f)
			f.Close()
			if string(b) != c.want {
				t.Errorf("OpenFile(%q) read %q, want %q", c.rel, b, c.want)
			}
		}
	})
}

func TestLstatAndDirs(t *testing.T) {
	modes(t, func(t *testing.T) {
		root, _ := fixture(t)
		r := testtree.Open(t, root)
		for rel, want := range map[string]uint32{"": unix.S_IFDIR, "d": unix.S_IFDIR, "out": unix.S_IFLNK, "lf": unix.S_IFLNK, "d/sub/g.txt": unix.S_IFREG} {
			st, err := r.Lstat(rel)
			if err != nil || uint32(st.Mode)&unix.S_IFMT != want {
				t.Errorf("Lstat(%q) = mode %o, %v; want type %o", rel, st.Mode&unix.S_IFMT, err, want)
			}
		}
		for _, rel := range []string{"out/secret.txt", "in/sub"} {
			if _, err := r.Lstat(rel); !errors.Is(err, rooted.ErrNotBeneath) {
				t.Errorf("Lstat(%q) = %v, want ErrNotBeneath", rel, err)
			}
		}
		for _, rel := range []string{"out", "in", "f.txt"} {
			if f, err := r.OpenDir(rel); err == nil {
				f.Close()
				t.Errorf("OpenDir(%q) succeeded through a link or on a file", rel)
			}
		}
		f, err := r.OpenDir("d")
		if err != nil {
			t.Fatal(err)
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		if len(names) != 2 {
			t.Errorf("OpenDir(d) lists %v", names)
		}

		if err := r.CreateExclusive("d/new"); err != nil {
			t.Fatal(err)
		}
		if err := r.CreateExclusive("out/planted"); err == nil || !rooted.Gone(err) {
			t.Errorf("CreateExclusive through a link = %v", err)
		}
		if err := r.Remove("d/new"); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove("out/secret.txt"); err == nil || !rooted.Gone(err) {
			t.Errorf("Remove through a link = %v", err)
		}
	})
}

// A root given by a path whose last component is a link is refused.
func TestOpenRootLink(t *testing.T) {
	root, _ := fixture(t)
	if _, err := rooted.Open(root + "/out"); !errors.Is(err, rooted.ErrNotBeneath) {
		t.Fatalf("Open(link) = %v, want ErrNotBeneath", err)
	}
}

// A directory and a link to an outside directory exchanged in a loop
// (renameat2 RENAME_EXCHANGE) while files are opened through the
// directory's name: no open ever reaches the outside file.
func TestExchangeLoopNeverEscapes(t *testing.T) {
	modes(t, func(t *testing.T) {
		root, outside := fixture(t)
		// Same name inside and outside, so only the contents tell.
		if err := os.WriteFile(filepath.Join(root, "d", "secret.txt"), []byte("inside\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := testtree.Open(t, root)
		if err := os.Symlink(outside, filepath.Join(root, "l")); err != nil {
			t.Fatal(err)
		}
		stop := testtree.ExchangeLoop(t, root+"/d", root+"/l")
		var opened, leaks int
		buf := make([]byte, 64)
		for range 20000 {
			for _, rel := range []string{"d/secret.txt", "l/secret.txt"} {
				fd, err := r.OpenFile(rel)
				if err != nil {
					if !rooted.Gone(err) {
						t.Errorf("OpenFile(%s): %v, not Gone", rel, err)
					}
					continue
				}
				n, _ := unix.Read(fd, buf)
				unix.Close(fd)
				opened++
				if string(buf[:n]) != "inside\n" {
					leaks++
				}
			}
			if f, err := r.OpenDir("d"); err == nil {
				names, _ := f.Readdirnames(-1)
				f.Close()
				for _, n := range names {
					if n != "sub" && n != "up" && n != "secret.txt" {
						leaks++
					}
				}
			}
		}
		swaps := stop()
		if leaks > 0 {
			t.Fatalf("%d opens reached the outside directory", leaks)
		}
		if opened == 0 || swaps == 0 {
			t.Fatalf("the race never ran: %d opens, %d swaps", opened, swaps)
		}
		t.Logf("%d opens, %d swaps, 0 leaks", opened, swaps)
	})
}

// A directory's ID is the same by path and through a handle on it, the
// same while it lives, and another once it is deleted and made again at
// the same path, even when the new one gets the old inode number (ext4
// hands it out again at once), once the file system's clock has ticked
// since the old one's birth.
func TestID(t *testing.T) {
	root, _ := fixture(t)
	id, isDir, err := rooted.IDOf(root)
	if err != nil || !isDir {
		t.Fatalf("IDOf(root) = %+v, %v, %v", id, isDir, err)
	}
	r := testtree.Open(t, root)
	if got, err := r.ID(); err != nil || got != id {
		t.Fatalf("Root.ID() = %+v, %v, want %+v", got, err, id)
	}
	if _, isDir, err := rooted.IDOf(filepath.Join(root, "in")); err != nil || isDir {
		t.Errorf("IDOf(a link to a directory): isDir %v, %v; want the link itself", isDir, err)
	}
	dir := filepath.Join(root, "d")
	before, _, err := rooted.IDOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	reused := 0
	for range 10 {
		if before.Birth != 0 {
			tick(t, root, before.Birth)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		after, _, err := rooted.IDOf(dir)
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Fatalf("a directory made again has the old one's ID %+v", after)
		}
		if after.Ino == before.Ino {
			reused++
		}
		before = after
	}
	t.Logf("inode numbers reused: %d of 10", reused)
}

// tick waits until the file system's clock (the ctime it gives a file
// touched now) is past ns, or fails the test after 10 s.
func tick(t *testing.T, dir string, ns int64) {
	t.Helper()
	probe := filepath.Join(dir, "tick")
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(probe, &st); err != nil {
			t.Fatal(err)
		}
		if st.Ctim.Nano() > ns {
			return
		}
	}
	t.Fatal("the file system's clock did not move in 10 s")
}
