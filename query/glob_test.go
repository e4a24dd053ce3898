package query

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// Glob semantics (docs/tools.md, "Glob"): doublestar matching relative to
// path, hidden and ignored rules, symlinks, limit, sort, breakers.

func globTree() fsTree {
	return fsTree{
		"a.go":                      "",
		"b.go":                      "",
		"x":                         "",
		"a[1].txt":                  "",
		"a1.txt":                    "",
		"src/x":                     "",
		"src/a.go":                  "",
		"src/sub/c.go":              "",
		"src/sub/deep/d.go":         "",
		"lib/a.ts":                  "",
		"lib/b.tsx":                 "",
		"lib/c.js":                  "",
		"docs/readme.md":            "",
		"docs/Guide.MD":             "",
		"config/app.yml":            "",
		".github/dependabot.yml":    "",
		".github/workflows/ci.yml":  "",
		".env":                      "",
		"sub/.env":                  "",
		".hidden/h.go":              "",
		"node_modules/pkg/index.js": "",
		"build/out.go":              "",
		".git/config":               "",
		"emptydir/":                 "",
	}
}

func TestGlobSemantics(t *testing.T) {
	t.Parallel()
	tools, root := setup(t, globTree())
	tests := []struct {
		name, args string
		want       []string
	}{
		{"star stays in segment", `{"pattern":"*.go"}`, []string{"a.go", "b.go"}},
		{"question stays in segment", `{"pattern":"?.go"}`, []string{"a.go", "b.go"}},
		{"star one level", `{"pattern":"src/*.go"}`, []string{"src/a.go"}},
		{"star is not globstar", `{"pattern":"src/*/d.go"}`, []string{}},
		{"globstar", `{"pattern":"**/*.go"}`, []string{"a.go", "b.go", "src/a.go", "src/sub/c.go", "src/sub/deep/d.go"}},
		{"globstar zero dirs", `{"pattern":"**/x"}`, []string{"src/x", "x"}},
		{"globstar in the middle", `{"pattern":"src/**/d.go"}`, []string{"src/sub/deep/d.go"}},
		{"relative to path", `{"pattern":"*.go","path":"src"}`, []string{"src/a.go"}},
		{"relative to deeper path", `{"pattern":"**/*.go","path":"src/sub"}`, []string{"src/sub/c.go", "src/sub/deep/d.go"}},
		{"relative to path with dir", `{"pattern":"sub/*.go","path":"src"}`, []string{"src/sub/c.go"}},
		{"path with dot segments", `{"pattern":"*.go","path":"./src/sub/.."}`, []string{"src/a.go"}},
		{"path with trailing slash", `{"pattern":"*.go","path":"src/"}`, []string{"src/a.go"}},
		{"leading ./ in pattern", `{"pattern":"./src/*.go"}`, []string{"src/a.go"}},
		{"braces", `{"pattern":"lib/*.{ts,tsx}"}`, []string{"lib/a.ts", "lib/b.tsx"}},
		{"braces over dirs", `{"pattern":"{src,lib}/a.*"}`, []string{"lib/a.ts", "src/a.go"}},
		{"class", `{"pattern":"[a-b].go"}`, []string{"a.go", "b.go"}},
		{"negated class", `{"pattern":"[!a].go"}`, []string{"b.go"}},
		{"case sensitive by default", `{"pattern":"docs/*.md"}`, []string{"docs/readme.md"}},
		{"case insensitive", `{"pattern":"docs/*.md","case_sensitive":false}`, []string{"docs/Guide.MD", "docs/readme.md"}},
		{"case insensitive dirs", `{"pattern":"DOCS/g*","case_sensitive":false}`, []string{"docs/Guide.MD"}},
		{"hidden dir named in pattern", `{"pattern":".github/**/*.yml"}`, []string{".github/dependabot.yml", ".github/workflows/ci.yml"}},
		{"hidden file named in pattern", `{"pattern":"**/.env"}`, []string{".env", "sub/.env"}},
		{"hidden not found by star", `{"pattern":"**/*.yml"}`, []string{"config/app.yml"}},
		{"include_hidden", `{"pattern":"**/*.yml","include_hidden":true}`, []string{".github/dependabot.yml", ".github/workflows/ci.yml", "config/app.yml"}},
		{"include_hidden go", `{"pattern":"**/h.go","include_hidden":true}`, []string{".hidden/h.go"}},
		{"escaped bracket", `{"pattern":"a\\[1\\].txt"}`, []string{"a[1].txt"}},
		{"bracket is a class", `{"pattern":"a[1].txt"}`, []string{"a1.txt"}},
		{"node_modules pruned", `{"pattern":"**/*.js"}`, []string{"lib/c.js"}},
		{"node_modules included", `{"pattern":"**/*.js","include_ignored":true}`, []string{"lib/c.js", "node_modules/pkg/index.js"}},
		{"build pruned", `{"pattern":"**/out.go"}`, []string{}},
		{"build included", `{"pattern":"**/out.go","include_ignored":true}`, []string{"build/out.go"}},
		{".git pruned even when named", `{"pattern":".git/*"}`, []string{}},
		{".git included", `{"pattern":".git/*","include_ignored":true}`, []string{".git/config"}},
		{"ignored dir as path", `{"pattern":"**/*.js","path":"node_modules"}`, []string{"node_modules/pkg/index.js"}},
		{"hidden dir as path", `{"pattern":"*.go","path":".hidden"}`, []string{".hidden/h.go"}},
		{"directories never listed", `{"pattern":"src"}`, []string{}},
		{"directories never listed 2", `{"pattern":"**/sub"}`, []string{}},
		{"directories never listed 3", `{"pattern":"*dir"}`, []string{}},
		{"all files of a path", `{"pattern":"**","path":"src"}`, []string{"src/a.go", "src/sub/c.go", "src/sub/deep/d.go", "src/x"}},
		{"absolute pattern inside path", jsonArgs("pattern", root+"/src/*.go"), []string{"src/a.go"}},
		{"absolute pattern inside other path", jsonArgs("pattern", root+"/src/sub/*.go", "path", "src"), []string{"src/sub/c.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tools, tool.Glob, tc.args)
			wantStatus(t, r, "success")
			equal(t, "paths", r.paths(), tc.want)
			if r.Stats.Matched != len(tc.want) {
				t.Errorf("stats.matched = %d, want %d", r.Stats.Matched, len(tc.want))
			}
		})
	}
}

