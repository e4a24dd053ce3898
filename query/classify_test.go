package query_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/tree"
	"github.com/indexd/indexd/watch"
)

// Every traversal does with each entry what the classifier says of it: on
// the differential fixture (nested rules, negations, a nested repository,
// default directories, hidden names) plus sync cookies, a private
// directory and hidden names a rule whitelists, the walk (with and without
// hidden names), the index's build and Apply, the watcher's choice of
// directories and LS each list, skip and record exactly the entries the
// classifier's verdicts (ignore.Cache.Path) call for.
func TestClassifierAgreesWithTraversals(t *testing.T) {
	ctx := context.Background()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The index Apply fills starts empty.
	applied, err := index.Build(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := diffFixtureFiles()
	files[".ignore"] += "!.shown\n"
	files[".shown/f.txt"] = "whitelisted hidden directory\n"
	files["src/.shown"] = "whitelisted hidden file\n"
	files[ignore.CookiePrefix+"1-1"] = ""
	files["src/"+ignore.CookiePrefix+"2-2"] = ""
	files["state/db"] = "the daemon's own\n"
	files["src/.hdir/deeper/x.txt"] = "hidden ancestor\n"
	for rel, content := range files {
		testtree.File(t, root, rel, content)
	}
	diffGitInit(t, root, "*.excl\n")
	ignore.SetPrivate(filepath.Join(root, "state"))
	t.Cleanup(func() { ignore.SetPrivate() })

	// Every entry of the tree, with the classifier's verdict on it.
	type entry struct {
		rel   string
		isDir bool
		v     ignore.PathVerdict
	}
	r := testtree.Open(t, root)
	cache := ignore.NewCache(r)
	var all []entry
	verdict := map[string]ignore.PathVerdict{"": {}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		e := entry{rel: rel, isDir: d.IsDir(), v: cache.Path(rel, d.IsDir())}
		all = append(all, e)
		verdict[rel] = e.v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	parent := func(rel string) string {
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			return rel[:i]
		}
		return ""
	}
	depth := func(rel string) int { return strings.Count(rel, "/") }
	ownHidden := func(e entry) bool { return e.v.Hidden&(1<<min(depth(e.rel), 63)) != 0 }
	kept := func(v ignore.PathVerdict) bool { return !v.Reserved() && !v.Ignored }
	counts := map[string]int{}
	for _, e := range all {
		switch {
		case e.v.Private:
			counts["private"]++
		case e.v.Cookie:
			counts["cookie"]++
		case e.v.Ignored && e.v.Self:
			counts["ignored"]++
		case ownHidden(e):
			counts["hidden"]++
		}
	}
	for _, k := range []string{"private", "cookie", "ignored", "hidden"} {
		if counts[k] == 0 {
			t.Fatalf("the fixture has no %s entry: %v", k, counts)
		}
	}
	if v := verdict[".shown"]; v.Hidden != 0 || !kept(v) {
		t.Fatalf(".shown: %+v, want whitelisted", v)
	}

	// The walk.
	for _, hidden := range []bool{false, true} {
		var got, gotSkips, want, wantSkips []string
		_, err := tree.Walk(ctx, root, "", ignore.Open(root), tree.Options{
			IncludeHidden: hidden,
			OnSkip:        func(s tree.Skip) { gotSkips = append(gotSkips, s.Rel) },
		}, func(e tree.Entry) error {
			got = append(got, e.Rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		entered := func(dir string) bool {
			v := verdict[dir]
			return kept(v) && (hidden || v.Hidden == 0)
		}
		for _, e := range all {
			if !entered(parent(e.rel)) || e.v.Reserved() {
				continue
			}
			switch {
			case e.v.Ignored || !hidden && ownHidden(e):
				wantSkips = append(wantSkips, e.rel)
			case !e.isDir:
				want = append(want, e.rel)
			}
		}
		sortWalk(want, wantSkips)
		if !slices.Equal(got, want) {
			t.Errorf("walk (include_hidden %v) lists\n%q\nwant\n%q", hidden, got, want)
		}
		if !slices.Equal(gotSkips, wantSkips) {
			t.Errorf("walk (include_hidden %v) skips\n%q\nwant\n%q", hidden, gotSkips, wantSkips)
		}
	}

	// The index: built, and filled by one Apply of every file and every
	// directory the classifier leaves out (a kept directory would be
	// walked).
	var wantFiles, wantIgnored, batch []string
	wantMask := map[string]uint64{}
	for _, e := range all {
		if !e.isDir && kept(e.v) {
			wantFiles = append(wantFiles, e.rel)
			wantMask[e.rel] = e.v.Hidden
		}
		if e.v.Ignored && e.v.Self {
			wantIgnored = append(wantIgnored, e.rel)
		}
		if !e.isDir || !kept(e.v) {
			batch = append(batch, e.rel)
		}
	}
	slices.Sort(wantFiles)
	slices.Sort(wantIgnored)
	built, err := index.Build(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := applied.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for name, ix := range map[string]*index.Index{"build": built, "apply": applied} {
		var got []string
		ix.Candidates(index.CandidateOptions{}, func(f *index.File) bool {
			got = append(got, f.Path)
			if f.Hidden != wantMask[f.Path] {
				t.Errorf("index (%s): %s hidden mask %b, want %b", name, f.Path, f.Hidden, wantMask[f.Path])
			}
			return true
		})
		if !slices.Equal(got, wantFiles) {
			t.Errorf("index (%s) holds\n%q\nwant\n%q", name, got, wantFiles)
		}
		var ign []string
		ix.Visibility().Skipped("", func(s index.Skipped, _ bool) {
			if !s.Hidden {
				ign = append(ign, s.Path)
			}
		})
		if !slices.Equal(ign, wantIgnored) {
			t.Errorf("index (%s) records as ignored\n%q\nwant\n%q", name, ign, wantIgnored)
		}
	}

	// The watcher's directories.
	var mu sync.Mutex
	watched := map[string]bool{}
	w, err := watch.Start(ctx, root, built, watch.Options{AddWatch: func(p string, add func(string) error) error {
		mu.Lock()
		watched[p] = true
		mu.Unlock()
		return add(p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var gotDirs, wantDirs []string
	mu.Lock()
	for p := range watched {
		if p != filepath.Join(root, ".git") { // the cookie directory, watched on its own
			rel, _ := filepath.Rel(root, p)
			gotDirs = append(gotDirs, filepath.ToSlash(rel))
		}
	}
	mu.Unlock()
	wantDirs = append(wantDirs, ".")
	for _, e := range all {
		if e.isDir && kept(e.v) {
			wantDirs = append(wantDirs, e.rel)
		}
	}
	slices.Sort(gotDirs)
	slices.Sort(wantDirs)
	if !slices.Equal(gotDirs, wantDirs) {
		t.Errorf("watched\n%q\nwant\n%q", gotDirs, wantDirs)
	}

	// LS of every directory a walk with hidden names enters.
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := query.NewDirect(ws)
	for _, dir := range wantDirs {
		for _, hidden := range []bool{false, true} {
			env := diffRun(t, tools, tool.LS, map[string]any{"path": dir, "include_hidden": hidden, "limit": tool.LSMaxLimit})
			data := env.Data.(*envelope.LSData)
			var got, want []string
			for _, e := range data.Entries {
				got = append(got, strings.TrimSuffix(e.Path, "/"))
			}
			for _, e := range all {
				if (dir == "." && !strings.Contains(e.rel, "/") || parent(e.rel) == dir) && kept(e.v) && (hidden || !ownHidden(e)) {
					want = append(want, e.rel[strings.LastIndexByte(e.rel, '/')+1:])
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if data.Truncated || !slices.Equal(got, want) {
				t.Errorf("LS %s (include_hidden %v) lists\n%q\nwant\n%q", dir, hidden, got, want)
			}
		}
	}
}

// sortWalk puts lists of root-relative paths in the walk's order.
func sortWalk(lists ...[]string) {
	for _, l := range lists {
		slices.SortFunc(l, tree.Order)
	}
}
