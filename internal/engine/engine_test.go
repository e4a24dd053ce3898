package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/fakesock"
	"github.com/indexd/indexd/rpc"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A daemon that accepts and never answers: through MCP each call is a
// TIMEOUT envelope saying what it waited for and what to do, and the
// session goes on.
func TestMCPDaemonNoAnswer(t *testing.T) {
	socket := fakesock.Mute(t)
	t.Setenv("INDEXCTL_DIRECT", "")
	root := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"indexd", "mcp", "--socket", socket, "--root", root}, inR, outW, &stderr, rpc.Dialer{AnswerTimeout: 100 * time.Millisecond})
	}()
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
			t.Fatal("no answer from indexd mcp")
			return ""
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 2; id <= 3; id++ {
		send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"Glob","arguments":{"pattern":"*"}}}`)
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
	select {
	case c := <-code:
		if c != daemonapi.ExitFound {
			t.Errorf("indexd mcp: exit %d, stderr %s", c, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("indexd mcp did not return")
	}
	outW.Close()
}

// The direct command answers one call from the walk: the envelope on
// stdout, marked as a fallback when a reason is given; a root that does
// not exist is an error on stderr, exit 2.
func TestDirect(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args       []string
		code       int
		out, errse string
	}{
		{[]string{"--root", root, "--", "Glob"}, daemonapi.ExitFound, `"paths":[]`, ""},
		{[]string{"--root", root, "--reason", "daemon_unavailable", "Glob"}, daemonapi.ExitFound, `"fallback_used":true,"fallback_reason":"daemon_unavailable"`, ""},
		{[]string{"--root", root + "/nope", "Glob"}, daemonapi.ExitError, "", "nope"},
		{[]string{"Glob"}, daemonapi.ExitError, "", "want --root DIR and one TOOL"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"indexd", CmdDirect}, tc.args...), strings.NewReader(`{"pattern":"*.go"}`), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) || (tc.out == "") != (stdout.Len() == 0) || !strings.Contains(stderr.String(), tc.errse) {
			t.Errorf("indexd direct %v: exit %d, stdout %q, stderr %q; want %d, %q and %q", tc.args, code, &stdout, &stderr, tc.code, tc.out, tc.errse)
		}
	}
}
