package client

import (
	"os"
	"path/filepath"
	"testing"
)

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
