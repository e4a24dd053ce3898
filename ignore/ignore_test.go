package ignore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
)

// layout creates files under root: keys are slash paths, a key ending in
// "/" is an empty directory.
func layout(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hermeticHome points HOME and XDG_CONFIG_HOME at a fresh directory and
// turns the system git configuration off, so the global excludes file is
// the test's, and returns it.
func hermeticHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home
}

// realTemp returns a fresh, symlink-free temporary directory.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// check asks the rules in force at the entry's directory (as a walker gets
// there with Dir.At) about rel and compares with want.
type verdict struct {
	rel   string
	isDir bool
	want  ignore.Result
}

func checkVerdicts(t *testing.T, root string, vs []verdict) {
	t.Helper()
	r := testtree.Open(t, root)
	rules := ignore.NewCache(r)
	for _, v := range vs {
		dir := ""
		if i := strings.LastIndexByte(v.rel, '/'); i >= 0 {
			dir = v.rel[:i]
		}
		if got := rules.At(dir).Match(v.rel, v.isDir); got != v.want {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", v.rel, v.isDir, name(got), name(v.want))
		}
	}
}

func name(r ignore.Result) string {
	return [...]string{"None", "Ignore", "Whitelist"}[r]
}

func TestIgnorePrecedence(t *testing.T) {
	home := hermeticHome(t)
	layout(t, home, map[string]string{".config/git/ignore": "*.glob\n!g-keep.excl\n"})
	root := realTemp(t)
	layout(t, root, map[string]string{
		".git/info/exclude": "*.excl\n!x-keep.git\n",
		".gitignore":        "*.git\n!i-keep.ign\n*.deep\n",
		".ignore":           "*.ign\n",
		"sub/.gitignore":    "!keep.deep\n",
		"sub/.ignore":       "!keep.ign\n",
	})
	d := ignore.Open(root)
	if !d.InRepo() {
		t.Fatal("InRepo() = false in a repository")
	}
	checkVerdicts(t, root, []verdict{
		// Each source alone.
		{"a.ign", false, ignore.Ignore},
		{"a.git", false, ignore.Ignore},
		{"a.excl", false, ignore.Ignore},
		{"a.glob", false, ignore.Ignore},
		{"a.txt", false, ignore.None},
		// .ignore wins over .gitignore (which would whitelist i-keep.ign).
		{"i-keep.ign", false, ignore.Ignore},
		// .gitignore wins over info/exclude.
		{"x-keep.git", false, ignore.Ignore},
		// info/exclude wins over the global file.
		{"g-keep.excl", false, ignore.Ignore},
		// A deeper file of the same kind wins over a shallower one.
		{"sub/keep.deep", false, ignore.Whitelist},
		{"sub/other.deep", false, ignore.Ignore},
		{"keep.deep", false, ignore.Ignore},
		{"sub/keep.ign", false, ignore.Whitelist},
		{"sub/deeper/keep.ign", false, ignore.Whitelist},
		{"keep.ign", false, ignore.Ignore},
	})
}

func TestIgnoreNestedScoping(t *testing.T) {
	hermeticHome(t)
	root := realTemp(t)
	layout(t, root, map[string]string{
		".git/":                 "",
		"sub/.gitignore":        "x\n/y\nz/\nw/*.c\n",
		"sub/deeper/.gitignore": "!x\n",
	})
	checkVerdicts(t, root, []verdict{
		{"sub/x", false, ignore.Ignore},
		{"sub/a/x", false, ignore.Ignore},
		{"x", false, ignore.None}, // sub's rules apply only under sub
		{"other/x", false, ignore.None},
		{"sub/deeper/x", false, ignore.Whitelist},
		{"sub/y", false, ignore.Ignore}, // anchored to sub
		{"sub/a/y", false, ignore.None},
		{"y", false, ignore.None},
		{"sub/z", true, ignore.Ignore},
		{"sub/z", false, ignore.None},
		{"z", true, ignore.None},
		{"sub/w/a.c", false, ignore.Ignore},
		{"w/a.c", false, ignore.None},
		{"sub/q/w/a.c", false, ignore.None},
	})
}

func TestIgnoreNestedRepo(t *testing.T) {
	home := hermeticHome(t)
	layout(t, home, map[string]string{".config/git/ignore": "*.glob\n"})
	root := realTemp(t)
	layout(t, root, map[string]string{
		".git/info/exclude":     "*.excl\n",
		".gitignore":            "*.log\n/sub/anchored\n",
		".ignore":               "*.ign\n",
		"sub/.git/info/exclude": "*.subexcl\n",
		"sub/.gitignore":        "*.tmp\n",
		"sub/in/.gitignore":     "*.inner\n",
	})
	checkVerdicts(t, root, []verdict{
		{"a.log", false, ignore.Ignore},
		{"sub/a.log", false, ignore.None}, // the parent repo's .gitignore stops at sub/.git
		{"sub/anchored", false, ignore.None},
		{"sub/a.excl", false, ignore.None}, // and so does its info/exclude
		{"sub/a.subexcl", false, ignore.Ignore},
		{"a.subexcl", false, ignore.None},
		{"sub/a.tmp", false, ignore.Ignore},
		{"sub/in/a.inner", false, ignore.Ignore},
		{"sub/a.ign", false, ignore.Ignore}, // .ignore files cross repositories
		{"sub/a.glob", false, ignore.Ignore},
	})
	// Opened at the nested repository, the outer one is invisible too.
	checkVerdicts(t, filepath.Join(root, "sub"), []verdict{
		{"a.log", false, ignore.None},
		{"a.tmp", false, ignore.Ignore},
		{"a.subexcl", false, ignore.Ignore},
		{"a.ign", false, ignore.Ignore},
	})
}

