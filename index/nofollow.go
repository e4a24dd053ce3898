package index

import (
	"os"

	"github.com/indexd/indexd/internal/privdir"
)

// openNoFollow is bbolt's Options.OpenFile for the index DBs: a symbolic
// link at a DB's path is an error (ELOOP), never followed, so a link
// planted in the state directory cannot make the daemon write through it.
func openNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	return privdir.OpenFile(name, flag, perm)
}
