package query_test

import (
	"bytes"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// Differential tests: the walk engine (query.NewDirect) must search and
// match what ripgrep does on the same trees. The helpers, and the
// semantic differences that are ours by design, are in diffhelpers_test.go.
// Fixtures hold no symlinks: rg and our Glob treat links differently on
// purpose (docs/product.md, "The root is the boundary").

// diffFixtureFiles is the main fixture, a git repository. Every rule kind of
// docs/product.md's "What is skipped" has files on both sides of it, and most
// files hold "needle" so that what is skipped shows up in Grep.
func diffFixtureFiles() map[string]string {
	needle := func(name string) string {
		return "first line of " + name + "\nneedle in " + name + "\nNEEDLE loud\nneedles and Needle\nlast\n"
	}
	files := map[string]string{
		".gitignore": "# root rules\n*.log\n!keep.log\n/out/\ntmp*/\ndocs/**/*.bak\nsecret[0-9].txt\ngen/\n*.min.js\n" +
			"logs/*\n!logs/keep/\n",
		".ignore":                   "*.orig\n!important.orig\n",
		"src/.gitignore":            "gen_*.go\n!gen_keep.go\n/local/\n",
		"src/a/.ignore":             "!*.log\n", // .ignore beats .gitignore: logs come back under src/a
		"docs/.gitignore":           "*.md\n!README.md\n",
		"vendor/lib/.gitignore":     "*.gen\n",
		"vendor/lib/.git/HEAD":      "ref: refs/heads/main\n", // a nested repository: the root's rules stop here
		"weird/.gitignore":          "[!a-m]*.dat\n**/cache-*/\n",
		"README.md":                 "# Project\nneedle at the top\n",
		"main.go":                   "package main\n\nfunc main() {\n\tprintln(\"needle\")\n}\n",
		"util_test.go":              "package main\n// needle in a test\n",
		"a.log":                     needle("a.log"),
		"keep.log":                  needle("keep.log"),
		"notes.orig":                needle("notes.orig"),
		"important.orig":            needle("important.orig"),
		"a.excl":                    needle("a.excl"),
		"a.swp":                     needle("a.swp"),
		"secret1.txt":               needle("secret1"),
		"secret12.txt":              needle("secret12"),
		"app.min.js":                needle("app.min.js"),
		"app.js":                    needle("app.js"),
		"out/result.txt":            needle("out"),
		"sub/out/result.txt":        needle("sub/out"),
		"tmp1/x.txt":                needle("tmp1"),
		"tmpfile.txt":               needle("tmpfile"),
		"gen/generated.go":          needle("gen"),
		"logs/1.txt":                needle("logs/1"),
		"logs/keep/2.txt":           needle("logs/keep"),
		"docs/README.md":            needle("docs/README"),
		"docs/guide.md":             needle("docs/guide"),
		"docs/x/y/old.bak":          needle("old.bak"),
		"docs/x/notes.txt":          needle("docs notes"),
		"src/main.go":               "package src\n\n// needle: the entry point\nfunc Handler() {}\nfunc otherHandler() {}\n",
		"src/gen_a.go":              needle("gen_a"),
		"src/gen_keep.go":           needle("gen_keep"),
		"src/local/x.go":            needle("src/local"),
		"src/pkg/local/y.go":        needle("src/pkg/local"),
		"src/a/debug.log":           needle("src/a/debug.log"),
		"src/a/b/trace.log":         needle("src/a/b/trace.log"),
		"src/a/code.go":             "package a\n\nvar needle = 1 // NEEDLE\n",
		"src/b/code.ts":             "export const needle = 1;\n",
		"src/b/code.tsx":            "export const Needle = () => null;\n",
		"src/.config.yml":           needle("hidden config"),
		"src/.hdir/inner.go":        needle("hidden dir"),
		".env":                      "NEEDLE=1\n",
		".github/workflows/ci.yml":  "name: ci\n# needle\n",
		".github/CODEOWNERS":        "needle\n",
		"vendor/lib/x.log":          needle("vendor log"), // the root's *.log stops at vendor/lib/.git
		"vendor/lib/y.gen":          needle("vendor gen"),
		"vendor/lib/z.go":           needle("vendor go"),
		"weird/a.dat":               needle("weird a"),
		"weird/z.dat":               needle("weird z"),
		"weird/cache-1/c.txt":       needle("cache"),
		"weird/odd:name.txt":        "a:b\nneedle:3:x\n",
		"weird/with space.txt":      needle("space"),
		"weird/dash-.txt":           needle("dash"),
		"sub/build":                 "a file named build is searched: needle\n",
		"dist.txt":                  needle("dist.txt"),
		"node_modules/pkg/index.js": needle("node_modules"),
		"src/node_modules/deep.js":  needle("nested node_modules"),
		"build/out.txt":             needle("build dir"),
		"dist/bundle.js":            needle("dist dir"),
		"target/debug/x.txt":        needle("target"),
		"__pycache__/m.pyc":         needle("pycache"),
		".venv/lib/site.py":         needle("venv"),
		"venv/lib/site.py":          needle("venv no dot"),
		"crlf.txt":                  "needle one\r\nline two\r\nNEEDLE end\r\nend\r\n",
		"unicode.txt": "straße needle\nΚαλημέρα NEEDLE\n\u212Aelvin\nKELVIN\nſecret\néword\n日本語 needle word\n" +
			"tab\there\n123 456 7890\nÉCOLE école\nnbsp\u00a0here\nNEEDLE by \u212AELVIN\nNEEDLE, no k\n",
		"latin1.txt":                  "caf\xe9 needle\nplain needle\n",
		"bom.txt":                     "\xEF\xBB\xBFpackage bom\nneedle\n",
		"bom16.txt":                   "\xFF\xFEn\x00e\x00e\x00d\x00l\x00e\x00\n\x00",
		"noeol.txt":                   "no newline at the end: needle",
		"Makefile":                    "all:\n\techo needle\n",
		"dir.with.dots/file.name.txt": needle("dots"),
	}
	deep := "a/b/c/d/e/f/g/h/i/j/k/l"
	files[deep+"/deep.txt"] = needle("deep")
	files[deep+"/deep.go"] = "package deep // needle\n"
	// One 100 KB line with a match in the middle, then a short one.
	long := strings.Repeat("x", 50000) + " needle " + strings.Repeat("y", 50000)
	files["long.txt"] = long + "\nneedle after the long line\n"
	// Binary files: a NUL early; right at the end of the sniffed 8 KiB;
	// just past it; far past it.
	text := "needle in binary\n"
	files["bin/early.bin"] = text + "\x00" + text
	files["bin/edge8191.dat"] = text + strings.Repeat("z", query.BinarySniffBytes-1-len(text)) + "\x00" + text
	files["bin/edge8192.dat"] = text + strings.Repeat("z", query.BinarySniffBytes-len(text)) + "\x00" + text
	files["bin/late.dat"] = text + strings.Repeat("filler line\n", 1000) + "\x00" + text
	files["bin/text.dat"] = text
	return files
}

// diffTree creates files under a fresh root (symlinks resolved) and
// returns the root.
func diffTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// diffGitInit makes root a repository (git init when git is there, else
// the bare .git directory both tools look for) with an info/exclude.
func diffGitInit(t testing.TB, root, exclude string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "init", "-q", "--template=")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	p := filepath.Join(root, ".git", "info", "exclude")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(exclude), 0o644); err != nil {
		t.Fatal(err)
	}
}

