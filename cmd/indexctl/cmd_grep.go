package main

import "github.com/indexd/indexd/tool"

// grepCmd is "indexctl grep": the Grep tool (SPEC §7).
var grepCmd = &command{
	name:       "grep",
	tool:       tool.Grep,
	arg:        "PATTERN",
	summary:    "search file contents with a regular expression, newest files first",
	positional: "pattern",
	about: `Search the files under --path for PATTERN, a Go (RE2) regular expression,
ignoring case unless --case-sensitive is given. Matches are listed as
"file:line: text", newest file first, then by path and line; paths are
relative to the workspace root. Binary files, names starting with '.' and
what ignore rules leave out are skipped unless asked for.`,
	params: []param{
		pathParam("search `DIR`, relative to the current directory (default: the current directory)"),
		{key: "include", kind: kindString, usage: "search only files matching `GLOB`: the base name without a '/' (*.go, *.{ts,tsx}), else the path relative to --path (src/**/*.ts)"},
		{key: "case_sensitive", kind: kindBool, usage: "match case (default: case is ignored)"},
		{key: "fixed_strings", short: "F", kind: kindBool, usage: "PATTERN is a literal string, not a regular expression"},
		limitParam("show at most `N` matches (files, with --output-mode files_with_matches or count), 1-1000 (default 100)"),
		{key: "output_mode", kind: kindString, usage: "show `MODE`: content (matching lines, default), files_with_matches (file names) or count (matching lines per file)"},
		{key: "context_after", short: "A", kind: kindInt, usage: "show `N` lines after each match, 0-20"},
		{key: "context_before", short: "B", kind: kindInt, usage: "show `N` lines before each match, 0-20"},
		{key: "context", short: "C", kind: kindInt, usage: "show `N` lines before and after each match, 0-20"},
		{key: "multiline", kind: kindBool, usage: "let PATTERN match across lines"},
		{key: "timeout_ms", kind: kindInt, usage: "stop after `N` milliseconds, 1-60000 (default 2000); what was found by then is shown"},
		includeHiddenParam("search"),
		includeIgnoredParam("search"),
	},
	examples: []string{
		"indexctl grep 'func main' --include '*.go'",
		"indexctl grep -F 'a.b(c)' --path src -C 2",
		`indexctl grep --args '{"pattern":"TODO","output_mode":"count"}' --limit 10`,
	},
}
