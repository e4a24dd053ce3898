//go:build linux

package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
)

// git checkout between two branches that differ in 2,000 files (600
// under -race; CI runs the 2,000 without it): after the barrier the
// index equals a fresh build, table and candidates alike.
func TestGitCheckout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("commits 2,500 files (750 under -race)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH; CI must run this test")
		}
		t.Skip("no git")
	}
	root := tempRoot(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	n, added := 2000, 500
	if testtree.RaceEnabled {
		n, added = 600, 150
	}
	git("init", "-q", "-b", "one")
	for i := range n {
		writeFile(t, root, fmt.Sprintf("p%d/q%d/f%d.txt", i%10, i%13, i), fmt.Sprintf("one %d common\n", i))
	}
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	git("checkout", "-q", "-b", "two")
	for i := range n {
		p := fmt.Sprintf("p%d/q%d/f%d.txt", i%10, i%13, i)
		switch i % 4 {
		case 0:
			must(t, os.Remove(root+"/"+p))
		default:
			writeFile(t, root, p, fmt.Sprintf("two %d common\n", i))
		}
	}
	for i := range added {
		writeFile(t, root, fmt.Sprintf("new/n%d/g%d.txt", i%9, i), fmt.Sprintf("two new %d\n", i))
	}
	git("add", "-A")
	git("commit", "-q", "-m", "two")
	git("checkout", "-q", "one")

	w, ix := start(t, root, Options{})
	for _, branch := range []string{"two", "one", "two"} {
		git("checkout", "-q", branch)
		syncNow(t, w)
		fresh, err := index.Build(context.Background(), root, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := table(ix), table(fresh); !slices.Equal(got, want) {
			t.Fatalf("after checkout %s: table differs from a fresh build (%d vs %d files)", branch, len(got), len(want))
		}
		for _, pat := range []string{"one 17 ", "two 18 ", "two new 33", "common", "zzz"} {
			if got, want := candidates(t, ix, pat), candidates(t, fresh, pat); !slices.Equal(got, want) {
				t.Fatalf("after checkout %s: candidates for %q: %d, fresh build %d", branch, pat, len(got), len(want))
			}
		}
	}
}
