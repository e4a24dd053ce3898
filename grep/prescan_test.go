package grep

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tree"
)

// A scan given a prescan's hits answers exactly as one that reads every
// file itself, in every output mode, for a pattern in most files (the
// prescan stops at the answer's need) and in a few, at limits on either
// side of the matches; and the prescan did read files (else the test
// proves nothing). Files get distinct mtimes, so the walk's order is not
// the answer's.
func TestPrescanSameAnswers(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		body := fmt.Sprintf("line one %d\nplain\n", i)
		if i%3 == 0 {
			body += "common needle\ncommon needle again\n"
		}
		if i%97 == 0 {
			body += "RareToken here\n"
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = body
	}
	root := testtree.Write(t, files)
	base := time.Now().Add(-time.Hour)
	for i := range 300 {
		rel := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		mt := base.Add(time.Duration((i*37)%300) * time.Second)
		if err := os.Chtimes(filepath.Join(root, rel), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	// walkRefs lists the files as query's Walker.Grep does (a walk of the
	// root with its ignore rules, each file with its status).
	walkRefs := func() []File {
		rt := testtree.Open(t, root)
		var refs []File
		_, err := tree.Walk(context.Background(), root, "", ignore.NewCache(rt).At(""), tree.Options{Info: true}, func(e tree.Entry) error {
			if e.Type.IsRegular() {
				refs = append(refs, File{Rel: e.Rel, ModTime: e.ModTime, Size: e.Size})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	for _, pattern := range []string{"common needle", "RareToken", "line"} {
		for _, mode := range []Mode{ModeContent, ModeFiles, ModeCount} {
			for _, limit := range []int{1, 3, 5, 150, 1000} { // RareToken: 4 files, 4 lines
				m, err := CompileMatcher(pattern, MatchOptions{CaseSensitive: true})
				if err != nil {
					t.Fatal(err)
				}
				q := &Search{Root: root, Matcher: m, Mode: mode, Limit: limit}
				plain := walkRefs()
				listed := slices.Clone(plain) // Scan reorders its slice
				want := Scan(context.Background(), q, plain)

				for _, noInfo := range []bool{false, true} {
					// Listed with their status, files are offered and
					// may be left to Scan; listed without, they are
					// handed over and their status comes from the
					// prescan's read or from stateFiles.
					refs := walkRefs()
					if noInfo {
						for i := range refs {
							refs[i] = File{Rel: refs[i].Rel, NoInfo: true}
						}
					}
					ps := StartPrescan(context.Background(), q)
					for _, r := range refs { // every file offered until taken, or the prescan has enough
						ps.Offer(r, true)
					}
					hits := ps.finish(noInfo)
					read := 0
					for _, h := range hits {
						if h != nil {
							read++
						}
					}
					if read == 0 {
						t.Fatalf("%q %s limit %d: the prescan read no file", pattern, mode, limit)
					}
					// Every file holds "line": once two are read (limit 1's
					// need), only the files already being read are added.
					if pattern == "line" && mode != ModeCount && limit == 1 && read > 2+runtime.GOMAXPROCS(0) {
						t.Errorf("%q %s limit 1: the prescan read %d files, past the answer's need", pattern, mode, read)
					}
					refs, err := stateFiles(context.Background(), q, refs, hits)
					if err != nil {
						t.Fatal(err)
					}
					// Every file keeps the walk's status, but for a file
					// read with nothing to report when the answer is not
					// truncated: that one may go without.
					if len(refs) != len(listed) {
						t.Fatalf("%q %s limit %d noInfo %v: %d files after the prescan, the walk listed %d", pattern, mode, limit, noInfo, len(refs), len(listed))
					}
					unstated := 0
					for i, f := range refs {
						bare := f
						bare.pre = nil
						if bare == listed[i] {
							continue
						}
						if f.pre == nil || !f.pre.quiet() || want.Truncated || bare != (File{Rel: listed[i].Rel}) {
							t.Fatalf("%q %s limit %d noInfo %v: %+v after the prescan, the walk listed %+v", pattern, mode, limit, noInfo, f, listed[i])
						}
						unstated++
					}
					if noInfo && !want.Truncated && pattern != "line" && unstated == 0 { // every file holds "line"
						t.Errorf("%q %s limit %d: every file quiet was stat'd", pattern, mode, limit)
					}
					got := Scan(context.Background(), q, refs)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%q %s limit %d noInfo %v (%d files prescanned):\n got %+v\nwant %+v", pattern, mode, limit, noInfo, read, got, want)
					}
				}
			}
		}
	}
}

// Files a walk listed without their status and nobody read are stat'd
// as the walk would stat them, and what is no longer a regular file
// beneath the root by then is dropped: a file removed, one replaced by a
// directory, one by a symlink to a file outside the root, and a file
// whose directory was swapped for a symlink to a directory outside.
func TestStateFilesAfterChanges(t *testing.T) {
	t.Parallel()
	outside := testtree.Write(t, map[string]string{"secret.txt": "secret", "d/x.txt": "outside x"})
	root := testtree.Write(t, map[string]string{
		"keep.txt":  "kept",
		"gone.txt":  "gone",
		"dir.txt":   "becomes a dir",
		"link.txt":  "becomes a link",
		"d/x.txt":   "inside x",
		"e/kept.go": "package e",
	})
	var refs []File
	for _, rel := range []string{"d/x.txt", "dir.txt", "e/kept.go", "gone.txt", "keep.txt", "link.txt"} {
		refs = append(refs, File{Rel: rel, NoInfo: true})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Remove(filepath.Join(root, "gone.txt")))
	must(os.Remove(filepath.Join(root, "dir.txt")))
	must(os.Mkdir(filepath.Join(root, "dir.txt"), 0o755))
	must(os.Remove(filepath.Join(root, "link.txt")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")))
	must(os.RemoveAll(filepath.Join(root, "d")))
	must(os.Symlink(filepath.Join(outside, "d"), filepath.Join(root, "d")))

	got, err := stateFiles(context.Background(), &Search{Root: root, Limit: 10, Mode: ModeContent}, refs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, f := range got {
		rels = append(rels, f.Rel)
		want := map[string]int64{"keep.txt": 4, "e/kept.go": 9}[f.Rel]
		if f.NoInfo || f.Size != want || f.ModTime == 0 || f.pre != nil {
			t.Errorf("%s: %+v, want size %d, an mtime and no hit", f.Rel, f, want)
		}
	}
	if want := []string{"e/kept.go", "keep.txt"}; !slices.Equal(rels, want) {
		t.Errorf("files kept %q, want %q", rels, want)
	}
}

// Out of descriptors, a file the walk listed and nobody read is kept as
// one that could not be read (Scan reports it, the answer is not
// complete), never dropped as if it were gone: a child whose every free
// descriptor but one is taken stats three listed files, the root takes
// that one, and their directories cannot be opened.
func TestStateFilesOutOfDescriptors(t *testing.T) {
	t.Parallel()
	if root := os.Getenv("INDEXD_STATE_EMFILE_ROOT"); root != "" {
		stateFilesEMFILEChild(root)
		return
	}
	root := testtree.Write(t, map[string]string{"a/x.txt": "x", "a/y.txt": "y", "b/z.txt": "z"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestStateFilesOutOfDescriptors$")
	cmd.Env = append(os.Environ(), "INDEXD_STATE_EMFILE_ROOT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "a/x.txt fault\na/y.txt fault\nb/z.txt fault" {
		t.Fatalf("child's files:\n%s\nwant all three kept, each a fault", out)
	}
}

// stateFilesEMFILEChild leaves one descriptor free and prints, for each
// file stateFiles keeps, its path and "fault" or "stat'd".
func stateFilesEMFILEChild(root string) {
	var refs []File
	for _, rel := range []string{"a/x.txt", "a/y.txt", "b/z.txt"} {
		refs = append(refs, File{Rel: rel, NoInfo: true})
	}
	release, err := testtree.LeaveOneDescriptor(256)
	if err != nil {
		fmt.Println("setup:", err)
		os.Exit(0)
	}
	got, err := stateFiles(context.Background(), &Search{Root: root, Limit: 10, Mode: ModeContent}, refs, nil)
	release()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(0)
	}
	for _, f := range got {
		what := "stat'd"
		if f.pre != nil && f.pre.fault {
			what = "fault"
		}
		fmt.Println(f.Rel, what)
	}
	os.Exit(0)
}
