package watch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The inputs of the ignore rules outside the tree's own rule files are
// watched: an edit of .git/info/exclude, of the global excludes file
// (wherever git finds it, made later, replaced by rename, through a
// symbolic link), or of the configuration that says which file that is,
// is in the index after the next Sync, as a .gitignore edit is. The
// consistency check after each test compares the index with a fresh
// build under the rules as they end.

// hermeticGit points HOME and XDG_CONFIG_HOME at a fresh directory and
// turns the system git configuration off, and returns the home.
func hermeticGit(t *testing.T) string {
	t.Helper()
	home := tempRoot(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_CONFIG_SYSTEM"} {
		if old, had := os.LookupEnv(k); had {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, old) })
		}
	}
	return home
}

// replaceFile writes contents to rel under dir through a temporary file
// renamed over it, as editors and git do.
func replaceFile(t *testing.T, dir, rel, contents string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p+".new~", []byte(contents), 0o644))
	must(t, os.Rename(p+".new~", p))
}

// wantIndexed syncs, then checks that the index holds every path of in
// and none of out.
func wantIndexed(t *testing.T, w *Watcher, has func(string) bool, what string, in, out []string) {
	t.Helper()
	syncNow(t, w)
	for _, p := range in {
		if !has(p) {
			t.Errorf("%s: %s is not in the index", what, p)
		}
	}
	for _, p := range out {
		if has(p) {
			t.Errorf("%s: %s is in the index", what, p)
		}
	}
}

func TestInfoExcludeEdits(t *testing.T) {
	hermeticGit(t)
	root := tempRoot(t)
	mkdirs(t, root, ".git")
	for _, rel := range []string{"a.dat", "sub/b.dat", "c.txt", "gen/g.txt"} {
		writeFile(t, root, rel, rel+"\n")
	}
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }

	// No .git/info yet: made, with the file, after Start.
	writeFile(t, root, ".git/info/exclude", "*.dat\n")
	wantIndexed(t, w, in, "info/exclude made", []string{"c.txt", "gen/g.txt"}, []string{"a.dat", "sub/b.dat"})
	if !ix.Visibility().Ignored("a.dat") || !ix.Visibility().Ignored("sub/b.dat") {
		t.Error("the .dat files are not recorded as ignored")
	}
	// The case: *.dat taken out of it.
	writeFile(t, root, ".git/info/exclude", "# nothing\n")
	wantIndexed(t, w, in, "*.dat removed", []string{"a.dat", "sub/b.dat", "c.txt"}, nil)
	// Replaced by rename; a directory pattern.
	replaceFile(t, root, ".git/info/exclude", "gen/\n")
	wantIndexed(t, w, in, "replaced by rename", []string{"a.dat"}, []string{"gen/g.txt"})
	if got := w.State().Dirs; got != 2 { // the root and sub/; gen/ no longer watched
		t.Errorf("Dirs = %d, want 2", got)
	}
	// Removed.
	must(t, os.Remove(filepath.Join(root, ".git/info/exclude")))
	wantIndexed(t, w, in, "removed", []string{"gen/g.txt"}, nil)
	writeFile(t, root, "gen/later.txt", "later\n")
	wantIndexed(t, w, in, "gen/ watched again", []string{"gen/later.txt"}, nil)
}

