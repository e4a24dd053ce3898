// Command gentree writes a large, deterministic source tree for the
// side-by-side benchmark (bench/sidebyside): a monorepo of nested
// projects in several languages, with node_modules, build output, hidden
// directories, binary and large files, and tokens planted at known rates.
//
//	go run ./bench/gentree -out /tmp/bench-large [-files 200000] [-seed 1]
//
// The same flags give a byte-identical tree: names, contents, modes and
// mtimes (files and directories) all derive from the seed and the
// reference time, whatever the number of writers. The tree's manifest,
// .gentree.json at its top (hidden, so no tool searches it by default),
// records what was planted and how many files each benchmark glob should
// find. -git runs `git init` afterwards (its .git directory is not
// deterministic), which makes the .gitignore files take effect. -links
// DIR gives every -link-every'th file (in the plan's order) a second
// hard link in DIR, outside the tree (as a package manager's store or a
// cp -l backup would): the tree's bytes are the same, its files' link
// counts are not; the watcher watches each such file on its own.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
)

func main() {
	var (
		out     = flag.String("out", "", "directory to create (required; must not exist or be empty, or be a tree made by gentree with -force)")
		files   = flag.Int("files", 200000, "number of files")
		seed    = flag.Uint64("seed", 1, "seed")
		large   = flag.Int("large", 6, "number of large files (sizes spread from 1 MB to -large-max-mb)")
		largeMB = flag.Int("large-max-mb", 20, "size of the largest file in MB")
		ref     = flag.String("ref", "2025-01-01T00:00:00Z", "reference time (RFC 3339): mtimes lie in the two years before it, 1% in its last 24 hours")
		gitInit = flag.Bool("git", false, "run git init in the tree afterwards (makes .gitignore files apply; .git is not deterministic)")
		force   = flag.Bool("force", false, "replace an existing tree made by gentree")
		workers = flag.Int("workers", 2*runtime.GOMAXPROCS(0), "parallel writers (does not change the output)")
		links   = flag.String("links", "", "directory outside the tree (created; must not exist or be empty) to give files a second hard link in")
		every   = flag.Int("link-every", 10, "with -links: link every Nth file (10: 10% of the files)")
	)
	flag.Parse()
	if *out == "" || *files < 1 || *workers < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	refTime, err := time.Parse(time.RFC3339, *ref)
	if err != nil {
		fatal(fmt.Errorf("-ref: %w", err))
	}
	if err := prepare(*out, *force); err != nil {
		fatal(err)
	}
	start := time.Now()
	p := makePlan(config{files: *files, seed: *seed, large: *large, largeMaxB: int64(*largeMB) << 20, ref: refTime})
	planned := time.Since(start)
	if err := write(*out, p, *workers); err != nil {
		fatal(err)
	}
	if *links != "" {
		n, err := linkOut(*out, *links, p, *every)
		if err != nil {
			fatal(fmt.Errorf("-links: %w", err))
		}
		fmt.Printf("gentree: %d files (1 in %d) have a second link in %s\n", n, *every, *links)
	}
	if *gitInit {
		cmd := exec.Command("git", "init", "-q", *out)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fatal(fmt.Errorf("git init: %w", err))
		}
	}
	m := p.man
	el := time.Since(start)
	fmt.Printf("gentree: %s: %d files, %d dirs, %d bytes (%.1f MiB) in %v (plan %v)\n",
		*out, m.Files, m.Dirs, m.Bytes, float64(m.Bytes)/(1<<20), el.Round(time.Millisecond), planned.Round(time.Millisecond))
	fmt.Printf("  seed %d, ref %s, max depth %d, %d recent (last 24 h)\n", m.Seed, m.RefTime, m.MaxDepth, m.RecentFiles)
	fmt.Printf("  binary %d, large %d, node_modules %d, build %d, hidden %d, gitignored %d\n",
		m.BinaryFiles, len(m.LargeFiles), m.NodeModulesFiles, m.BuildFiles, m.HiddenFiles, m.GitignoredFiles)
	fmt.Printf("  planted: %q in %d files (+%d in node_modules), %q in %d, `func main` in %d, `func XxxHandler(` %d lines in %d files\n",
		corpus.RareLiteral, m.RareFiles, m.RareFilesIgnored, corpus.RareLiteralUpper, m.RareUpperFiles, m.FuncMainFiles, m.HandlerLines, m.HandlerFiles)
	for _, g := range corpus.GlobPatterns {
		fmt.Printf("  glob %-24s %d visible files\n", g, m.Globs[g])
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gentree:", err)
	os.Exit(1)
}

