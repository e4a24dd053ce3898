//go:build linux

package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/tool"
)

// fdQueries are the queries the descriptor test runs, by tool.
var fdQueries = []struct{ tool, args string }{
	{tool.Glob, `{"pattern":"**/*.txt"}`},
	{tool.Grep, `{"pattern":"needle"}`},
	// Settled by the walk's prescan: the files it listed and never read
	// are stat'd by directory (statListed), each directory a descriptor.
	{tool.Grep, `{"pattern":"needle","limit":1}`},
	{tool.LS, `{"path":"a/b"}`},
}

// With the process nearly out of file descriptors, every answer is either
// the right one or says it is not complete: never a "success" (or a
// truncated answer, whose first results it claims to be) that lacks a
// result (a walk that could not open a directory, a scan that could
// not open a file). The queries run in a child process whose
// RLIMIT_NOFILE leaves k descriptors free, for k from 0 up.
func TestOutOfDescriptorsNeverSilentlyShort(t *testing.T) {
	t.Parallel()
	files := fsTree{}
	for _, d := range []string{"a", "a/b", "a/b/c", "d", "d/e"} {
		for i := range 3 {
			files[fmt.Sprintf("%s/f%d.txt", d, i)] = "needle\n"
		}
	}
	root := newRoot(t, files)
	// Every file an hour old but the last one listed, the newest: the
	// Grep with limit 1 must find it among the files its prescan left
	// unread, so it has to stat them.
	old, newest := time.Now().Add(-time.Hour), time.Now()
	for rel := range files {
		mt := old
		if rel == "d/e/f2.txt" {
			mt = newest
		}
		if err := os.Chtimes(filepath.Join(root, rel), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]string, len(fdQueries))
	for i, q := range fdQueries {
		want[i] = fdAnswer(t, root, q.tool, q.args)
	}
	var constrained int
	for k := 0; k <= 12; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOutOfDescriptorsChild$", "-test.v")
		cmd.Env = append(os.Environ(), "INDEXD_FD_CHILD="+strconv.Itoa(k), "INDEXD_FD_ROOT="+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("k=%d: child: %v\n%s", k, err, out)
		}
		for i, q := range fdQueries {
			_, line, ok := strings.Cut(string(out), fmt.Sprintf("ANSWER %d %s ", i, q.tool))
			if !ok {
				t.Fatalf("k=%d: no %s %s answer:\n%s", k, q.tool, q.args, out)
			}
			line, _, _ = strings.Cut(line, "\n")
			status, data, _ := strings.Cut(line, " ")
			// A truncated answer is partial, and claims to be the
			// query's first results as much as a success claims all.
			var d struct {
				Truncated bool   `json:"truncated"`
				Aborted   string `json:"aborted_reason"`
			}
			json.Unmarshal([]byte(data), &d)
			complete := status == "success" || status == "partial" && d.Truncated && d.Aborted == ""
			switch {
			case complete && data != want[i]:
				t.Errorf("k=%d: %s %s answered %s with %s\nwant %s", k, q.tool, q.args, status, data, want[i])
			case !complete:
				constrained++
			}
		}
	}
	if constrained == 0 {
		t.Fatal("no answer ran out of descriptors: the test checks nothing")
	}
}

// fdAnswer runs one query and returns its data, as JSON.
func fdAnswer(t testing.TB, root, tool, args string) string {
	t.Helper()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	env := NewDirect(ws).Run(context.Background(), tool, "", json.RawMessage(args))
	js, _ := json.Marshal(env.Data)
	return string(js)
}

// TestOutOfDescriptorsChild is the child of the test above; it does
// nothing unless INDEXD_FD_CHILD is set.
func TestOutOfDescriptorsChild(t *testing.T) {
	k, err := strconv.Atoi(os.Getenv("INDEXD_FD_CHILD"))
	if err != nil {
		t.Skip("not the child")
	}
	root := os.Getenv("INDEXD_FD_ROOT")
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tools := NewDirect(ws)
	fdAnswer(t, root, tool.Glob, `{"pattern":"*"}`) // warm up what runs once
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	// The limit bounds descriptor numbers, not their count: pick the one
	// below which exactly k numbers are free (the listing's own
	// descriptor is closed by now: its link no longer reads).
	used := map[int]bool{}
	for _, e := range ents {
		if _, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			n, _ := strconv.Atoi(e.Name())
			used[n] = true
		}
	}
	limit, free := 0, 0
	for ; free < k || used[limit]; limit++ {
		if !used[limit] {
			free++
		}
	}
	lim := unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	var answers []string
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	for i, q := range fdQueries {
		env := tools.Run(context.Background(), q.tool, "", json.RawMessage(q.args))
		js, _ := json.Marshal(env.Data)
		answers = append(answers, fmt.Sprintf("ANSWER %d %s %s %s", i, q.tool, env.Status, js))
	}
	fmt.Println(strings.Join(answers, "\n"))
}
