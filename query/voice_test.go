package query

import (
	"strings"
	"testing"

	"github.com/indexd/indexd/tool"
)

// Each reader gets the hints and messages worded for it, by the daemon: an
// agent the parameter to set (docs/tools.md's texts), a person at the
// command line (CLIVoice) the flag to give. Nothing is rewritten after.
func TestVoices(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{
		"a.go": "package a\n", "b.go": "package b\n", "c.go": "package c\n",
		"node_modules/m.go": "package m\n", "sub/d.go": "package d\n",
		".ignore": "gen/\n", "gen/g.go": "package g\n",
	})
	agent := newTools(t, root)
	cli := newTools(t, root)
	cli.Voice = CLIVoice
	for _, c := range []struct {
		tool, args         string
		agentWant, cliWant string // a line of the text, or the error message
	}{
		{tool.Glob, `{"pattern":"*.go","limit":1}`,
			"[Truncated: Showing first 1 files. Narrow the pattern or path, or raise limit (max 200).]",
			"[Truncated: showing the first 1 files (--limit 1); more exist.]"},
		{tool.Grep, `{"pattern":"package","limit":1}`,
			"[Truncated: Showing first 1 matches. Narrow pattern or path.]",
			"[Truncated: showing the first 1 matches (--limit 1); more exist.]"},
		{tool.Glob, `{"pattern":"node_modules/*.go"}`,
			"[Info: Directories on the default ignore list were skipped: node_modules/. Set include_ignored=true to search them.]",
			"[Info: Directories on the default ignore list were skipped: node_modules/. Use --include-ignored to search them.]"},
		{tool.Glob, `{"pattern":"gen/*.go"}`,
			"[Info: Ignored paths were skipped: gen/. Set include_ignored=true to search them.]",
			"[Info: Ignored paths were skipped: gen/. Use --include-ignored to search them.]"},
		{tool.LS, `{"limit":1}`,
			"Listed 1 entries in '.' (truncated from 4 total). Use 'offset' to paginate.",
			"Listed 1 entries in '.' (truncated from 4 total). Use --offset to see the rest."},
		{tool.Glob, `{}`, "Missing required parameter 'pattern'.", "missing PATTERN"},
		{tool.Glob, `{"pattern":"x","limit":500}`, "limit must be an integer between 1 and 200.", "--limit must be an integer between 1 and 200."},
		{tool.Grep, `{"pattern":"x","context":"2"}`, "context must be an integer between 0 and 20.", "--context must be an integer between 0 and 20."},
		{tool.Grep, `{"pattern":"a\\nb"}`,
			"Invalid regex pattern: it matches a line break; set multiline=true to match across lines",
			"Invalid regex pattern: it matches a line break; use --multiline to match across lines"},
		{tool.Grep, `{"pattern":"x","invert_match":true,"multiline":true}`,
			"invert_match cannot be combined with multiline.", "--invert-match cannot be combined with --multiline."},
		{tool.Glob, `{"pattern":"x","path":"/"}`,
			"Access denied. Path must be within project root.",
			"access denied: '/' is outside the workspace root " + root + " (--root DIR chooses another root)"},
	} {
		for _, v := range []struct {
			tools *Tools
			want  string
		}{{agent, c.agentWant}, {cli, c.cliWant}} {
			r := run(t, v.tools, c.tool, c.args)
			got := r.Text
			if r.Error != nil {
				got = r.Error.Message
			}
			if !strings.Contains(got, v.want) {
				t.Errorf("%s %s (cli %v): %q lacks %q", c.tool, c.args, v.tools.Voice.CLI(), got, v.want)
			}
		}
	}
}
