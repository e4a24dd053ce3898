package main

import "github.com/indexd/indexd/tool"

// grepCmd is "indexctl grep": the Grep tool (docs/tools.md, "Grep").
var grepCmd = &command{
	name:       "grep",
	tool:       tool.Grep,
	arg:        "PATTERN [PATH...]",
	summary:    "search file contents with a regular expression, newest files first",
	positional: "pattern",
	about: `Search the files under each PATH (or --path; default: the current
directory) for PATTERN, a Go (RE2) regular expression; a PATH naming a
file searches that file, whatever -g, -t and -T say. Matches are listed
as "file:line: text", newest file first, then by path and line. Binary
files, names starting with '.' and what ignore rules leave out are skipped
unless asked for.

Unlike rg, case is ignored by default (as the Grep tool does for agents):
-s (--case-sensitive) matches case, -i ignores it; the last one given
wins. rg's -l, -c, -v, -w, -n, -g, -t, -T and -F work as in rg. -g and -t
only narrow what the ignore rules let through (rg's -g can also bring
back ignored files; here --include-ignored does). -w wraps PATTERN in
\b(?:PATTERN)\b.`,
	params: tableParams(tool.Grep, map[string][]param{
		"case_sensitive": {
			{key: "case_sensitive", short: "i", name: "ignore-case", fixed: "false", usage: "ignore case (the default)"},
			{key: "case_sensitive", short: "S", name: "smart-case", fixed: smartCase, usage: "match case if PATTERN holds an upper-case letter, else ignore it (as rg -S)"},
		},
		"output_mode": {
			{key: "output_mode", short: "l", name: "files-with-matches", fixed: `"files_with_matches"`, usage: "show only the names of files with matches (--output-mode files_with_matches)"},
			{key: "output_mode", short: "c", name: "count", fixed: `"count"`, usage: "show the number of matching lines per file (--output-mode count)"},
		},
		"include_ignored": {hiddenAlias(""), noIgnoreAlias("")},
	}),

	examples: []string{
		"indexctl grep 'func main' -t go",
		"indexctl grep -l TODO src docs -g '!*.md'",
		"indexctl grep -w -s Close --all | wc -l",
		"indexctl grep -F 'a.b(c)' --path src -C 2",
		`indexctl grep --args '{"pattern":"TODO","output_mode":"count"}' --limit 10`,
	},
}
