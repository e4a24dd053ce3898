package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/fakesock"
	"github.com/indexd/indexd/rpc"
)

// shortAnswerTimeout makes the CLI give up on a silent daemon after 100ms.
func shortAnswerTimeout(t *testing.T) {
	t.Helper()
	old := dialer
	dialer = rpc.Dialer{AnswerTimeout: 100 * time.Millisecond}
	t.Cleanup(func() { dialer = old })
	t.Setenv("INDEXCTL_DIRECT", "")
}

// runAsync runs indexctl in this process; its exit code comes on the
// channel.
func runAsync(args []string, stdin io.Reader, stdout, stderr io.Writer) <-chan int {
	code := make(chan int, 1)
	go func() { code <- run(args, stdin, stdout, stderr) }()
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
	shortAnswerTimeout(t)
	root := t.TempDir()
	want := "indexctl: indexd did not answer within 100ms (socket " + socket + "); try 'indexctl stop' or --direct\n"
	for _, args := range [][]string{
		{"glob", "*.go"},
		{"grep", "x", "--args", `{"timeout_ms":60000}`},
		{"ls", "--json"},
	} {
		var stdout, stderr bytes.Buffer
		code := waitExit(t, runAsync(append([]string{"--socket", socket, "--root", root}, args...), strings.NewReader(""), &stdout, &stderr), "indexctl "+args[0])
		if code != exitError || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("indexctl %v: exit %d, stdout %q, stderr %q; want 2 and %q", args, code, &stdout, &stderr, want)
		}
	}
	// stop cannot stop it either, and says so.
	var stdout, stderr bytes.Buffer
	code := waitExit(t, runAsync([]string{"--socket", socket, "stop"}, strings.NewReader(""), &stdout, &stderr), "indexctl stop")
	if want := "indexctl stop: indexd did not answer within 100ms (socket " + socket + ")\n"; code != exitError || stderr.String() != want {
		t.Errorf("indexctl stop: exit %d, stderr %q; want 2 and %q", code, &stderr, want)
	}
}

// Through MCP the same is a TIMEOUT envelope, and the session goes on.
func TestMCPDaemonNoAnswer(t *testing.T) {
	socket := fakesock.Mute(t)
	shortAnswerTimeout(t)
	root := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	code := runAsync([]string{"--socket", socket, "--root", root, "mcp"}, inR, outW, &stderr)
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(time.Minute):
			t.Fatal("no answer from indexctl mcp")
			return ""
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 2; id <= 3; id++ {
		send(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"Glob","arguments":{"pattern":"*"}}}`)
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				IsError           bool `json:"isError"`
				StructuredContent struct {
					Status string `json:"status"`
					Error  struct {
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		line := recv()
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		env := resp.Result.StructuredContent
		want := "indexd did not answer within 100ms (socket " + socket + "); try 'indexctl stop' or --direct"
		if resp.ID != id || !resp.Result.IsError || env.Status != "error" || env.Error.Code != "TIMEOUT" || env.Error.Message != want {
			t.Errorf("call %d: %s", id, line)
		}
	}
	inW.Close()
	if c := waitExit(t, code, "indexctl mcp"); c != exitFound {
		t.Errorf("indexctl mcp: exit %d, stderr %s", c, stderr.String())
	}
	outW.Close()
}
