package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/tree"
)

// linkTree writes a random tree of directories, files and symlinks (to
// files and directories inside the root and outside it, to links,
// dangling, relative and absolute) and returns the root and the files a
// Glob must list: every regular file reached through real directories,
// and every link among them whose target is a regular file inside the
// root (docs/tools.md, "Glob").
func linkTree(t *testing.T, r *rand.Rand) (root string, wantGlob []string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	for _, d := range []string{root, out + "/od"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{out + "/of.txt", out + "/od/deep.txt"} {
		if err := os.WriteFile(f, []byte("mark OUTSIDE\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{""}
	var files []string
	for i := range 4 + r.IntN(8) {
		parent := dirs[r.IntN(len(dirs))]
		d := joinRel(parent, fmt.Sprintf("d%d", i))
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for i := range 5 + r.IntN(15) {
		f := joinRel(dirs[r.IntN(len(dirs))], fmt.Sprintf("f%d.txt", i))
		if err := os.WriteFile(filepath.Join(root, f), []byte("mark "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	wantGlob = slices.Clone(files)
	for i := range 3 + r.IntN(10) {
		at := joinRel(dirs[r.IntN(len(dirs))], fmt.Sprintf("l%d", i))
		abs := filepath.Join(root, at)
		var target string
		switch r.IntN(8) {
		case 0:
			target = out + "/of.txt"
		case 1:
			target = out + "/od"
		case 2:
			target = out
		case 3:
			target = filepath.Join(root, dirs[r.IntN(len(dirs))])
		case 4:
			target = filepath.Join(root, "missing")
		case 5:
			target = "../../../../../../../../.." + out + "/of.txt"
		default:
			if len(files) > 0 {
				target = filepath.Join(root, files[r.IntN(len(files))])
				if r.IntN(2) == 0 { // relative form
					target, _ = filepath.Rel(filepath.Dir(abs), target)
				}
			} else {
				target = "nowhere"
			}
		}
		if err := os.Symlink(target, abs); err != nil {
			t.Fatal(err)
		}
		if tree.LinkToFileInside(root, abs) {
			wantGlob = append(wantGlob, at)
		}
	}
	slices.Sort(wantGlob)
	return root, wantGlob
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Random trees of directories, files and links inside and outside: the
// walk and the index give exactly ripgrep's Grep answer (ripgrep never
// follows a link unless asked), and Glob lists exactly the real files and
// the links to files inside; nothing from outside ever appears.
func TestDiffRgRandomLinkTrees(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	n := 40
	if testing.Short() {
		n = 10
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		root, wantGlob := linkTree(t, r)
		ws, err := query.NewWorkspace(root)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := index.Build(context.Background(), root, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, tools := range map[string]*query.Tools{"walk": query.NewDirect(ws), "index": {WS: ws, Searcher: query.Indexed{Index: ix}}} {
			c := diffGrep{Pattern: "mark"}
			ours, theirs := diffOurGrep(t, tools, c), diffRgGrep(t, rg, root, c)
			if len(theirs) == 0 || !mapsEqual(ours, theirs) {
				t.Fatalf("seed %d, %s: Grep differs from rg:\nours %v\nrg   %v", seed, name, ours, theirs)
			}
			if got := diffOurGlob(t, tools, "**", "."); !slices.Equal(got, wantGlob) {
				t.Fatalf("seed %d, %s: Glob ** = %q\nwant %q", seed, name, got, wantGlob)
			}
			env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": "OUTSIDE", "include_hidden": true, "include_ignored": true})
			if s := fmt.Sprint(env.Data); strings.Contains(s, "OUTSIDE") {
				t.Fatalf("seed %d, %s: Grep read outside the root: %s", seed, name, s)
			}
		}
	}
}

func mapsEqual(a, b map[diffPair]bool) bool {
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
