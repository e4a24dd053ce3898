package ignore

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The index reader is held to git itself: index files written by real
// git (versions 2, 3 and 4, a split index, a sparse index, a SHA-256
// repository) must give exactly the entries `git ls-files` lists, and
// the tracked directories of the default list those entries imply.

// indexGit runs git with a hermetic environment in dir.
func indexGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// indexFixture is a work tree with tracked files in directories of the
// default list (nested too), a file named like one, a submodule entry
// named like one, and an untracked build/.
var indexFixture = map[string]string{
	"go/build/build.go":                  "package build\n\nfunc Import() {}\n",
	"go/build/testdata/build/x.go":       "package x\n",
	"cmd/dist/main.go":                   "package main\n",
	"web/node_modules/left-pad/index.js": "module.exports = 1\n",
	"lib/target":                         "a file named target\n",
	"README":                             "top\n",
	"deep/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/file-with-a-rather-long-name-to-pass-one-hundred-bytes.txt": "deep\n",
}

func writeFixture(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newIndexRepo makes a repository of indexFixture with everything added,
// a submodule entry at third/dist, an intent-to-add file (an extended
// flag) and an untracked build/ beside; extra args go to git init.
func newIndexRepo(t *testing.T, initArgs ...string) string {
	t.Helper()
	requireGit(t)
	dir := t.TempDir()
	indexGit(t, dir, append([]string{"init", "-q", "--template="}, initArgs...)...)
	writeFixture(t, dir, indexFixture)
	writeFixture(t, dir, map[string]string{"build/out.txt": "untracked output\n", "later/dist/n.go": "package n\n"})
	indexGit(t, dir, "add", "go", "cmd", "web", "lib", "README", "deep")
	indexGit(t, dir, "add", "-N", "later/dist/n.go")
	hash := strings.TrimSpace(indexGit(t, dir, "hash-object", "-w", "README"))
	indexGit(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+hash+",third/dist")
	return dir
}

// lsFiles returns what git lists in the index: each entry's path and
// whether it is a gitlink or a sparse directory.
func lsFiles(t *testing.T, dir string, sparse bool) (paths []string, dirs map[string]bool) {
	t.Helper()
	args := []string{"ls-files", "-s", "-z"}
	if sparse {
		args = append(args, "--sparse")
	}
	dirs = map[string]bool{}
	for rec := range strings.SplitSeq(strings.TrimSuffix(indexGit(t, dir, args...), "\x00"), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			t.Fatalf("ls-files record %q", rec)
		}
		mode := strings.Fields(meta)[0]
		if mode == "160000" || mode == "040000" {
			path = strings.TrimSuffix(path, "/")
			dirs[path] = true
		}
		paths = append(paths, path)
	}
	return paths, dirs
}

// wantTracked derives the tracked directories of the default list from
// git's listing, one path at a time.
func wantTracked(paths []string, dirs map[string]bool) []string {
	set := map[string]bool{}
	for _, p := range paths {
		parts := strings.Split(p, "/")
		n := len(parts) - 1
		if dirs[p] {
			n++
		}
		for i := range n {
			if DefaultDirs[parts[i]] {
				set[strings.Join(parts[:i+1], "/")] = true
			}
		}
	}
	out := slices.Sorted(func(yield func(string) bool) {
		for d := range set {
			if !yield(d) {
				return
			}
		}
	})
	if out == nil {
		out = []string{}
	}
	return out
}

// readIndexOf reads dir's .git/index with our reader: the entries, the
// tracked directories, and the file's version.
func readIndexOf(t *testing.T, dir string, hashLen int) (paths []string, dirs map[string]bool, tracked []string, version uint32) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	version = binary.BigEndian.Uint32(data[4:])
	dirs = map[string]bool{}
	var td trackedDirs
	link, _, err := readGitIndex(bytes.NewReader(data), int64(len(data)), hashLen, func(p []byte, dir bool) {
		paths = append(paths, string(p))
		if dir {
			dirs[string(p)] = true
		}
		td.add(p, dir)
	})
	if err != nil {
		t.Fatalf("reading the index: %v", err)
	}
	if link != nil {
		t.Fatalf("a split index where none was made")
	}
	tracked = td.sorted()
	return paths, dirs, tracked, version
}

