package tool

import (
	"fmt"
	"strings"
)

// Kind is a parameter's JSON type.
type Kind int

const (
	String  Kind = iota // a JSON string
	Int                 // a JSON number with an integral value
	Bool                // true or false
	Strings             // a list of strings (a single string is a list of one)
)

// Param is one parameter of a tool, as every layer knows it. The tool's
// decoder (package query) reads its default, bounds and choices here;
// the MCP server's input schema lists it with Doc; indexctl defines its
// flag and help from Flag, Short and Usage; docs/tools.md's tables are
// written from it (TestDocsTables). TestParamsAgree (package query) and
// TestEveryLayerAgrees (cmd/indexctl) fail when a layer disagrees.
type Param struct {
	Name     string // as agents send it: snake_case
	Kind     Kind
	Required bool
	// Default is the value the tool takes when the parameter is absent
	// or null (nil: none; the zero of Kind for a bool or a list).
	Default any
	// Min and Max bound an Int (HasMax: Max applies).
	Min, Max int
	HasMax   bool
	// Enum are a String's choices.
	Enum []string
	// Doc is the description agents read (the MCP input schema's).
	Doc string
	// TypeError, when set, is the message of a value of another type
	// (else "NAME must be a string.", "... a boolean.", ...).
	TypeError string
	// Hidden: taken, but not offered to agents (the command line's
	// extras, and the barrier's sync).
	Hidden bool

	// The command line: the flag is --Flag (Name in kebab case when
	// empty; "-" for no flag), -Short too; Usage is its help line (a word
	// in backquotes names the value).
	Flag, Short, Usage string
}

// FlagName returns the parameter's flag ("" for none).
func (p *Param) FlagName() string {
	switch p.Flag {
	case "-":
		return ""
	case "":
		return strings.ReplaceAll(p.Name, "_", "-")
	}
	return p.Flag
}

// Param returns the tool's parameter called name, or nil.
func (s *Spec) Param(name string) *Param {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i]
		}
	}
	return nil
}

// Limits of the tools (docs/product.md, "Limits"), which the table holds
// and the tools' texts quote.
const (
	GlobDefaultLimit    = 50
	GlobMaxLimit        = 200
	GrepDefaultLimit    = 100
	GrepMaxLimit        = 1000
	LSDefaultLimit      = 100
	LSMaxLimit          = 200
	ChangesDefaultLimit = 1000
	ChangesMaxLimit     = 10000
	MaxContext          = 20
)

// Parameters several tools share, each written once.

func pathParam(doc, usage string) Param {
	return Param{Name: "path", Kind: String, Default: ".", Doc: doc, Usage: usage}
}

func limitParam(def, hi int, doc, usage string) Param {
	return Param{Name: "limit", Kind: Int, Default: def, Min: 1, Max: hi, HasMax: true, Doc: doc, Usage: usage,
		TypeError: fmt.Sprintf("limit must be an integer between 1 and %d.", hi)}
}

func includeHidden(doc, verb string) Param {
	return Param{Name: "include_hidden", Kind: Bool, Default: false, Doc: doc, Usage: verb + " names starting with '.' too"}
}

func includeIgnored(doc, verb string) Param {
	return Param{Name: "include_ignored", Kind: Bool, Default: false, Doc: doc,
		Usage: verb + " what ignore rules leave out too (.gitignore, .ignore, node_modules, build, ...)"}
}

func typeParams() []Param {
	return []Param{
		{Name: "type", Kind: Strings, Short: "t",
			Doc:   "Only files of this file type (or of any of these types), by ripgrep's type names, matched on the file name: 'go' (*.go), 'py' (*.py), 'ts' (*.ts, *.tsx), 'js', 'rust', 'c', 'cpp', 'java', 'md', 'yaml', 'json', 'make', 'docker', ... (rg --type-list).",
			Usage: "only files of file type `TYPE` (rg's names: go, py, ts, rust, md, ...; see --type-list); repeatable"},
		{Name: "type_not", Kind: Strings, Short: "T",
			Doc:   "Leave out files of this file type (or of any of these types), by ripgrep's type names as for type.",
			Usage: "leave out files of file type `TYPE`; repeatable"},
	}
}

func globParam() Param {
	return Param{Name: "glob", Kind: Strings, Short: "g", Hidden: true,
		Doc:   "Only files matching these globs, as rg -g: the base name without a '/', else the path relative to path; '!' in front leaves out what matches; the last match wins.",
		Usage: "only files matching `GLOB`, as rg -g: the base name without a '/', else the path relative to the search directory; '!' in front leaves out what matches (directories too); repeatable, the last match wins"}
}

