package main

import "github.com/indexd/indexd/tool"

// lsCmd is "indexctl ls": the LS tool (SPEC §8).
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
	params: []param{
		pathParam("the directory `PATH`, instead of the positional argument"),
		{key: "offset", kind: kindInt, usage: "skip the first `N` entries (default 0)"},
		limitParam("list at most `N` entries (default: all; with --args, the agent tool's 100, at most 200)"),
		includeHiddenParam("list"),
		includeIgnoredParam("list"),
		hiddenAlias(""),
		noIgnoreAlias(""),
		{key: "ignore", kind: kindStrings, usage: "leave out entries whose name or path matches `GLOB` (repeatable; ** works)"},
	},
	examples: []string{
		"indexctl ls",
		"indexctl ls src --ignore '*_test.go' --ignore testdata",
		"indexctl ls --offset 100 --limit 100",
	},
}