// diffFixtureGreps are the Grep queries run on the fixtures.
var diffFixtureGreps = []diffGrep{
	{Pattern: "needle"},
	{Pattern: "needle", CaseSensitive: true},
	{Pattern: "NEEDLE", CaseSensitive: true},
	{Pattern: "Needle", CaseSensitive: true},
	{Pattern: `ne+dle\s`},
	{Pattern: `^needle`},
	{Pattern: `needle$`},
	{Pattern: `end$`, CaseSensitive: true}, // CRLF: "$" does not match before "\r" in either
	{Pattern: `end\r?$`, CaseSensitive: true},
	{Pattern: `^$`}, // empty lines
	{Pattern: `(?i)NeEdLe`, CaseSensitive: true},
	{Pattern: `needles? (and|or)`},
	{Pattern: `\bword\b`}, // Go's \b is ASCII: a boundary between "é" and "w"
	{Pattern: `\w+ß`},     // Go's \w is ASCII: "ß" is not a word character
	{Pattern: `\d{3}\s\d+`},
	{Pattern: `[[:upper:]]{4,}`, CaseSensitive: true},
	{Pattern: `kelvin`}, // folds to "\u212A" (Kelvin sign) in both
	{Pattern: `secret`}, // folds to "ſ" (long s) in both
	{Pattern: `école`},
	{Pattern: `STRASSE`}, // no full case folding in either
	{Pattern: `straße`, CaseSensitive: true},
	{Pattern: `caf. needle`}, // latin1.txt: "." and an invalid byte
	{Pattern: `caf[^x] needle`},
	{Pattern: `package`},
	{Pattern: `^package`}, // bom.txt: both skip the UTF-8 BOM
	{Pattern: `needle:3:`, Fixed: true},
	{Pattern: `a.b`, Fixed: true},
	{Pattern: `x.txt`, Fixed: true},
	{Pattern: `(`, Fixed: true},
	{Pattern: `func \w+Handler\(`, CaseSensitive: true},
	{Pattern: `FUNC \w+handler\(`}, // the regexp runs on lines holding both literals
	{Pattern: `needle.*kelvin`},    // a further set with a letter folding outside ASCII
	{Pattern: `y{1000}`},
	{Pattern: "needle", Include: "*.go"},
	{Pattern: "needle", Include: "*.{ts,tsx}"},
	{Pattern: "needle", Include: "src/**/*.go"},
	{Pattern: "needle", Include: "**/*.txt"},
	{Pattern: "needle", Include: "*.log"},
	{Pattern: "needle", Include: "deep.*"},
	{Pattern: "needle", Path: "src"},
	{Pattern: "needle", Path: "src", Include: "a/**"},
	{Pattern: "needle", Path: "src/a"},
	{Pattern: "needle", Path: "out"},          // a gitignored directory named explicitly
	{Pattern: "needle", Path: "node_modules"}, // a default-ignored one
	{Pattern: "needle", Path: "vendor/lib"},
	{Pattern: "needle", Path: "docs/x"},
	{Pattern: "needle", Path: "a/b/c"},
	{Pattern: "needle", Path: ".github"}, // a hidden directory named explicitly
	{Pattern: "needle", Path: "bin"},
	{Pattern: "needle", Path: "weird", Include: "*.txt"},
}

