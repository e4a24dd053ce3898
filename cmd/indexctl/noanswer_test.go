package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/fakesock"
	"github.com/indexd/indexd/rpc"
)

// shortAnswerTimeout returns the tests' system with a CLI that gives up
// on a silent daemon after 100ms.
func shortAnswerTimeout(t *testing.T) system {
	t.Helper()
	t.Setenv("INDEXCTL_DIRECT", "")
	sys := testSystem()
	sys.dialer = rpc.Dialer{AnswerTimeout: 100 * time.Millisecond}
	return sys
}

// runAsync runs indexctl in this process with sys; its exit code comes on
// the channel.
func runAsync(sys system, args []string, stdin io.Reader, stdout, stderr io.Writer) <-chan int {
	code := make(chan int, 1)
	go func() { code <- runIn(sys, args, stdin, stdout, stderr) }()
	return code
}

func waitExit(t *testing.T, code <-chan int, what string) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return", what)
		return 0
	}
}

// A daemon that accepts and never answers: the query ends with exit 2 and
// says what it waited for and what to do, instead of hanging.
func TestQueryDaemonNoAnswer(t *testing.T) {
	socket := fakesock.Mute(t)
	sys := shortAnswerTimeout(t)
	root := t.TempDir()
	want := "indexctl: indexd did not answer within 100ms (socket " + socket + "); try 'indexctl stop' or --direct\n"
	for _, args := range [][]string{
		{"glob", "*.go"},
		{"grep", "x", "--args", `{"timeout_ms":60000}`},
		{"ls", "--json"},
	} {
		var stdout, stderr bytes.Buffer
		code := waitExit(t, runAsync(sys, append([]string{"--socket", socket, "--root", root}, args...), strings.NewReader(""), &stdout, &stderr), "indexctl "+args[0])
		if code != daemonapi.ExitError || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("indexctl %v: exit %d, stdout %q, stderr %q; want 2 and %q", args, code, &stdout, &stderr, want)
		}
	}
	// stop cannot stop it either, and says so.
	var stdout, stderr bytes.Buffer
	code := waitExit(t, runAsync(sys, []string{"--socket", socket, "stop"}, strings.NewReader(""), &stdout, &stderr), "indexctl stop")
	if want := "indexctl stop: indexd did not answer within 100ms (socket " + socket + ")\n"; code != daemonapi.ExitError || stderr.String() != want {
		t.Errorf("indexctl stop: exit %d, stderr %q; want 2 and %q", code, &stderr, want)
	}
}

// The first use says at once what it does: a query that starts the
// daemon says so on a terminal (and is silent off one, for scripts); a
// query that finds it running says nothing.
func TestFirstUseSaysTheDaemonStarts(t *testing.T) {
	t.Setenv("INDEXCTL_DIRECT", "")
	dir := t.TempDir()
	socket := dir + "/s.sock"
	t.Setenv("XDG_STATE_HOME", dir+"/state")
	root := t.TempDir()
	var tty bytes.Buffer
	sys := testSystem()
	sys.isTerminal = func(w io.Writer) bool { return w == &tty }
	t.Cleanup(func() {
		var o, e bytes.Buffer
		runIn(sys, []string{"--socket", socket, "stop"}, strings.NewReader(""), &o, &e)
	})
	var stdout bytes.Buffer
	if code := runIn(sys, []string{"--socket", socket, "--root", root, "glob", "*"}, strings.NewReader(""), &stdout, &tty); code != daemonapi.ExitNothing {
		t.Fatalf("first query: exit %d, stderr %q", code, &tty)
	}
	if !strings.HasPrefix(tty.String(), "indexctl: started the indexd daemon: ") {
		t.Errorf("first query on a terminal: stderr %q", &tty)
	}
	tty.Reset()
	if code := runIn(sys, []string{"--socket", socket, "--root", root, "glob", "*"}, strings.NewReader(""), &stdout, &tty); code != daemonapi.ExitNothing || strings.Contains(tty.String(), "started") {
		t.Errorf("second query: exit %d, stderr %q", code, &tty)
	}
}