func TestIgnoreOutsideRepo(t *testing.T) {
	home := hermeticHome(t)
	layout(t, home, map[string]string{".config/git/ignore": "*.glob\n"})
	root := realTemp(t)
	layout(t, root, map[string]string{
		".gitignore":     "*.log\n",
		".ignore":        "*.ign\n",
		"sub/.gitignore": "*.tmp\n",
		"sub/.ignore":    "!keep.ign\n",
	})
	d := ignore.Open(root)
	if d.InRepo() {
		t.Fatal("InRepo() = true outside a repository")
	}
	checkVerdicts(t, root, []verdict{
		{"a.log", false, ignore.None}, // .gitignore needs a repository
		{"sub/a.tmp", false, ignore.None},
		{"a.glob", false, ignore.None}, // so do the global excludes
		{"a.ign", false, ignore.Ignore},
		{"sub/b.ign", false, ignore.Ignore},
		{"sub/keep.ign", false, ignore.Whitelist},
	})
	// A repository below the root: its rules apply inside it only.
	layout(t, root, map[string]string{"repo/.git/": "", "repo/.gitignore": "*.r\n"})
	checkVerdicts(t, root, []verdict{
		{"repo/x.r", false, ignore.Ignore},
		{"repo/x.log", false, ignore.None}, // the root's .gitignore is outside any repository
		{"repo/x.glob", false, ignore.Ignore},
		{"x.r", false, ignore.None},
	})
}

// TestIgnoreRootInsideRepo opens a workspace below a repository's top: the
// ancestors' .gitignore files apply, anchored to their own directories.
func TestIgnoreRootInsideRepo(t *testing.T) {
	hermeticHome(t)
	top := realTemp(t)
	layout(t, top, map[string]string{
		".git/info/exclude": "/ws/excl-anchored\n",
		".gitignore":        "*.log\n/ws/gen/\n/gen/\n",
		"ws/.gitignore":     "!keep.log\n",
		"ws/gen/":           "",
	})
	root := filepath.Join(top, "ws")
	d := ignore.Open(root)
	if !d.InRepo() {
		t.Fatal("InRepo() = false below a repository")
	}
	checkVerdicts(t, root, []verdict{
		{"a.log", false, ignore.Ignore},
		{"keep.log", false, ignore.Whitelist},
		{"gen", true, ignore.Ignore},
		{"sub/gen", true, ignore.None},
		{"excl-anchored", false, ignore.Ignore},
	})
}

func TestIgnoreGlobalExcludesFile(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string // under HOME
	}{
		{"default XDG path", map[string]string{".config/git/ignore": "*.glob\n"}},
		{"core.excludesFile in ~/.gitconfig", map[string]string{
			".gitconfig":  "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-excludes ; comment\n",
			"my-excludes": "*.glob\n",
		}},
		{"core.excludesFile in XDG config", map[string]string{
			".config/git/config": "[core]\n  excludesfile = \"" + "~/x-excludes\"\n",
			"x-excludes":         "*.glob\n",
		}},
		{"~/.gitconfig wins over the XDG config", map[string]string{
			".config/git/config": "[core]\nexcludesFile = ~/wrong\n",
			"wrong":              "*.other\n",
			".gitconfig":         "[core]\nexcludesFile = ~/right\n",
			"right":              "*.glob\n",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := hermeticHome(t)
			layout(t, home, c.files)
			root := realTemp(t)
			layout(t, root, map[string]string{".git/": ""})
			checkVerdicts(t, root, []verdict{
				{"a.glob", false, ignore.Ignore},
				{"sub/a.glob", false, ignore.Ignore},
				{"a.other", false, ignore.None},
			})
		})
	}
}

// TestIgnoreWhitespaceOnlyLine: a line of spaces is an empty pattern, not a
// crash (it once indexed the first byte of the trimmed line).
func TestIgnoreWhitespaceOnlyLine(t *testing.T) {
	r := ignore.Parse([]byte("   \n\t\n  \r\nfoo\n"))
	if r.Len() != 2 { // "\t" is a pattern: git trims spaces only
		t.Errorf("Len() = %d, want 2", r.Len())
	}
	if r.Match("foo", false) != ignore.Ignore {
		t.Error("foo not ignored")
	}
}

func TestIgnoreDefaultDirs(t *testing.T) {
	for _, n := range []string{".git", "node_modules", "__pycache__", "target", "build", "dist", ".venv", "site-packages"} {
		if !ignore.DefaultDirs[n] {
			t.Errorf("DefaultDirs[%q] = false", n)
		}
	}
	for _, n := range []string{"src", "Build", "node_module", ""} {
		if ignore.DefaultDirs[n] {
			t.Errorf("DefaultDirs[%q] = true", n)
		}
	}
}

func TestIsPrivate(t *testing.T) {
	dir := t.TempDir()
	ignore.SetPrivate(filepath.Join(dir, "state"), "/run-x")
	defer ignore.SetPrivate()
	for _, c := range []struct {
		root, rel string
		want      bool
	}{
		{dir, "state", true}, {dir, "stat", false}, {dir, "state/x", false}, {dir, "states", false},
		{filepath.Dir(dir), filepath.Base(dir) + "/state", true}, {"/", "run-x", true}, {"/", "run", false},
		{dir + "x", "state", false},
	} {
		if got := ignore.IsPrivate(c.root, c.rel); got != c.want {
			t.Errorf("IsPrivate(%q, %q) = %v, want %v", c.root, c.rel, got, c.want)
		}
	}
}
