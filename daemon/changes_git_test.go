package daemon

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/rpc"
)

// git runs git in dir and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A git checkout between two branches that differ in N files: Changes
// since a token taken before it reports exactly the files git diff names,
// with the kinds of git diff --name-status (renames as a deletion and a
// creation).
func TestChangesGitCheckout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	files := map[string]string{}
	for i := range 120 {
		files[fmt.Sprintf("src/pkg%d/file%03d.go", i%6, i)] = fmt.Sprintf("package pkg%d\n// %d\n", i%6, i)
	}
	td := startDaemon(t, Config{})
	root := writeTree(t, files)
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "base")
	git(t, root, "checkout", "-q", "-b", "topic")
	for i := range 20 { // modified
		writeFile(t, root, fmt.Sprintf("src/pkg%d/file%03d.go", i%6, i), fmt.Sprintf("package pkg%d\n// changed %d\n", i%6, i))
	}
	for i := 20; i < 30; i++ { // deleted
		must(t, os.Remove(filepath.Join(root, fmt.Sprintf("src/pkg%d/file%03d.go", i%6, i))))
	}
	for i := range 10 { // added, some in a new directory
		writeFile(t, root, fmt.Sprintf("src/new%d/added%d.go", i%2, i), "package added\n")
	}
	must(t, os.Rename(filepath.Join(root, "src/pkg5"), filepath.Join(root, "src/moved"))) // a directory renamed
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "topic")
	git(t, root, "checkout", "-q", "main")

	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	tok := td.clockOf(root)
	git(t, root, "checkout", "-q", "topic")
	a := td.changes(root, since(tok))

	kinds := map[string]string{"A": envelope.KindCreated, "D": envelope.KindDeleted, "M": envelope.KindModified}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(git(t, root, "diff", "--no-renames", "--name-status", "main", "topic")), "\n") {
		st, path, _ := strings.Cut(l, "\t")
		want = append(want, kinds[st]+" "+path)
	}
	names := strings.Fields(git(t, root, "diff", "--no-renames", "--name-only", "main", "topic"))
	wantChanges(t, a, envelope.StatusSuccess, want...)
	t.Logf("git checkout main..topic: git diff --name-only names %d files; Changes reports %d (%d created, %d modified, %d deleted)",
		len(names), len(a.data.Changes), countKind(a, envelope.KindCreated), countKind(a, envelope.KindModified), countKind(a, envelope.KindDeleted))
	if got := a.sortedLines(); len(got) != len(names) {
		t.Errorf("Changes reports %d paths, git diff --name-only %d", len(got), len(names))
	}
	var paths []string
	for _, c := range a.data.Changes {
		paths = append(paths, c.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, names) {
		t.Errorf("paths differ from git diff --name-only:\n got %q\nwant %q", paths, names)
	}
}

func countKind(a changesAnswer, kind string) int {
	n := 0
	for _, c := range a.data.Changes {
		if c.Kind == kind {
			n++
		}
	}
	return n
}