func TestGlobalExcludesEdits(t *testing.T) {
	home := hermeticGit(t)
	root := tempRoot(t)
	mkdirs(t, root, ".git")
	for _, rel := range []string{"a.tmp", "b.log", "c.txt", "d.bak"} {
		writeFile(t, root, rel, rel+"\n")
	}
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }

	// $XDG_CONFIG_HOME/git/ignore, its directories made after Start.
	writeFile(t, home, ".config/git/ignore", "*.tmp\n")
	wantIndexed(t, w, in, "XDG ignore made", []string{"b.log", "c.txt"}, []string{"a.tmp"})
	// Emptied (the second case), by rename.
	replaceFile(t, home, ".config/git/ignore", "")
	wantIndexed(t, w, in, "XDG ignore emptied", []string{"a.tmp"}, nil)

	// core.excludesFile set in ~/.gitconfig: the file in force moves.
	writeFile(t, home, "my-excludes", "*.log\n")
	writeFile(t, home, ".config/git/ignore", "*.tmp\n") // no longer in force once the config names another
	writeFile(t, home, ".gitconfig", "[core]\n\texcludesFile = ~/my-excludes\n")
	wantIndexed(t, w, in, "~/.gitconfig names my-excludes", []string{"a.tmp", "c.txt"}, []string{"b.log"})
	writeFile(t, home, "my-excludes", "*.txt\n")
	wantIndexed(t, w, in, "my-excludes edited", []string{"b.log"}, []string{"c.txt"})

	// The repository's own config wins, and is watched.
	writeFile(t, home, "repo-excludes", "*.bak\n")
	writeFile(t, root, ".git/config", "[core]\n\texcludesFile = "+filepath.Join(home, "repo-excludes")+"\n")
	wantIndexed(t, w, in, ".git/config names repo-excludes", []string{"c.txt", "b.log"}, []string{"d.bak"})
	writeFile(t, root, ".git/config", "[core]\n\tbare = false\n")
	wantIndexed(t, w, in, ".git/config no longer names it", []string{"d.bak", "b.log"}, []string{"c.txt"})

	// Through a symbolic link (a dotfiles repository): the target is
	// edited.
	writeFile(t, home, "dotfiles/excludes", "*.tmp\n")
	must(t, os.Symlink(filepath.Join(home, "dotfiles/excludes"), filepath.Join(home, "linked-excludes")))
	writeFile(t, home, ".gitconfig", "[core]\n\texcludesFile = ~/linked-excludes\n")
	wantIndexed(t, w, in, "linked excludes", []string{"c.txt"}, []string{"a.tmp"})
	writeFile(t, home, "dotfiles/excludes", "*.log\n")
	wantIndexed(t, w, in, "linked target edited", []string{"a.tmp"}, []string{"b.log"})
	// The link retargeted.
	writeFile(t, home, "dotfiles/other", "*.bak\n")
	must(t, os.Remove(filepath.Join(home, "linked-excludes")))
	must(t, os.Symlink(filepath.Join(home, "dotfiles/other"), filepath.Join(home, "linked-excludes")))
	wantIndexed(t, w, in, "link retargeted", []string{"b.log"}, []string{"d.bak"})
}

// A root inside a repository (not its top): the ancestors' .gitignore and
// the repository's info/exclude are inputs too.
func TestInputsAboveTheRoot(t *testing.T) {
	hermeticGit(t)
	top := tempRoot(t)
	mkdirs(t, top, ".git/info")
	writeFile(t, top, "ws/a.dat", "a\n")
	writeFile(t, top, "ws/b.log", "b\n")
	root := filepath.Join(top, "ws")
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }
	writeFile(t, top, ".gitignore", "*.log\n")
	wantIndexed(t, w, in, "top .gitignore", []string{"a.dat"}, []string{"b.log"})
	writeFile(t, top, ".git/info/exclude", "/ws/a.dat\n")
	wantIndexed(t, w, in, "top info/exclude", nil, []string{"a.dat", "b.log"})
	must(t, os.Remove(filepath.Join(top, ".gitignore")))
	wantIndexed(t, w, in, "top .gitignore removed", []string{"b.log"}, []string{"a.dat"})
}

// A repository inside the tree: its info/exclude is watched, found when
// the walk meets its .git, or when its .git is made later.
func TestNestedRepoInputs(t *testing.T) {
	hermeticGit(t)
	root := tempRoot(t)
	mkdirs(t, root, "sub/.git")
	writeFile(t, root, "sub/x.dat", "x\n")
	writeFile(t, root, "other/y.dat", "y\n")
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }
	writeFile(t, root, "sub/.git/info/exclude", "*.dat\n")
	wantIndexed(t, w, in, "sub's info/exclude", []string{"other/y.dat"}, []string{"sub/x.dat"})
	must(t, os.Remove(filepath.Join(root, "sub/.git/info/exclude")))
	wantIndexed(t, w, in, "sub's info/exclude removed", []string{"sub/x.dat"}, nil)

	// A repository made after Start.
	mkdirs(t, root, "other/.git")
	syncNow(t, w)
	writeFile(t, root, "other/.git/info/exclude", "*.dat\n")
	wantIndexed(t, w, in, "a new repository's info/exclude", []string{"sub/x.dat"}, []string{"other/y.dat"})
}

