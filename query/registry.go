package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/indexd/indexd/envelope"
)

// Tool names as agents call them.
const (
	ToolGlob = "Glob"
	ToolGrep = "Grep"
	ToolLS   = "LS"
	// ToolChanges lists what changed since a clock token (changes.go).
	ToolChanges = "Changes"
)

// The tools' methods on the daemon's socket (package rpc).
const (
	MethodGlob = "glob"
	MethodGrep = "grep"
	MethodLS   = "ls"
	// MethodChanges answers ToolChanges.
	MethodChanges = "changes"
)

// ToolSpec is one agent tool as every layer knows it: the CLI (the method
// to call, the exit code of an answer), rpc (method to tool and back), the
// daemon (the methods it registers) and the MCP server (the tools it
// lists) all read the table, ToolSpecs; none of them names the tools
// otherwise. Adding a tool means a row here, the tool's own files (its
// parameters, search and envelope text, its CLI command and MCP
// definition), and nothing else: TestEveryLayerKnowsEveryTool (in
// cmd/indexctl) fails for a layer that does not know a row.
type ToolSpec struct {
	// Name is the tool's name as agents call it.
	Name string
	// Method is the tool's JSON-RPC method.
	Method string
	// ResultKeys are the members of the tool's data that hold its results
	// (arrays); the answer's data holds at least one of them (Results).
	ResultKeys []string

	// run answers a call: it decodes and checks the arguments, runs the
	// query (through the Searcher, for Glob and Grep) and builds the
	// envelope, whose text the tool's envelope constructor renders.
	run func(t *Tools, ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope
}

// toolTable is the table of tools, in the order they are listed.
var toolTable = []*ToolSpec{
	{Name: ToolGlob, Method: MethodGlob, ResultKeys: []string{"paths"}, run: (*Tools).glob},
	{Name: ToolGrep, Method: MethodGrep, ResultKeys: []string{"matches", "files", "counts"}, run: (*Tools).grep},
	{Name: ToolLS, Method: MethodLS, ResultKeys: []string{"entries"}, run: (*Tools).ls},
	{Name: ToolChanges, Method: MethodChanges, ResultKeys: []string{"changes"}, run: (*Tools).changes},
}

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

// Results counts the results in the data of one of the tool's answers (an
// envelope that is not an error): the lengths of the arrays under its
// ResultKeys. Data that is not an object, holds none of the keys, or holds
// one that is not an array is an error: the answer is not the tool's.
func (s *ToolSpec) Results(data json.RawMessage) (int, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return 0, fmt.Errorf("%s answered with data that is not an object", s.Name)
	}
	n, found := 0, false
	for _, k := range s.ResultKeys {
		v, ok := members[k]
		if !ok {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil || list == nil {
			return 0, fmt.Errorf("%s answered with data.%s that is not an array", s.Name, k)
		}
		n, found = n+len(list), true
	}
	if !found {
		return 0, fmt.Errorf("%s answered with data holding none of %s", s.Name, strings.Join(s.ResultKeys, ", "))
	}
	return n, nil
}
