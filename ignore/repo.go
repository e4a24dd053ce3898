package ignore

// Git repositories as the rules see them: where a repository's files are
// (.git a directory, or a file naming the git directory, as a linked
// worktree's and a submodule's is; a linked worktree's "commondir"), what
// its configuration says (core.excludesFile, the object format), its
// info/exclude, and which directories of the default list it tracks
// (gitindex.go). And the files all that is read from, for a watcher to
// watch (Input, Repo, AboveInputs).
//
// Git's configuration is read as git reads it, as far as these keys go:
// the system file ($GIT_CONFIG_SYSTEM, else /etc/gitconfig, the path of
// distributions' builds; none with GIT_CONFIG_NOSYSTEM), the global files
// ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config then
// ~/.gitconfig), the repository's config, its config.worktree (with
// extensions.worktreeConfig), then the GIT_CONFIG_COUNT pairs; the last
// value wins. Includes are not followed. Variables that name one
// repository's files for one git command (GIT_DIR, GIT_WORK_TREE,
// GIT_COMMON_DIR, GIT_INDEX_FILE) are not followed: they are set for one
// command (a hook, or a `git commit -a` writing a temporary index), while
// the rules describe work trees as they stand, for every command and
// every repository the daemon serves; a work tree's index is
// <gitdir>/index.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
)

// InputKind says what a change of an input file changes.
type InputKind uint8

// The kinds of input.
const (
	// InputRules: an ignore file read whole (info/exclude, the excludes
	// file, an ancestor's .gitignore or .ignore): the verdicts of the
	// entries its repository governs change.
	InputRules InputKind = iota + 1
	// InputConfig: a file that says where other inputs are (a git
	// configuration file, an ancestor's .git): the inputs must be found
	// again, and the verdicts may change as with InputRules.
	InputConfig
	// InputIndex: a repository's index, which says which directories of
	// the default list are tracked (Repo.Tracked).
	InputIndex
)

// Input is one file the verdicts of a root depend on besides the
// .gitignore, .ignore and .git entries of the tree's own directories,
// which a walk reads as it lists them. It may not exist (yet).
type Input struct {
	Path string // absolute, as git would name it (not resolved)
	Kind InputKind
}

// gitGlobal is git's configuration outside any repository, as far as the
// rules need it.
type gitGlobal struct {
	home, xdg string
	// files are the configuration files git reads before a
	// repository's own, in its order (system, then global), whether or
	// not they exist.
	files []string
	// excludesFile is core.excludesFile from files (the last wins), ""
	// when unset; envExcludes is the GIT_CONFIG_COUNT pairs' value, which
	// wins over every file.
	excludesFile, envExcludes string
}

// systemGitConfig is the system configuration file of git as
// distributions build it (prefix /usr); GIT_CONFIG_SYSTEM names another.
const systemGitConfig = "/etc/gitconfig"

// readGitGlobal reads git's configuration outside any repository from the
// process's environment.
func readGitGlobal() *gitGlobal {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	e := &gitGlobal{home: home, xdg: xdg}
	if !gitBool(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		sys := systemGitConfig
		if v, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
			sys = v
		}
		e.files = append(e.files, sys)
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		e.files = append(e.files, g)
	} else {
		if xdg != "" {
			e.files = append(e.files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			e.files = append(e.files, filepath.Join(home, ".gitconfig"))
		}
	}
	e.files = slices.DeleteFunc(e.files, func(f string) bool { return f == "" })
	for _, f := range e.files {
		if data, err := os.ReadFile(f); err == nil {
			if c := parseGitConfig(data); c.excludesFile != "" {
				e.excludesFile = c.excludesFile
			}
		}
	}
	e.envExcludes = envConfigValue("core.excludesfile")
	return e
}

