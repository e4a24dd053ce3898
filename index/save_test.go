package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/testtree"
)

// A save that fails part-way (here the disk refuses to grow the file, as
// a full disk does) removes the file it was writing and leaves the DB it
// was to replace as it was. The failure is real: a child process with a
// file size limit (RLIMIT_FSIZE) of four pages, so that bbolt's first
// commit fails with EFBIG after the new file has been created and
// written to.
func TestFailedSaveRemovesItsFile(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%5, i)] = fmt.Sprintf("file %d of the fixture\n", i)
	}
	root := writeTree(t, files)
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	ix := mustBuild(t, root)
	if err := ix.Save(old); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	before, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	oldBase, _ := filepath.Glob(old + ".base-*")
	if len(oldBase) != 1 {
		t.Fatalf("base files of old.db: %q", oldBase)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INDEX_FSIZE_CHILD=1", "INDEX_FSIZE_ROOT="+root, "INDEX_FSIZE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "new.db: index: save ") || !strings.HasPrefix(lines[1], "old.db: index: save ") ||
		!strings.HasSuffix(lines[0], "file too large") || !strings.HasSuffix(lines[1], "file too large") {
		t.Fatalf("child's saves:\n%s", out)
	}
	t.Logf("child's saves:\n%s", out)
	if names := testtree.Names(t, dir); !slices.Equal(names, []string{"old.db", filepath.Base(oldBase[0])}) {
		t.Fatalf("after the failed saves the directory holds %q, want only old.db and its base", names)
	}
	after, err := os.ReadFile(old)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("old.db changed by a failed save (err %v)", err)
	}
	ix, err = Open(old, root)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := candidates(t, ix, "file 299 "); !slices.Equal(got, []string{"d4/f299.txt"}) {
		t.Fatalf("old.db after the failed saves: candidates %q", got)
	}
}

// fsizeChild is TestFailedSaveRemovesItsFile's child: it builds the index
// of INDEX_FSIZE_ROOT and saves it twice in INDEX_FSIZE_DIR, as new.db
// (absent) and old.db (present), with files limited to 16 KiB, printing
// each save's error. It exits 1 if a save succeeds.
func fsizeChild() {
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails with EFBIG instead
	ix, err := Build(context.Background(), os.Getenv("INDEX_FSIZE_ROOT"), nil)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 16 << 10, Max: 16 << 10}); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	for _, name := range []string{"new.db", "old.db"} {
		err := ix.Save(filepath.Join(os.Getenv("INDEX_FSIZE_DIR"), name))
		if err == nil {
			fmt.Println(name, "saved")
			os.Exit(1)
		}
		fmt.Printf("%s: %v\n", name, err)
	}
	os.Exit(0)
}

// A save whose rename fails (a directory where the DB goes) removes its
// file and reports the failure; the index keeps working in memory.
func TestSaveRenameFailure(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.txt": "needle\n"})
	ix := mustBuild(t, root)
	dir := t.TempDir()
	dst := filepath.Join(dir, "ix.db")
	writeFile(t, dst, "in/the/way", "")
	err := ix.Save(dst)
	if !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("Save over a directory: %v", err)
	}
	if names := testtree.Names(t, dir); !slices.Equal(names, []string{"ix.db"}) {
		t.Fatalf("directory after the failed save: %q", names)
	}
	if ix.db != nil {
		t.Fatal("the index kept a DB from a failed save")
	}
	writeFile(t, root, "b.txt", "needle too\n")
	if err := ix.Update("b.txt"); err != nil {
		t.Fatal(err)
	}
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("candidates: %q", got)
	}
}
