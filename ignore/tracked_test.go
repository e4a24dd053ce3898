package ignore_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
)

// trackedGit runs git in dir with a hermetic environment and an identity.
func trackedGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// classify returns the classifier's verdict on the directory rel of root,
// asked as a walk asks it (with the rules of rel's parent).
func classify(t *testing.T, root, rel string) ignore.Verdict {
	t.Helper()
	r := testtree.Open(t, root)
	parent := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parent = rel[:i]
	}
	return ignore.Classifier{Root: root}.Entry(ignore.NewCache(r).At(parent), rel, true)
}

type dirVerdict struct {
	rel              string
	ignored, deflist bool
}

func checkDirs(t *testing.T, root string, want []dirVerdict) {
	t.Helper()
	for _, w := range want {
		v := classify(t, root, w.rel)
		if v.Ignored != w.ignored || v.Default != w.deflist {
			t.Errorf("%s: Ignored=%v Default=%v, want %v %v", w.rel, v.Ignored, v.Default, w.ignored, w.deflist)
		}
	}
}

// Inside a git work tree a directory of the default list is skipped only
// when git tracks nothing in it: Go's go/build is source. An untracked
// build/ is still skipped, by the list alone (Default), or by an ignore
// file too (then not Default: ripgrep would skip it as well). Outside a
// work tree the list applies as it stands.
func TestTrackedDefaultDirs(t *testing.T) {
	requireGitBin(t)
	hermeticHome(t)
	root := realTemp(t)
	layout(t, root, map[string]string{
		"go/build/build.go":        "package build\n\nfunc Import() {}\n",
		"go/build/testdata/x.go":   "package x\n",
		"build/out.txt":            "untracked output\n",
		"dist/bundle.js":           "untracked, and ignored by .gitignore\n",
		".gitignore":               "/dist/\n",
		"vendor/x/node_modules/":   "",
		"src/target/debug/a.o":     "untracked\n",
		"app/node_modules/m/i.js":  "tracked with -f\n",
		"app/node_modules/n/i.js":  "untracked, beside a tracked one\n",
		"deep/build/inner/build/y": "tracked two levels down\n",
	})
	trackedGit(t, root, "init", "-q", "--template=")
	trackedGit(t, root, "add", "go", ".gitignore", "deep")
	trackedGit(t, root, "add", "-f", "app/node_modules/m/i.js")
	checkDirs(t, root, []dirVerdict{
		{"go/build", false, false},
		{"go/build/testdata", false, false},
		{"build", true, true},
		{"dist", true, false},
		{"vendor/x/node_modules", true, true},
		{"src/target", true, true},
		{"app/node_modules", false, false},
		{"deep/build", false, false},
		{"deep/build/inner/build", false, false},
	})

	// The index is read again when git rewrites it.
	trackedGit(t, root, "rm", "-q", "-r", "--cached", "go/build")
	checkDirs(t, root, []dirVerdict{{"go/build", true, true}})
	trackedGit(t, root, "add", "go/build")
	checkDirs(t, root, []dirVerdict{{"go/build", false, false}})
	trackedGit(t, root, "add", "build/out.txt")
	checkDirs(t, root, []dirVerdict{{"build", false, false}})

	// Opened below the top, the repository's index still counts, its
	// paths taken relative to the root.
	checkDirs(t, filepath.Join(root, "go"), []dirVerdict{{"build", false, false}})
	checkDirs(t, filepath.Join(root, "src"), []dirVerdict{{"target", true, true}})

	// Without a repository, the list applies.
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	checkDirs(t, root, []dirVerdict{{"go/build", true, true}, {"build", true, true}, {"dist", true, true}})
}