// diffFixtureGlobs are the Glob queries run on the fixtures: pattern and
// path.
var diffFixtureGlobs = [][2]string{
	{"**/*.go", "."},
	{"**/*.txt", "."},
	{"*", "."},
	{"**", "."},
	{"**/*.{log,txt}", "."},
	{"src/**", "."},
	{"src/*/*.go", "."},
	{"**/deep.*", "."},
	{"bin/*", "."},
	{"**/[a-c]*.md", "."},
	{"**/*.[jt]s*", "."},
	{"**/?ode.*", "."},
	{"**/*.go", "src"},
	{"*", "out"},
	{"**", "node_modules"},
	{"**/*.js", "node_modules"},
	{"**/index.js", "."},
	{"**/*", "vendor/lib"},
	{"weird/*", "."},
	{"**/odd:name.txt", "."},
	{"a/**/l/*", "."},
	{"*.md", "docs"},
}

// TestDiffRgFixture compares Grep and Glob with rg on the fixture
// repository.
func TestDiffRgFixture(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	root := diffTree(t, diffFixtureFiles())
	diffGitInit(t, root, "*.excl\n")
	diffRunFixture(t, rg, root)
	// Workspaces below the repository's top: the rules of the directories
	// above the root (up to the repository) still apply, rg's as ours.
	for _, sub := range []string{"src", "src/a", "docs", "vendor/lib", "weird", "logs"} {
		subRoot := filepath.Join(root, filepath.FromSlash(sub))
		ws, err := query.NewWorkspace(subRoot)
		if err != nil {
			t.Fatal(err)
		}
		tools := query.NewDirect(ws)
		sp := diffScan(t, subRoot)
		if r := diffCompareGrep(t, rg, subRoot, tools, sp, diffGrep{Pattern: "needle"}); r.Pairs == 0 {
			t.Errorf("workspace %s: no match compared", sub)
		}
		diffCompareGlob(t, rg, subRoot, tools, "**", ".")
	}
	// Agreeing with rg must also mean doing what docs/product.md says is
	// skipped.
	diffWantListed(t, root, map[string]bool{
		"keep.log": true, "a.log": false, // .gitignore with a negation
		"src/a/debug.log": true, "src/a/b/trace.log": true, // .ignore re-includes what .gitignore ignores
		"vendor/lib/x.log": true, "vendor/lib/y.gen": false, // a nested repository has its own rules only
		"a.excl": false, "a.swp": false, "notes.orig": false, "important.orig": true,
		"out/result.txt": false, "sub/out/result.txt": true, // anchored
		"logs/1.txt": false, "logs/keep/2.txt": true,
		"docs/README.md": true, "docs/guide.md": false, "docs/x/y/old.bak": false,
		"src/gen_a.go": false, "src/gen_keep.go": true, "src/local/x.go": false, "src/pkg/local/y.go": true,
		"weird/a.dat": true, "weird/z.dat": false, "weird/cache-1/c.txt": false,
		"sub/build": true, "build/out.txt": false, "node_modules/pkg/index.js": false, "src/node_modules/deep.js": false,
		"venv/lib/site.py": false, ".env": false, "src/.hdir/inner.go": false,
	})
}

// diffWantListed checks which files a Glob of everything lists.
func diffWantListed(t *testing.T, root string, want map[string]bool) {
	t.Helper()
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	all := diffOurGlob(t, query.NewDirect(ws), "**", ".")
	for f, w := range want {
		if slices.Contains(all, f) != w {
			t.Errorf("Glob ** lists %s: %v, want %v", f, !w, w)
		}
	}
}

