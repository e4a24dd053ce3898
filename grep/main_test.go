package grep

import (
	"os"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
)

func TestMain(m *testing.M) {
	testtree.QuickChildExit()
	os.Exit(m.Run())
}
