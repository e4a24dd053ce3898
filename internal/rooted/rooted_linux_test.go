package rooted_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/testtree"
)

// OpenPath opens an entry without following a final link.
func TestOpenPath(t *testing.T) {
	modes(t, func(t *testing.T) {
		root, _ := fixture(t)
		r := testtree.Open(t, root)
		fd, err := r.OpenPath("lf")
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			t.Errorf("OpenPath(lf): mode %o, %v; want the link itself", st.Mode, err)
		}
	})
}
