package query

import (
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// LS (docs/tools.md, "LS"): order, pagination, hidden, ignore globs,
// symlink display, default-ignored directories.

func lsTree(t *testing.T) (*Tools, string) {
	outside := newRoot(t, fsTree{"secret.txt": "", "dir/": ""})
	return setup(t, fsTree{
		"b/":                  "",
		"A/":                  "",
		"c/inner.txt":         "",
		"Z.txt":               "",
		"a.txt":               "",
		"c.md":                "",
		"debug.log":           "",
		".env":                "",
		".config/":            "",
		"node_modules/x.js":   "",
		"build/":              "",
		"filelink":            "->a.txt",
		"dirlink":             "->c",
		"outlink":             "->" + outside + "/secret.txt",
		"outdirlink":          "->" + outside + "/dir",
		"broken":              "->nope",
		"c/sub.log":           "",
		"c/keep.tmp":          "",
		"c/deeper/x.log":      "",
		"c/.hidden_in_c/":     "",
		"c/node_modules/y.js": "",
	})
}

func TestLSOrderAndSymlinks(t *testing.T) {
	t.Parallel()
	tools, _ := lsTree(t)
	r := run(t, tools, tool.LS, `{}`)
	wantStatus(t, r, "success")
	equal(t, "entries", r.Data.Entries, []envelope.LSEntry{
		{Path: "A/", Type: "dir"},
		{Path: "b/", Type: "dir"},
		{Path: "c/", Type: "dir"},
		{Path: "Z.txt", Type: "file"},
		{Path: "a.txt", Type: "file"},
		{Path: "broken@", Type: "link"},
		{Path: "c.md", Type: "file"},
		{Path: "debug.log", Type: "file"},
		{Path: "dirlink@/", Type: "link"},
		{Path: "filelink@", Type: "link"},
		{Path: "outdirlink@", Type: "link"},
		{Path: "outlink@", Type: "link"},
	})
	equal(t, "stats", [5]int{r.Stats.Total, r.Stats.Dirs, r.Stats.Files, r.Stats.Links, r.Stats.Ignored}, [5]int{12, 3, 4, 5, 2})
	wantText(t, r, "Listed 12 entries in '.'\n"+
		"[Info: Directories on the default ignore list were skipped: build/, node_modules/. Set include_ignored=true to search them.]\n\nA/\nb/\nc/\nZ.txt\na.txt\nbroken@ -> <Broken Link>\nc.md\ndebug.log\n"+
		"dirlink@/\nfilelink@\noutdirlink@ -> <Outside Sandbox>\noutlink@ -> <Outside Sandbox>")
	if r.Context.PathResolved != "." {
		t.Errorf("path_resolved = %q", r.Context.PathResolved)
	}
}

func TestLSPagination(t *testing.T) {
	t.Parallel()
	tools, _ := lsTree(t)
	all := []string{"A/", "b/", "c/", "Z.txt", "a.txt", "broken@", "c.md", "debug.log", "dirlink@/", "filelink@", "outdirlink@", "outlink@"}
	tests := []struct {
		offset, limit int
		want          []string
		truncated     bool
	}{
		{0, 3, all[:3], true},
		{3, 3, all[3:6], true},
		{9, 3, all[9:], false},
		{10, 3, all[10:], false},
		{11, 1, all[11:], false},
		{0, 12, all, false},
		{0, 200, all, false},
		{12, 5, []string{}, false},
		{500, 5, []string{}, false},
	}
	for _, tc := range tests {
		r := run(t, tools, tool.LS, jsonArgs("offset", tc.offset, "limit", tc.limit))
		equal(t, "entries", r.entryNames(), tc.want)
		if r.Data.Truncated != tc.truncated {
			t.Errorf("offset %d limit %d: truncated = %v", tc.offset, tc.limit, r.Data.Truncated)
		}
		wantStatus(t, r, map[bool]string{true: "partial", false: "success"}[tc.truncated])
		// Stats describe the whole listing, not the page.
		equal(t, "stats", [4]int{r.Stats.Total, r.Stats.Dirs, r.Stats.Files, r.Stats.Links}, [4]int{12, 3, 4, 5})
	}
	r := run(t, tools, tool.LS, `{"offset":3,"limit":2}`)
	wantText(t, r, "Listed 2 entries in '.' (truncated from 12 total). Use 'offset' to paginate.\n"+
		"[Info: Directories on the default ignore list were skipped: build/, node_modules/. Set include_ignored=true to search them.]\n\nZ.txt\na.txt")
}

func TestLSHiddenAndIgnored(t *testing.T) {
	t.Parallel()
	tools, _ := lsTree(t)
	tests := []struct {
		name, args string
		want       []string
	}{
		{"hidden", `{"include_hidden":true,"limit":3}`, []string{".config/", "A/", "b/"}},
		{"hidden files", `{"include_hidden":true,"offset":4,"limit":3}`, []string{".env", "Z.txt", "a.txt"}},
		{"ignored", `{"include_ignored":true,"limit":5}`, []string{"A/", "b/", "build/", "c/", "node_modules/"}},
		{"both", `{"include_ignored":true,"include_hidden":true,"limit":3}`, []string{".config/", "A/", "b/"}},
		{"subdir", `{"path":"c"}`, []string{"deeper/", "inner.txt", "keep.tmp", "sub.log"}},
		{"subdir hidden", `{"path":"c","include_hidden":true,"limit":2}`, []string{".hidden_in_c/", "deeper/"}},
		{"ignored dir as path", `{"path":"node_modules"}`, []string{"x.js"}},
		{"hidden dir as path", `{"path":"c/deeper"}`, []string{"x.log"}},
		{"link to dir as path", `{"path":"dirlink"}`, []string{"deeper/", "inner.txt", "keep.tmp", "sub.log"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tools, tool.LS, tc.args)
			equal(t, "entries", r.entryNames(), tc.want)
		})
	}
	r := run(t, tools, tool.LS, `{"path":"dirlink"}`)
	if r.Context.PathResolved != "c" {
		t.Errorf("path_resolved through a link = %q, want c", r.Context.PathResolved)
	}
}