// excludes returns the path of the excludes file in force in a
// repository whose work tree top is top (absolute; "" outside any) and
// whose own configuration sets core.excludesFile to local ("" if not):
// $XDG_CONFIG_HOME/git/ignore unless configured. A leading "~/" is the
// home directory; a relative path is taken from the work tree top (git
// takes it from where it runs).
func (e *gitGlobal) excludes(local, top string) string {
	file := e.excludesFile
	if local != "" {
		file = local
	}
	if e.envExcludes != "" {
		file = e.envExcludes
	}
	if file == "" {
		if e.xdg == "" {
			return ""
		}
		return filepath.Join(e.xdg, "git", "ignore")
	}
	if strings.HasPrefix(file, "~/") && e.home != "" {
		file = filepath.Join(e.home, file[2:])
	}
	if !filepath.IsAbs(file) && top != "" {
		file = filepath.Join(top, file)
	}
	return file
}

// globalExcludesFile returns core.excludesFile as git finds it outside
// any repository (see readGitGlobal), else $XDG_CONFIG_HOME/git/ignore
// (default ~/.config/git/ignore).
func globalExcludesFile() string { return readGitGlobal().excludes("", "") }

// envConfigValue returns the last value git's environment configuration
// (GIT_CONFIG_COUNT pairs of GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n)
// gives key (section.name, compared without case), or "".
func envConfigValue(key string) string {
	n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT"))
	if err != nil {
		return ""
	}
	v := ""
	for i := range n {
		if strings.EqualFold(os.Getenv("GIT_CONFIG_KEY_"+strconv.Itoa(i)), key) {
			v = os.Getenv("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
		}
	}
	return v
}

// gitConfig is what one git configuration file says, as far as the
// rules need it.
type gitConfig struct {
	excludesFile   string // core.excludesFile
	objectFormat   string // extensions.objectFormat
	worktreeConfig bool   // extensions.worktreeConfig
}

// parseGitConfig reads the keys of gitConfig from a git config file:
// enough of the format for them (section headers, key = value, a key
// alone for true, comments, quotes); includes are not followed.
func parseGitConfig(data []byte) gitConfig {
	var c gitConfig
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 {
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(strings.Fields(s[1:end] + " ")[0]))
			s = strings.TrimSpace(s[end+1:])
			if s == "" {
				continue
			}
		}
		k, v, ok := strings.Cut(s, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok {
			v = "true" // a key alone is true
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.Trim(v, `"`)
		switch cur + "." + k {
		case "core.excludesfile":
			c.excludesFile = v
		case "extensions.objectformat":
			c.objectFormat = strings.ToLower(v)
		case "extensions.worktreeconfig":
			c.worktreeConfig = gitBool(v)
		}
	}
	return c
}

// gitBool reads a git boolean ("true", "yes", "on", or a nonzero number).
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on":
		return true
	}
	n, err := strconv.Atoi(v)
	return err == nil && n != 0
}

// gitRepo is where one repository's files are.
type gitRepo struct {
	top    string // the work tree's top directory, absolute
	gitDir string // absolute
	common string // the common directory (a linked worktree's main git directory), else gitDir
	// in is the work tree top, open, when the git directory is its own
	// .git directory: its files are then read beneath it, following no
	// symbolic link, as every file under a root is. Otherwise (a .git
	// file naming the git directory, a repository above the root) they
	// are read by path.
	in *os.File
}

// maxGitFile bounds a small file of a git directory read whole (a .git
// file, commondir, a config file).
const maxGitFile = 1 << 20

// repoAt returns the repository of the work tree top dir (open; its
// Name the absolute path) holding .git; ok is false when .git is neither
// a directory nor a file naming one.
func repoAt(dir *os.File) (*gitRepo, bool) {
	top := dir.Name()
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), GitDir, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return nil, false
	}
	g := &gitRepo{top: top, gitDir: filepath.Join(top, GitDir)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		g.in = dir
	case unix.S_IFREG:
		data, err := rooted.ReadFile(dir, GitDir, maxGitFile)
		if err != nil || !g.pointTo(data) {
			return nil, false
		}
	case unix.S_IFLNK:
		// Followed, as git follows it: read by path.
	default:
		return nil, false
	}
	g.findCommon()
	return g, true
}

