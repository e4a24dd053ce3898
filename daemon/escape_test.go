package daemon

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/rpc"
)

// The marker every outside file holds: an answer containing it, or an
// outside file's name, has left the root.
const outsideMark = "OUTSIDE-SECRET"

// outsideDir makes a directory outside any root with a secret file and a
// file named like one inside.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := writeTree(t, map[string]string{
		"secret.txt": outsideMark + " password = hunter2\n",
		"inside.txt": outsideMark + " shadowing inside.txt\n",
		"id_rsa":     outsideMark + " -----BEGIN OPENSSH PRIVATE KEY-----\n",
	})
	return dir
}

// leaks reports whether an answer names or quotes anything outside.
func leaks(a answer) bool {
	s := string(a.js)
	return strings.Contains(s, outsideMark) || strings.Contains(s, "secret.txt") || strings.Contains(s, "id_rsa")
}

// A directory renamed away and replaced by a symlink to an outside
// directory, under a watched root: the index never serves the outside
// files (index-backed Grep and Glob), and LS shows the link as a link.
func TestDirectoryReplacedBySymlink(t *testing.T) {
	t.Parallel()
	out := outsideDir(t)
	td := startDaemon(t, Config{})
	root := writeTree(t, map[string]string{"d/inside.txt": "inside token\n", "keep.txt": "keep\n"})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	// A writer keeps the watcher busy in d (whatever d is at the moment),
	// so that batches are being applied while the swaps happen.
	stopChurn := make(chan struct{})
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		for n := 0; ; n++ {
			select {
			case <-stopChurn:
				return
			default:
			}
			os.WriteFile(filepath.Join(root, "d", fmt.Sprintf("churn%d.txt", n%8)), []byte("churn\n"), 0o644) // fails while d is moving
		}
	}()
	defer func() { close(stopChurn); <-churned }()
	const rounds = 50
	var poisoned []string
	for i := range rounds {
		d := filepath.Join(root, "d")
		if err := os.Rename(d, d+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, d); err != nil {
			t.Fatal(err)
		}
		// Activity in the moved directory: its events still name d/…
		// until the move is processed, and d/… now runs through the link
		// to files of the same names outside.
		writeFile(t, root, "d.real/secret.txt", fmt.Sprintf("round %d\n", i))
		writeFile(t, root, "d.real/inside.txt", "inside token\n")
		writeFile(t, root, "d.real/id_rsa", "not a key\n")
		leaked := false
		for _, q := range []struct{ method, args string }{
			{"grep", `{"pattern":"OUTSIDE|inside|password"}`},
			{"grep", `{"pattern":"OUTSIDE","include_hidden":true,"include_ignored":true}`},
			{"glob", `{"pattern":"**/*"}`},
			{"glob", `{"pattern":"d/*"}`},
			{"ls", `{"path":"d.real"}`},
		} {
			a := td.query(q.method, root, q.args)
			// d is a link now: nothing under d/ exists for the tools.
			if strings.Contains(string(a.js), outsideMark) || strings.Contains(string(a.Raw.Data), `"d/`) {
				poisoned = append(poisoned, fmt.Sprintf("round %d: %s %s served the outside: %.300s", i, q.method, q.args, a.js))
				leaked = true
				break
			}
			if q.method == "grep" && !strings.Contains(q.args, "include_ignored") && a.data.Used {
				t.Fatalf("round %d: %s %s was not answered by the index: %s", i, q.method, q.args, a.js)
			}
		}
		if a := td.query("ls", root, `{}`); !leaked && !strings.Contains(string(a.js), `"d@/"`) && !strings.Contains(string(a.js), `"d@"`) {
			t.Fatalf("round %d: ls does not show d as a link: %s", i, a.js)
		}
		// Back again: d is a directory, its file is found by the index.
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(d+".real", "secret.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(d+".real", "id_rsa")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(d+".real", d); err != nil {
			t.Fatal(err)
		}
		if a := td.query("grep", root, `{"pattern":"inside token"}`); !leaked && (len(a.data.Matches) != 1 || a.data.Used) {
			t.Fatalf("round %d: after restoring d: %s", i, a.js)
		}
	}
	if len(poisoned) > 0 {
		t.Fatalf("%d of %d rounds served the outside; the first:\n%s", len(poisoned), rounds, poisoned[0])
	}
}

