package query

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
)

// What a query may not read for want of permission is named, never left
// out in silence: Glob and Grep answers carry it (data.unreadable: the
// directories that could hold a result, the files Grep had to read) and
// are partial, from the walk and the index alike; a query whose scope
// cannot reach it is whole.
func TestUnreadablePathsNamed(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := newRoot(t, fsTree{
		"src/locked/b.go":   "needle two\n",
		"src/open/a.go":     "needle one\n",
		"src/secret.go":     "needle four\n",
		"src/c.go":          "needle three\n",
		"docs/x.md":         "needle md\n",
		"docs/private/y.md": "needle private\n",
		".secret/s.go":      "needle hidden\n",
		".priv/locked/p.go": "needle hidden too\n",
	})
	locked := []string{"src/locked", "src/secret.go", "docs/private", ".secret", ".priv/locked"}
	for _, p := range locked {
		testtree.Chmod(t, root, p, 0)
	}
	walk, idx := buildTools(t, root)
	cases := []struct {
		tool, args string
		status     string
		results    []string // paths, or file:line
		unreadable []string
		note       string
	}{
		{"Grep", `{"pattern":"needle"}`, "partial",
			[]string{"docs/x.md:1", "src/c.go:1", "src/open/a.go:1"},
			[]string{"docs/private/", "src/locked/", "src/secret.go"},
			"[Partial: 3 paths could not be read (permission denied): docs/private/, src/locked/, src/secret.go; any matches in them are missing.]"},
		{"Grep", `{"pattern":"needle","include":"*.md"}`, "partial",
			[]string{"docs/x.md:1"}, []string{"docs/private/", "src/locked/"}, ""},
		{"Grep", `{"pattern":"needle","path":"docs"}`, "partial",
			[]string{"docs/x.md:1"}, []string{"docs/private/"},
			"[Partial: docs/private/ could not be read (permission denied); any matches in it are missing.]"},
		{"Grep", `{"pattern":"needle","path":"src/open"}`, "success", []string{"src/open/a.go:1"}, nil, ""},
		{"Grep", `{"pattern":"needle","path":"src/locked"}`, "partial", nil, []string{"src/locked/"}, ""},
		{"Grep", `{"pattern":"needle","include":"src/open/*.go"}`, "success", []string{"src/open/a.go:1"}, nil, ""},
		// A hidden one is named when the query lets hidden names in, as
		// only then is it listed.
		{"Grep", `{"pattern":"needle","include_hidden":true}`, "partial",
			[]string{"docs/x.md:1", "src/c.go:1", "src/open/a.go:1"},
			[]string{".priv/locked/", ".secret/", "docs/private/", "src/locked/", "src/secret.go"}, ""},
		{"Glob", `{"pattern":"**/*.go","include_hidden":true}`, "partial",
			[]string{"src/c.go", "src/open/a.go", "src/secret.go"}, []string{".priv/locked/", ".secret/", "docs/private/", "src/locked/"}, ""},
		// The query's own directory, whatever its filters.
		{"Glob", `{"pattern":"*.go","path":"src/locked"}`, "partial", nil, []string{"src/locked/"}, ""},
		{"Grep", `{"pattern":"needle","path":"src/locked","include":"sub/*.go"}`, "partial", nil, []string{"src/locked/"}, ""},
		{"Glob", `{"pattern":"**/*.go"}`, "partial",
			[]string{"src/c.go", "src/open/a.go", "src/secret.go"}, []string{"docs/private/", "src/locked/"},
			"[Partial: 2 paths could not be read (permission denied): docs/private/, src/locked/; any files in them are missing.]"},
		{"Glob", `{"pattern":"src/**/*.go"}`, "partial",
			[]string{"src/c.go", "src/open/a.go", "src/secret.go"}, []string{"src/locked/"}, ""},
		{"Glob", `{"pattern":"src/open/*.go"}`, "success", []string{"src/open/a.go"}, nil, ""},
		{"Glob", `{"pattern":"*.md","path":"docs"}`, "success", []string{"docs/x.md"}, nil, ""},
	}
	for _, c := range cases {
		for _, tools := range []struct {
			name  string
			tools *Tools
		}{{"walk", walk}, {"index", idx}} {
			r := run(t, tools.tools, c.tool, c.args)
			what := tools.name + " " + c.tool + " " + c.args
			if r.Status != c.status {
				t.Errorf("%s: status %s, want %s\n%s", what, r.Status, c.status, r.JSON)
				continue
			}
			var got []string
			if c.tool == "Glob" {
				got = r.paths()
			} else {
				for _, m := range r.Data.Matches {
					got = append(got, fmt.Sprintf("%s:%d", m.File, m.Line))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.results) {
				t.Errorf("%s: results %q, want %q", what, got, c.results)
			}
			if !slices.Equal(r.Data.Unreadable, c.unreadable) {
				t.Errorf("%s: unreadable %q, want %q", what, r.Data.Unreadable, c.unreadable)
			}
			if c.note != "" && !strings.Contains(r.Text, "\n"+c.note+"\n") {
				t.Errorf("%s: text lacks %q:\n%s", what, c.note, r.Text)
			}
		}
	}
}
