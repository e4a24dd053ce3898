// Package ignore decides which entries of a workspace tree are skipped by
// ignore rules (docs/product.md, "What is skipped"): the default-ignored
// directory names, .ignore files (always), and inside git repositories
// .gitignore files (nested), .git/info/exclude and core.excludesFile (found as
// git finds it: see repo.go).
//
// The default list is there to skip build output and dependencies: inside
// a git work tree a directory on it is skipped only when the repository's
// index tracks no entry in it (gitindex.go), so Go's src/go/build is
// searched in a clone of Go while an untracked build/ is not. Outside a
// work tree the list applies as it stands. A directory skipped by the list
// alone (no ignore file ignores it) is marked so (Verdict.Default), for
// answers to say so.
//
// Everything these verdicts are read from besides the tree's own
// .gitignore, .ignore and .git entries (info/exclude, the excludes file,
// git's configuration files, the index, the root's ancestors' rule files
// within its repository) is listed by RepoAt and AboveInputs, for a
// watcher to watch.
//
// Precedence follows ripgrep, the reference the tests compare against:
// for one path, .ignore files are consulted first, deepest directory first;
// then .gitignore files, deepest first, stopping above the nearest
// directory holding .git; then info/exclude; then the global file. The
// first file with a matching line decides, and within a file the last
// matching line wins. Each rule is matched against the path itself, never
// its parents: a walker that prunes ignored directories never asks about
// their contents, and a directory named explicitly as the search path is
// searched even when a rule ignores it.
//
// The package also owns the one classifier every traversal asks about an
// entry (Classifier, Cache; see classify.go): private directories, sync
// cookies, ignored entries, and hidden names (a whitelisting rule wins over
// hiddenness). Whether a hidden name is shown depends on the query
// (include_hidden, names in the pattern), which the caller decides.
package ignore

import (
	"os"
	"path/filepath"

	"github.com/indexd/indexd/internal/rooted"
)

// DefaultDirs are the directory names skipped unless include_ignored is
// set (docs/product.md, "What is skipped").
var DefaultDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "__pycache__": true,
	"node_modules": true, "target": true, "build": true, "dist": true,
	".idea": true, ".vscode": true, ".DS_Store": true, "venv": true,
	".venv": true, ".mypy_cache": true, ".pytest_cache": true,
	".ruff_cache": true, ".tox": true, ".cache": true, "site-packages": true,
}

// Names of the files this package reads.
const (
	GitignoreFile = ".gitignore"
	IgnoreFile    = ".ignore"
	GitDir        = ".git"
)

// Dir is the ignore state in force for the entries of one directory: a
// chain of levels, one per directory (from the workspace root's ancestors
// down) that contributed rules or a .git. Directories that add nothing
// share their parent's Dir, so a walk allocates one per rule file, not per
// directory. A Dir is immutable and safe for concurrent use.
type Dir struct {
	top *level
	git *gitGlobal // git's configuration outside any repository, read once per Open
}

type level struct {
	parent *level
	// prefix is prepended and strip bytes are cut from a root-relative
	// path to make it relative to this level's directory.
	prefix    string
	strip     int
	ignore    *Rules // .ignore
	gitignore *Rules // .gitignore
	exclude   *Rules // .git/info/exclude, on the level holding .git
	// On the level holding .git: the excludes file in force in its
	// repository, and the directories of the default list its index
	// tracks (relative to this level's directory; nil when none).
	excludes *Rules
	tracked  map[string]struct{}
	hasGit   bool
	anyGit   bool // this level or one above holds .git
}

// setRepo records on l what the repository g gives the rules.
func (l *level) setRepo(g *gitRepo, e *gitGlobal) {
	r := g.rules(e)
	l.exclude, l.excludes, l.tracked = r.exclude, r.excludes, r.tracked
}

func (l *level) rel(path string) string {
	if l.strip > len(path) {
		return l.prefix
	}
	return l.prefix + path[l.strip:]
}

// Open returns the Dir for a workspace root (an absolute, symlink-free
// path): the rules of its ancestors (.ignore of every ancestor; .gitignore
// of ancestors up to the one holding .git) and of the root itself, plus the
// global excludes file.
func Open(root string) *Dir {
	r, err := rooted.Open(root)
	if err != nil {
		return above(root)
	}
	defer r.Close()
	return OpenAt(r)
}

// OpenAt is Open for a root already open: the root's own rule files are
// read through r.
func OpenAt(r *rooted.Root) *Dir {
	return above(r.Path()).Step(r, "")
}