// The checkout form: a branch where conf/ is a symlink to a directory
// outside the root. Switching branches back and forth never makes the
// index serve the outside key.
func TestCheckoutOfSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed for this test")
	}
	out := outsideDir(t)
	files := map[string]string{"conf/app.conf": "listen 80\n", "main.go": "package main\n"}
	for i := range 200 { // a slower checkout: a wider window for the watcher to race it
		files[fmt.Sprintf("conf/part%03d.conf", i)] = "part\n"
	}
	root := writeTree(t, files)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	run("init", "-q", "-b", "main")
	run("add", ".")
	run("commit", "-qm", "dir")
	run("checkout", "-q", "-b", "linked")
	run("rm", "-rq", "conf")
	if err := os.Symlink(out, filepath.Join(root, "conf")); err != nil {
		t.Fatal(err)
	}
	run("add", "conf")
	run("commit", "-qm", "link")
	run("checkout", "-q", "main")

	td := startDaemon(t, Config{})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	poisoned := 0
	var first string
	for i := range 50 {
		branch := "linked"
		if i%2 == 1 {
			branch = "main"
		}
		run("checkout", "-q", branch)
		var bad string
		for _, args := range []string{`{"pattern":"BEGIN OPENSSH|OUTSIDE|listen"}`, `{"pattern":"OUTSIDE","include_hidden":true}`} {
			a := td.query("grep", root, args)
			if leaks(a) {
				bad = fmt.Sprintf("checkout %d (%s): grep served the outside: %.300s", i, branch, a.js)
			} else if want := branch == "main"; strings.Contains(args, "listen") && (len(a.data.Matches) == 1) != want {
				t.Fatalf("checkout %d (%s): grep listen: %s", i, branch, a.js)
			}
		}
		if a := td.query("glob", root, `{"pattern":"conf/**"}`); leaks(a) || branch == "linked" && strings.Contains(string(a.Raw.Data), `"conf/`) {
			bad = fmt.Sprintf("checkout %d (%s): glob served the outside: %.300s", i, branch, a.js)
		}
		if bad != "" {
			if poisoned++; first == "" {
				first = bad
			}
		}
	}
	if poisoned > 0 {
		t.Fatalf("%d of 50 checkouts served the outside; the first:\n%s", poisoned, first)
	}
}

// A directory and a link to an outside directory exchanged in a loop
// (renameat2 RENAME_EXCHANGE) while every tool runs, from the index
// through the daemon and from the walk: no answer holds anything from
// outside. INDEXD_ESCAPE_QUERIES sets the number of queries (default 600).
func TestExchangeLoopDuringQueries(t *testing.T) {
	t.Parallel()
	n := 600
	if s := os.Getenv("INDEXD_ESCAPE_QUERIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	out := outsideDir(t)
	td := startDaemon(t, Config{})
	root := writeTree(t, map[string]string{"d/inside.txt": "inside token\n", "d/sub/deep.txt": "deep\n", "top.txt": "top\n"})
	if err := os.Symlink(out, filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	stop := testtree.ExchangeLoop(t, root+"/d", root+"/l")
	queries := []struct{ method, args string }{
		{"grep", `{"pattern":"OUTSIDE|inside|deep|password","sync":false}`},
		{"grep", `{"pattern":"OUTSIDE|inside|deep"}`},
		{"grep", `{"pattern":"OUTSIDE|inside","path":"d"}`},
		// Settled early: a walk's prescan stops, and the files it listed
		// and never read are stat'd by directory (grep's statListed).
		{"grep", `{"pattern":"OUTSIDE|inside|deep|top","limit":1,"sync":false}`},
		{"glob", `{"pattern":"**/*.txt","sync":false}`},
		{"glob", `{"pattern":"**/*"}`},
		{"glob", `{"pattern":"*/*","path":"."}`},
		{"ls", `{"path":"d"}`},
		{"ls", `{"path":"l"}`},
		{"ls", `{"path":"d/sub"}`},
	}
	var leaked []string
	var ran, leakCount int
	for i := 0; ran < n; i++ {
		q := queries[i%len(queries)]
		var a answer
		if i%2 == 0 {
			a = td.query(q.method, root, q.args)
		} else {
			a = walked(t, q.method, root, strings.Replace(q.args, `,"sync":false`, "", 1))
		}
		ran++
		if leaks(a) {
			leakCount++
			if len(leaked) < 5 {
				leaked = append(leaked, fmt.Sprintf("%s %s: %s", q.method, q.args, a.js))
			}
		}
	}
	swaps := stop()
	if len(leaked) > 0 {
		t.Fatalf("%d of %d answers from outside the root; the first:\n%s", leakCount, ran, strings.Join(leaked, "\n"))
	}
	if swaps == 0 {
		t.Fatal("the exchange loop never ran")
	}
	t.Logf("%d queries, %d exchanges, 0 leaks", ran, swaps)
}

// The daemon's state and runtime directories, under a root it serves,
// are never indexed, watched, listed or searched.
func TestStateDirUnderRootIsPrivate(t *testing.T) {
	root := writeTree(t, map[string]string{"src/a.go": "package a // indexd-private-probe\n"})
	state := filepath.Join(root, "state")
	td := startDaemon(t, Config{StateDir: state, SocketPath: filepath.Join(root, "run", "indexd.sock")})
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	// The log and the DB hold the root's path and the probe text.
	for _, a := range []answer{
		td.query("glob", root, `{"pattern":"**","include_hidden":true,"include_ignored":true}`),
		td.query("glob", root, `{"pattern":"**"}`),
		td.query("grep", root, `{"pattern":"indexd|serving|probe|root","include_hidden":true}`),
		td.query("grep", root, `{"pattern":"indexd|serving|probe|root","include_ignored":true}`),
		td.query("ls", root, `{"include_hidden":true,"include_ignored":true}`),
		walked(t, "glob", root, `{"pattern":"**"}`),
	} {
		for _, s := range []string{`"state`, `"run`} {
			if strings.Contains(string(a.js), s) {
				t.Fatalf("the daemon's own files are visible: %s", a.js)
			}
		}
	}
	if a := td.query("grep", root, `{"pattern":"indexd-private-probe"}`); len(a.data.Matches) != 1 {
		t.Fatalf("grep probe: want exactly src/a.go: %s", a.js)
	}
	if st := td.status(root); len(st.Roots) != 1 || st.Roots[0].Files != 1 {
		t.Fatalf("the index holds more than src/a.go: %+v", st.Roots)
	}
}
