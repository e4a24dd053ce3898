package daemon

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
)

// snapshot returns every file under root (.git left out) with its mtime.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = fi.ModTime().UTC().Format(time.RFC3339Nano)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshotDiff is what Changes must report between two snapshots: "kind
// path mtime" lines (deleted ones without mtime), sorted.
func snapshotDiff(before, after map[string]string) []string {
	var out []string
	for p, m := range after {
		switch old, ok := before[p]; {
		case !ok:
			out = append(out, "created "+p+" "+m)
		case old != m:
			out = append(out, "modified "+p+" "+m)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "deleted "+p)
		}
	}
	slices.Sort(out)
	return out
}

func reported(a changesAnswer) []string {
	var out []string
	for _, c := range a.data.Changes {
		l := c.Kind + " " + c.Path
		if c.Kind != envelope.KindDeleted && c.Mtime != nil {
			l += " " + *c.Mtime
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// changeScript applies n random changes to root: files created, rewritten,
// deleted and renamed, directories made, renamed and deleted. Every name
// a change makes is new, so no path gets its old mtime back (a path
// renamed away and back would be reported modified, rightly, with an
// unchanged mtime).
type changeScript struct {
	t    *testing.T
	root string
	rng  *rand.Rand
	seq  int
}

func (s *changeScript) fresh(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%d", prefix, s.seq)
}

func (s *changeScript) list(dirs bool) []string {
	var out []string
	filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == s.root {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() == dirs {
			rel, _ := filepath.Rel(s.root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func (s *changeScript) pick(list []string) (string, bool) {
	if len(list) == 0 {
		return "", false
	}
	return list[s.rng.IntN(len(list))], true
}

// dirFor returns an existing directory (or the root, "") for a new name.
func (s *changeScript) dirFor() string {
	if d, ok := s.pick(s.list(true)); ok && s.rng.IntN(3) > 0 {
		return d
	}
	return ""
}

func (s *changeScript) step() string {
	abs := func(rel string) string { return filepath.Join(s.root, rel) }
	switch s.rng.IntN(8) {
	case 0, 1:
		rel := filepath.Join(s.dirFor(), s.fresh("f")+".txt")
		writeFile(s.t, s.root, filepath.ToSlash(rel), "new "+rel+"\n")
		return "create " + rel
	case 2, 3:
		if f, ok := s.pick(s.list(false)); ok {
			writeFile(s.t, s.root, filepath.ToSlash(f), fmt.Sprintf("rewritten %d\n", s.rng.IntN(1e6)))
			return "write " + f
		}
	case 4:
		if f, ok := s.pick(s.list(false)); ok {
			must(s.t, os.Remove(abs(f)))
			return "delete " + f
		}
	case 5:
		if f, ok := s.pick(s.list(false)); ok {
			to := filepath.Join(s.dirFor(), s.fresh("r")+".txt")
			must(s.t, os.Rename(abs(f), abs(to)))
			return "rename " + f + " " + to
		}
	case 6:
		if d, ok := s.pick(s.list(true)); ok {
			if s.rng.IntN(2) == 0 {
				to := s.fresh("dir")
				must(s.t, os.Rename(abs(d), abs(to)))
				return "rename dir " + d + " " + to
			}
			must(s.t, os.RemoveAll(abs(d)))
			return "delete dir " + d
		}
	case 7:
		d := filepath.Join(s.dirFor(), s.fresh("d"), s.fresh("e"))
		for range 1 + s.rng.IntN(3) {
			writeFile(s.t, s.root, filepath.ToSlash(filepath.Join(d, s.fresh("g")+".go")), "package x\n")
		}
		return "mkdir " + d
	}
	return "nothing"
}

// For random change scripts on a fixture tree, Changes since a token is
// the difference of two snapshots taken at the token and now: the same
// paths, kinds and mtimes.
func TestChangesDifferential(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("p%d/q%d/file%d.txt", i%4, i%3, i)] = fmt.Sprintf("content %d\n", i)
	}
	root := readyRoot(t, td, files)
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755)) // sync cookies go there
	for round := range 12 {
		seed := uint64(round + 1)
		s := &changeScript{t: t, root: root, rng: rand.New(rand.NewPCG(seed, 16)), seq: round * 1000}
		tok := td.clockOf(root)
		before := snapshot(t, root)
		var script []string
		for range 5 + s.rng.IntN(25) {
			script = append(script, s.step())
			if s.rng.IntN(6) == 0 {
				td.changes(root, `{}`) // a barrier mid-script: changes land in several batches
			}
		}
		after := snapshot(t, root)
		a := td.changes(root, since(tok))
		want := snapshotDiff(before, after)
		if got := reported(a); a.Status != envelope.StatusSuccess || a.data.FreshInstance || !slices.Equal(got, want) {
			t.Fatalf("round %d (seed %d), script:\n  %s\nChanges: %s\n got %q\nwant %q", round, seed, strings.Join(script, "\n  "), a.Status, got, want)
		}
	}
}