func changedSince(doc, verb string) Param {
	return Param{Name: "changed_since", Kind: String, Doc: doc,
		TypeError: "changed_since must be a string (a clock token).",
		Usage:     verb + " only files created or modified since the clock `TOKEN` of an earlier answer (see changes)"}
}

func syncParam() Param {
	return Param{Name: "sync", Kind: Bool, Default: true, Hidden: true, Flag: "-",
		Doc: "If false, answer without waiting for the writes made before the call to reach the index."}
}

// The tools' parameters, in the order they are listed.

var globParams = []Param{
	{Name: "pattern", Kind: String, Required: true, Flag: "-",
		Doc: "Glob pattern relative to path, e.g. '**/*.go', 'src/**/*.{ts,tsx}', '*.md', '**/Makefile'. '*' and '?' never cross '/'; '**' matches zero or more directories ('**/x' also matches x at the top of path)."},
	pathParam("Directory to search from, relative to the workspace root (or absolute inside it). Default '.', the root.",
		"search `DIR`, relative to the current directory (default: the current directory)"),
	limitParam(GlobDefaultLimit, GlobMaxLimit, "Maximum number of paths to return (1-200).",
		"list at most `N` files (default: all, as fd; with --args, the agent tool's 50, at most 200)"),
	includeHidden("If true, also match files and directories whose name starts with '.'.", "match"),
	includeIgnored("If true, also search what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist, target, .venv (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).", "match"),
	{Name: "case_sensitive", Kind: Bool, Default: true,
		Doc:   "If false, letters in the pattern match either case.",
		Usage: "match case (default true; --case-sensitive=false ignores case)"},
	globParam(), typeParams()[0], typeParams()[1],
	{Name: "sort", Kind: String, Default: "path", Enum: []string{"path", "recent"},
		Doc:   "'path': byte order of the path. 'recent': files modified in the last 24 hours first, newest first, then the rest by path.",
		Usage: "`ORDER` of the files: path (default) or recent (changed in the last 24 hours first, newest first)"},
	changedSince("Clock token of an earlier answer (context.clock): match only files created or modified since then (see Changes). If the changes since it cannot be known, every file is searched and data.fresh_instance is true.", "match"),
	syncParam(),
}

var grepParams = []Param{
	{Name: "pattern", Kind: String, Required: true, Flag: "-",
		Doc: "Regular expression to search for (Go RE2), e.g. 'func\\s+\\w+Handler', 'class User', 'TODO|FIXME'. With fixed_strings, a literal string."},
	pathParam("Directory to search in, relative to the workspace root (or absolute inside it). Default '.', the root.",
		"search `DIR`, relative to the current directory (default: the current directory)"),
	{Name: "include", Kind: String, TypeError: "include must be a string if provided.",
		Doc:   "Glob filter on the files searched. Highly recommended. Without '/' it matches the file name: '*.ts', '*.{ts,tsx}', 'Dockerfile'. With '/' it matches the path relative to path: 'src/**/*.ts'.",
		Usage: "search only files matching `GLOB`: the base name without a '/' (*.go, *.{ts,tsx}), else the path relative to --path (src/**/*.ts)"},
	globParam(), typeParams()[0], typeParams()[1],
	{Name: "case_sensitive", Kind: Bool, Default: false, Short: "s",
		Doc:   "If true, the search is case-sensitive. Default false: case-insensitive.",
		Usage: "match case (default: case is ignored, unlike rg)"},
	{Name: "fixed_strings", Kind: Bool, Default: false, Short: "F",
		Doc:   "If true, pattern is a literal string, not a regular expression.",
		Usage: "PATTERN is a literal string, not a regular expression"},
	{Name: "invert_match", Kind: Bool, Default: false, Short: "v", Hidden: true,
		Doc:   "If true, report the lines that do not match (not with multiline).",
		Usage: "show the lines that do not match (not with --multiline)"},
	limitParam(GrepDefaultLimit, GrepMaxLimit, "Maximum number of results (1-1000): matching lines, or files with output_mode files_with_matches or count.",
		"show at most `N` matches (files, with -l or -c; default: all, as rg; with --args, the agent tool's 100, at most 1000)"),
	{Name: "output_mode", Kind: String, Default: "content", Enum: []string{"content", "files_with_matches", "count"},
		Doc:   "'content': the matching lines. 'files_with_matches': only the files that match. 'count': the number of matching lines per file.",
		Usage: "show `MODE`: content (matching lines, default), files_with_matches (file names) or count (matching lines per file)"},
	{Name: "context_after", Kind: Int, Default: 0, Min: 0, Max: MaxContext, HasMax: true, Short: "A",
		Doc:   "Lines of context to show after each match (0-20). Overrides context.",
		Usage: "show `N` lines after each match, 0-20"},
	{Name: "context_before", Kind: Int, Default: 0, Min: 0, Max: MaxContext, HasMax: true, Short: "B",
		Doc:   "Lines of context to show before each match (0-20). Overrides context.",
		Usage: "show `N` lines before each match, 0-20"},
	{Name: "context", Kind: Int, Default: 0, Min: 0, Max: MaxContext, HasMax: true, Short: "C",
		Doc:   "Lines of context to show before and after each match (0-20).",
		Usage: "show `N` lines before and after each match, 0-20"},
	{Name: "multiline", Kind: Bool, Default: false,
		Doc:   "If true, a match may span lines (the pattern may contain \\n; use (?s) to let '.' match newlines too). A match is reported at its first line.",
		Usage: "let PATTERN match across lines"},
	{Name: "timeout_ms", Kind: Int, Default: GrepDefaultTimeoutMS, Min: 1, Max: GrepMaxTimeoutMS, HasMax: true,
		Doc:   "Give up after this many milliseconds (1-60000) and return what was found (status partial, data.aborted_reason 'timeout').",
		Usage: "stop after `N` milliseconds, 1-60000 (default: no time limit, as rg; with --args, the agent tool's 2000); what was found by then is shown, and the exit status is 2"},
	includeHidden("If true, also search files and directories whose name starts with '.'.", "search"),
	includeIgnored("If true, also search what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist, target, .venv (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).", "search"),
	changedSince("Clock token of an earlier answer (context.clock): search only files created or modified since then, e.g. what the last build or formatter touched (see Changes). If the changes since it cannot be known, every file is searched and data.fresh_instance is true.", "search"),
	syncParam(),
}