// above returns the rules in force above root: its ancestors' files and,
// when one holds the repository root lies in, that repository's.
func above(root string) *Dir {
	e := readGitGlobal()
	var chain []string // root's ancestors, nearest first
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	var top *level
	// Walk from the filesystem root down to root's parent. Which ancestors'
	// .gitignore count is only known once the nearest .git is found, so
	// find it first.
	gitAt := -1
	if !exists(filepath.Join(root, GitDir)) {
		for i, d := range chain {
			if exists(filepath.Join(d, GitDir)) {
				gitAt = i
				break
			}
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		rel, err := filepath.Rel(d, root)
		if err != nil {
			continue
		}
		l := &level{parent: top, prefix: filepath.ToSlash(rel) + "/"}
		l.ignore = readRules(filepath.Join(d, IgnoreFile))
		if gitAt >= 0 && i <= gitAt {
			l.gitignore = readRules(filepath.Join(d, GitignoreFile))
			if i == gitAt {
				l.hasGit = true
				if g, ok := repoAbove(d); ok {
					l.setRepo(g, e)
				}
			}
		}
		l.anyGit = l.hasGit || (top != nil && top.anyGit)
		if l.ignore != nil || l.gitignore != nil || l.exclude != nil || l.hasGit {
			top = l
		}
	}
	return &Dir{top: top, git: e}
}

// RuleFiles says which of .git, .gitignore and .ignore a directory holds.
// A walker fills it from the directory's listing (See each name), so no
// rule file is opened needlessly.
type RuleFiles struct {
	Git, Gitignore, Ignore bool
}

// See records name, one entry of the directory's listing.
func (f *RuleFiles) See(name string) {
	switch name {
	case GitDir:
		f.Git = true
	case GitignoreFile:
		f.Gitignore = true
	case IgnoreFile:
		f.Ignore = true
	}
}

// Child returns the Dir for the subdirectory at rel (root-relative, slash
// separated; "" for the root) open as dir, which holds the rule files f.
// Rule files are read through dir, never following a symlink.
func (d *Dir) Child(dir *os.File, rel string, f RuleFiles) *Dir {
	anyGit := f.Git || (d.top != nil && d.top.anyGit)
	l := &level{parent: d.top, hasGit: f.Git, anyGit: anyGit}
	if rel != "" {
		l.strip = len(rel) + 1
	}
	if f.Ignore {
		l.ignore = readRulesAt(dir, IgnoreFile)
	}
	if f.Gitignore && anyGit {
		l.gitignore = readRulesAt(dir, GitignoreFile)
	}
	e := d.git
	if f.Git {
		if e == nil {
			e = readGitGlobal()
		}
		if g, ok := repoAt(dir); ok {
			l.setRepo(g, e)
		}
	}
	if l.ignore == nil && l.gitignore == nil && l.exclude == nil && !f.Git {
		return d
	}
	return &Dir{top: l, git: e}
}

// InRepo reports whether the directory is inside a git repository.
func (d *Dir) InRepo() bool { return d.top != nil && d.top.anyGit }

// tracked reports whether the directory at rel (root-relative) holds an
// entry the index of the repository it lies in tracks: false outside a
// repository, and when the index could not be read.
func (d *Dir) tracked(rel string) bool {
	for l := d.top; l != nil; l = l.parent {
		if l.hasGit {
			_, ok := l.tracked[l.rel(rel)]
			return ok
		}
	}
	return false
}

// Match returns the verdict of the rules in force on the entry at rel (a
// root-relative, slash-separated path inside this Dir's directory).
//
// The excludes file is that of the repository rel lies in (the nearest
// level holding .git), matched against the root-relative path as ripgrep
// matches its global file.
func (d *Dir) Match(rel string, isDir bool) Result {
	if d.top == nil {
		return None
	}
	var mIgnore, mGit, mExclude Result
	var excludes *Rules
	anyGit := d.InRepo()
	sawGit := false
	for l := d.top; l != nil; l = l.parent {
		if l.ignore != nil && mIgnore == None {
			mIgnore = l.ignore.Match(l.rel(rel), isDir)
		}
		if anyGit && !sawGit {
			if l.gitignore != nil && mGit == None {
				mGit = l.gitignore.Match(l.rel(rel), isDir)
			}
			if l.exclude != nil && mExclude == None {
				mExclude = l.exclude.Match(l.rel(rel), isDir)
			}
			if l.hasGit {
				excludes = l.excludes
			}
		}
		sawGit = sawGit || l.hasGit
	}
	for _, m := range [...]Result{mIgnore, mGit, mExclude} {
		if m != None {
			return m
		}
	}
	if excludes != nil {
		return excludes.Match(rel, isDir)
	}
	return None
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// readRules reads and compiles one ignore file outside the workspace (an
// ancestor's, the global one); a missing, unreadable or empty file yields
// nil.
func readRules(p string) *Rules {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return parseRules(data)
}

// maxRuleFile bounds the size of an ignore file read from the workspace.
const maxRuleFile = 64 << 20

// readRulesAt reads and compiles the ignore file at rel beneath the open
// directory dir, following no symlink.
func readRulesAt(dir *os.File, rel string) *Rules {
	data, err := rooted.ReadFile(dir, rel, maxRuleFile)
	if err != nil {
		return nil
	}
	return parseRules(data)
}

func parseRules(data []byte) *Rules {
	if len(data) == 0 {
		return nil
	}
	r := Parse(data)
	if r.Len() == 0 {
		return nil
	}
	return r
}

// Step returns the Dir for the subdirectory at rel (root-relative, "" for
// the root), d being its parent's, finding its rule files by looking for
// them. A directory that cannot be opened beneath the root (gone, or a
// symlink now) adds no rules.
func (d *Dir) Step(root *rooted.Root, rel string) *Dir {
	dir, err := root.OpenDir(rel)
	if err != nil {
		return d
	}
	defer dir.Close()
	return d.Child(dir, rel, RuleFiles{
		Git:       rooted.Exists(dir, GitDir),
		Gitignore: rooted.Exists(dir, GitignoreFile),
		Ignore:    rooted.Exists(dir, IgnoreFile),
	})
}