func TestGlobContext(t *testing.T) {
	t.Parallel()
	tools, root := setup(t, globTree())
	r := run(t, tools, tool.Glob, jsonArgs("pattern", "./sub/*.go", "path", root+"/src/"))
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"src/sub/c.go"})
	if r.Context.PathResolved != "src" || r.Context.PatternNormalized != "sub/*.go" || r.Context.Cwd != "." {
		t.Errorf("context = %+v", r.Context)
	}
	wantText(t, r, "Found 1 files matching 'sub/*.go' in 'src'\n(Scanned 5 items in Nms)\n\nsrc/sub/c.go")

	// Outside the search directory, an absolute pattern is refused.
	r = run(t, tools, tool.Glob, jsonArgs("pattern", "/etc/*.conf"))
	wantError(t, r, envelope.CodeInvalidParam, "pattern '/etc/*.conf' is absolute; give it relative to path.")
}

func TestGlobCwd(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, globTree())
	r := runCwd(t, tools, tool.Glob, "src", `{"pattern":"*.go"}`)
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"src/a.go"})
	if r.Context.Cwd != "src" || r.Context.PathResolved != "src" {
		t.Errorf("context = %+v", r.Context)
	}
	r = runCwd(t, tools, tool.Glob, "src", `{"pattern":"*.go","path":".."}`)
	equal(t, "paths", r.paths(), []string{"a.go", "b.go"})
	r = runCwd(t, tools, tool.Glob, "src", `{"pattern":"*.go","path":"../.."}`)
	wantError(t, r, envelope.CodeAccessDenied, msgAccessDenied)
	r = runCwd(t, tools, tool.Glob, "nope", `{"pattern":"*.go"}`)
	wantError(t, r, envelope.CodeNotFound, "Working directory 'nope' does not exist.")
	r = runCwd(t, tools, tool.Glob, "../..", `{"pattern":"*.go"}`)
	wantError(t, r, envelope.CodeAccessDenied, msgAccessDenied)
}