// repoAbove returns the repository whose work tree top is top (absolute,
// outside the root: read by path).
func repoAbove(top string) (*gitRepo, bool) {
	g := &gitRepo{top: top, gitDir: filepath.Join(top, GitDir)}
	st, err := os.Stat(g.gitDir)
	switch {
	case err != nil:
		return nil, false
	case st.Mode().IsRegular():
		data, err := readSmall(g.gitDir)
		if err != nil || !g.pointTo(data) {
			return nil, false
		}
	case !st.IsDir():
		return nil, false
	}
	g.findCommon()
	return g, true
}

// pointTo sets the git directory from a .git file's "gitdir: PATH" (a
// relative PATH is taken from the work tree top).
func (g *gitRepo) pointTo(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	p, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r \t"), []byte("gitdir:"))
	if !ok {
		return false
	}
	s := strings.TrimSpace(string(p))
	if s == "" {
		return false
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(g.top, s)
	}
	g.gitDir = filepath.Clean(s)
	return true
}

// findCommon sets the common directory from the git directory's
// commondir file, if it has one (a linked worktree's).
func (g *gitRepo) findCommon() {
	g.common = g.gitDir
	data, err := g.readFile(false, "commondir")
	if err != nil {
		return
	}
	c := strings.TrimSpace(string(data))
	if c == "" {
		return
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(g.gitDir, c)
	}
	g.common = filepath.Clean(c)
	g.in = nil // its files are no longer all beneath the work tree's .git
}

// path returns the absolute path of the file name in the git directory
// (common: in the common directory).
func (g *gitRepo) path(common bool, name string) string {
	if common {
		return filepath.Join(g.common, name)
	}
	return filepath.Join(g.gitDir, name)
}

// open opens the regular file name of the git directory (common: of the
// common directory) for reading, with its status.
func (g *gitRepo) open(common bool, name string) (*os.File, unix.Stat_t, error) {
	if g.in != nil {
		return rooted.OpenRegular(g.in, GitDir+"/"+name)
	}
	var st unix.Stat_t
	f, err := os.Open(g.path(common, name))
	if err != nil {
		return nil, st, err
	}
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, st, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, st, &os.PathError{Op: "open", Path: f.Name(), Err: unix.EINVAL}
	}
	return f, st, nil
}

// readFile reads a small file of the git directory whole.
func (g *gitRepo) readFile(common bool, name string) ([]byte, error) {
	if g.in != nil {
		return rooted.ReadFile(g.in, GitDir+"/"+name, maxGitFile)
	}
	return readSmall(g.path(common, name))
}

// readSmall reads the file at p, refusing one over maxGitFile bytes.
func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err == nil && len(data) > maxGitFile {
		err = &os.PathError{Op: "read", Path: p, Err: unix.EFBIG}
	}
	return data, err
}

// config returns what the repository's own configuration says: its
// config, then its config.worktree when extensions.worktreeConfig is on.
func (g *gitRepo) config() gitConfig {
	var c gitConfig
	if data, err := g.readFile(true, "config"); err == nil {
		c = parseGitConfig(data)
	}
	if c.worktreeConfig {
		if data, err := g.readFile(false, "config.worktree"); err == nil {
			if w := parseGitConfig(data); w.excludesFile != "" {
				c.excludesFile = w.excludesFile
			}
		}
	}
	return c
}

// hashLen is the length of the repository's object names.
func (c gitConfig) hashLen() int {
	if c.objectFormat == "sha256" {
		return 32
	}
	return 20
}

// repoRules is what a repository gives the rules of its work tree.
type repoRules struct {
	exclude  *Rules // info/exclude
	excludes *Rules // the excludes file in force in it
	// tracked holds the directories of the default list (relative to
	// the work tree top) in which its index holds an entry; nil when
	// none or when the index cannot be read.
	tracked map[string]struct{}
}

