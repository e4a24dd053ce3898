package query

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// ToolSpec is one agent tool of the table in package tool (its name,
// method and result keys, which every layer reads), with what answers it
// here. The table itself lives in package tool so that the query client
// knows the tools without linking this package; every row of it has a
// runner below, or TestEveryToolRuns fails.
type ToolSpec struct {
	*tool.Spec

	// run answers a call: it decodes and checks the arguments, runs the
	// query (through the Searcher, for Glob and Grep) and builds the
	// envelope, whose text the tool's envelope constructor renders.
	run runFunc
}

type runFunc func(t *Tools, ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope

// runners answer each tool of the table, by name.
var runners = map[string]runFunc{
	tool.Glob:    (*Tools).glob,
	tool.Grep:    (*Tools).grep,
	tool.LS:      (*Tools).ls,
	tool.Changes: (*Tools).changes,
}

// toolTable is the table of tools this package runs, in the table's order:
// the rows of tool.Specs that have a runner.
var toolTable = func() []*ToolSpec {
	var specs []*ToolSpec
	for _, s := range tool.Specs() {
		if run := runners[s.Name]; run != nil {
			specs = append(specs, &ToolSpec{Spec: s, run: run})
		}
	}
	return specs
}()

// ToolSpecs returns the table of tools, in the order they are listed. The
// specs are shared: callers must not change them.
func ToolSpecs() []*ToolSpec { return toolTable }

// ToolNames returns the tools' names, in the table's order.
func ToolNames() []string {
	names := make([]string, len(toolTable))
	for i, s := range toolTable {
		names[i] = s.Name
	}
	return names
}

// LookupTool returns the spec of the tool called name, or an error naming
// the tools there are.
func LookupTool(name string) (*ToolSpec, error) {
	for _, s := range toolTable {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown tool %q (the tools are %s)", name, strings.Join(ToolNames(), ", "))
}

// LookupMethod returns the spec of the tool answered by the JSON-RPC method,
// or nil if no tool is.
func LookupMethod(method string) *ToolSpec {
	for _, s := range toolTable {
		if s.Method == method {
			return s
		}
	}
	return nil
}