var lsParams = []Param{
	pathParam("Directory to list, relative to the workspace root (or absolute inside it). Default '.', the root.",
		"the directory `PATH`, instead of the positional argument"),
	{Name: "offset", Kind: Int, Default: 0, Min: 0, TypeError: "offset must be a non-negative integer.",
		Doc:   "Number of entries to skip, for paging through a long listing.",
		Usage: "skip the first `N` entries (default 0)"},
	limitParam(LSDefaultLimit, LSMaxLimit, "Maximum number of entries to return (1-200).",
		"list at most `N` entries (default: all; with --args, the agent tool's 100, at most 200)"),
	includeHidden("If true, also list entries whose name starts with '.'.", "list"),
	includeIgnored("If true, also list what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).", "list"),
	{Name: "ignore", Kind: Strings, Default: []string{},
		Doc:   "Glob patterns of entries to leave out, matched against the entry's name and its path relative to the root and to the listed directory; '**/' is supported. E.g. ['*.log', '**/testdata'].",
		Usage: "leave out entries whose name or path matches `GLOB` (repeatable; ** works)"},
}

var changesParams = []Param{
	{Name: "since", Kind: String, TypeError: "since must be a string (a clock token).",
		Doc:   "Clock token from an earlier answer (context.clock of Glob/Grep/LS, or data.clock of Changes). Omit it to get only the current clock.",
		Usage: "the clock `TOKEN` to list the changes since"},
	pathParam("Directory to report changes under, relative to the workspace root (or absolute inside it). Default '.', the root.",
		"the directory `DIR`, instead of the positional argument"),
	{Name: "pattern", Kind: String, Default: "**", TypeError: "pattern must be a string if provided.",
		Doc:   "Glob the changed paths must match, relative to path, e.g. '**/*.go'. Default '**': every file.",
		Usage: "list only paths matching the glob `PATTERN` (relative to the path)"},
	limitParam(ChangesDefaultLimit, ChangesMaxLimit, "Maximum number of paths to return (1-10000).",
		"list at most `N` paths (default: all; with --args, the agent tool's 1000, at most 10000)"),
	includeHidden("If true, also report files and directories whose name starts with '.'.", "list"),
	includeIgnored("If true, also report ignored files (.gitignore matches) changed in watched directories.", "list"),
	{Name: "case_sensitive", Kind: Bool, Default: true, Hidden: true, Flag: "-",
		Doc: "If false, letters in the pattern match either case."},
	syncParam(),
}
