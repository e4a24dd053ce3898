package main

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/indexd/indexd/ignore"
)

// Tool names, also the table's column order.
const (
	toolIndexctl = "indexctl"
	toolRg       = "rg"
	toolRgFiles  = "rg --files"
	toolFd       = "fd"
	toolCsearch  = "csearch"
)

var allTools = []string{toolIndexctl, toolRg, toolRgFiles, toolFd, toolCsearch}

type queryKind int

const (
	kindGrep queryKind = iota
	kindGlob
)

// query is one row group of the table.
type query struct {
	name          string // the row label
	kind          queryKind
	pattern       string
	caseSensitive bool   // grep only
	expect        string // what the generated tree's manifest says, "" if unknown
	limit         int    // indexctl's --limit for this query; 0: the setup's grepLimit or globLimit
}

// setup is what every command needs to know.
type setup struct {
	tree          string   // absolute
	indexctl      string   // "" when missing
	indexctlFlags []string // global flags, e.g. --direct
	rg, fd        string
	csearch       string
	csIndex       string   // CSEARCHINDEX file, "" when no index was built
	indexctlEnv   []string // indexctl's environment; nil: the harness's own
	grepLimit     int
	globLimit     int
	timeoutMS     int
}

// excluded lists the default-ignored directory names (docs/product.md, "What
// is skipped"), sorted, so that rg and fd skip what indexctl skips.
func excluded() []string {
	var names []string
	for n := range ignore.DefaultDirs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// rgExcludes are rg's flags skipping the default-ignored directories
// ("NAME/" matches directories only).
func rgExcludes() []string {
	var a []string
	for _, d := range excluded() {
		a = append(a, "--glob", "!"+d+"/")
	}
	return a
}

// fdExcludes are fd's flags skipping the default-ignored directories.
func fdExcludes() []string {
	var a []string
	for _, d := range excluded() {
		a = append(a, "--exclude", d+"/")
	}
	return a
}

// argv returns the command line of tool for q, or nil when the tool does
// not answer this kind of query (or is missing). Every command runs in the
// tree's root (cmd.Dir), without a shell.
func (s *setup) argv(tool string, q query) []string {
	switch tool {
	case toolIndexctl:
		if s.indexctl == "" {
			return nil
		}
		// Flags first, then "--", so that no pattern is taken for a flag.
		// --stats: the summary (with the query's own time) on stderr;
		// stdout carries the results only.
		a := append([]string{s.indexctl}, s.indexctlFlags...)
		if q.kind == kindGlob {
			return append(a, "glob", "--stats", "--root", s.tree, "--limit", strconv.Itoa(cmp.Or(q.limit, s.globLimit)), "--", q.pattern)
		}
		a = append(a, "grep", "--stats", "--root", s.tree, "--limit", strconv.Itoa(cmp.Or(q.limit, s.grepLimit)), "--timeout-ms", strconv.Itoa(s.timeoutMS))
		if q.caseSensitive {
			a = append(a, "--case-sensitive")
		}
		return append(a, "--", q.pattern)
	case toolRg:
		if s.rg == "" || q.kind != kindGrep {
			return nil
		}
		// --no-config: no RIPGREP_CONFIG_PATH. -n --no-heading
		// --with-filename: one "path:line:text" line per match, as
		// indexctl prints them. Case: -s (the default without config) for
		// the case-sensitive rows, -i for the others.
		a := []string{s.rg, "--no-config", "-n", "--no-heading", "--with-filename"}
		if q.caseSensitive {
			a = append(a, "-s")
		} else {
			a = append(a, "-i")
		}
		a = append(a, rgExcludes()...)
		return append(a, "-e", q.pattern, "--", ".")
	case toolRgFiles:
		if s.rg == "" || q.kind != kindGlob {
			return nil
		}
		// rg's globs have gitignore semantics: "**/" matches any leading
		// directories, "*" stays within one name, as in doublestar. A
		// positive --glob whitelists what it matches, hidden files
		// included, so unless the pattern names a hidden segment a later
		// (and so winning) "!.*" puts hidden names back out, as indexctl
		// leaves them out.
		a := []string{s.rg, "--no-config", "--files"}
		a = append(a, rgExcludes()...)
		a = append(a, "--glob", q.pattern)
		if !strings.HasPrefix(q.pattern, ".") && !strings.Contains(q.pattern, "/.") {
			a = append(a, "--glob", "!.*")
		}
		return append(a, "--", ".")
	case toolFd:
		if s.fd == "" || q.kind != kindGlob {
			return nil
		}
		a := []string{s.fd, "--type", "f", "--glob"}
		// fd matches a glob against the base name, or with --full-path
		// against the absolute path. "**/NAME-GLOB" is a base-name match;
		// a pattern with more directories is matched against the full
		// path, where its leading "**/" absorbs the tree's own absolute
		// path ("*" does not cross "/" in fd's globs either).
		if rest, ok := strings.CutPrefix(q.pattern, "**/"); ok && !strings.Contains(rest, "/") {
			a = append(a, rest)
		} else {
			a = append(a, "--full-path", q.pattern)
		}
		a = append(a, fdExcludes()...)
		return append(a, ".")
	case toolCsearch:
		if s.csearch == "" || s.csIndex == "" || q.kind != kindGrep {
			return nil
		}
		a := []string{s.csearch, "-n"}
		if !q.caseSensitive {
			a = append(a, "-i")
		}
		return append(a, q.pattern)
	}
	return nil
}

// privateSocket is the socket of a daemon private to a run whose
// temporary directory is tmp (privateEnv).
func privateSocket(tmp string) string { return filepath.Join(tmp, "run", "indexd.sock") }

// privateEnv is the harness's environment with the daemon's state and
// socket in tmp, so that indexctl run in it reaches, starts and stops no
// user's daemon (INDEXCTL_DIRECT, which would bypass the daemon, is
// dropped).
func privateEnv(tmp, socket string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "INDEXD_SOCKET", "INDEXCTL_DIRECT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_STATE_HOME="+filepath.Join(tmp, "state"), "XDG_RUNTIME_DIR="+filepath.Join(tmp, "run"), "INDEXD_SOCKET="+socket)
}

// env returns the environment of tool's commands.
func (s *setup) env(tool string) []string {
	switch tool {
	case toolCsearch:
		return append(os.Environ(), "CSEARCHINDEX="+s.csIndex)
	case toolIndexctl:
		return s.indexctlEnv
	}
	return nil
}

// lookTool finds a program: the flag's value if set ("none" disables it),
// else the first of names on $PATH or in $GOPATH/bin.
func lookTool(flagValue string, names ...string) string {
	if flagValue == "none" {
		return ""
	}
	if flagValue != "" {
		if p, err := exec.LookPath(flagValue); err == nil {
			return abs(p)
		}
		return ""
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return abs(p)
		}
	}
	if gp, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(gp))) {
			for _, n := range names {
				p := filepath.Join(dir, "bin", n)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p
				}
			}
		}
	}
	return ""
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// version returns the first line a program prints for args.
func version(prog string, args ...string) string {
	out, err := exec.Command(prog, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "?"
	}
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

// shellQuote renders argv for the reader (the harness never uses a shell).
func shellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}
