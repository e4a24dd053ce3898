package query

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// Path safety (docs/product.md, "The root is the boundary"): every escape is
// ACCESS_DENIED for every tool, the root is compared by components, symlinks
// are resolved before the check, a root reached through a symlink works, NUL
// bytes are refused, Grep never reads through a symlink and nothing opens a
// FIFO.

// escapeFixture lays out, under one temporary directory:
//
//	proj/            the workspace root
//	proj-evil/       a sibling sharing the root's name as a prefix
//	outside/         anything else
//	link -> proj     the root reached through a symlink
type escapeFixture struct {
	parent, root, evil, outside, link string
}

func newEscapeFixture(t testing.TB) escapeFixture {
	parent := newRoot(t, fsTree{
		"proj/src/a.go":           "package a // needle\n",
		"proj/x.txt":              "needle\n",
		"proj/sub/":               "",
		"proj/outfile":            "->../outside/secret.txt",
		"proj/outdir":             "->../outside",
		"proj/evillink":           "->../proj-evil",
		"proj/src/up":             "->..",
		"proj/inlink.txt":         "->x.txt",
		"proj-evil/evil.go":       "package evil // needle\n",
		"outside/secret.txt":      "needle\n",
		"outside/deeper/more.txt": "needle\n",
		"link":                    "->proj",
	})
	return escapeFixture{
		parent:  parent,
		root:    filepath.Join(parent, "proj"),
		evil:    filepath.Join(parent, "proj-evil"),
		outside: filepath.Join(parent, "outside"),
		link:    filepath.Join(parent, "link"),
	}
}

func TestResolveEscapes(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	tools := newTools(t, f.root)
	denied := []string{
		"..",
		"../",
		"../proj-evil",
		"../proj-evil/",
		"../outside",
		"sub/../../outside",
		"sub/../..",
		"src/../../proj-evil",
		f.evil,
		f.evil + "/",
		f.outside,
		f.parent,
		"/",
		"/etc",
		"//etc",
		"outdir",        // a symlink to a directory outside
		"outdir/deeper", // and below it
		"outfile",       // a symlink to a file outside
		"evillink",
		"../nonexistent",         // need not exist: still denied
		"../outside/nonexistent", // not NOT_FOUND
		"/nonexistent-indexd/x",
		"outdir/nonexistent",
		f.root + "-evil",
		f.root + "/../proj-evil",
	}
	for _, p := range denied {
		for _, tc := range []struct{ tool, args string }{
			{tool.Glob, jsonArgs("pattern", "**", "path", p)},
			{tool.Grep, jsonArgs("pattern", "needle", "path", p)},
			{tool.LS, jsonArgs("path", p)},
		} {
			r := run(t, tools, tc.tool, tc.args)
			if r.Status != "error" || r.Error.Code != envelope.CodeAccessDenied || r.Error.Message != msgAccessDenied {
				t.Errorf("%s path %q: %s %v, want ACCESS_DENIED\n%s", tc.tool, p, r.Status, r.Error, r.Text)
			}
			if r.Context.PathResolved != "" {
				t.Errorf("%s path %q: path_resolved %q on a denied path", tc.tool, p, r.Context.PathResolved)
			}
		}
	}
}

func TestResolveAllowed(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	tests := []struct{ root, path, want string }{
		{f.root, ".", "."},
		{f.root, "", "."},
		{f.root, "src", "src"},
		{f.root, "./src/", "src"},
		{f.root, "src//", "src"},
		{f.root, "sub/../src", "src"},
		{f.root, "../proj", "."}, // ".." is resolved lexically first
		{f.root, "./../proj/src", "src"},
		{f.root, "outdir/../src", "src"},
		{f.root, "src/up", "."},       // a link to the root itself
		{f.root, "src/up/src", "src"}, // through it
		{f.root, f.root, "."},         // absolute
		{f.root, f.root + "/src", "src"},
		{f.root, f.root + "/sub/../src", "src"},
		{f.link, f.link + "/src", "src"}, // absolute under the symlinked name
		{f.link, f.link, "."},
		{f.link, f.root + "/src", "src"}, // and under the real one
		{f.link, "src", "src"},
	}
	for _, tc := range tests {
		tools := newTools(t, tc.root)
		for _, r := range []result{
			run(t, tools, tool.Glob, jsonArgs("pattern", "**", "path", tc.path)),
			run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "path", tc.path)),
			run(t, tools, tool.LS, jsonArgs("path", tc.path)),
		} {
			if r.Status == "error" || r.Context.PathResolved != tc.want {
				t.Errorf("root %s path %q: %s path_resolved %q, want %q\n%s", tc.root, tc.path, r.Status, r.Context.PathResolved, tc.want, r.Text)
			}
		}
	}

	// Through the symlinked root everything works and paths stay relative.
	tools := newTools(t, f.link)
	r := run(t, tools, tool.Grep, jsonArgs("pattern", "needle", "path", f.link))
	wantStatus(t, r, "success")
	got := map[string]bool{}
	for _, m := range r.Data.Matches {
		got[m.File] = true
	}
	equal(t, "files", got, map[string]bool{"src/a.go": true, "x.txt": true})
	r = run(t, tools, tool.Glob, jsonArgs("pattern", "**/*.go", "path", f.link+"/src"))
	equal(t, "glob via link", r.paths(), []string{"src/a.go"})
	// The parent of the symlinked name is outside.
	r = run(t, tools, tool.LS, jsonArgs("path", f.link+"/.."))
	wantError(t, r, envelope.CodeAccessDenied, msgAccessDenied)
	r = run(t, tools, tool.LS, jsonArgs("path", f.link+"/../proj-evil"))
	wantError(t, r, envelope.CodeAccessDenied, msgAccessDenied)
}