// indexGit runs git in dir with the test's environment and an identity.
func indexGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

// A directory of the default list follows the repository's index: added
// to it (git add, by rename of .git/index), it is indexed and watched;
// taken out, it is pruned; in a repository inside the tree too.
func TestTrackedDirsFollowTheIndex(t *testing.T) {
	hermeticGit(t)
	root := tempRoot(t)
	indexGit(t, root, "init", "-q", "--template=")
	writeFile(t, root, "go/build/build.go", "package build\n\nfunc Import() {}\n")
	writeFile(t, root, "go/build/testdata/t.go", "package t\n")
	writeFile(t, root, "build/out.txt", "output\n")
	writeFile(t, root, "README", "top\n")
	indexGit(t, root, "add", "README")
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }
	if in("go/build/build.go") || !ix.Visibility().Ignored("go/build") {
		t.Fatal("an untracked go/build is indexed")
	}
	dirs := w.State().Dirs

	indexGit(t, root, "add", "go/build")
	wantIndexed(t, w, in, "git add go/build", []string{"go/build/build.go", "go/build/testdata/t.go"}, []string{"build/out.txt"})
	if ix.Visibility().Ignored("go/build") || w.State().Dirs != dirs+2 {
		t.Errorf("go/build: Ignored=%v Dirs=%d, want false %d", ix.Visibility().Ignored("go/build"), w.State().Dirs, dirs+2)
	}
	writeFile(t, root, "go/build/new.go", "package build\n")
	wantIndexed(t, w, in, "a file made in go/build", []string{"go/build/new.go"}, nil)
	indexGit(t, root, "commit", "-q", "-m", "x")
	indexGit(t, root, "rm", "-q", "-r", "--cached", "go/build")
	wantIndexed(t, w, in, "git rm --cached go/build", nil, []string{"go/build/build.go", "go/build/new.go"})
	if !ix.Visibility().Ignored("go/build") || w.State().Dirs != dirs {
		t.Errorf("go/build: Ignored=%v Dirs=%d, want true %d", ix.Visibility().Ignored("go/build"), w.State().Dirs, dirs)
	}

	// In a repository inside the tree.
	sub := filepath.Join(root, "vendor", "lib")
	mkdirs(t, root, "vendor/lib")
	indexGit(t, sub, "init", "-q", "--template=")
	writeFile(t, root, "vendor/lib/dist/d.js", "d\n")
	syncNow(t, w)
	if in("vendor/lib/dist/d.js") {
		t.Fatal("an untracked dist/ of the nested repository is indexed")
	}
	indexGit(t, sub, "add", "dist")
	wantIndexed(t, w, in, "git add in the nested repository", []string{"vendor/lib/dist/d.js"}, nil)
	if got := paths(ix, "vendor"); !slices.Equal(got, []string{"vendor/lib/dist/d.js"}) {
		t.Errorf("vendor: %q", got)
	}
}

// A linked worktree as the root: its .git is a file naming a git
// directory outside the root, whose index is its own, with info/exclude
// in the main repository's common directory. Both are watched.
func TestWorktreeInputs(t *testing.T) {
	hermeticGit(t)
	main := tempRoot(t)
	indexGit(t, main, "init", "-q", "--template=")
	writeFile(t, main, "README", "main\n")
	indexGit(t, main, "add", "README")
	indexGit(t, main, "commit", "-q", "-m", "init")
	root := filepath.Join(tempRoot(t), "wt")
	indexGit(t, main, "worktree", "add", "-q", root)
	writeFile(t, root, "dist/d.go", "package d\n")
	writeFile(t, root, "x.dat", "x\n")
	w, ix := startDB(t, root, Options{})
	in := func(p string) bool { return has(ix, p) }
	if in("dist/d.go") || !in("x.dat") {
		t.Fatalf("at start: %q", paths(ix, ""))
	}
	indexGit(t, root, "add", "dist")
	wantIndexed(t, w, in, "git add dist in the worktree", []string{"dist/d.go"}, nil)
	writeFile(t, main, ".git/info/exclude", "*.dat\n")
	wantIndexed(t, w, in, "the common directory's info/exclude", nil, []string{"x.dat"})
}