func TestGlobSymlinks(t *testing.T) {
	t.Parallel()
	outside := newRoot(t, fsTree{"secret.go": "", "dir/s.go": ""})
	tools, _ := setup(t, fsTree{
		"a.go":          "",
		"src/b.go":      "",
		"in.go":         "->a.go",
		"src/up.go":     "->../a.go",
		"out.go":        "->" + outside + "/secret.go",
		"rel_out.go":    "->../" + filepath.Base(outside) + "/secret.go",
		"broken.go":     "->nope.go",
		"dirlink.go":    "->src",
		"linkdir":       "->src",
		"outdir":        "->" + outside + "/dir",
		"chain.go":      "->in.go",
		"chain_out.go":  "->out.go",
		"loop.go":       "->loop.go",
		"src/deep/c.go": "",
	})
	r := run(t, tools, tool.Glob, `{"pattern":"**/*.go"}`)
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"a.go", "chain.go", "in.go", "src/b.go", "src/deep/c.go", "src/up.go"})

	// Symlinked directories are never followed.
	for _, p := range []string{"linkdir/*.go", "linkdir/**", "outdir/*.go"} {
		r = run(t, tools, tool.Glob, jsonArgs("pattern", p))
		equal(t, p, r.paths(), []string{})
	}
}

func TestGlobLimitExact(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{"f1": "", "f2": "", "f3": "", "d/f4": "", "d/f5": ""})
	tests := []struct {
		limit     int
		status    string
		truncated bool
		want      []string
	}{
		{1, "partial", true, []string{"d/f4"}},
		{4, "partial", true, []string{"d/f4", "d/f5", "f1", "f2"}},
		{5, "success", false, []string{"d/f4", "d/f5", "f1", "f2", "f3"}},
		{6, "success", false, []string{"d/f4", "d/f5", "f1", "f2", "f3"}},
		{200, "success", false, []string{"d/f4", "d/f5", "f1", "f2", "f3"}},
	}
	for _, tc := range tests {
		r := run(t, tools, tool.Glob, jsonArgs("pattern", "**/f*", "limit", tc.limit))
		wantStatus(t, r, tc.status)
		if r.Data.Truncated != tc.truncated {
			t.Errorf("limit %d: truncated = %v", tc.limit, r.Data.Truncated)
		}
		equal(t, fmt.Sprint("limit ", tc.limit), r.paths(), tc.want)
	}
	// A float with an integral value is an integer.
	r := run(t, tools, tool.Glob, `{"pattern":"**/f*","limit":2.0}`)
	equal(t, "limit 2.0", r.paths(), []string{"d/f4", "d/f5"})
}

func TestGlobSortRecent(t *testing.T) {
	t.Parallel()
	tools, root := setup(t, fsTree{
		"old_b": "", "old_a": "", "d/new1": "", "new2": "", "new3": "", "c_old": "",
	})
	now := time.Now()
	setMtime(t, root, "old_a", now.Add(-72*time.Hour))
	setMtime(t, root, "old_b", now.Add(-25*time.Hour))
	setMtime(t, root, "c_old", now.Add(-30*24*time.Hour))
	setMtime(t, root, "d/new1", now.Add(-1*time.Hour))
	setMtime(t, root, "new3", now.Add(-1*time.Hour))
	setMtime(t, root, "new2", now.Add(-2*time.Hour))

	r := run(t, tools, tool.Glob, `{"pattern":"**","sort":"recent"}`)
	wantStatus(t, r, "success")
	equal(t, "recent", r.paths(), []string{"d/new1", "new3", "new2", "c_old", "old_a", "old_b"})
	r = run(t, tools, tool.Glob, `{"pattern":"**"}`)
	equal(t, "path", r.paths(), []string{"c_old", "d/new1", "new2", "new3", "old_a", "old_b"})
	r = run(t, tools, tool.Glob, `{"pattern":"**","sort":"recent","limit":2}`)
	wantStatus(t, r, "partial")
	equal(t, "recent limit", r.paths(), []string{"d/new1", "new3"})
}

