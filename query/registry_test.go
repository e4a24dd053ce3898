package query

import (
	"slices"
	"testing"

	"github.com/indexd/indexd/tool"
)

// Every row of the table of tools (package tool) has a runner here, and
// this package runs no tool the table does not list.
func TestEveryToolRuns(t *testing.T) {
	t.Parallel()
	if got, want := ToolNames(), tool.Names(); !slices.Equal(got, want) {
		t.Errorf("query runs the tools %v; the table lists %v", got, want)
	}
	for name := range runners {
		if _, err := tool.Lookup(name); err != nil {
			t.Errorf("a runner for %s, which the table does not list: %v", name, err)
		}
	}
}
