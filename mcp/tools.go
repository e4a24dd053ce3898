package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/query"
)

// Names of the compatibility tools (seed 004).
const (
	ToolFindFiles     = "find_files_by_name"
	ToolSearchInFiles = "search_in_files"
)

// Tool sets for ParseTools.
var (
	// DefaultTools are offered when --tools is not given: the agent tools
	// of query's table of tools (query.ToolSpecs), each of which has its
	// definition in toolDefs.
	DefaultTools = query.ToolNames()
	// AllTools are every tool the server can offer, in the order it lists
	// them; "compat" selects them all.
	AllTools = append(query.ToolNames(), ToolFindFiles, ToolSearchInFiles)
)

// ParseTools reads a --tools value: comma-separated tool names (any case),
// "default" for Glob, Grep, LS and Changes, and "compat" (or "all") for those plus
// find_files_by_name and search_in_files. It returns the names in AllTools
// order, each once.
func ParseTools(list string) ([]string, error) {
	want := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch strings.ToLower(item) {
		case "":
			continue
		case "default":
			for _, n := range DefaultTools {
				want[n] = true
			}
			continue
		case "compat", "all":
			for _, n := range AllTools {
				want[n] = true
			}
			continue
		}
		found := false
		for _, n := range AllTools {
			if strings.EqualFold(item, n) {
				want[n], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown tool %q in --tools (want names from %s, or default, or compat)", item, strings.Join(AllTools, ", "))
		}
	}
	var out []string
	for _, n := range AllTools {
		if want[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tools names no tool (want names from %s, or default, or compat)", strings.Join(AllTools, ", "))
	}
	return out, nil
}

// toolDef is one tool as the server lists it. Schemas are written by hand
// as JSON so that what the client sees is exactly what is documented here.
type toolDef struct {
	name, title string
	description string
	input       string // JSON Schema of the arguments
	output      string // JSON Schema of structuredContent
}

// Tool returns the MCP definition of the named tool (one of AllTools), or
// nil.
func Tool(name string) *sdk.Tool {
	for _, d := range toolDefs {
		if d.name == name {
			return d.tool()
		}
	}
	return nil
}

func (d *toolDef) tool() *sdk.Tool {
	no := false
	return &sdk.Tool{
		Name:         d.name,
		Title:        d.title,
		Description:  d.description,
		InputSchema:  json.RawMessage(d.input),
		OutputSchema: json.RawMessage(d.output),
		Annotations: &sdk.ToolAnnotations{
			Title:          d.title,
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  &no,
		},
	}
}

// unknownArgument returns the INVALID_PARAM error of a call whose
// arguments hold a key the tool's input schema does not list (a typo an
// agent would otherwise never learn of: the tools ignore what they do not
// know), naming it and the tool's parameters; nil when every key is
// known, or the arguments are not an object (the tool reports that).
func unknownArgument(tool string, args json.RawMessage) *envelope.Error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || len(obj) == 0 {
		return nil
	}
	known := toolParams(tool)
	if known == nil || tool == ToolFindFiles || tool == ToolSearchInFiles {
		return nil // the compatibility tools take what their clients send
	}
	var bad []string
	for k := range obj {
		if !slices.Contains(known, k) && !slices.Contains(unlisted[tool], k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	what := "Unknown parameter"
	if len(bad) > 1 {
		what += "s"
	}
	return envelope.Errorf(envelope.CodeInvalidParam, "%s %s. %s takes: %s.", what, quoteList(bad), tool, strings.Join(known, ", "))
}

// unlisted are the parameters each tool takes that its input schema does
// not list (the command line's: indexctl's -v and -g, and the barrier's
// sync), so that an agent sending them is not refused.
var unlisted = map[string][]string{
	query.ToolGlob:    {"glob", "sync"},
	query.ToolGrep:    {"glob", "invert_match", "sync"},
	query.ToolChanges: {"case_sensitive", "sync"},
}

// quoteList is 'a' or 'a', 'b'.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// toolParams returns the parameters the named tool's input schema lists,
// in its order (nil for an unknown tool).
func toolParams(tool string) []string {
	for _, d := range toolDefs {
		if d.name == tool {
			return d.params()
		}
	}
	return nil
}

// params reads the names of the input schema's properties, in order.
func (d *toolDef) params() []string {
	dec := json.NewDecoder(strings.NewReader(d.input))
	var names []string
	depth := 0
	inProps := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
			} else {
				depth--
				if depth == 1 {
					inProps = false
				}
			}
		case string:
			if depth == 1 && t == "properties" {
				inProps = true
			} else if inProps && depth == 2 {
				names = append(names, t)
				// Skip the property's schema.
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return names
				}
			}
		}
	}
}