// rules reads what the repository gives the rules, e being git's
// configuration outside it.
func (g *gitRepo) rules(e *gitGlobal) repoRules {
	c := g.config()
	var r repoRules
	if data, err := g.readFile(true, "info/exclude"); err == nil {
		r.exclude = parseRules(data)
	}
	if f := e.excludes(c.excludesFile, g.top); f != "" {
		r.excludes = readRules(f)
	}
	r.tracked = g.trackedDirs(c.hashLen())
	return r
}

// inputs returns the files the repository's rules are read from, c
// being its configuration.
func (g *gitRepo) inputs(e *gitGlobal, c gitConfig) []Input {
	in := []Input{
		{g.path(true, "config"), InputConfig},
		{g.path(true, "info/exclude"), InputRules},
		{g.path(false, "index"), InputIndex},
	}
	if c.worktreeConfig {
		in = append(in, Input{g.path(false, "config.worktree"), InputConfig})
	}
	if f := e.excludes(c.excludesFile, g.top); f != "" {
		in = append(in, Input{f, InputRules})
	}
	for _, f := range e.files {
		in = append(in, Input{f, InputConfig})
	}
	return in
}

// The tracked directories of each index file read, by its path, so that
// an index is parsed once per change, not once per walk: a walk that
// meets a repository only checks that its index is the one parsed (its
// device, inode, size, mtime, ctime and trailing hash). git replaces the
// index by a rename, so a change makes a new inode; the hash covers the
// rare reuse of one within a timestamp tick. An index written with
// index.skipHash (an all-zero trailer) changed within the last
// trackedRacy of its parse is parsed again each time, until it is
// older (git's racy-git rule).
var trackedCache struct {
	mu sync.Mutex // guards m
	m  map[string]*trackedEntry
}

// trackedCacheMax bounds trackedCache; past it an entry is dropped.
const trackedCacheMax = 256

// trackedRacy is how old an index with no hash must be to be trusted on
// its status alone.
const trackedRacy = 2 * time.Second

type trackedEntry struct {
	dev, ino           uint64
	size, mtime, ctime int64
	trailer            string
	racy               bool
	set                map[string]struct{}
}

// trackedDirs returns the directories of the default list in which the
// repository's index holds an entry (see repoRules.tracked).
func (g *gitRepo) trackedDirs(hashLen int) map[string]struct{} {
	f, st, err := g.open(false, "index")
	if err != nil {
		return nil
	}
	defer f.Close()
	key := g.path(false, "index")
	var trailer [32]byte
	tr := trailer[:hashLen]
	if st.Size < int64(12+hashLen) {
		return nil
	}
	if _, err := f.ReadAt(tr, st.Size-int64(hashLen)); err != nil {
		return nil
	}
	zero := !slices.ContainsFunc(tr, func(b byte) bool { return b != 0 })
	trackedCache.mu.Lock()
	e := trackedCache.m[key]
	if e != nil && e.dev == uint64(st.Dev) && e.ino == st.Ino && e.size == st.Size &&
		e.mtime == st.Mtim.Nano() && e.ctime == st.Ctim.Nano() && e.trailer == string(tr) && (!zero || !e.racy) {
		trackedCache.mu.Unlock()
		return e.set
	}
	trackedCache.mu.Unlock()
	t0 := time.Now()
	set, err := g.parseTracked(f, st.Size, hashLen)
	if err != nil {
		set = nil // the default list applies, and answers say what it skipped
	}
	e = &trackedEntry{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		trailer: string(tr), racy: st.Ctim.Nano() >= t0.Add(-trackedRacy).UnixNano(), set: set}
	trackedCache.mu.Lock()
	if trackedCache.m == nil {
		trackedCache.m = make(map[string]*trackedEntry)
	}
	if len(trackedCache.m) >= trackedCacheMax {
		for k := range trackedCache.m {
			delete(trackedCache.m, k)
			break
		}
	}
	trackedCache.m[key] = e
	trackedCache.mu.Unlock()
	return set
}

