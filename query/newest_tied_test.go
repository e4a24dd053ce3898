package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// Newest-first prefixes over tied mtimes with paths whose bytes
// sort around '/' ("a-b", "a.b/", "a/", "a b", "d1-x", "d1.x", "d10"),
// query dirs at and below such names, files in the delta tied at the
// newest mtime on either side of any cut, files added after the build
// and removed after it; answers must be the walk's.
func TestNewestTiedPaths(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(36, 2))
	names := []string{"a", "a-b", "a.b", "a b", "a0", "a/x", "a/y", "a.b/z", "a-b/q", "a/x/y", "Z", "_"}
	tops := []string{"d1", "d1-x", "d1.x", "d10", "d1 y", "d1/a", "e"}
	files := map[string]string{}
	var paths []string
	for i := range 700 {
		p := fmt.Sprintf("%s/%s%03d.txt", tops[r.IntN(len(tops))], names[r.IntN(len(names))], i)
		body := fmt.Sprintf("line %d\n", i)
		if r.IntN(4) != 0 {
			body += "needle\n"
		}
		if r.IntN(5) == 0 {
			body += "needle again\n"
		}
		files[p] = body
		paths = append(paths, p)
	}
	root := testtree.Write(t, files)
	base := time.Now().Add(-time.Hour)
	for i, p := range paths {
		mt := base.Add(time.Second) // nearly all tied
		if i%53 == 0 {
			mt = base.Add(2 * time.Second)
		} else if i%41 == 0 {
			mt = base
		}
		setMtime(t, root, p, mt)
	}
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	var changed []string
	for i := 0; i < len(paths); i += 9 {
		p := paths[i]
		if i%2 == 0 {
			os.WriteFile(filepath.Join(root, p), []byte("needle rewritten\n"), 0o644)
		} else {
			os.Remove(filepath.Join(root, p))
		}
		setMtimeIfExists(root, p, base.Add(time.Second))
		changed = append(changed, p)
	}
	for i := range 30 { // added after the build, tied
		p := fmt.Sprintf("%s/%s%03dn.txt", tops[r.IntN(len(tops))], names[r.IntN(len(names))], i)
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte("a needle, new\n"), 0o644)
		setMtime(t, root, p, base.Add(time.Second))
		changed = append(changed, p)
	}
	if err := ix.Apply(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	newest := *idx
	s := idx.Searcher.(Indexed)
	s.newestFrom = 1
	cut := &cutCounter{Index: s.Index}
	s.Index = cut
	newest.Searcher = s
	candidates := func(tools *Tools, args string) int {
		e := tools.Run(context.Background(), tool.Grep, ".", json.RawMessage(args))
		if e.Status == envelope.StatusError {
			t.Fatalf("%s: %s", args, e.Text)
		}
		return *e.Stats.(*envelope.GrepStats).Candidates
	}
	fromPrefix := 0
	for _, dir := range []string{".", "d1", "d1/a", "d1-x", "d1.x", "d1/", "e"} {
		for _, mode := range []string{"content", "files_with_matches", "count"} {
			for _, limit := range []int{1, 2, 5, 13, 40, 120} {
				for _, pat := range []string{"needle", "line", "(?i)NEEDLE again"} {
					args := fmt.Sprintf(`{"pattern":%q,"path":%q,"output_mode":%q,"limit":%d,"timeout_ms":60000}`, pat, dir, mode, limit)
					all := candidates(idx, args)
					diffEngines(t, walk, &newest, tool.Grep, args)
					if candidates(&newest, args) <= all/2 {
						fromPrefix++
					}
				}
			}
		}
	}
	if fromPrefix == 0 {
		t.Fatal("no prefix answered")
	}
	t.Logf("%d answered from a prefix, %d candidate calls cut by path", fromPrefix, cut.n)
	if cut.n == 0 {
		t.Fatal("no prefix cut by path")
	}
}

func setMtimeIfExists(root, rel string, mt time.Time) {
	os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), mt, mt)
}

type cutCounter struct {
	Index
	n int
}

func (c *cutCounter) CandidateLines(o index.CandidateOptions, fn func(f *index.File, lines index.Eighths) bool) {
	if o.SincePath != "" {
		c.n++
	}
	c.Index.CandidateLines(o, fn)
}
