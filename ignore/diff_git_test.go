package ignore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tree"
)

// Differential tests: the files a walk keeps under ignore.Open's rules
// must be exactly the untracked, not ignored files git reports
// (`git ls-files --others --exclude-standard`) on the same tree, with
// nothing committed, hidden files included (hiddenness is not git's
// business) and no name from ignore.DefaultDirs in the fixtures except
// .git itself, which git skips too.
//
// Known, deliberate agreement rather than difference: git cannot
// re-include a file whose parent directory is excluded, and the walker
// never enters an excluded directory, so neither lists such a file.

func requireGitBin(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH")
	}
}

// gitRun runs git in dir with a hermetic environment: no system config,
// HOME and XDG_CONFIG_HOME as the test set them (so the global excludes
// file is the test's).
func gitRun(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

// gitInit makes dir a repository without template files, and writes its
// info/exclude.
func gitInit(t *testing.T, dir, exclude string) {
	t.Helper()
	gitRun(t, dir, "init", "-q", "--template=")
	layout(t, dir, map[string]string{".git/info/exclude": exclude})
}

// clearWorkTree removes everything in the repository at dir but .git,
// so one repository serves many trees (git init costs tens of
// milliseconds; nothing is ever added to the index).
func clearWorkTree(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(dir, de.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// gitUntracked lists the untracked, not ignored files of the repository at
// dir, relative to it; nested repositories show as "name/" and are left
// out.
func gitUntracked(t *testing.T, dir string) []string {
	t.Helper()
	out := gitRun(t, dir, "ls-files", "--others", "--exclude-standard", "-z")
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" && !strings.HasSuffix(f, "/") {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files
}

// walkKept lists the regular files a walk of root keeps, hidden included.
func walkKept(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	_, err := tree.Walk(context.Background(), root, "", ignore.Open(root), tree.Options{IncludeHidden: true, Workers: 2},
		func(e tree.Entry) error {
			if e.Type.IsRegular() {
				files = append(files, e.Rel)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// setDiff returns the elements of a not in b and of b not in a (both
// sorted).
func setDiff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return
}

func first20(s []string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%q … (%d more)", s[:20], len(s)-20)
	}
	return fmt.Sprintf("%q", s)
}

// compareWithGit reports whether the walk and git agree on root; on a
// difference it logs both sides' extra files (first 20) with the given
// context.
func compareWithGit(t *testing.T, root, what string) (kept int, same bool) {
	t.Helper()
	ours, git := walkKept(t, root), gitUntracked(t, root)
	onlyOurs, onlyGit := setDiff(ours, git)
	if len(onlyOurs)+len(onlyGit) == 0 {
		return len(ours), true
	}
	t.Errorf("%s: walk and git disagree (%d files kept by the walk, %d by git)\nonly the walk keeps: %s\nonly git keeps:      %s",
		what, len(ours), len(git), first20(onlyOurs), first20(onlyGit))
	return len(ours), false
}

// fixtureFiles are the files of TestDiffGitFixture; every one is listed by
// one side or the other, so each rule is exercised in both directions.
var fixtureFiles = []string{
	"a.log", "important.log", "a.txt", "root-only.txt", "sub/root-only.txt",
	"tmp/x.txt", "a/tmp/y.txt", "lib/tmp", "tmpfile",
	"docs/a.bak", "docs/x/y/b.bak", "docs/x/c.txt", "docs/README.md", "docs/guide.md", "docs/x/notes.md", "docs/x/README.md",
	"cache-1/f", "lib/cache-2/f", "cache-3", "lib/cachex/f",
	"secret1.txt", "secret12.txt", "secretx.txt", "lib/secret9.txt",
	"n.gen", "a.gen", "lib/z.gen", "M.gen",
	"a/z.txt", "a/b/z.txt", "a/b/c/z.txt", "x/a/z.txt",
	"logs/1.txt", "logs/keep/2.txt", "logs/keep/deeper/3.txt", "logs/other/4.txt",
	"out/x.txt", "out/y.txt", "out/sub/x.txt",
	"trailing-space.txt", "escaped space.txt ", "escaped space.txt",
	"#hash.txt", "!bang.txt", "bang.txt",
	"src/main.go", "src/gen_a.go", "src/gen_keep.go", "src/pkg/gen_b.go", "src/pkg/gen_keep.go",
	"src/local/x.go", "src/pkg/local/y.go", "src/a.o", "src/main.o", "src/pkg/b.o", "src/pkg/main.o",
	"src/deep/a.log", "src/deep/x", "src/deep/more/x", "src/deep/more/b.log",
	"src/.hidden", "src/.hdir/f.go", ".env", ".config/app.yml",
	"a.excl", "keep.excl", "sub/b.excl",
	"a.swp", "sub/.b.swp",
	"Makefile", "README", "sub/deeper/still/deeper/file.txt",
	"weird[1].txt", "weird1.txt", "star*name", "q?mark",
	"class/a1", "class/b2", "class/Z3",
}

const fixtureRootIgnore = `# a comment, then realistic rules
*.log
!important.log
/root-only.txt
tmp/
docs/**/*.bak
**/cache-*/
secret[0-9].txt
[!a-m]*.gen
a/**/z.txt
logs/*
!logs/keep/
out/**
!out/x.txt
trailing-space.txt   
escaped\ space.txt\ 
\#hash.txt
\!bang.txt
weird\[1\].txt
star\*name
class/[[:lower:]][[:digit:]]
`

func TestDiffGitFixture(t *testing.T) {
	requireGitBin(t)
	home := hermeticHome(t)
	layout(t, home, map[string]string{
		".gitconfig":      "[core]\n\texcludesFile = ~/global-excludes\n",
		"global-excludes": "*.swp\n",
	})
	root := realTemp(t)
	gitInit(t, root, "*.excl\n!keep.excl\n")
	files := map[string]string{
		".gitignore":            fixtureRootIgnore,
		"src/.gitignore":        "gen_*.go\n!gen_keep.go\n/local/\n*.o\n!main.o\n",
		"src/deep/.gitignore":   "!*.log\n/x\n",
		"docs/.gitignore":       "*.md\n!README.md\n",
		"docs/x/.gitignore":     "!notes.md\n",
		"sub/deeper/.gitignore": "# only a comment\n",
	}
	for _, f := range fixtureFiles {
		files[f] = "content of " + f + "\n"
	}
	layout(t, root, files)
	kept, _ := compareWithGit(t, root, "fixture")
	// The rules must matter: the walk leaves out a good share of the
	// files and keeps the rest.
	if kept < 30 || kept > len(files)-20 {
		t.Errorf("walk kept %d of %d files; the fixture no longer exercises the rules", kept, len(files))
	}
	t.Logf("fixture: %d files, %d kept by both", len(files), kept)
}

// TestDiffGitNestedRepo: a repository inside another is its own world
// (git lists it as one "sub/" entry and looks inside only from within).
// The outer repository's .gitignore and info/exclude do not apply in it;
// its own do.
func TestDiffGitNestedRepo(t *testing.T) {
	requireGitBin(t)
	home := hermeticHome(t)
	layout(t, home, map[string]string{".config/git/ignore": "*.glob\n"})
	root := realTemp(t)
	gitInit(t, root, "*.excl\n")
	sub := filepath.Join(root, "sub")
	layout(t, root, map[string]string{
		".gitignore": "*.log\n/sub/anchored.txt\nsub/*.md\n",
		"a.log":      "", "a.excl": "", "a.glob": "", "a.txt": "", "a.tmp": "",
		"sub/.gitignore": "*.tmp\n!keep.glob\n",
		"sub/a.log":      "", "sub/a.excl": "", "sub/a.glob": "", "sub/keep.glob": "", "sub/a.tmp": "",
		"sub/anchored.txt": "", "sub/x.md": "", "sub/in/a.sub-excl": "", "sub/in/b.txt": "",
	})
	gitInit(t, sub, "*.sub-excl\n")

	ours := walkKept(t, root)
	var outer, inner []string
	for _, f := range ours {
		if rest, ok := strings.CutPrefix(f, "sub/"); ok {
			inner = append(inner, rest)
		} else {
			outer = append(outer, f)
		}
	}
	for _, c := range []struct {
		what      string
		ours, git []string
	}{
		{"outer repository", outer, gitUntracked(t, root)},
		{"nested repository", inner, gitUntracked(t, sub)},
	} {
		onlyOurs, onlyGit := setDiff(c.ours, c.git)
		if len(onlyOurs)+len(onlyGit) > 0 {
			t.Errorf("%s: only the walk keeps %s; only git keeps %s", c.what, first20(onlyOurs), first20(onlyGit))
		}
	}
	if !slices.Contains(inner, "a.log") || !slices.Contains(inner, "anchored.txt") {
		t.Errorf("nested repository: the outer .gitignore leaked in: kept %q", inner)
	}
}

// ---- randomized ----

// The grammar draws names from small pools so rules and files collide
// often. No name is in ignore.DefaultDirs.
var (
	randFileNames = []string{"a", "b", "ab", "a.txt", "b.txt", "c.log", "x.go", "y_test.go", "README.md",
		"Makefile", ".hidden", ".env", "#h", "!b", "a b", "A.TXT", "d1.c", "z", "x.tmp", "k[1]", "out",
		"[", "]", "-", `x\`, "é", "éa", "trail ", "x"}
	randDirNames = []string{"d", "e", "sub", "lib", "a", "x", "deep", ".hd", "logs", "out", "src", "b c", "é"}
	randGlobs    = []string{"*", "*.txt", "*.log", "*.go", "*_test.go", "a*", "*b", "?", "??", "?.txt", "[ab]*",
		"[!a-c]*", "[^x]*", "[[:upper:]]*", "*[0-9]*", ".*", "*.[ch]", "[a-z].*", "d?", "**", "***",
		`\#h`, `\!b`, `a\ b`, `k\[1\]`, "k[[]1]", "[", `x\`, `x\\`, "é?", "[é]*", "?a", `trail\ `,
		"trail ", `[a\-c]*`, "[]]", "[!]]*", "[c-ab]*", "[-]", "[[:bogus:]]*", "[[:a]", "***/x", "*/***",
		"**x", "x**"}
)

// randRule returns one line of an ignore file.
func randRule(r *rand.Rand) string {
	switch r.IntN(20) {
	case 0:
		return "# comment"
	case 1:
		return ""
	}
	atom := func() string {
		switch r.IntN(3) {
		case 0:
			return randGlobs[r.IntN(len(randGlobs))]
		case 1:
			return randDirNames[r.IntN(len(randDirNames))]
		}
		return randFileNames[r.IntN(len(randFileNames))]
	}
	dir := func() string { return randDirNames[r.IntN(len(randDirNames))] }
	var s string
	switch r.IntN(12) {
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
		s = "/" + dir() + "/" + atom() + "/"
	case 11:
		s = dir() + "/*/" + atom()
	}
	if r.IntN(10) < 3 {
		s = "!" + s
	}
	if r.IntN(10) == 0 {
		s += "  "
	}
	return s
}

func randRules(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(6) {
		b.WriteString(randRule(r))
		b.WriteString("\n")
	}
	return b.String()
}

// randTree fills files (and ignore files) for a random tree under dir
// (slash path, "" for the root).
func randTree(r *rand.Rand, files map[string]string, dir string, depth int) {
	p := func(name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	if dir == "" || r.IntN(10) < 3 {
		files[p(".gitignore")] = randRules(r)
	}
	for range 1 + r.IntN(4) {
		files[p(randFileNames[r.IntN(len(randFileNames))])] = "x"
	}
	if depth < 3 {
		for range r.IntN(4) {
			sub := p(randDirNames[r.IntN(len(randDirNames))])
			if _, isFile := files[sub]; !isFile {
				randTree(r, files, sub, depth+1)
			}
		}
	}
	// A name may have been used as a file and later as a directory
	// above; drop the file.
	for f := range files {
		for d := filepath.Dir(f); d != "."; d = filepath.Dir(d) {
			delete(files, filepath.ToSlash(d))
		}
	}
}

func TestDiffGitRandom(t *testing.T) {
	requireGitBin(t)
	iterations := 200
	if testing.Short() {
		iterations = 40
	}
	if testtree.RaceEnabled {
		iterations = 60 // CI runs the 200 without -race
	}
	home := hermeticHome(t)
	root := realTemp(t)
	gitInit(t, root, "")
	r := rand.New(rand.NewPCG(20240601, 1))
	start := time.Now()
	failures, files, kept := 0, 0, 0
	for i := range iterations {
		clearWorkTree(t, root)
		exclude := ""
		if r.IntN(2) == 0 {
			exclude = randRules(r)
		}
		os.RemoveAll(filepath.Join(home, ".config"))
		os.Remove(filepath.Join(home, ".gitconfig"))
		global := ""
		switch r.IntN(4) {
		case 0:
			global = randRules(r)
			layout(t, home, map[string]string{".config/git/ignore": global})
		case 1:
			global = randRules(r)
			layout(t, home, map[string]string{".gitconfig": "[core]\nexcludesFile = ~/excl\n", "excl": global})
		}
		layout(t, root, map[string]string{".git/info/exclude": exclude})
		fs := map[string]string{}
		randTree(r, fs, "", 0)
		layout(t, root, fs)
		files += len(fs)
		n, same := compareWithGit(t, root, fmt.Sprintf("iteration %d", i))
		kept += n
		if !same {
			var rules []string
			for f, c := range fs {
				if filepath.Base(f) == ".gitignore" {
					rules = append(rules, fmt.Sprintf("%s:\n%s", f, c))
				}
			}
			slices.Sort(rules)
			t.Logf("iteration %d: info/exclude:\n%s\nglobal excludes:\n%s\n%s", i, exclude, global, strings.Join(rules, "\n"))
			if failures++; failures == 3 {
				t.Fatal("stopping after 3 differing trees")
			}
		}
	}
	t.Logf("%d random trees, %d files and ignore files (%d kept), compared with git in %v",
		iterations, files, kept, time.Since(start).Round(time.Millisecond))
	// The grammar must keep both verdicts common, or the test proves little.
	if kept < files/5 || kept > files*4/5 {
		t.Errorf("kept %d of %d files: the random rules are too lax or too strict", kept, files)
	}
}
