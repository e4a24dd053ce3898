package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var tookRE = regexp.MustCompile(`Took \d+ms`)

// TestCompatQuotedNames: the compatibility tools carry names in the printed
// form the envelope gives them (internal/quote), and take it back in
// name_pattern, file_pattern and path.
func TestCompatQuotedNames(t *testing.T) {
	root := t.TempDir()
	order := []string{"a\xfe.txt", "a\xff.txt", "n\nl.txt", "d\xff/x.txt"}
	mkTree(t, root, order, map[string]string{
		"a\xfe.txt":   "needle fe\n",
		"a\xff.txt":   "needle ff\n",
		"n\nl.txt":    "needle \x1b[31mred\n",
		"d\xff/x.txt": "needle in d\n",
	})
	rec := &recorder{next: directQuery}
	_, cs := connect(t, Config{Query: rec.query, Root: root, Tools: AllTools}, nil, nil)
	for _, tc := range []struct {
		tool, args string
		want       string // the text: the answer's JSON
		sent       string // the arguments of the Glob or Grep call
	}{
		{ToolFindFiles, `{"name_pattern":"*.txt"}`,
			`{"files":["\"a\\xfe.txt\"","\"a\\xff.txt\"","\"d\\xff/x.txt\"","\"n\\nl.txt\""],"total_found":4}`,
			`Glob {"pattern":"**/*.txt","path":".","limit":200}`},
		{ToolFindFiles, `{"name_pattern":"\"a\\xff.txt\""}`,
			`{"files":["\"a\\xff.txt\""],"total_found":1}`,
			`Glob {"pattern":"\"**/a\\xff.txt\"","path":".","limit":200}`},
		{ToolFindFiles, `{"name_pattern":"*","path":"\"d\\xff\""}`,
			`{"files":["\"d\\xff/x.txt\""],"total_found":1}`,
			`Glob {"pattern":"**/*","path":"\"d\\xff\"","limit":200}`},
		{ToolSearchInFiles, `{"query":"needle","file_pattern":"\"a\\xfe.txt\""}`,
			`{"matches":[{"file_path":"\"a\\xfe.txt\"","line_number":1,"line_content":"needle fe"}],"total_matches":1,"files_searched":1,"timed_out":false}`,
			`Grep {"pattern":"needle","path":".","include":"\"a\\xfe.txt\"","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":60000}`},
		{ToolSearchInFiles, `{"query":"red","file_pattern":"n*"}`,
			`{"matches":[{"file_path":"\"n\\nl.txt\"","line_number":1,"line_content":"needle \u001b[31mred"}],"total_matches":1,"files_searched":1,"timed_out":false}`,
			`Grep {"pattern":"red","path":".","include":"n*","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":60000}`},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %s: isError: %s", tc.tool, tc.args, text(t, res))
			continue
		}
		if got := text(t, res); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, got, tc.want)
		}
		if got, want := rec.last(t), strings.Replace(tc.sent, " ", " "+root+" ", 1); got != want {
			t.Errorf("%s %s: sent\n%s\nwant\n%s", tc.tool, tc.args, got, want)
		}
	}

	// The envelope tools' text content: one line per match, control
	// characters quoted.
	args := `{"pattern":"needle","include":"n*"}`
	env := envelopeOf(t, call(t, cs, "Grep", args), args)
	want := lines("Found 1 matches in 1 files for 'needle' in '.'", "(Sorted by mtime desc. Took 0ms)", "",
		`"n\nl.txt":1: "needle \x1b[31mred"`)
	if got := tookRE.ReplaceAllString(env.Text, "Took 0ms"); got != want {
		t.Errorf("Grep text:\n got %q\nwant %q", got, want)
	}
}
