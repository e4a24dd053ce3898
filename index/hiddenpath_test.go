package index_test

import (
	"testing"

	"github.com/indexd/indexd/index"
)

func TestHiddenPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"a", false}, {"a.go", false}, {"a/b.c/d.e", false}, {"a..b/c", false},
		{".a", true}, {".a/b", true}, {"a/.b", true}, {"a/b/.c.d", true}, {"a.b/.c", true}, {"a./b", false},
	} {
		if got := index.HiddenPath(c.rel); got != c.want {
			t.Errorf("HiddenPath(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}