func TestReadGitIndexVersions(t *testing.T) {
	dir := newIndexRepo(t)
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			// Version 2 has no extended flags: git writes 3 while an
			// intent-to-add entry has them.
			if v == "2" {
				indexGit(t, dir, "rm", "-q", "--cached", "later/dist/n.go")
			} else {
				indexGit(t, dir, "add", "-N", "later/dist/n.go")
			}
			indexGit(t, dir, "update-index", "--index-version", v)
			paths, dirs, tracked, version := readIndexOf(t, dir, 20)
			if want := v[0] - '0'; version != uint32(want) {
				t.Fatalf("git wrote version %d, asked for %d", version, want)
			}
			gitPaths, gitDirs := lsFiles(t, dir, false)
			if !slices.Equal(paths, gitPaths) {
				t.Errorf("entries differ from git ls-files:\n got %q\nwant %q", paths, gitPaths)
			}
			if !maps2Equal(dirs, gitDirs) {
				t.Errorf("directory entries %v, git says %v", dirs, gitDirs)
			}
			want := []string{"cmd/dist", "go/build", "go/build/testdata/build", "later/dist", "third/dist", "web/node_modules"}
			if v == "2" {
				want = slices.DeleteFunc(want, func(d string) bool { return d == "later/dist" })
			}
			if !slices.Equal(tracked, want) || !slices.Equal(tracked, wantTracked(gitPaths, gitDirs)) {
				t.Errorf("tracked directories %q, want %q", tracked, want)
			}
		})
	}
}

func maps2Equal(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// A SHA-256 repository: 32-byte object names, found from its config.
func TestReadGitIndexSHA256(t *testing.T) {
	dir := newIndexRepo(t, "--object-format=sha256")
	g, ok := repoAbove(dir)
	if !ok {
		t.Fatal("no repository found")
	}
	if n := g.config().hashLen(); n != 32 {
		t.Fatalf("hash length %d, want 32", n)
	}
	for _, v := range []string{"2", "4"} {
		indexGit(t, dir, "update-index", "--index-version", v)
		paths, _, tracked, _ := readIndexOf(t, dir, 32)
		gitPaths, gitDirs := lsFiles(t, dir, false)
		if !slices.Equal(paths, gitPaths) || !slices.Equal(tracked, wantTracked(gitPaths, gitDirs)) {
			t.Errorf("v%s: entries %q, tracked %q; git lists %q", v, paths, tracked, gitPaths)
		}
	}
}

// A split index: the shared index less its deleted entries, plus the
// split index's own. Entries are removed, replaced and added after the
// split, so the link's bitmaps are not empty.
func TestReadGitIndexSplit(t *testing.T) {
	dir := newIndexRepo(t)
	indexGit(t, dir, "update-index", "--split-index")
	indexGit(t, dir, "rm", "-q", "--cached", "-r", "cmd/dist")
	writeFixture(t, dir, map[string]string{"go/build/build.go": "package build // changed\n", "tools/dist/d.go": "package d\n"})
	indexGit(t, dir, "add", "go/build/build.go", "tools/dist/d.go")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("link")) {
		t.Fatal("git wrote no split index")
	}
	g, ok := repoAbove(dir)
	if !ok {
		t.Fatal("no repository")
	}
	f, st, err := g.open(false, "index")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := g.parseTracked(f, st.Size, 20)
	if err != nil {
		t.Fatal(err)
	}
	var td trackedDirs
	td.set = set
	gitPaths, gitDirs := lsFiles(t, dir, false)
	want := wantTracked(gitPaths, gitDirs)
	if got := td.sorted(); !slices.Equal(got, want) {
		t.Errorf("tracked %q, git's listing gives %q", got, want)
	}
	if slices.Contains(want, "cmd/dist") || !slices.Contains(want, "tools/dist") {
		t.Fatalf("the fixture did not remove cmd/dist and add tools/dist: %q", want)
	}
}

// A sparse index: directories outside the sparse cone are single
// entries (mode 040000, "dir/"), tracked directories themselves.
func TestReadGitIndexSparse(t *testing.T) {
	dir := newIndexRepo(t)
	// git 2.39's sparse-checkout crashes on an intent-to-add entry and
	// refuses a submodule entry not checked out.
	indexGit(t, dir, "rm", "-q", "--cached", "third/dist", "later/dist/n.go")
	indexGit(t, dir, "commit", "-q", "-m", "fixture")
	indexGit(t, dir, "sparse-checkout", "init", "--cone", "--sparse-index")
	indexGit(t, dir, "sparse-checkout", "set", "go")
	paths, dirs, tracked, _ := readIndexOf(t, dir, 20)
	gitPaths, gitDirs := lsFiles(t, dir, true)
	if len(gitDirs) == 0 {
		t.Fatal("git wrote no sparse directory entry")
	}
	if !slices.Equal(paths, gitPaths) || !maps2Equal(dirs, gitDirs) {
		t.Errorf("entries %q (dirs %v), git lists %q (dirs %v)", paths, dirs, gitPaths, gitDirs)
	}
	if want := wantTracked(gitPaths, gitDirs); !slices.Equal(tracked, want) {
		t.Errorf("tracked %q, want %q", tracked, want)
	}
}