// parseTracked reads the index f (size bytes) and, for a split index,
// its shared index, into the set of tracked directories on the default
// list.
func (g *gitRepo) parseTracked(f *os.File, size int64, hashLen int) (map[string]struct{}, error) {
	var t trackedDirs
	link, _, err := readGitIndex(io.NewSectionReader(f, 0, size), size, hashLen, t.add)
	if err != nil || link == nil {
		return t.set, err
	}
	sf, sst, err := g.open(false, "sharedindex."+hex.EncodeToString(link.shared))
	if err != nil {
		return nil, errors.Join(ErrBadIndex, err)
	}
	defer sf.Close()
	t.prev = nil
	var pos uint64
	k := 0
	inner, _, err := readGitIndex(io.NewSectionReader(sf, 0, sst.Size), sst.Size, hashLen, func(p []byte, dir bool) {
		if !inRanges(link.deleted, &k, pos) {
			t.add(p, dir)
		}
		pos++
	})
	if err == nil && inner != nil {
		err = errors.Join(ErrBadIndex, errors.New("ignore: a shared index links to another"))
	}
	if err != nil {
		return nil, err
	}
	return t.set, nil
}

// Repo is one git repository whose rules govern part of a root: the one
// holding the root (at the root or above it) or one inside it.
type Repo struct {
	// Top is the root-relative directory holding the repository's .git;
	// "" for the root and for a repository above the root.
	Top string
	// Inputs are the files its rules are read from besides the tree's
	// own .gitignore, .ignore and .git entries (see Input), among them
	// git's configuration outside any repository.
	Inputs []Input
	// Tracked lists the root-relative directories of the default list
	// in which the repository's index holds an entry, sorted; nil when
	// there is none, or when the index cannot be read (then the default
	// list applies there).
	Tracked []string
}

// RepoAt returns the repository whose .git is in the directory rel
// (root-relative, "" for the root), open as dir; ok is false when it has
// none.
func RepoAt(dir *os.File, rel string) (Repo, bool) {
	g, ok := repoAt(dir)
	if !ok {
		return Repo{}, false
	}
	e := readGitGlobal()
	c := g.config()
	r := Repo{Top: rel, Inputs: g.inputs(e, c)}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	for d := range g.trackedDirs(c.hashLen()) {
		r.Tracked = append(r.Tracked, prefix+d)
	}
	slices.Sort(r.Tracked)
	return r, true
}

// AboveInputs returns the inputs of root's rules (root absolute,
// symlink-free) that no repository inside the root owns: git's
// configuration outside any repository, and when root lies inside a
// repository without being its top, that repository's inputs (with each
// ancestor's .gitignore, .ignore and .git up to its top); repo then
// describes it, with Top "".
//
// Not among them: the .ignore files of ancestors above every repository
// (or of every ancestor outside one), and a .git made in such an
// ancestor. Watching them would mean watching every directory up to "/"
// (with /tmp and /home), for files that are almost never there.
func AboveInputs(root string) (in []Input, repo Repo, ok bool) {
	e := readGitGlobal()
	for _, f := range e.files {
		in = append(in, Input{f, InputConfig})
	}
	if _, err := os.Lstat(filepath.Join(root, GitDir)); err == nil {
		return in, Repo{}, false // the root's own: see RepoAt
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		in = append(in,
			Input{filepath.Join(d, GitignoreFile), InputRules},
			Input{filepath.Join(d, IgnoreFile), InputRules},
			Input{filepath.Join(d, GitDir), InputConfig})
		if _, err := os.Lstat(filepath.Join(d, GitDir)); err == nil {
			g, gok := repoAbove(d)
			if !gok {
				break
			}
			rel, err := filepath.Rel(d, root)
			if err != nil {
				break
			}
			prefix := filepath.ToSlash(rel) + "/"
			c := g.config()
			repo = Repo{Inputs: g.inputs(e, c)}
			for t := range g.trackedDirs(c.hashLen()) {
				if r, ok := strings.CutPrefix(t, prefix); ok {
					repo.Tracked = append(repo.Tracked, r)
				}
			}
			slices.Sort(repo.Tracked)
			return append(in, repo.Inputs...), repo, true
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	// Outside any repository: the ancestors' files are not watched (see
	// above).
	return in[:len(e.files)], Repo{}, false
}
