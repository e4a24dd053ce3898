package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/query"
	toolspec "github.com/indexd/indexd/tool"
)

// Names of the compatibility tools (docs/tools.md).
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

// inputSchema is the JSON Schema of the named envelope tool's arguments:
// its parameters in the table (tool.Spec.Params) that are offered to
// agents, in the table's order, with their types, descriptions,
// defaults, bounds and choices.
func inputSchema(name string) string {
	spec, err := toolspec.Lookup(name)
	if err != nil {
		panic(err) // the tools listed here are the table's
	}
	b := []byte(`{"type":"object","properties":{`)
	var required []string
	n := 0
	for i := range spec.Params {
		p := &spec.Params[i]
		if p.Hidden {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(jsonenc.AppendString(b, p.Name), `:{"type":`...)
		switch p.Kind {
		case toolspec.String:
			b = append(b, `"string"`...)
		case toolspec.Int:
			b = append(b, `"integer"`...)
		case toolspec.Bool:
			b = append(b, `"boolean"`...)
		case toolspec.Strings:
			b = append(b, `["string","array"],"items":{"type":"string"}`...)
		}
		b = jsonenc.AppendString(append(b, `,"description":`...), p.Doc)
		if p.Kind == toolspec.Int {
			b = strconv.AppendInt(append(b, `,"minimum":`...), int64(p.Min), 10)
			if p.HasMax {
				b = strconv.AppendInt(append(b, `,"maximum":`...), int64(p.Max), 10)
			}
		}
		if len(p.Enum) > 0 {
			js, _ := jsonenc.Marshal(p.Enum)
			b = append(append(b, `,"enum":`...), js...)
		}
		if p.Default != nil {
			js, _ := jsonenc.Marshal(p.Default)
			b = append(append(b, `,"default":`...), js...)
		}
		b = append(b, '}')
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b = append(b, '}')
	if len(required) > 0 {
		js, _ := jsonenc.Marshal(required)
		b = append(append(b, `,"required":`...), js...)
	}
	return string(append(b, '}'))
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
	spec, err := toolspec.Lookup(tool)
	if err != nil {
		return nil // the compatibility tools take what their clients send
	}
	var known, bad []string
	for _, p := range spec.Params {
		if !p.Hidden {
			known = append(known, p.Name)
		}
	}
	for k := range obj {
		if spec.Param(k) == nil {
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

// quoteList is 'a' or 'a', 'b'.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// The notes every envelope tool's description ends with.
const envelopeNotes = ` All paths in arguments are relative to the workspace root (or absolute inside it; anything outside the root is denied), and all paths in results are relative to the workspace root. A name holding a control character (newline, CR, ESC, ...), a byte that is not UTF-8, a backslash or a double quote is shown as a double-quoted C-style string ("a\nb.go", "caf\xe9.txt"), and a line of a file holding a control character or such a byte is shown the same way; give a name back in that form (in path, include or pattern) to name exactly that file. The text content is the answer to read; structuredContent is the full response envelope: status ("success"; "partial" = usable but incomplete or discounted; "error" with error.code and error.message), data, text, stats and context (params_input echoes the arguments).`

var toolDefs = []*toolDef{
	{
		name:  toolspec.Glob,
		title: "Find files by glob pattern",
		description: `Find files whose path matches a glob pattern (names, not contents: use Grep for contents). Returns file paths (never directories) sorted by path, or with sort="recent" the files modified in the last 24 hours first, newest first. "type" keeps only files of a file type by ripgrep's names ("go", "py", "ts", "rust", "md", ...; a list for several), "type_not" leaves a type out.

The pattern is relative to "path" (default: the workspace root): with path "src", "*.ts" finds src/a.ts but not src/lib/b.ts; "**/*.ts" finds both. "*" and "?" never cross "/"; "**" matches zero or more directories, so "**/x.go" also matches x.go directly under path; braces ("*.{ts,tsx}") and classes ("[a-z]*.go") work. Hidden names (starting with ".") and ignored paths (.gitignore, .ignore, node_modules, build, dist, target, .venv, ...) are skipped unless include_hidden / include_ignored is true; a pattern segment naming a hidden directory (".github/**/*.yml") or a path inside an ignored one is searched anyway.

data.paths holds the matches. data.truncated is true only when more files matched than "limit": narrow the pattern or path, or raise limit (max 200). data.aborted_reason says the search hit its time or entry breaker (results incomplete: narrow it). data.fallback_used means the index could not be trusted and a full walk answered (same results, only slower).` + envelopeNotes,
		input:  inputSchema(toolspec.Glob),
		output: envelopeOutputSchema,
	},
	{
		name:  toolspec.Grep,
		title: "Search file contents",
		description: `Search file contents with a regular expression (Go RE2 syntax: no backreferences or lookaround). Case-insensitive unless case_sensitive is true; set fixed_strings to search a literal string without escaping. Results are sorted by file modification time, newest first (then path, then line), so recently edited code comes first; each match is "file:line: text" with the whole line.

Restricting the files with "include" is highly recommended: "*.ts" or "*.{ts,tsx}" (matched against the file name), or "src/**/*.ts" (with a "/": matched against the path relative to "path"); or "type", a file type by ripgrep's names ("go", "py", "ts", "rust", "md", ...; a list for several; "type_not" leaves a type out). Narrow with "path" too. output_mode "files_with_matches" lists only the files, "count" the number of matching lines per file; context_before / context_after / context add lines around each match. A pattern never matches across lines unless multiline is true. Hidden files, ignored paths (.gitignore, node_modules, ...) and binary files are skipped unless include_hidden / include_ignored.

data.matches holds {file, line, text}. data.truncated is true only when more results exist than "limit": narrow with path, include or a more specific pattern (or raise limit, max 1000). status "partial" also means a timeout fired with some results (data.aborted_reason "timeout": narrow the search or raise timeout_ms) or data.fallback_used: the index was still building or could not be trusted, so a full walk answered (results are still exact, only slower).` + envelopeNotes,
		input:  inputSchema(toolspec.Grep),
		output: envelopeOutputSchema,
	},
	{
		name:  toolspec.LS,
		title: "List a directory",
		description: `List one directory (not recursively): directories first, then files, each group by name. A directory's name ends in "/", a symbolic link's in "@" ("@/" for a link to a directory); the text marks a link leading outside the workspace "-> <Outside Sandbox>" and a dangling one "-> <Broken Link>". Hidden names and ignored entries (node_modules, .gitignore matches, ...) are left out unless include_hidden / include_ignored; "ignore" leaves out more by glob.

data.entries holds {path, type} with type "dir", "file" or "link"; stats.total counts the whole listing. data.truncated is true when entries remain after offset + limit: call again with a larger offset to page through them. To find files by name across directories, use Glob.` + envelopeNotes,
		input:  inputSchema(toolspec.LS),
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

// envelopeOutputSchema describes the response envelope (docs/product.md, "The
// envelope"), the structuredContent of Glob, Grep and LS.
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
