package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/indexd/indexd/tool"
)

// changesCmd is "indexctl changes": the Changes tool (what changed since a
// clock token).
var changesCmd = &command{
	name:       "changes",
	tool:       tool.Changes,
	arg:        "[PATH]",
	summary:    "list the files changed since a clock token",
	positional: "path",
	about: `List the files under PATH (default: the current directory) created,
modified or deleted since --since TOKEN, most recently changed first, each
with its kind and modification time. The token is the clock of an earlier
answer: every query's --json output carries it as context.clock, and this
command prints the current one on standard error ("clock: TOKEN"), or in
--json as data.clock. Without --since only the current clock is given
(exit status 0; 2 when there is none yet, as the root is still being
indexed). With --since, the exit status is 1 when nothing changed.

When the changes since TOKEN cannot be known (the daemon restarted, the
token is of another root, too old, or events were lost) the answer is
partial, data.fresh_instance is true, and every current file is listed:
treat them all as changed. Hidden and ignored files follow the rules of
glob.`,
	params: tableParams(tool.Changes, map[string][]param{
		"include_ignored": {hiddenAlias(""), noIgnoreAlias("")},
	}),

	examples: []string{
		"indexctl changes                       # the current clock, on stderr",
		"indexctl changes --since \"$CLOCK\"",
		"indexctl changes src --since \"$CLOCK\" --pattern '**/*.go' --json",
	},
}

// printClock writes the clock of a Changes answer's data to w, as
// "clock: TOKEN", when it has one.
func printClock(w io.Writer, data json.RawMessage) {
	var d struct {
		Clock string `json:"clock"`
	}
	if json.Unmarshal(data, &d) == nil && d.Clock != "" {
		fmt.Fprintf(w, "clock: %s\n", d.Clock)
	}
}
