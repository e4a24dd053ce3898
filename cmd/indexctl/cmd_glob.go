package main

import "github.com/indexd/indexd/tool"

// globCmd is "indexctl glob": the Glob tool (docs/tools.md, "Glob").
var globCmd = &command{
	name:       "glob",
	tool:       tool.Glob,
	arg:        "PATTERN [PATH...]",
	summary:    "find files by glob pattern",
	positional: "pattern",
	about: `Find the files whose path, relative to each PATH (or --path; default:
the current directory), matches a glob PATTERN.
'*' and '?' never cross '/'; '**' matches any number of directories, so
'**/x' also matches 'x'; {a,b} and [a-z] work. Only files are listed, as
paths relative to the workspace root, in path order. Names starting with
'.' and what ignore rules leave out are skipped unless asked for (or named
in the pattern, as in '.github/**').`,
	params: tableParams(tool.Glob, map[string][]param{
		"include_ignored": {hiddenAlias("H"), noIgnoreAlias("I")},
	}),

	examples: []string{
		"indexctl glob '**/*.go'",
		"indexctl glob '**' -t go --all | wc -l",
		"indexctl glob '*.{yml,yaml}' --path .github --include-hidden",
		`indexctl glob --args '{"pattern":"**/*_test.go","limit":10}' --sort recent`,
	},
}
