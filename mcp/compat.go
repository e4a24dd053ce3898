package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/tool"
)

// The compatibility tools (docs/tools.md) are answered by Glob and Grep with
// these settings.
const (
	// findFilesLimit is find_files_by_name's cap on files (Glob's maximum).
	findFilesLimit = tool.GlobMaxLimit
	// searchLimit is search_in_files's cap on matches (Grep's maximum).
	searchLimit = tool.GrepMaxLimit
	// searchDefaultTimeout is search_in_files's default timeout, seconds.
	searchDefaultTimeout = 60
)

// compatArgs are a compatibility tool's arguments, decoded one key at a
// time as the tools decode theirs: unknown keys are ignored and a null
// value counts as absent.
type compatArgs map[string]json.RawMessage

func decodeCompat(raw json.RawMessage) (compatArgs, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return compatArgs{}, ""
	}
	var a compatArgs
	if raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
		return nil, "Arguments must be a JSON object."
	}
	for k, v := range a {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(a, k)
		}
	}
	return a, ""
}

// required returns a required, non-empty string.
func (a compatArgs) required(key string) (string, string) {
	v, ok := a[key]
	if !ok {
		return "", fmt.Sprintf("Missing required parameter '%s'.", key)
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", fmt.Sprintf("%s must be a string.", key)
	}
	if s == "" {
		return "", fmt.Sprintf("Missing required parameter '%s'.", key)
	}
	return s, ""
}

func (a compatArgs) str(key, def string) (string, string) {
	v, ok := a[key]
	if !ok {
		return def, ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", fmt.Sprintf("%s must be a string.", key)
	}
	return s, ""
}

func (a compatArgs) boolean(key string, def bool) (bool, string) {
	v, ok := a[key]
	if !ok {
		return def, ""
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return false, fmt.Sprintf("%s must be a boolean.", key)
	}
	return b, ""
}

