// Package testtree writes fixture trees for tests: files given as
// slash-separated paths and contents, under a temporary root.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Write creates files (root-relative slash path → contents) under a new
// temporary directory and returns its real path (t.TempDir may sit behind
// a symlink).
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		File(t, root, p, c)
	}
	return root
}

// File writes contents to the root-relative slash path rel, creating its
// directories.
func File(t testing.TB, root, rel, contents string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}