func TestLSIgnoreGlobs(t *testing.T) {
	t.Parallel()
	tools, _ := lsTree(t)
	tests := []struct {
		name, args string
		want       []string
	}{
		{"by name", `{"path":"c","ignore":["*.log"]}`, []string{"deeper/", "inner.txt", "keep.tmp"}},
		{"a single string", `{"path":"c","ignore":"*.log"}`, []string{"deeper/", "inner.txt", "keep.tmp"}},
		{"recursive", `{"path":"c","ignore":["**/*.log"]}`, []string{"deeper/", "inner.txt", "keep.tmp"}},
		{"recursive at root", `{"ignore":["**/*.log"],"offset":3}`, []string{"Z.txt", "a.txt", "broken@", "c.md", "dirlink@/", "filelink@", "outdirlink@", "outlink@"}},
		{"root-relative path", `{"path":"c","ignore":["c/*.tmp"]}`, []string{"deeper/", "inner.txt", "sub.log"}},
		{"directory by name", `{"path":"c","ignore":["deeper"]}`, []string{"inner.txt", "keep.tmp", "sub.log"}},
		{"directory with slash", `{"path":"c","ignore":["deeper/"]}`, []string{"inner.txt", "keep.tmp", "sub.log"}},
		{"several", `{"path":"c","ignore":["*.tmp","inner.*"]}`, []string{"deeper/", "sub.log"}},
		{"braces", `{"path":"c","ignore":["*.{tmp,log}"]}`, []string{"deeper/", "inner.txt"}},
		{"no match", `{"path":"c","ignore":["*.rs"]}`, []string{"deeper/", "inner.txt", "keep.tmp", "sub.log"}},
		{"everything", `{"path":"c","ignore":["*"]}`, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tools, tool.LS, tc.args)
			wantStatus(t, r, "success")
			equal(t, "entries", r.entryNames(), tc.want)
		})
	}
}

func TestLSGitignoreAndHints(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		".git/HEAD":          "",
		".gitignore":         "*.log\nout/\n",
		"a.txt":              "",
		"x.log":              "",
		"out/o.txt":          "",
		"only/node_modules/": "",
		"only/.hidden":       "",
	})
	r := run(t, tools, tool.LS, `{}`)
	equal(t, "entries", r.entryNames(), []string{"only/", "a.txt"})
	if r.Stats.Ignored != 3 { // .git, out/, x.log
		t.Errorf("ignored = %d, want 3", r.Stats.Ignored)
	}
	r = run(t, tools, tool.LS, `{"include_ignored":true}`)
	equal(t, "include_ignored", r.entryNames(), []string{"only/", "out/", "a.txt", "x.log"})
	r = run(t, tools, tool.LS, `{"path":"out"}`)
	equal(t, "ignored dir as path", r.entryNames(), []string{"o.txt"})

	r = run(t, tools, tool.LS, `{"path":"only"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "Listed 0 entries in 'only'\n"+
		"[Info: Directories on the default ignore list were skipped: only/node_modules/. Set include_ignored=true to search them.]\n"+
		"[Info: Hidden paths were skipped: only/.hidden. Set include_hidden=true to search them.]")
}