func TestResolveNUL(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	tools := newTools(t, f.root)
	for _, p := range []string{"src\x00", "\x00", "../\x00", "src/\x00/x"} {
		for _, tc := range []struct{ tool, args string }{
			{tool.Glob, jsonArgs("pattern", "**", "path", p)},
			{tool.Grep, jsonArgs("pattern", "needle", "path", p)},
			{tool.LS, jsonArgs("path", p)},
		} {
			r := run(t, tools, tc.tool, tc.args)
			wantError(t, r, envelope.CodeInvalidParam, "path must not contain NUL bytes.")
		}
	}
	r := runCwd(t, tools, tool.LS, "src\x00", `{}`)
	wantError(t, r, envelope.CodeInvalidParam, "path must not contain NUL bytes.")
}

// Workspace.Resolve directly: rel and exists.
func TestResolveUnit(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	ws, err := NewWorkspace(f.link)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root != f.root {
		t.Fatalf("Root = %q, want the real root %q", ws.Root, f.root)
	}
	tests := []struct {
		cwd, p string
		rel    string
		exists bool
		code   envelope.Code
	}{
		{".", "src", "src", true, ""},
		{".", "nope/deeper", "nope/deeper", false, ""},
		{"src", "a.go", "src/a.go", true, ""},
		{"src", "..", ".", true, ""},
		{"src", "../..", "", false, envelope.CodeAccessDenied},
		{"src", "up/src/up/x.txt", "x.txt", true, ""},
		{"src", "up/up/x.txt", "up/x.txt", false, ""},
		{".", "inlink.txt", "x.txt", true, ""},
		{".", "outdir/nope", "", false, envelope.CodeAccessDenied},
		{".", f.link + "/nope", "nope", false, ""},
		{".", f.parent + "/link2", "", false, envelope.CodeAccessDenied},
		{".", "a\x00", "", false, envelope.CodeInvalidParam},
	}
	for _, tc := range tests {
		rel, exists, e := ws.Resolve(tc.cwd, tc.p)
		var code envelope.Code
		if e != nil {
			code = e.Code
		}
		if rel != tc.rel || exists != tc.exists || code != tc.code {
			t.Errorf("Resolve(%q, %q) = %q, %v, %v; want %q, %v, %s", tc.cwd, tc.p, rel, exists, e, tc.rel, tc.exists, tc.code)
		}
	}
	if _, err := NewWorkspace(filepath.Join(f.root, "x.txt")); err == nil {
		t.Error("NewWorkspace on a file: no error")
	}
	if _, err := NewWorkspace(filepath.Join(f.root, "nope")); err == nil {
		t.Error("NewWorkspace on a missing directory: no error")
	}
}

// Grep never reads through a symlink, and Glob lists a symlinked file only
// when its target is inside the root.
func TestResolveSymlinkedFilesNotRead(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	tools := newTools(t, f.root)
	r := run(t, tools, tool.Grep, `{"pattern":"needle","include_hidden":true,"include_ignored":true}`)
	got := map[string]bool{}
	for _, m := range r.Data.Matches {
		got[m.File] = true
	}
	equal(t, "grep files", got, map[string]bool{"src/a.go": true, "x.txt": true})
	r = run(t, tools, tool.Grep, `{"pattern":"needle","include":"inlink.txt"}`)
	equal(t, "grep inlink", r.matchLines(), []string{})
	r = run(t, tools, tool.Glob, `{"pattern":"**"}`)
	equal(t, "glob", r.paths(), []string{"inlink.txt", "src/a.go", "x.txt"})
}

// FIFOs are listed at most, never opened: every tool finishes (run fails
// the test if a call blocks).
func TestResolveFIFOsNeverOpened(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{"a.txt": "needle\n", "sub/b.txt": "needle\n"})
	for _, p := range []string{"fifo", "fifo.txt", "sub/fifo.txt"} {
		if err := syscall.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	if err := os.Symlink("fifo.txt", filepath.Join(root, "fifolink.txt")); err != nil {
		t.Fatal(err)
	}
	tools := newTools(t, root)
	r := run(t, tools, tool.Grep, `{"pattern":"needle"}`)
	wantStatus(t, r, "success")
	if len(r.Data.Matches) != 2 {
		t.Errorf("grep: %v", r.matchLines())
	}
	r = run(t, tools, tool.Grep, `{"pattern":"needle","include":"fifo*"}`)
	equal(t, "grep fifo", r.matchLines(), []string{})
	r = run(t, tools, tool.Glob, `{"pattern":"**/fifo*"}`)
	equal(t, "glob fifo", r.paths(), []string{})
	r = run(t, tools, tool.Glob, `{"pattern":"**/*.txt"}`)
	equal(t, "glob txt", r.paths(), []string{"a.txt", "sub/b.txt"})
	r = run(t, tools, tool.LS, `{}`)
	wantStatus(t, r, "success")
	r = run(t, tools, tool.LS, `{"path":"sub"}`)
	wantStatus(t, r, "success")
	r = run(t, tools, tool.Grep, `{"pattern":"needle","path":"fifo"}`)
	wantError(t, r, envelope.CodeInvalidParam, "Search root 'fifo' is not a directory.")
}