// typeSchema describes Glob's and Grep's type and type_not, as members
// of their input schemas' properties.
const typeSchema = `    "type": {
      "type": ["string", "array"],
      "items": {"type": "string"},
      "description": "Only files of this file type (or of any of these types), by ripgrep's type names, matched on the file name: 'go' (*.go), 'py' (*.py), 'ts' (*.ts, *.tsx), 'js', 'rust', 'c', 'cpp', 'java', 'md', 'yaml', 'json', 'make', 'docker', ... (rg --type-list)."
    },
    "type_not": {
      "type": ["string", "array"],
      "items": {"type": "string"},
      "description": "Leave out files of this file type (or of any of these types), by ripgrep's type names as for type."
    },
`

// The notes every envelope tool's description ends with.
const envelopeNotes = ` All paths in arguments are relative to the workspace root (or absolute inside it; anything outside the root is denied), and all paths in results are relative to the workspace root. A name holding a control character (newline, CR, ESC, ...), a byte that is not UTF-8, a backslash or a double quote is shown as a double-quoted C-style string ("a\nb.go", "caf\xe9.txt"), and a line of a file holding a control character or such a byte is shown the same way; give a name back in that form (in path, include or pattern) to name exactly that file. The text content is the answer to read; structuredContent is the full response envelope: status ("success"; "partial" = usable but incomplete or discounted; "error" with error.code and error.message), data, text, stats and context (params_input echoes the arguments).`