func TestGlobIgnoredStatsAndHints(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"src/a.go":                "",
		"node_modules/m/x.js":     "",
		"node_modules/m/y.js":     "",
		"node_modules/n/z.js":     "",
		"src/build/gen.js":        "",
		".cache/c.js":             "",
		".hidden/h.js":            "",
		".hidden2/deeper/h2.js":   "",
		"vendor/.x/v.js":          "",
		"src/__pycache__/m.pyc":   "",
		"venv/lib/site.py":        "",
		"target/debug/app":        "",
		"dist/bundle.js":          "",
		"site-packages/p/init.py": "",
	})
	r := run(t, tools, tool.Glob, `{"pattern":"**/*"}`)
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"src/a.go"})
	// node_modules, .cache, dist, site-packages, target, venv, src/build,
	// src/__pycache__: each pruned directory counts once.
	if r.Stats.Ignored != 8 {
		t.Errorf("stats.ignored = %d, want 8", r.Stats.Ignored)
	}

	r = run(t, tools, tool.Glob, `{"pattern":"**/*.js"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "No files found matching '**/*.js' in '.'\n(Scanned 14 items in Nms)\n"+
		"[Info: Directories on the default ignore list were skipped: dist/, node_modules/, site-packages/, src/__pycache__/, src/build/, …. Set include_ignored=true to search them.]\n"+
		"[Info: Ignored paths were skipped: .cache/. Set include_ignored=true to search them.]\n"+
		"[Info: Hidden paths were skipped: .hidden/, .hidden2/, vendor/.x/. Set include_hidden=true to search them.]")

	// Found or not, an answer names the directories the default list
	// alone skipped (outside a git work tree, all of them) where a match
	// could lie; a hidden one (.cache) only when the query lets its name
	// in.
	r = run(t, tools, tool.Glob, `{"pattern":"src/**/*"}`)
	equal(t, "src/**/*", r.paths(), []string{"src/a.go"})
	wantText(t, r, "Found 1 files matching 'src/**/*' in '.'\n(Scanned 13 items in Nms)\n"+
		"[Info: Directories on the default ignore list were skipped: src/__pycache__/, src/build/. Set include_ignored=true to search them.]\n\nsrc/a.go")
	r = run(t, tools, tool.Glob, `{"pattern":"**/c.js","include_hidden":true}`)
	wantText(t, r, "No files found matching '**/c.js' in '.'\n(Scanned 18 items in Nms)\n"+
		"[Info: Directories on the default ignore list were skipped: .cache/, dist/, node_modules/, site-packages/, src/__pycache__/, …. Set include_ignored=true to search them.]")

	// A pattern that cannot reach the ignored directories gives no hint.
	r = run(t, tools, tool.Glob, `{"pattern":"src/*.js"}`)
	wantText(t, r, "No files found matching 'src/*.js' in '.'\n(Scanned 13 items in Nms)")

	r = run(t, tools, tool.Glob, `{"pattern":"**/*.js","include_ignored":true,"include_hidden":true}`)
	equal(t, "all js", r.paths(), []string{".cache/c.js", ".hidden/h.js", ".hidden2/deeper/h2.js", "dist/bundle.js",
		"node_modules/m/x.js", "node_modules/m/y.js", "node_modules/n/z.js", "src/build/gen.js", "vendor/.x/v.js"})
}

// A walk visiting more than envelope.GlobMaxVisited entries stops: partial with
// aborted_reason "count_limit" when something matched, TIMEOUT otherwise.
func TestGlobCountLimit(t *testing.T) {
	t.Parallel()
	tools := newTools(t, bigRoot(t))
	const dirs = 200

	// Exactly at the limit: complete.
	r := run(t, tools, tool.Glob, `{"pattern":"**/f00","path":"big","limit":200}`)
	wantStatus(t, r, "success")
	if len(r.paths()) != dirs || r.Stats.Visited != envelope.GlobMaxVisited || r.Data.AbortedReason != "" {
		t.Fatalf("at the limit: %d paths, visited %d, aborted %q", len(r.paths()), r.Stats.Visited, r.Data.AbortedReason)
	}

	// One entry more (big/ itself, seen from the root): the breaker fires
	// on the last file of big/d199.
	r = run(t, tools, tool.Glob, `{"pattern":"**/f00","limit":200}`)
	wantStatus(t, r, "partial")
	if r.Data.AbortedReason != envelope.AbortCountLimit || r.Data.Truncated || len(r.paths()) != dirs {
		t.Fatalf("over the limit: aborted %q truncated %v, %d paths", r.Data.AbortedReason, r.Data.Truncated, len(r.paths()))
	}
	wantText(t, r, "Found 200 files matching '**/f00' in '.'\n(Scanned 20001 items in Nms)\n"+
		"[Partial: Scanned too many entries (>20000). Results are incomplete.]\n\n"+strings.Join(r.paths(), "\n"))

	// With a limit too: both notes, still partial.
	r = run(t, tools, tool.Glob, `{"pattern":"**/f0*","limit":3}`)
	wantStatus(t, r, "partial")
	equal(t, "paths", r.paths(), []string{"big/d000/f00", "big/d000/f01", "big/d000/f02"})
	if !r.Data.Truncated || r.Data.AbortedReason != envelope.AbortCountLimit {
		t.Errorf("truncated %v aborted %q", r.Data.Truncated, r.Data.AbortedReason)
	}

	// Nothing found before the breaker: a TIMEOUT error whose text says
	// why. needle/ lies beyond it.
	r = run(t, tools, tool.Glob, `{"pattern":"**/needle.txt"}`)
	wantStatus(t, r, "error")
	equal(t, "error", *r.Error, envelope.Error{Code: envelope.CodeTimeout,
		Message: "Search aborted: visited more than the entry limit before finding any match. Narrow the pattern or path."})
	wantText(t, r, "No files found matching '**/needle.txt' in '.'\n(Scanned 20001 items in Nms)\n"+
		"[Error: Search aborted: visited more than the entry limit before finding any match. Narrow the pattern or path.]")
	equal(t, "error data keys", r.DataKeys, []string{"aborted_reason", "paths", "truncated"})

	// A narrower search is not aborted.
	r = run(t, tools, tool.Glob, `{"pattern":"**/f00","path":"big/d007"}`)
	wantStatus(t, r, "success")
	equal(t, "narrow", r.paths(), []string{"big/d007/f00"})
	r = run(t, tools, tool.Glob, `{"pattern":"needle/*.txt"}`)
	wantStatus(t, r, "success")
	equal(t, "pruned", r.paths(), []string{"needle/needle.txt"})
}

// BUG (query/glob.go): with a workspace opened through a symlink, an absolute
// pattern under the name the root was given by is refused, although absolute
// paths under that name are accepted (docs/product.md, "The root is the
// boundary") and normalizeGlob's doc says dirAbs may be "real or as given":
// glob passes only the real directory (t.WS.Abs(dir)).
func TestGlobAbsolutePatternUnderSymlinkedRoot(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{"src/a.go": ""})
	link := filepath.Join(newRoot(t, nil), "link")
	mkTree(t, filepath.Dir(link), fsTree{"link": "->" + root})
	tools := newTools(t, link)
	r := run(t, tools, tool.Glob, jsonArgs("pattern", root+"/src/*.go"))
	equal(t, "under the real name", r.paths(), []string{"src/a.go"})
	r = run(t, tools, tool.Glob, jsonArgs("pattern", "*.go", "path", link+"/src"))
	equal(t, "path under the given name", r.paths(), []string{"src/a.go"})
	r = run(t, tools, tool.Glob, jsonArgs("pattern", link+"/src/*.go"))
	wantStatus(t, r, "success")
	equal(t, "pattern under the given name", r.paths(), []string{"src/a.go"})
}

// Under the command line's rules the walk's breakers are lifted, with a
// limit given too: the whole answer, not a partial one.
func TestGlobCommandLineLiftsBreakers(t *testing.T) {
	t.Parallel()
	tools := newTools(t, bigRoot(t))
	tools.Unlimited = true
	r := run(t, tools, tool.Glob, `{"pattern":"**/needle.txt","limit":5}`)
	wantStatus(t, r, "success")
	equal(t, "paths", r.paths(), []string{"needle/needle.txt"})
	if r.Data.AbortedReason != "" || r.Stats.Visited <= envelope.GlobMaxVisited {
		t.Errorf("aborted %q after %d entries", r.Data.AbortedReason, r.Stats.Visited)
	}
}

// An empty answer to a pattern that stays in one directory says how many
// files the pattern matches at any depth (fd's habit: '*.go' finds them
// everywhere); nothing is said when none match there either, or when the
// pattern already spans directories.
func TestGlobDepthHint(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"README":            "",
		"a/x.go":            "",
		"a/b/y.go":          "",
		"a/b/c/z.GO":        "",
		"node_modules/m.go": "",
	})
	r := run(t, tools, tool.Glob, `{"pattern":"*.go"}`)
	wantStatus(t, r, "success")
	wantText(t, r, "No files found matching '*.go' in '.'\n(Scanned 3 items in Nms)\n"+
		"[Info: No file directly in '.' matches '*.go' ('*' and '?' stay within one directory); '**/*.go' matches 2 files below it.]")
	r = run(t, tools, tool.Glob, `{"pattern":"*.GO","path":"a"}`)
	wantText(t, r, "No files found matching '*.GO' in 'a'\n(Scanned 2 items in Nms)\n"+
		"[Info: No file directly in 'a' matches '*.GO' ('*' and '?' stay within one directory); '**/*.GO' matches 1 file below it.]")
	for _, args := range []string{`{"pattern":"*.rs"}`, `{"pattern":"a/*.rs"}`, `{"pattern":"**/*.rs"}`, `{"pattern":"*.go","path":"a/b/c"}`} {
		r := run(t, tools, tool.Glob, args)
		if strings.Contains(r.Text, "No file directly") {
			t.Errorf("%s: %q", args, r.Text)
		}
	}
}
