package client

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/testtree"
)

// The stamp of a checkout changes with a Go source's size or modification
// time, go.mod's, and a new source file; not with a test file, a file
// under testdata or a hidden directory, or another kind of file.
func TestSourceStamp(t *testing.T) {
	mod := testtree.Write(t, map[string]string{
		"go.mod":              "module github.com/indexd/indexd\n",
		"a/a.go":              "package a\n",
		"a/a_test.go":         "package a\n",
		"a/testdata/x.go":     "package x\n",
		".git/hooks/x.go":     "package x\n",
		"README.md":           "readme\n",
		"cmd/indexd/main.go":  "package main\n",
		"_scratch/scratch.go": "package scratch\n",
	})
	stamp := func() []byte {
		t.Helper()
		s, err := sourceStamp(mod)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := stamp()
	if !bytes.Equal(stamp(), base) {
		t.Fatal("the stamp of an unchanged checkout changed")
	}
	later := time.Now().Add(time.Hour)
	for _, name := range []string{"a/a_test.go", "a/testdata/x.go", ".git/hooks/x.go", "README.md", "_scratch/scratch.go"} {
		if err := os.Chtimes(filepath.Join(mod, name), later, later); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stamp(), base) {
			t.Errorf("touching %s changed the stamp", name)
		}
	}
	prev := base
	for _, change := range []func() error{
		func() error { return os.Chtimes(filepath.Join(mod, "a/a.go"), later, later) },
		func() error { return os.WriteFile(filepath.Join(mod, "a/a.go"), []byte("package a\n\n"), 0o644) },
		func() error {
			return os.Chtimes(filepath.Join(mod, "go.mod"), later.Add(time.Hour), later.Add(time.Hour))
		},
		func() error { return os.WriteFile(filepath.Join(mod, "a/b.go"), []byte("package a\n"), 0o644) },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		s := stamp()
		if bytes.Equal(s, prev) {
			t.Errorf("a change of the sources left the stamp %q", s)
		}
		prev = s
	}
}

// A go.mod declares this module only with its exact path.
func TestModFileDeclares(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{"module github.com/indexd/indexd\n\ngo 1.26\n", true},
		{"// a comment\nmodule \"github.com/indexd/indexd\"\n", true},
		{"module github.com/indexd/indexd/v2\n", false},
		{"module example.com/other\n", false},
		{"modules github.com/indexd/indexd\n", false},
		{"go 1.26\n", false},
	} {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := modFileDeclares(p, modulePath); got != tc.want {
			t.Errorf("modFileDeclares(%q) = %v, want %v", tc.content, got, tc.want)
		}
	}
	if modFileDeclares(filepath.Join(dir, "missing", "go.mod"), modulePath) {
		t.Error("a missing go.mod declares the module")
	}
}