// seconds returns a positive whole number of seconds.
func (a compatArgs) seconds(key string, def int) (int, string) {
	v, ok := a[key]
	if !ok {
		return def, ""
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < 1 {
		return 0, fmt.Sprintf("%s must be a positive integer (seconds).", key)
	}
	return int(min(f, math.MaxInt32)), ""
}

// compatEnvelope is what the compatibility tools read of an envelope.
type compatEnvelope struct {
	Status envelope.Status `json:"status"`
	Data   struct {
		Paths   []string `json:"paths"`
		Matches []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"matches"`
		AbortedReason string `json:"aborted_reason"`
	} `json:"data"`
	Stats struct {
		FilesScanned int  `json:"files_scanned"`
		Candidates   *int `json:"candidates"`
	} `json:"stats"`
	Error *envelope.Error `json:"error"`
}

// compatRun calls tool with args (built here, in a fixed key order) and decodes
// the envelope.
func (s *Server) compatRun(ctx context.Context, tool, root string, args any) (*compatEnvelope, error) {
	js, err := jsonenc.Marshal(args)
	if err != nil {
		return nil, err
	}
	raw, err := s.cfg.Query(ctx, tool, root, js)
	if err != nil {
		return nil, err
	}
	var env compatEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("malformed response envelope: %w", err)
	}
	return &env, nil
}

// findFilesResult is find_files_by_name's answer.
type findFilesResult struct {
	Files      []string `json:"files"`
	TotalFound int      `json:"total_found"`
}

// findFiles answers find_files_by_name with Glob: a name_pattern without
// "/" matches file names at any depth ("**/" + name_pattern), one with
// "/" is a glob relative to path.
func (s *Server) findFiles(ctx context.Context, root string, raw json.RawMessage) *sdk.CallToolResult {
	a, msg := decodeCompat(raw)
	var namePattern, path string
	if msg == "" {
		namePattern, msg = a.required("name_pattern")
	}
	if msg == "" {
		path, msg = a.str("path", ".")
	}
	if msg != "" {
		return errorResult(msg)
	}
	// A name_pattern in the quoted form of a printed name is unquoted
	// before "**/" is added, and the result quoted again for Glob (the
	// bytes it stands for need not be UTF-8, which JSON cannot carry).
	pattern := quote.Unquote(namePattern)
	if !strings.Contains(pattern, "/") {
		pattern = "**/" + pattern
	}
	if pattern != namePattern {
		pattern = quote.Line(pattern)
	}
	env, err := s.compatRun(ctx, tool.Glob, root, struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Limit   int    `json:"limit"`
	}{pattern, path, findFilesLimit})
	if err != nil {
		return s.failure(ctx, ToolFindFiles, raw, err)
	}
	if env.Status == envelope.StatusError {
		return errorResult(errorMessage(env.Error))
	}
	files := env.Data.Paths
	if files == nil {
		files = []string{}
	}
	return compatResult(findFilesResult{Files: files, TotalFound: len(files)})
}

// searchMatch and searchResult are search_in_files's answer.
type searchMatch struct {
	FilePath    string `json:"file_path"`
	LineNumber  int    `json:"line_number"`
	LineContent string `json:"line_content"`
}

type searchResult struct {
	Matches       []searchMatch `json:"matches"`
	TotalMatches  int           `json:"total_matches"`
	FilesSearched int           `json:"files_searched"`
	TimedOut      bool          `json:"timed_out"`
}

// grepArgs are the Grep arguments search_in_files sends.
type grepArgs struct {
	Pattern       string `json:"pattern"`
	Path          string `json:"path"`
	Include       string `json:"include,omitempty"`
	CaseSensitive bool   `json:"case_sensitive"`
	FixedStrings  bool   `json:"fixed_strings"`
	Limit         int    `json:"limit"`
	TimeoutMS     int    `json:"timeout_ms"`
}

// searchInFiles answers search_in_files with Grep: case-sensitive (as
// ripgrep and grep are by default), a literal unless use_regex, the files
// whose name matches file_pattern, the timeout in seconds capped at
// Grep's maximum; exclude_query drops the matching lines it matches too.
func (s *Server) searchInFiles(ctx context.Context, root string, raw json.RawMessage) *sdk.CallToolResult {
	a, msg := decodeCompat(raw)
	var (
		q, filePattern, path, exclude string
		useRegex                      bool
		timeout                       int
	)
	for _, step := range []func(){
		func() { q, msg = a.required("query") },
		func() { filePattern, msg = a.str("file_pattern", "*") },
		func() { path, msg = a.str("path", ".") },
		func() { useRegex, msg = a.boolean("use_regex", false) },
		func() { exclude, msg = a.str("exclude_query", "") },
		func() { timeout, msg = a.seconds("timeout", searchDefaultTimeout) },
	} {
		if msg != "" {
			break
		}
		step()
	}
	if msg != "" {
		return errorResult(msg)
	}
	drop := func(string) bool { return false }
	switch {
	case exclude == "":
	case useRegex:
		re, err := regexp.Compile(exclude)
		if err != nil {
			return errorResult(fmt.Sprintf("Invalid regex pattern in exclude_query: %v", err))
		}
		drop = re.MatchString
	default:
		drop = func(line string) bool { return strings.Contains(line, exclude) }
	}
	include := filePattern
	if include == "*" {
		include = "" // every file, as without a filter
	}
	env, err := s.compatRun(ctx, tool.Grep, root, grepArgs{
		Pattern:       q,
		Path:          path,
		Include:       include,
		CaseSensitive: true,
		FixedStrings:  !useRegex,
		Limit:         searchLimit,
		TimeoutMS:     min(timeout, tool.GrepMaxTimeoutMS/1000) * 1000,
	})
	if err != nil {
		return s.failure(ctx, ToolSearchInFiles, raw, err)
	}
	timedOut := env.Data.AbortedReason == envelope.AbortTimeout
	if env.Status == envelope.StatusError && !(timedOut && env.Error != nil && env.Error.Code == envelope.CodeTimeout) {
		// A timeout with nothing found is an answer here: no matches,
		// timed_out true.
		return errorResult(errorMessage(env.Error))
	}
	res := searchResult{Matches: []searchMatch{}, FilesSearched: env.Stats.FilesScanned, TimedOut: timedOut}
	if env.Stats.Candidates != nil {
		res.FilesSearched = *env.Stats.Candidates
	}
	for _, m := range env.Data.Matches {
		if drop(m.Text) {
			continue
		}
		res.Matches = append(res.Matches, searchMatch{FilePath: m.File, LineNumber: m.Line, LineContent: m.Text})
	}
	res.TotalMatches = len(res.Matches)
	return compatResult(res)
}

func errorMessage(e *envelope.Error) string {
	if e == nil || e.Message == "" {
		return "unknown error"
	}
	return e.Message
}

// compatResult is a compatibility tool's answer: v as structuredContent
// and, as JSON, as the text.
func compatResult(v any) *sdk.CallToolResult {
	js, err := jsonenc.Marshal(v)
	if err != nil {
		return errorResult(err.Error())
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(js)}},
		StructuredContent: json.RawMessage(js),
	}
}
