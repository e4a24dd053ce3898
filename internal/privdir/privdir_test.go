package privdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBase(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for dir, want := range map[string]string{
		filepath.Join(tmp, "indexd-0", "state"): tmp,
		filepath.Join(tmp, "a"):                 tmp,
		tmp:                                     filepath.Dir(tmp),
		tmp + "x/state":                         tmp + "x",
		"/home/u/.local/state/indexd":           "/home/u/.local/state",
	} {
		if got := Base(dir); got != want {
			t.Errorf("Base(%s) = %s, want %s", dir, got, want)
		}
	}
}

// Ensure makes every missing directory below the base 0700 and checks
// each, made or found.
func TestEnsure(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, "a", "b", "c")
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "a", "b"), dir} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v", d, fi.Mode(), err)
		}
	}
	// A component in the middle others may write to is refused.
	os.Chmod(filepath.Join(tmp, "a"), 0o777)
	err := Ensure(dir)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInsecure) || e.Path != filepath.Join(tmp, "a") || !strings.HasPrefix(e.Problem, "is writable by its group or others (mode 0777)") {
		t.Errorf("Ensure under a 0777 directory: %v", err)
	}
	if err := Ensure("relative/dir"); err == nil {
		t.Error("Ensure of a relative path succeeded")
	}
}

// The files are never opened through a symbolic link.
func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := WriteFile(link, []byte("y"), 0o600); err == nil {
		t.Error("WriteFile wrote through a link")
	}
	if _, err := ReadFile(link); err == nil {
		t.Error("ReadFile read through a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "x" {
		t.Errorf("target holds %q", b)
	}
	if err := WriteFile(filepath.Join(dir, "f"), []byte("z"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "z" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
}
