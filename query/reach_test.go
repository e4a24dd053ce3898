package query

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/tree"
)

// enteredParent answers as entered does of the parent, for paths below
// the reach's start with and without hidden components, refused
// directories and hidden directories the index records.
func TestEnteredParent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"a", "b.go", ".h", ".git", "node_modules", "x.y", "..z"}
	randPath := func(depth int) string {
		parts := make([]string, depth)
		for i := range parts {
			parts[i] = names[r.IntN(len(names))]
		}
		return strings.Join(parts, "/")
	}
	for i := range 400 {
		dir := []string{"", ".", "a", ".h", "a/.git"}[i%5]
		var descend func(string) bool
		if i%3 == 0 {
			descend = func(sub string) bool { return !strings.Contains(sub, "node_modules") }
		}
		allow := func(name string) bool { return name == ".h" }
		hiddenDir := func(sub string) bool { return !strings.HasSuffix(sub, ".git") }
		for range 50 {
			rel := randPath(1 + r.IntN(4))
			if start := walkStart(dir); start != "" {
				rel = start + "/" + rel
			}
			mk := func() *reach { return newReach(dir, descend, allow, i%2 == 0, hiddenDir) }
			want := mk().entered(parentOf(rel))
			if got := mk().enteredParent(rel, !index.HiddenPath(rel)); got != want {
				t.Fatalf("dir %q, %q: enteredParent %v, entered(parent) %v", dir, rel, got, want)
			}
			if got := mk().enteredParent(rel, false); got != want { // not known plain: the slow way
				t.Fatalf("dir %q, %q: enteredParent (not plain) %v, entered(parent) %v", dir, rel, got, want)
			}
		}
	}
}

// A skipList keeps what tree.KeepSkip keeps of all its skips sorted in
// walk order, over lists of every size around tree.MaxSkips with and
// without Default and Denied entries, added in any order.
func TestSkipListKeepsAsWalk(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	names := []string{"a", "a-b", "a.b", "b", ".h", "node_modules", "z"}
	for i := range 300 {
		n := []int{0, 1, 255, 256, 257, 400, 1000}[i%7]
		seen := map[string]bool{}
		var all []tree.Skip
		for len(all) < n {
			parts := make([]string, 1+r.IntN(4))
			for j := range parts {
				parts[j] = names[r.IntN(len(names))]
			}
			p := strings.Join(parts, "/")
			if seen[p] {
				continue
			}
			seen[p] = true
			sk := tree.Skip{Rel: p, IsDir: r.IntN(2) == 0}
			switch r.IntN(20) {
			case 0:
				sk.Default = true
			case 1:
				sk.Denied = true
			case 2, 3:
				sk.Hidden = true
			}
			all = append(all, sk)
		}
		var l skipList
		for _, sk := range all {
			l.add(sk)
		}
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, func(a, b tree.Skip) int { return tree.Order(a.Rel, b.Rel) })
		var want []tree.Skip
		for _, sk := range sorted {
			if tree.KeepSkip(len(want), sk) {
				want = append(want, sk)
			}
		}
		if got := l.kept(); !slices.Equal(got, want) {
			t.Fatalf("%d skips: kept %d, want %d (%v, want %v)", n, len(got), len(want), got, want)
		}
	}
}
