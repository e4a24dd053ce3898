package mcp

import "github.com/indexd/indexd/tool"

// changesDef is the MCP definition of Changes (query/changes.go), offered
// by default with the other agent tools.
var changesDef = &toolDef{
	name:  tool.Changes,
	title: "List files changed since a clock",
	description: `List the files created, modified or deleted since a clock token, instead of re-reading or re-searching everything. Use it after running something that may touch files (a formatter, a code generator, a build, git pull/checkout/rebase, another agent's edits): call Changes with since = the clock of your last answer, then re-read or re-grep only the paths it lists. Every Glob, Grep and LS answer carries the workspace's clock as context.clock; Changes returns the next one as data.clock (call it without since to just get the current clock). Grep and Glob also take changed_since = a clock, to search only the files changed since then.

data.changes holds {path, kind ("created", "modified", "deleted"), mtime (RFC 3339, null when unknown)}, the most recently changed first; a rename is a deleted old path and a created new one, a renamed directory every file under it. A write that finished before the call is always included. When data.fresh_instance is true (status "partial") the changes since your clock cannot be known (the daemon restarted, the clock is of another workspace, too old, or file events were lost): the list is then every current file, and you should treat them all as changed. Hidden and ignored files follow Glob's rules (include_hidden, include_ignored); changes inside ignored directories such as node_modules are not tracked. data.truncated is true when more paths changed than "limit": narrow with path or pattern.` + envelopeNotes,
	input:  inputSchema(tool.Changes),
	output: envelopeOutputSchema,
}