// prepare makes sure out can be written: missing, empty, or (with force)
// a previous gentree tree, which is removed.
func prepare(out string, force bool) error {
	ents, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(ents) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(out, corpus.ManifestName)); err != nil {
		return fmt.Errorf("%s is not empty and holds no %s: not touching it", out, corpus.ManifestName)
	}
	if !force {
		return fmt.Errorf("%s holds a generated tree; use -force to replace it", out)
	}
	return os.RemoveAll(out)
}

// write creates the directories, writes the files in parallel, then the
// manifest, then sets the directories' mtimes (last, since adding entries
// changes them).
func write(out string, p *plan, workers int) error {
	for _, d := range p.dirs {
		if err := os.Mkdir(filepath.Join(out, filepath.FromSlash(d.rel)), 0o755); err != nil && !(d.rel == "" && errors.Is(err, fs.ErrExist)) {
			return err
		}
	}
	sizes := make([]int64, len(p.files))
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(p.files) {
					return
				}
				f := p.files[i]
				buf = render(p, f, buf)
				if err := writeFile(filepath.Join(out, filepath.FromSlash(f.rel)), buf, fs.FileMode(f.mode), f.mtime); err != nil {
					once.Do(func() { firstErr = err })
					next.Store(int64(len(p.files)))
					return
				}
				sizes[i] = int64(len(buf))
				if cap(buf) > 1<<20 {
					buf = nil // do not keep a large file's buffer
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	m := &p.man
	m.Version = corpus.ManifestVersion
	m.Seed = p.seed
	m.RefTime = p.ref.UTC().Format(time.RFC3339)
	for _, s := range sizes {
		m.Bytes += s
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, corpus.ManifestName), append(b, '\n'), 0o644, p.ref.UnixNano()); err != nil {
		return err
	}
	day := int64(24 * time.Hour)
	for i, d := range p.dirs {
		t := p.ref.UnixNano() - day - int64(splitmix(p.seed^uint64(i)*0x2545f4914f6cdd1d)%uint64(365*day))
		if err := os.Chtimes(filepath.Join(out, filepath.FromSlash(d.rel)), time.Unix(0, t), time.Unix(0, t)); err != nil {
			return err
		}
	}
	return nil
}

// linkOut gives every every'th file of p (in plan order) a second hard
// link in dir, which must lie outside out and be missing or empty; it
// returns how many it linked.
func linkOut(out, dir string, p *plan, every int) (int, error) {
	if every < 1 {
		return 0, errors.New("-link-every must be at least 1")
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return 0, err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	if rel, err := filepath.Rel(absOut, absDir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return 0, fmt.Errorf("%s lies inside the tree %s", dir, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		return 0, fmt.Errorf("%s is not empty (or unreadable: %v)", dir, err)
	}
	n := 0
	for i := 0; i < len(p.files); i += every {
		src := filepath.Join(out, filepath.FromSlash(p.files[i].rel))
		if err := os.Link(src, filepath.Join(dir, strconv.Itoa(i))); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func writeFile(path string, data []byte, mode fs.FileMode, mtime int64) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(path, mode); err != nil { // the umask must not vary the tree
		return err
	}
	t := time.Unix(0, mtime)
	return os.Chtimes(path, t, t)
}
