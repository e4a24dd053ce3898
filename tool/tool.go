// Package tool owns the table of agent tools every layer reads: each
// tool's name as agents call it, its method on the daemon's socket, the
// members of its answer's data that hold its results, its parameters
// (types, defaults, bounds, the descriptions agents read, the command
// line's flags: params.go), and the time limits a caller waits by. It imports only the standard library, so the query
// client (cmd/indexctl) can know the tools without linking the engine that
// answers them; package query builds the tools' implementations on this
// table (query/registry.go).
//
// Adding a tool means a row here, the tool's implementation in query (its
// parameters, search and envelope text), its CLI command and MCP
// definition, and nothing else: TestEveryLayerKnowsEveryTool (in
// cmd/indexctl) fails for a layer that does not know a row, and query's
// tests fail for a row it cannot run.
package tool

import (
	"fmt"
	"strings"
)

// Tool names as agents call them.
const (
	Glob = "Glob"
	Grep = "Grep"
	LS   = "LS"
	// Changes lists what changed since a clock token.
	Changes = "Changes"
)

// The tools' methods on the daemon's socket (package rpc).
const (
	MethodGlob = "glob"
	MethodGrep = "grep"
	MethodLS   = "ls"
	// MethodChanges answers Changes.
	MethodChanges = "changes"
)

// Grep's time limits, in milliseconds (Glob's is the envelope's
// GlobMaxDurationMS).
const (
	// GrepDefaultTimeoutMS is Grep's timeout when timeout_ms is not given.
	GrepDefaultTimeoutMS = 2000
	// GrepMaxTimeoutMS is the largest timeout_ms Grep accepts.
	GrepMaxTimeoutMS = 60000
)

// Spec is one agent tool as every layer knows it: the CLI (the method to
// call, the exit code of an answer), rpc (method to tool and back), the
// daemon (the methods it registers) and the MCP server (the tools it
// lists) all read the table, Specs; none of them names the tools
// otherwise.
type Spec struct {
	// Name is the tool's name as agents call it.
	Name string
	// Method is the tool's JSON-RPC method.
	Method string
	// ResultKeys are the members of the tool's data that hold its results
	// (arrays); the answer's data holds at least one of them, and an
	// answer found something when one of them is not empty (the exit
	// code of indexctl).
	ResultKeys []string
	// Params are the tool's parameters (params.go), in the order they
	// are listed.
	Params []Param
}

// table is the table of tools, in the order they are listed.
var table = []*Spec{
	{Name: Glob, Method: MethodGlob, ResultKeys: []string{"paths"}, Params: globParams},
	{Name: Grep, Method: MethodGrep, ResultKeys: []string{"matches", "files", "counts"}, Params: grepParams},
	{Name: LS, Method: MethodLS, ResultKeys: []string{"entries"}, Params: lsParams},
	{Name: Changes, Method: MethodChanges, ResultKeys: []string{"changes"}, Params: changesParams},
}

// Specs returns the table of tools, in the order they are listed. The
// specs are shared: callers must not change them.
func Specs() []*Spec { return table }

// Names returns the tools' names, in the table's order.
func Names() []string {
	names := make([]string, len(table))
	for i, s := range table {
		names[i] = s.Name
	}
	return names
}

// Lookup returns the spec of the tool called name, or an error naming the
// tools there are.
func Lookup(name string) (*Spec, error) {
	for _, s := range table {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown tool %q (the tools are %s)", name, strings.Join(Names(), ", "))
}

// LookupMethod returns the spec of the tool answered by the JSON-RPC
// method, or nil if no tool is.
func LookupMethod(method string) *Spec {
	for _, s := range table {
		if s.Method == method {
			return s
		}
	}
	return nil
}
