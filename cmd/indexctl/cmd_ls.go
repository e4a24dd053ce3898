package main

import "github.com/indexd/indexd/tool"

// lsCmd is "indexctl ls": the LS tool (docs/tools.md, "LS").
var lsCmd = &command{
	name:       "ls",
	tool:       tool.LS,
	arg:        "[PATH]",
	summary:    "list one directory, directories first",
	positional: "path",
	about: `List the directory PATH (relative to the current directory; default: the
current directory): directories first, marked with '/', then the rest, each
group by name. Symbolic links are marked with '@' ('@/' for a link to a
directory). Names starting with '.' and what ignore rules leave out are
skipped unless asked for.`,
	params: tableParams(tool.LS, map[string][]param{
		"include_ignored": {hiddenAlias(""), noIgnoreAlias("")},
	}),

	examples: []string{
		"indexctl ls",
		"indexctl ls src --ignore '*_test.go' --ignore testdata",
		"indexctl ls --offset 100 --limit 100",
	},
}