// A linked worktree (.git a file naming its git directory, with a
// commondir) and a submodule: their own indexes say what is tracked in
// them, and a submodule named like a directory of the list is tracked in
// its parent.
func TestTrackedDefaultDirsWorktreeAndSubmodule(t *testing.T) {
	requireGitBin(t)
	hermeticHome(t)
	main := realTemp(t)
	layout(t, main, map[string]string{"go/build/build.go": "package build\n", "README": "x\n"})
	trackedGit(t, main, "init", "-q", "--template=")
	trackedGit(t, main, "add", ".")
	trackedGit(t, main, "commit", "-q", "-m", "init")
	wt := filepath.Join(realTemp(t), "wt")
	trackedGit(t, main, "worktree", "add", "-q", wt)
	if st, err := os.Lstat(filepath.Join(wt, ".git")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("the worktree's .git is not a file: %v", err)
	}
	checkDirs(t, wt, []dirVerdict{{"go/build", false, false}})
	trackedGit(t, wt, "rm", "-q", "-r", "--cached", "go/build")
	checkDirs(t, wt, []dirVerdict{{"go/build", true, true}})
	checkDirs(t, main, []dirVerdict{{"go/build", false, false}}) // the main work tree's index is its own

	// A submodule at dist/: tracked in the parent as a gitlink.
	parent := realTemp(t)
	layout(t, parent, map[string]string{"a.txt": "a\n"})
	trackedGit(t, parent, "init", "-q", "--template=")
	trackedGit(t, parent, "-c", "protocol.file.allow=always", "submodule", "add", "-q", main, "dist")
	checkDirs(t, parent, []dirVerdict{{"dist", false, false}})
	checkDirs(t, parent, []dirVerdict{{"dist/go/build", false, false}}) // the submodule's own index
	layout(t, parent, map[string]string{"dist/build/x": "untracked in the submodule\n"})
	checkDirs(t, parent, []dirVerdict{{"dist/build", true, true}})
}

// A repository's index that cannot be read leaves the list in force.
func TestTrackedDefaultDirsBadIndex(t *testing.T) {
	requireGitBin(t)
	hermeticHome(t)
	root := realTemp(t)
	layout(t, root, map[string]string{"go/build/build.go": "package build\n"})
	trackedGit(t, root, "init", "-q", "--template=")
	trackedGit(t, root, "add", ".")
	checkDirs(t, root, []dirVerdict{{"go/build", false, false}})
	idx := filepath.Join(root, ".git", "index")
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	data[5] = 7 // version 0x00070002: not a version read here
	if err := os.WriteFile(idx+".new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(idx+".new", idx); err != nil {
		t.Fatal(err)
	}
	checkDirs(t, root, []dirVerdict{{"go/build", true, true}})
}

// RepoAt and AboveInputs name the files the rules are read from, and the
// tracked directories root-relative.
func TestRepoInputs(t *testing.T) {
	requireGitBin(t)
	home := hermeticHome(t)
	top := realTemp(t)
	layout(t, top, map[string]string{"ws/go/build/b.go": "package b\n", "ws/x.txt": "x\n"})
	trackedGit(t, top, "init", "-q", "--template=")
	trackedGit(t, top, "config", "core.excludesFile", "~/repo-excludes")
	trackedGit(t, top, "add", ".")
	root := filepath.Join(top, "ws")

	in, repo, ok := ignore.AboveInputs(root)
	if !ok {
		t.Fatal("AboveInputs: no repository above the root")
	}
	var paths []string
	for _, i := range in {
		paths = append(paths, i.Path)
	}
	for _, want := range []string{
		filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"),
		filepath.Join(top, ".gitignore"), filepath.Join(top, ".ignore"), filepath.Join(top, ".git"),
		filepath.Join(top, ".git", "config"), filepath.Join(top, ".git", "info", "exclude"),
		filepath.Join(top, ".git", "index"), filepath.Join(home, "repo-excludes"),
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("AboveInputs lacks %s: %q", want, paths)
		}
	}
	if !slices.Equal(repo.Tracked, []string{"go/build"}) {
		t.Errorf("Tracked = %q, want [go/build]", repo.Tracked)
	}

	r := testtree.Open(t, top)
	d, err := r.OpenDir("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	own, ok := ignore.RepoAt(d, "")
	if !ok || !slices.Equal(own.Tracked, []string{"ws/go/build"}) {
		t.Errorf("RepoAt: ok=%v Tracked=%q, want ws/go/build", ok, own.Tracked)
	}
	if _, _, ok := ignore.AboveInputs(top); ok {
		t.Error("AboveInputs reports a repository above the top of one")
	}
}