var toolDefs = []*toolDef{
	{
		name:  query.ToolGlob,
		title: "Find files by glob pattern",
		description: `Find files whose path matches a glob pattern (names, not contents: use Grep for contents). Returns file paths (never directories) sorted by path, or with sort="recent" the files modified in the last 24 hours first, newest first. "type" keeps only files of a file type by ripgrep's names ("go", "py", "ts", "rust", "md", ...; a list for several), "type_not" leaves a type out.

The pattern is relative to "path" (default: the workspace root): with path "src", "*.ts" finds src/a.ts but not src/lib/b.ts; "**/*.ts" finds both. "*" and "?" never cross "/"; "**" matches zero or more directories, so "**/x.go" also matches x.go directly under path; braces ("*.{ts,tsx}") and classes ("[a-z]*.go") work. Hidden names (starting with ".") and ignored paths (.gitignore, .ignore, node_modules, build, dist, target, .venv, ...) are skipped unless include_hidden / include_ignored is true; a pattern segment naming a hidden directory (".github/**/*.yml") or a path inside an ignored one is searched anyway.

data.paths holds the matches. data.truncated is true only when more files matched than "limit": narrow the pattern or path, or raise limit (max 200). data.aborted_reason says the search hit its time or entry breaker (results incomplete: narrow it). data.fallback_used means the index could not be trusted and a full walk answered (same results, only slower).` + envelopeNotes,
		input: `{
  "type": "object",
  "properties": {
    "pattern": {
      "type": "string",
      "description": "Glob pattern relative to path, e.g. '**/*.go', 'src/**/*.{ts,tsx}', '*.md', '**/Makefile'. '*' and '?' never cross '/'; '**' matches zero or more directories ('**/x' also matches x at the top of path)."
    },
    "path": {
      "type": "string",
      "description": "Directory to search from, relative to the workspace root (or absolute inside it). Default '.', the root.",
      "default": "."
    },
    "limit": {
      "type": "integer",
      "description": "Maximum number of paths to return (1-200).",
      "minimum": 1,
      "maximum": 200,
      "default": 50
    },
    "include_hidden": {
      "type": "boolean",
      "description": "If true, also match files and directories whose name starts with '.'.",
      "default": false
    },
    "include_ignored": {
      "type": "boolean",
      "description": "If true, also search what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist, target, .venv (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).",
      "default": false
    },
    "case_sensitive": {
      "type": "boolean",
      "description": "If false, letters in the pattern match either case.",
      "default": true
    },
` + typeSchema + `    "sort": {
      "type": "string",
      "description": "'path': byte order of the path. 'recent': files modified in the last 24 hours first, newest first, then the rest by path.",
      "enum": ["path", "recent"],
      "default": "path"
    },
    "changed_since": {
      "type": "string",
      "description": "Clock token of an earlier answer (context.clock): match only files created or modified since then (see Changes). If the changes since it cannot be known, every file is searched and data.fresh_instance is true."
    }
  },
  "required": ["pattern"]
}`,
		output: envelopeOutputSchema,
	},
	{
		name:  query.ToolGrep,
		title: "Search file contents",
		description: `Search file contents with a regular expression (Go RE2 syntax: no backreferences or lookaround). Case-insensitive unless case_sensitive is true; set fixed_strings to search a literal string without escaping. Results are sorted by file modification time, newest first (then path, then line), so recently edited code comes first; each match is "file:line: text" with the whole line.

Restricting the files with "include" is highly recommended: "*.ts" or "*.{ts,tsx}" (matched against the file name), or "src/**/*.ts" (with a "/": matched against the path relative to "path"); or "type", a file type by ripgrep's names ("go", "py", "ts", "rust", "md", ...; a list for several; "type_not" leaves a type out). Narrow with "path" too. output_mode "files_with_matches" lists only the files, "count" the number of matching lines per file; context_before / context_after / context add lines around each match. A pattern never matches across lines unless multiline is true. Hidden files, ignored paths (.gitignore, node_modules, ...) and binary files are skipped unless include_hidden / include_ignored.

data.matches holds {file, line, text}. data.truncated is true only when more results exist than "limit": narrow with path, include or a more specific pattern (or raise limit, max 1000). status "partial" also means a timeout fired with some results (data.aborted_reason "timeout": narrow the search or raise timeout_ms) or data.fallback_used: the index was still building or could not be trusted, so a full walk answered (results are still exact, only slower).` + envelopeNotes,
		input: `{
  "type": "object",
  "properties": {
    "pattern": {
      "type": "string",
      "description": "Regular expression to search for (Go RE2), e.g. 'func\\s+\\w+Handler', 'class User', 'TODO|FIXME'. With fixed_strings, a literal string."
    },
    "path": {
      "type": "string",
      "description": "Directory to search in, relative to the workspace root (or absolute inside it). Default '.', the root.",
      "default": "."
    },
    "include": {
      "type": "string",
      "description": "Glob filter on the files searched. Highly recommended. Without '/' it matches the file name: '*.ts', '*.{ts,tsx}', 'Dockerfile'. With '/' it matches the path relative to path: 'src/**/*.ts'."
    },
` + typeSchema + `    "case_sensitive": {
      "type": "boolean",
      "description": "If true, the search is case-sensitive. Default false: case-insensitive.",
      "default": false
    },
    "fixed_strings": {
      "type": "boolean",
      "description": "If true, pattern is a literal string, not a regular expression.",
      "default": false
    },
    "limit": {
      "type": "integer",
      "description": "Maximum number of results (1-1000): matching lines, or files with output_mode files_with_matches or count.",
      "minimum": 1,
      "maximum": 1000,
      "default": 100
    },
    "output_mode": {
      "type": "string",
      "description": "'content': the matching lines. 'files_with_matches': only the files that match. 'count': the number of matching lines per file.",
      "enum": ["content", "files_with_matches", "count"],
      "default": "content"
    },
    "context_before": {
      "type": "integer",
      "description": "Lines of context to show before each match (0-20). Overrides context.",
      "minimum": 0,
      "maximum": 20,
      "default": 0
    },
    "context_after": {
      "type": "integer",
      "description": "Lines of context to show after each match (0-20). Overrides context.",
      "minimum": 0,
      "maximum": 20,
      "default": 0
    },
    "context": {
      "type": "integer",
      "description": "Lines of context to show before and after each match (0-20).",
      "minimum": 0,
      "maximum": 20,
      "default": 0
    },
    "multiline": {
      "type": "boolean",
      "description": "If true, a match may span lines (the pattern may contain \\n; use (?s) to let '.' match newlines too). A match is reported at its first line.",
      "default": false
    },
    "timeout_ms": {
      "type": "integer",
      "description": "Give up after this many milliseconds (1-60000) and return what was found (status partial, data.aborted_reason 'timeout').",
      "minimum": 1,
      "maximum": 60000,
      "default": 2000
    },
    "include_hidden": {
      "type": "boolean",
      "description": "If true, also search files and directories whose name starts with '.'.",
      "default": false
    },
    "include_ignored": {
      "type": "boolean",
      "description": "If true, also search what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist, target, .venv (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).",
      "default": false
    },
    "changed_since": {
      "type": "string",
      "description": "Clock token of an earlier answer (context.clock): search only files created or modified since then, e.g. what the last build or formatter touched (see Changes). If the changes since it cannot be known, every file is searched and data.fresh_instance is true."
    }
  },
  "required": ["pattern"]
}`,
		output: envelopeOutputSchema,
	},
	{
		name:  query.ToolLS,
		title: "List a directory",
		description: `List one directory (not recursively): directories first, then files, each group by name. A directory's name ends in "/", a symbolic link's in "@" ("@/" for a link to a directory); the text marks a link leading outside the workspace "-> <Outside Sandbox>" and a dangling one "-> <Broken Link>". Hidden names and ignored entries (node_modules, .gitignore matches, ...) are left out unless include_hidden / include_ignored; "ignore" leaves out more by glob.

data.entries holds {path, type} with type "dir", "file" or "link"; stats.total counts the whole listing. data.truncated is true when entries remain after offset + limit: call again with a larger offset to page through them. To find files by name across directories, use Glob.` + envelopeNotes,
		input: `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "Directory to list, relative to the workspace root (or absolute inside it). Default '.', the root.",
      "default": "."
    },
    "offset": {
      "type": "integer",
      "description": "Number of entries to skip, for paging through a long listing.",
      "minimum": 0,
      "default": 0
    },
    "limit": {
      "type": "integer",
      "description": "Maximum number of entries to return (1-200).",
      "minimum": 1,
      "maximum": 200,
      "default": 100
    },
    "include_hidden": {
      "type": "boolean",
      "description": "If true, also list entries whose name starts with '.'.",
      "default": false
    },
    "include_ignored": {
      "type": "boolean",
      "description": "If true, also list what ignore rules skip: .gitignore and .ignore entries, and directories such as node_modules, build, dist (in a git work tree, those in which git tracks no file; the answer names the ones it skipped).",
      "default": false
    },
    "ignore": {
      "type": "array",
      "description": "Glob patterns of entries to leave out, matched against the entry's name and its path relative to the root and to the listed directory; '**/' is supported. E.g. ['*.log', '**/testdata'].",
      "items": {"type": "string"},
      "default": []
    }
  }
}`,
		output: envelopeOutputSchema,
	},
	changesDef,
	{
		name:        ToolFindFiles,
		title:       "Find files by name",
		description: `Find files by name pattern, in "path" and every directory below it (hidden and ignored paths are skipped). name_pattern is a file-name glob such as "*.py", "test_*.go" or "Makefile" ("*" and "?" stay within one name); a pattern with "/" is matched against the path relative to "path" instead ("src/**/*.ts"). Returns {"files": [...], "total_found": N}, paths relative to the workspace root, sorted by path, at most 200: use a more specific pattern or path when total_found is 200.`,
		input: `{
  "type": "object",
  "properties": {
    "name_pattern": {
      "type": "string",
      "description": "File-name pattern with wildcards, e.g. '*.py', 'test_*.go', 'README*'. With '/', a glob relative to path, e.g. 'src/**/*.ts'."
    },
    "path": {
      "type": "string",
      "description": "Directory to start from, relative to the workspace root. Default '.', the root.",
      "default": "."
    }
  },
  "required": ["name_pattern"]
}`,
		output: `{
  "type": "object",
  "properties": {
    "files": {"type": "array", "items": {"type": "string"}, "description": "Matching files, relative to the workspace root."},
    "total_found": {"type": "integer", "description": "Number of files returned."}
  },
  "required": ["files", "total_found"]
}`,
	},
	{
		name:        ToolSearchInFiles,
		title:       "Search text in files",
		description: `Search file contents for a text (case-sensitive; a regular expression, Go RE2 syntax, when use_regex is true), in "path" and below, in files whose name matches file_pattern (hidden, ignored and binary files are skipped). Lines that also contain exclude_query are dropped. Results come newest file first. Returns {"matches": [{"file_path", "line_number", "line_content"}], "total_matches": N, "files_searched": M, "timed_out": B}, paths relative to the workspace root, at most 1000 matches; timed_out true means the search stopped after "timeout" seconds with the matches found so far.`,
		input: `{
  "type": "object",
  "properties": {
    "query": {
      "type": "string",
      "description": "Text to search for; a regular expression when use_regex is true."
    },
    "file_pattern": {
      "type": "string",
      "description": "File-name glob of the files to search, e.g. '*.py' or '*.{ts,tsx}'. Default '*': every file.",
      "default": "*"
    },
    "path": {
      "type": "string",
      "description": "Directory to search in, relative to the workspace root. Default '.', the root.",
      "default": "."
    },
    "use_regex": {
      "type": "boolean",
      "description": "If true, query (and exclude_query) are regular expressions; if false, literal text.",
      "default": false
    },
    "exclude_query": {
      "type": "string",
      "description": "Drop matching lines that also contain this text (a regular expression when use_regex is true). Default '': drop nothing.",
      "default": ""
    },
    "timeout": {
      "type": "integer",
      "description": "Give up after this many seconds (at most 60) and return the matches found so far with timed_out true.",
      "minimum": 1,
      "default": 60
    }
  },
  "required": ["query"]
}`,
		output: `{
  "type": "object",
  "properties": {
    "matches": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "file_path": {"type": "string", "description": "File, relative to the workspace root."},
          "line_number": {"type": "integer", "description": "1-based line number."},
          "line_content": {"type": "string", "description": "The whole line, without its newline."}
        },
        "required": ["file_path", "line_number", "line_content"]
      }
    },
    "total_matches": {"type": "integer", "description": "Number of matches returned."},
    "files_searched": {"type": "integer", "description": "Number of files read."},
    "timed_out": {"type": "boolean", "description": "True when the search stopped at its timeout; the matches are those found until then."}
  },
  "required": ["matches", "total_matches", "files_searched", "timed_out"]
}`,
	},
}

// envelopeOutputSchema describes the response envelope (SPEC §3), the
// structuredContent of Glob, Grep and LS.
const envelopeOutputSchema = `{
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["success", "partial", "error"]},
    "data": {"type": "object", "description": "The tool's payload: paths (Glob), matches, files or counts (Grep), entries (LS); truncated; aborted_reason, fallback_used and fallback_reason when they apply."},
    "text": {"type": "string", "description": "The answer as text, as also given in the content."},
    "stats": {"type": "object", "properties": {"time_ms": {"type": "integer"}}, "required": ["time_ms"]},
    "context": {"type": "object", "properties": {"cwd": {"type": "string"}, "params_input": {}}, "required": ["cwd", "params_input"]},
    "error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}, "required": ["code", "message"]}
  },
  "required": ["status", "data", "text", "stats", "context"]
}`