// Damaged index files are errors, never panics, and a shorter file than
// the header says is caught.
func TestReadGitIndexDamaged(t *testing.T) {
	dir := newIndexRepo(t)
	for _, v := range []string{"2", "4"} {
		indexGit(t, dir, "update-index", "--index-version", v)
		data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 4, 12, 40, 100, len(data) / 2, len(data) - 21, len(data) - 1} {
			_, _, err := readGitIndex(bytes.NewReader(data[:n]), int64(n), 20, func([]byte, bool) {})
			if err == nil {
				t.Errorf("v%s cut to %d bytes: no error", v, n)
			}
		}
		bad := slices.Clone(data)
		bad[7] = 9 // version 9
		if _, _, err := readGitIndex(bytes.NewReader(bad), int64(len(bad)), 20, func([]byte, bool) {}); err == nil {
			t.Errorf("v%s: version 9 read", v)
		}
	}
}

// FuzzReadGitIndex: no input makes the reader panic or loop, and what it
// reads it reads within the file. The seeds are real index files.
func FuzzReadGitIndex(f *testing.F) {
	if _, err := exec.LookPath("git"); err == nil {
		dir := f.TempDir()
		cmd := exec.Command("sh", "-c", `git init -q --template= && mkdir -p a/build b/dist && echo x > a/build/x && echo y > b/dist/y && echo z > z && git add . && cp .git/index v2 && echo n > n && git add -N n && git update-index --index-version 4 && cp .git/index v4 && git update-index --index-version 3 && cp .git/index v3`)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err == nil {
			for _, n := range []string{"v2", "v3", "v4"} {
				if data, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
					f.Add(data)
				}
			}
		} else {
			f.Logf("git: %v\n%s", err, out)
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01"))
	f.Add([]byte("DIRC\x00\x00\x00\x02\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, hashLen := range []int{20, 32} {
			var td trackedDirs
			n := 0
			link, trailer, err := readGitIndex(bytes.NewReader(data), int64(len(data)), hashLen, func(p []byte, dir bool) {
				if len(p) > maxIndexPath {
					t.Fatalf("a path of %d bytes", len(p))
				}
				n++
				td.add(p, dir)
			})
			if err != nil {
				continue
			}
			if len(trailer) != hashLen {
				t.Fatalf("trailer of %d bytes", len(trailer))
			}
			if link != nil {
				k := 0
				for i := range uint64(n) {
					inRanges(link.deleted, &k, i)
				}
			}
			for d := range td.set {
				if !DefaultDirs[d[strings.LastIndexByte(d, '/')+1:]] {
					t.Fatalf("tracked %q, not on the default list", d)
				}
			}
		}
	})
}

// FuzzReadEWAH: no bitmap makes the decoder panic or allocate beyond its
// size, and its runs come out sorted and apart.
func FuzzReadEWAH(f *testing.F) {
	f.Add([]byte{0, 0, 0, 64, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, rest, err := readEWAH(data)
		if err != nil {
			return
		}
		if len(rest) > len(data) {
			t.Fatal("rest longer than the input")
		}
		if len(runs) > 64*len(data) {
			t.Fatalf("%d runs from %d bytes", len(runs), len(data))
		}
		for i, r := range runs {
			if r.lo >= r.hi || i > 0 && runs[i-1].hi >= r.lo {
				t.Fatalf("runs out of order: %v", runs)
			}
		}
	})
}

// readEWAH decodes git's own bitmaps: the split index's deletions are
// checked above against git; here a hand-made one, bit by bit.
func TestReadEWAH(t *testing.T) {
	// Bits 0 and 2, then a run of 64 ones at 128, then bit 192+63.
	var b []byte
	be64 := func(v uint64) { b = binary.BigEndian.AppendUint64(b, v) }
	b = binary.BigEndian.AppendUint32(b, 256)
	b = binary.BigEndian.AppendUint32(b, 5)
	be64(uint64(2) << 33)          // marker: no run, 2 literal words
	be64(0b101)                    // bits 0, 2
	be64(0)                        // nothing in 64–127
	be64(1 | 1<<1 | uint64(1)<<33) // marker: a run of 1 word of ones, then 1 literal
	be64(1 << 63)                  // bit 192+63
	b = binary.BigEndian.AppendUint32(b, 3)
	b = append(b, 0xaa) // what follows
	runs, rest, err := readEWAH(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []bitRange{{0, 1}, {2, 3}, {128, 192}, {255, 256}}
	if !slices.Equal(runs, want) || !bytes.Equal(rest, []byte{0xaa}) {
		t.Errorf("runs %v rest %x, want %v aa", runs, rest, want)
	}
}