// TestDiffRgFixtureNoRepo: the same files outside any repository, where
// .gitignore files and the global excludes do not apply but .ignore files
// do.
func TestDiffRgFixtureNoRepo(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	files := diffFixtureFiles()
	delete(files, "vendor/lib/.git/HEAD")
	root := diffTree(t, files)
	// The fixture must really be outside a repository for this to mean
	// anything (TMPDIR could lie inside one).
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			t.Skipf("%s is inside a repository (%s)", root, d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	diffRunFixture(t, rg, root)
	diffWantListed(t, root, map[string]bool{
		"a.log": true, "out/result.txt": true, "a.swp": true, "a.excl": true, // no repository: only .ignore applies
		"notes.orig": false, "important.orig": true, "src/gen_a.go": true,
		"node_modules/pkg/index.js": false, ".env": false,
	})
}

func diffRunFixture(t *testing.T, rg, root string) {
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	sp := diffScan(t, root)
	t.Logf("fixture: %v", sp)
	var pairs, excused, left int
	for _, c := range diffFixtureGreps {
		r := diffCompareGrep(t, rg, root, tools, sp, c)
		pairs += r.Pairs
		excused += r.Excused
		left += r.Left
	}
	paths := 0
	for _, g := range diffFixtureGlobs {
		paths += diffCompareGlob(t, rg, root, tools, g[0], g[1])
	}
	// A pattern naming a hidden directory shows it (docs/product.md, "What is
	// skipped"); rg needs
	// --hidden for that. The fixture's .github holds no further hidden
	// names, so the sets must agree.
	paths += diffCompareGlob(t, rg, root, tools, ".github/**", ".", "--hidden")
	t.Logf("%d Grep queries: %d (file, line) pairs agree, %d differing pairs explained by invalid UTF-8, %d pairs in the files left out; %d Glob queries: %d paths agree",
		len(diffFixtureGreps), pairs, excused, left, len(diffFixtureGlobs)+1, paths)
	if pairs < 200 || paths < 100 {
		t.Errorf("only %d pairs and %d paths compared: the fixture lost its matches", pairs, paths)
	}
}

// TestDiffRgKnownDifferences pins down, file by file, where the walk
// engine and rg differ by design on the fixture, so that a change on
// either side shows up here and the documentation can follow.
func TestDiffRgKnownDifferences(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	root := diffTree(t, diffFixtureFiles())
	diffGitInit(t, root, "*.excl\n")
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	sp := diffScan(t, root)
	if want := []string{"bin/edge8192.dat", "bin/late.dat"}; !slices.Equal(slices.Sorted(maps.Keys(sp.LateNUL)), want) {
		t.Fatalf("late-NUL files = %q, want %q", slices.Sorted(maps.Keys(sp.LateNUL)), want)
	}
	for _, c := range []struct {
		name     string
		q        diffGrep
		ours, rg []string // pairs found by one side only
		why      string
	}{
		{
			name: "NUL past 8 KiB",
			q:    diffGrep{Pattern: "needle in binary", Path: "bin"},
			ours: []string{"bin/edge8192.dat:1", "bin/edge8192.dat:2", "bin/late.dat:1", "bin/late.dat:1002"},
			why: "ours calls a file binary only for a NUL in its first 8 KiB (docs/product.md) and then searches all of it, " +
				"past the NUL too; rg gives up on a file at the first NUL it reads (here, in its first buffer)",
		},
		{
			name: "UTF-16 with a byte order mark",
			q:    diffGrep{Pattern: "needle", Include: "bom16.txt"},
			rg:   []string{"bom16.txt:1"},
			why:  "rg decodes UTF-16 with a BOM; ours sees NUL bytes in the first 8 KiB and skips the file as binary",
		},
		{
			name: "invalid UTF-8",
			q:    diffGrep{Pattern: "caf. needle"},
			ours: []string{"latin1.txt:1"},
			why:  "Go's regexp reads the invalid byte \\xe9 as U+FFFD, which \".\" matches; rg's \".\" never matches invalid UTF-8",
		},
	} {
		ours := diffOurGrep(t, tools, c.q)
		theirs := diffRgGrep(t, rg, root, c.q)
		var onlyOurs, onlyRg []string
		for p := range ours {
			if !theirs[p] {
				onlyOurs = append(onlyOurs, p.String())
			}
		}
		for p := range theirs {
			if !ours[p] {
				onlyRg = append(onlyRg, p.String())
			}
		}
		slices.Sort(onlyOurs)
		slices.Sort(onlyRg)
		if !slices.Equal(onlyOurs, c.ours) || !slices.Equal(onlyRg, c.rg) {
			t.Errorf("%s (%v): only ours %q, only rg %q; documented: only ours %q, only rg %q (%s)",
				c.name, c.q, onlyOurs, onlyRg, c.ours, c.rg, c.why)
			continue
		}
		t.Logf("%s: only ours %q, only rg %q: %s", c.name, onlyOurs, onlyRg, c.why)
	}

	// \w, \d, \s and \b: Go's are ASCII, rg's Unicode. Given verbatim, rg
	// sees no word boundary inside "éword" (line 6); rewritten to ASCII
	// forms (diffASCII), it agrees with us. The main comparisons always
	// rewrite.
	q := diffGrep{Pattern: `\bword\b`, Include: "unicode.txt"}
	verbatim := q
	verbatim.RgPattern = q.Pattern
	ours, asIs, rewritten := diffOurGrep(t, tools, q), diffRgGrep(t, rg, root, verbatim), diffRgGrep(t, rg, root, q)
	eword := diffPair{"unicode.txt", 6}
	if !ours[eword] || asIs[eword] || !rewritten[eword] {
		t.Errorf(`\bword\b on "éword": found by ours %v, by rg given \b %v, by rg given (?-u:\b) %v; want true, false, true`,
			ours[eword], asIs[eword], rewritten[eword])
	}
	q = diffGrep{Pattern: `stra\we`, Include: "unicode.txt"}
	verbatim = q
	verbatim.RgPattern = q.Pattern
	if straße := (diffPair{"unicode.txt", 1}); diffOurGrep(t, tools, q)[straße] || !diffRgGrep(t, rg, root, verbatim)[straße] {
		t.Errorf(`stra\we on "straße": Go's \w is ASCII, so only rg (Unicode \w, given verbatim) should match`)
	}

	// rg's --glob overrides ignore rules and hiddenness; our include
	// filters only what they let through. So include is not passed to rg
	// as --glob (diffhelpers_test.go).
	withGlob := diffRgCmd(t, rg, root, append(diffRgBase(), "--files", "--glob", "*.log", "--", "."))
	if !bytes.Contains(withGlob, []byte("a.log\x00")) {
		t.Errorf("rg --glob '*.log' no longer lists the gitignored a.log: %q", withGlob)
	}
	for _, p := range diffOurGlob(t, tools, "**/*.log", ".") {
		if p == "a.log" {
			t.Error("our Glob lists the gitignored a.log")
		}
	}
}

// TestDiffRgIgnoreRuleDifferences: ignore-file lines where rg 13 departs
// from git. The ignore package follows git (checked against git in
// ignore/diff_git_test.go), so these are differences from rg by design.
func TestDiffRgIgnoreRuleDifferences(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	for _, c := range []struct {
		rule   string
		files  []string
		onlyRg []string // listed by rg, ignored by git and us
		ours   []string // listed by us (and git), ignored by rg
		why    string
	}{
		{
			rule: "[[:upper:]]*", files: []string{"Makefile", "abc", "u]"},
			onlyRg: []string{"Makefile"}, ours: []string{"u]"},
			why: "rg's globset has no POSIX classes (BurntSushi/ripgrep#2962): it reads [[:upper:] as a class and ] as a literal",
		},
		{
			rule: "[c-a]x", files: []string{"cx", "bx"},
			onlyRg: []string{"cx"},
			why:    "rg rejects the reversed range and drops the line; git's wildmatch still matches its first byte",
		},
		{
			rule: `foo\\ `, files: []string{`foo\`, "foo"},
			onlyRg: []string{`foo\`},
			why:    `git reads "\\" as an escaped backslash, so the space after it is trailing and trimmed; rg keeps it`,
		},
	} {
		files := map[string]string{".gitignore": c.rule + "\n", ".git/HEAD": "ref: refs/heads/main\n"}
		for _, f := range c.files {
			files[f] = "x"
		}
		root := diffTree(t, files)
		ws, err := query.NewWorkspace(root)
		if err != nil {
			t.Fatal(err)
		}
		ours := diffOurGlob(t, query.NewDirect(ws), "**", ".")
		slices.Sort(ours)
		onlyOurs, onlyRg := diffSetDiff(ours, diffRgFiles(t, rg, root, "."))
		if !slices.Equal(onlyRg, c.onlyRg) || !slices.Equal(onlyOurs, c.ours) {
			t.Errorf("rule %q: only ours %q, only rg %q; documented: only ours %q, only rg %q (%s)",
				c.rule, onlyOurs, onlyRg, c.ours, c.onlyRg, c.why)
			continue
		}
		t.Logf("rule %q: only ours %q, only rg %q: %s", c.rule, onlyOurs, onlyRg, c.why)
	}
}

// TestDiffRgEmptyFile: a file of zero bytes has no lines, so a pattern
// matching the empty string finds nothing in it (rg), but our Grep reports
// line 1.
func TestDiffRgEmptyFile(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	root := diffTree(t, map[string]string{"empty.txt": "", "blank.txt": "\n", "text.txt": "a\n\nb"})
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	sp := diffScan(t, root)
	for _, p := range []string{`^$`, `^`, `x*`, `$`} {
		diffCompareGrep(t, rg, root, tools, sp, diffGrep{Pattern: p})
	}
}

// ---- GOROOT ----

// diffGoroot returns $(go env GOROOT)/src, skipping when it is missing.
func diffGoroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	src, err := filepath.EvalSymlinks(filepath.Join(strings.TrimSpace(string(out)), "src"))
	if err != nil {
		t.Skipf("GOROOT/src: %v", err)
	}
	return src
}

// diffGorootGreps run on $(go env GOROOT)/src; each stays under 1000
// matches so our answer is complete.
//
// Under -race a case-insensitive search of the whole tree costs about
// 10 s (the buffer is lowercased byte by byte, instrumented), so only one
// such query ("deadbeef") covers the whole tree; the others are narrowed
// to a directory.
var diffGorootGreps = []diffGrep{
	// Rare literals.
	{Pattern: "deadbeef"},
	{Pattern: "DEADBEEF", CaseSensitive: true},
	{Pattern: "xyzzy", Path: "cmd/go"},
	{Pattern: "Gopher", CaseSensitive: true, Path: "net/http"},
	{Pattern: "runtime.KeepAlive", Fixed: true, Path: "os"},
	{Pattern: "hello, world", Fixed: true, CaseSensitive: true},
	{Pattern: "Copyright 2009 The Go Authors", Fixed: true, Path: "strings"},
	// Regexps.
	{Pattern: `func main\(`, Include: "*.go", Path: "cmd/go"},
	{Pattern: `func \w+Handler\(`, CaseSensitive: true},
	{Pattern: `func \w+handler\(`, Path: "net/http"},
	{Pattern: `(?i)deadbeef`, CaseSensitive: true, Path: "runtime"},
	{Pattern: `^package main$`, CaseSensitive: true, Path: "cmd/go"},
	{Pattern: `TODO|FIXME`, Path: "net/http"},
	{Pattern: `\bsync\.Mutex\b`, Path: "net"},
	{Pattern: `[A-Z][a-z]+Error\b`, CaseSensitive: true, Path: "encoding/json/v2"},
	{Pattern: `0x[0-9a-f]{16}\b`, CaseSensitive: true, Path: "crypto/internal/fips140/sha512"},
	{Pattern: `^\s*//go:linkname\s+\w+\s+runtime\.`, CaseSensitive: true, Path: "syscall"},
	{Pattern: `\d{4}-\d{2}-\d{2}`, Path: "time"},
	{Pattern: `errors\.New\("[^"]*EOF`, CaseSensitive: true},
	{Pattern: `func \(\w+ \*\w+\) ServeHTTP`, CaseSensitive: true},
	{Pattern: `^import "C"$`, CaseSensitive: true, Path: "runtime"},
	{Pattern: `panic\("unreachable"\)`, CaseSensitive: true},
	{Pattern: `\s+$`, Include: "*.go", Path: "internal/types/testdata"}, // trailing white space
	{Pattern: `ß|ü|é`, Path: "unicode"},
	{Pattern: `[^\x00-\x7F]{3,}`, Include: "*.go", Path: "strings"},
	// Non-ASCII, case-insensitive. Narrowed to one directory: over the
	// whole tree our Grep needs about 15 s here (a case-folded non-ASCII
	// literal gets no prefilter, so the regexp runs over every byte), rg
	// 0.15 s.
	{Pattern: `é`, Path: "mime"},
	{Pattern: `\p{Greek}+`, Path: "unicode"},
	{Pattern: `kelvin`, Path: "unicode"},
	// With include.
	{Pattern: "deadbeef", Include: "*_test.go"},
	{Pattern: "TEXT", Include: "*.s", Path: "math"},
	{Pattern: "license", Include: "*.{md,txt}", Path: "cmd/vendor"},
	{Pattern: `"testing"`, Include: "**/*_test.go", Path: "encoding"},
	{Pattern: "goos", Include: "*.json", Path: "cmd"},
	{Pattern: "Copyright", Include: "README*"},
	// Paths into directories the walk skips by default (cmd/dist is a
	// default-ignored name; a hidden testdata directory).
	{Pattern: "func main", Path: "cmd/dist"},
	{Pattern: "e", Path: "embed/internal/embedtest/testdata/.hidden"},
	{Pattern: "package", Path: "go/build", Include: "*.go"},
	// Lines with an invalid byte (0xff): "." matches it in Go only; the
	// comparison logs these pairs as the documented difference.
	{Pattern: `httpguts.v0\.43`, Path: "cmd/go/testdata/script"},
	{Pattern: `httpguts@.v0`, Path: "cmd/go/testdata/script"},
}

// diffGorootGlobs run on $(go env GOROOT)/src: pattern and path.
var diffGorootGlobs = [][2]string{
	{"**/testdata/**/*.json", "."},
	{"**/testdata/**/*.json", "crypto"},
	{"net/http/*.go", "."},
	{"**/*_test.go", "strings"},
	{"**/*.{s,S}", "math"},
	{"*/*.go", "crypto/internal"},
	{"**/[a-c]*.go", "go/types"},
	{"**/README*", "cmd"},
	{"**/testdata/*.golden", "go"},
	{"**/*", "embed"},
	{"**/*.go", "cmd/dist"},
}

// TestDiffRgGoroot compares Grep and Glob with rg on the Go source tree.
func TestDiffRgGoroot(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	if testing.Short() {
		t.Skip("the GOROOT comparison is skipped in -short mode")
	}
	if testtree.RaceEnabled {
		t.Skip("a comparison over GOROOT/src: CI runs it without -race (.ci/run), where it checks answers, not races")
	}
	root := diffGoroot(t)
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	start := time.Now()
	sp := diffScan(t, root)
	t.Logf("GOROOT/src: %v (scanned in %v)", sp, time.Since(start).Round(time.Millisecond))
	var pairs, excused, left int
	for _, c := range diffGorootGreps {
		t0 := time.Now()
		r := diffCompareGrep(t, rg, root, tools, sp, c)
		if testing.Verbose() {
			t.Logf("%v: %d pairs (%v)", c, r.Pairs, time.Since(t0).Round(time.Millisecond))
		}
		if r.Pairs+r.Excused == 0 {
			t.Errorf("%v: no match on either side; the comparison proves nothing", c)
		}
		pairs += r.Pairs
		excused += r.Excused
		left += r.Left
	}
	paths := 0
	for _, g := range diffGorootGlobs {
		n := diffCompareGlob(t, rg, root, tools, g[0], g[1])
		if n == 0 {
			t.Errorf("Glob %q in %q: no match on either side", g[0], g[1])
		}
		paths += n
	}
	t.Logf("GOROOT/src: %d Grep queries, %d (file, line) pairs agree, %d differing pairs explained by invalid UTF-8, %d pairs in the files left out; %d Glob queries, %d paths agree; %v",
		len(diffGorootGreps), pairs, excused, left, len(diffGorootGlobs), paths, time.Since(start).Round(time.Millisecond))
}

// TestDiffRgTrackedDefaultDirs: in a git work tree a directory of the default
// list is searched where git tracks files in it (docs/product.md, "What is
// skipped"), Go's go/build first of all. rg has no such list: it is given as
// excluded exactly the directories of the list in which `git ls-files` lists
// nothing, anchored, and must then agree with the walk.
func TestDiffRgTrackedDefaultDirs(t *testing.T) {
	rg := diffRg(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	root := diffTree(t, map[string]string{
		".gitignore":                   "/app/dist/\n",
		"go/build/build.go":            "package build\n\nfunc Import(path string, mode int) {}\n",
		"go/build/doc.go":              "// Package build: needle\npackage build\n",
		"go/build/testdata/build/x.go": "package x // needle in a tracked build/ under a tracked build/\n",
		"build/gen/build.go":           "package gen\n\nfunc Import(path string) {} // untracked output: needle\n",
		"cmd/dist/main.go":             "package main // needle in cmd/dist\n",
		"web/node_modules/left/i.js":   "module.exports = 'needle tracked'\n",
		"web/node_modules/right/i.js":  "module.exports = 'needle untracked in a tracked node_modules'\n",
		"app/dist/bundle.js":           "needle ignored by .gitignore\n",
		"app/src/app.js":               "needle app\n",
		"target/debug/out.txt":         "needle target\n",
		"lib/build":                    "a file named build: needle\n",
	})
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q", "--template=")
	git("add", ".gitignore", "go", "cmd", "web/node_modules/left", "app/src", "lib")
	// The default list's directories in which git tracks nothing, by git.
	var untracked []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == root {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if ignore.DefaultDirs[d.Name()] && git("ls-files", "-z", "--", rel) == "" {
			untracked = append(untracked, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(untracked)
	if want := []string{"app/dist", "build", "target"}; !slices.Equal(untracked, want) {
		t.Fatalf("untracked default-list directories %q, want %q", untracked, want)
	}
	diffRgDefaults = untracked
	t.Cleanup(func() { diffRgDefaults = nil })

	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	// The query: grep -l 'func Import\(' finds go/build/build.go,
	// not the untracked build/'s.
	env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": `func Import\(`, "output_mode": "files_with_matches"})
	if d := env.Data.(*envelope.GrepData); !slices.Equal(d.Files, []string{"go/build/build.go"}) {
		t.Fatalf("grep -l 'func Import\\(': %q, want go/build/build.go\n%s", d.Files, env.Text)
	}
	if !strings.Contains(env.Text, "[Info: Directories on the default ignore list were skipped: build/, target/. Set include_ignored=true to search them.]") {
		t.Errorf("the answer does not name the untracked build/ and target/:\n%s", env.Text)
	}
	sp := diffScan(t, root)
	pairs := 0
	for _, c := range []diffGrep{
		{Pattern: "needle"}, {Pattern: `func Import\(`}, {Pattern: "needle", Path: "go"},
		{Pattern: "needle", Path: "web"}, {Pattern: "needle", Path: "build"}, {Pattern: "needle", Include: "*.js"},
	} {
		r := diffCompareGrep(t, rg, root, tools, sp, c)
		if r.Pairs == 0 {
			t.Errorf("%v: no match compared", c)
		}
		pairs += r.Pairs
	}
	for _, g := range [][2]string{{"**", "."}, {"**/*.go", "."}, {"**/build/**", "."}, {"**", "web"}, {"*", "go/build"}} {
		if diffCompareGlob(t, rg, root, tools, g[0], g[1]) == 0 {
			t.Errorf("Glob %q in %q: no path compared", g[0], g[1])
		}
	}
	diffWantListed(t, root, map[string]bool{
		"go/build/build.go": true, "go/build/testdata/build/x.go": true, "cmd/dist/main.go": true,
		"web/node_modules/left/i.js": true, "web/node_modules/right/i.js": true, "lib/build": true,
		"build/gen/build.go": false, "target/debug/out.txt": false, "app/dist/bundle.js": false,
	})
	t.Logf("%d (file, line) pairs agree", pairs)
}

func TestDiffASCII(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`needle`:          `needle`,
		`\w+`:             `[0-9A-Za-z_]+`,
		`\W\D\S`:          `[^0-9A-Za-z_][^0-9][^\t\n\f\r ]`,
		`[\w.-]`:          `[0-9A-Za-z_.-]`,
		`[^\d\s]`:         `[^0-9\t\n\f\r ]`,
		`\bx\B`:           `(?-u:\b)x(?-u:\B)`,
		`\\w`:             `\\w`,
		`[\]\d]`:          `[\]0-9]`,
		`[]\w]`:           `[]0-9A-Za-z_]`,
		`[[:alpha:]\d]\w`: `[[:alpha:]0-9][0-9A-Za-z_]`,
		`\p{Greek}\x41`:   `\p{Greek}\x41`,
		`a[b]\s`:          `a[b][\t\n\f\r ]`,
	} {
		if got := diffASCII(t, in); got != want {
			t.Errorf("diffASCII(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---- randomized ignore rules ----

// Name pools for TestDiffRgRandomTrees: small, so rules and files collide
// often, with hidden and default-ignored names among them. The globs are
// the realistic ones; where rg itself departs from git (POSIX classes, a
// reversed range, an escaped backslash before trailing spaces: see
// TestDiffRgKnownDifferences) the ignore package follows git and is tested
// against it.
var (
	rndFiles = []string{"a", "b.txt", "c.log", "x.go", "README.md", ".hidden", ".env", "Makefile", "d1.c", "keep.log"}
	rndDirs  = []string{"d", "e", "sub", "lib", "x", ".hd", "node_modules", "build", "logs", "src"}
	rndGlobs = []string{"*", "*.txt", "*.log", "*.go", "a*", "*b", "?", "?.txt", "[ab]*", "[!a-c]*", "*.[ch]",
		"**", ".*", "d?"}
)

func rndRule(r *rand.Rand) string {
	atom := func() string {
		switch r.IntN(3) {
		case 0:
			return rndGlobs[r.IntN(len(rndGlobs))]
		case 1:
			return rndDirs[r.IntN(len(rndDirs))]
		}
		return rndFiles[r.IntN(len(rndFiles))]
	}
	dir := func() string { return rndDirs[r.IntN(len(rndDirs))] }
	var s string
	switch r.IntN(11) {
	case 0, 1, 2, 3:
		s = atom()
	case 4:
		s = "/" + atom()
	case 5:
		s = atom() + "/"
	case 6:
		s = dir() + "/" + atom()
	case 7:
		s = "**/" + atom()
	case 8:
		s = dir() + "/**"
	case 9:
		s = dir() + "/**/" + atom()
	case 10:
		s = "# " + atom()
	}
	if r.IntN(10) < 3 {
		s = "!" + s
	}
	return s
}

func rndRules(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(4) {
		b.WriteString(rndRule(r) + "\n")
	}
	return b.String()
}

func rndTree(r *rand.Rand, files map[string]string, dir string, depth int) {
	p := func(name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	if r.IntN(10) < 3 || dir == "" {
		files[p(".gitignore")] = rndRules(r)
	}
	if r.IntN(10) < 2 {
		files[p(".ignore")] = rndRules(r)
	}
	if dir != "" && r.IntN(20) == 0 {
		files[p(".git/HEAD")] = "ref: refs/heads/main\n" // a nested repository
	}
	for range 2 + r.IntN(5) {
		files[p(rndFiles[r.IntN(len(rndFiles))])] = "needle\n"
	}
	if depth < 3 {
		for range r.IntN(4) {
			if sub := p(rndDirs[r.IntN(len(rndDirs))]); files[sub] == "" {
				rndTree(r, files, sub, depth+1)
			}
		}
	}
	// A name drawn as a file and later as a directory: keep the directory.
	for f := range files {
		for d := filepath.Dir(f); d != "."; d = filepath.Dir(d) {
			delete(files, filepath.ToSlash(d))
		}
	}
}

// TestDiffRgRandomTrees compares what Glob "**" lists with `rg --files`
// on random trees with random .gitignore and .ignore files at random
// levels (and sometimes a nested repository), with a fixed seed. A
// failure names the iteration and prints its ignore files.
func TestDiffRgRandomTrees(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	iterations := 120
	if testing.Short() {
		iterations = 30
	}
	base := diffTree(t, nil)
	r := rand.New(rand.NewPCG(7, 11))
	start := time.Now()
	failures, compared, total := 0, 0, 0
	for i := range iterations {
		files := map[string]string{}
		rndTree(r, files, "", 0)
		root := filepath.Join(base, strconv.Itoa(i))
		for rel, content := range files {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if r.IntN(5) > 0 {
			if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if r.IntN(2) == 0 {
				exclude := rndRules(r)
				files[".git/info/exclude"] = exclude
				if err := os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(exclude), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		total += len(files)
		ws, err := query.NewWorkspace(root)
		if err != nil {
			t.Fatal(err)
		}
		ours := diffOurGlob(t, query.NewDirect(ws), "**", ".")
		slices.Sort(ours)
		theirs := diffRgFiles(t, rg, root, ".")
		compared += len(ours)
		onlyOurs, onlyRg := diffSetDiff(ours, theirs)
		if len(onlyOurs)+len(onlyRg) == 0 {
			continue
		}
		var rules []string
		for f, c := range files {
			if b := path.Base(f); b == ".gitignore" || b == ".ignore" || b == "exclude" {
				rules = append(rules, f+":\n"+c)
			}
		}
		slices.Sort(rules)
		t.Errorf("iteration %d: Glob ** differs from rg --files\nonly ours: %s\nonly rg:   %s\nignore files:\n%s",
			i, diffFirst20(onlyOurs), diffFirst20(onlyRg), strings.Join(rules, "\n"))
		if failures++; failures == 3 {
			t.Fatal("stopping after 3 differing trees")
		}
	}
	t.Logf("%d random trees of %d files in all, %d listed by both in %v", iterations, total, compared, time.Since(start).Round(time.Millisecond))
	if compared < total/10 {
		t.Errorf("only %d of %d files listed: the random rules hide too much to compare", compared, total)
	}
}
