package main

// End-to-end tests of "indexctl mcp": the SDK's own client drives the
// server over a real stdio transport, running this test binary as
// indexctl (TestMain puts a copy named indexctl on $PATH), against a
// daemon of the test's own (INDEXD_SOCKET and XDG_STATE_HOME in a
// temporary directory) or with INDEXCTL_DIRECT=1.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// mcpEnv is one test's environment for indexctl: its own daemon socket,
// state and home directories.
type mcpEnv struct {
	t      testing.TB
	socket string
	vars   []string // the environment of the processes it starts
}

// newMCPEnv makes an environment; direct sets INDEXCTL_DIRECT=1. A
// daemon left running is stopped when the test ends.
func newMCPEnv(t testing.TB, direct bool) *mcpEnv {
	t.Helper()
	// Not t.TempDir: a socket path must be short, and queries of the
	// tests' trees must not see the socket.
	dir, err := os.MkdirTemp("", "indexctl-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "indexd.sock")
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	drop := []string{"INDEXCTL_DIRECT=", "INDEXD_SOCKET=", "XDG_STATE_HOME=", "HOME=", "XDG_CONFIG_HOME=", "XDG_RUNTIME_DIR="}
	var vars []string
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(drop, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			vars = append(vars, kv)
		}
	}
	vars = append(vars,
		"INDEXD_SOCKET="+socket,
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
	)
	if direct {
		vars = append(vars, "INDEXCTL_DIRECT=1")
	}
	if os.Getenv("GORACE") == "" {
		vars = append(vars, "GORACE=atexit_sleep_ms=0") // under -race, every process otherwise sleeps 1s at exit
	}
	e := &mcpEnv{t: t, socket: socket, vars: vars}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if _, err := client.StopDaemon(ctx, rpc.Dialer{}, socket); err != nil {
			t.Log("stopping the test's daemon: ", err)
		}
		os.RemoveAll(dir)
	})
	return e
}

// command returns "indexctl ARGS" in the environment, its standard error
// logged at the end of the test.
func (e *mcpEnv) command(args ...string) *exec.Cmd {
	e.t.Helper()
	path, err := exec.LookPath("indexctl")
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = e.vars
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	e.t.Cleanup(func() {
		if s := stderr.String(); s != "" {
			e.t.Logf("indexctl %s: stderr:\n%s", strings.Join(args, " "), s)
		}
	})
	return cmd
}

// start starts "indexctl ARGS" with pipes to its standard input and
// output.
func (e *mcpEnv) start(args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	e.t.Helper()
	cmd := e.command(args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// session runs "indexctl mcp ARGS" in dir ("" for the test's) and returns
// the SDK client's session with it. client may be nil: a client that
// offers no roots. opts may be nil: the SDK's latest protocol.
func (e *mcpEnv) session(dir string, client *sdk.Client, opts *sdk.ClientSessionOptions, args ...string) *sdk.ClientSession {
	e.t.Helper()
	cmd := e.command(append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	if client == nil {
		client = sdk.NewClient(&sdk.Implementation{Name: "indexctl-test", Version: "0"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, opts)
	if err != nil {
		e.t.Fatalf("connecting to indexctl mcp: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// status returns the daemon's status; ok is false when none runs.
func (e *mcpEnv) status() (st rpc.Status, ok bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, ok, err := client.DialRunning(ctx, rpc.Dialer{}, e.socket)
	if err != nil {
		e.t.Fatal(err)
	}
	if !ok {
		return st, false
	}
	defer cl.Close()
	var res json.RawMessage
	if err := cl.Call(ctx, rpc.MethodStatus, nil, &res); err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(res, &st); err != nil {
		e.t.Fatal(err)
	}
	return st, true
}

// ping checks that the daemon answers on its socket.
func (e *mcpEnv) ping() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := rpc.Dial(ctx, e.socket)
	if err != nil {
		e.t.Fatalf("the daemon is gone: %v", err)
	}
	defer cl.Close()
	if err := cl.Ping(ctx); err != nil {
		e.t.Fatalf("the daemon does not answer ping: %v", err)
	}
}

// indexWait indexes root in the daemon and waits until it is ready.
func (e *mcpEnv) indexWait(root string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl, err := rpc.Dial(ctx, e.socket)
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var res json.RawMessage
	if err := cl.Call(ctx, rpc.MethodIndex, rpc.RootParams{Root: root, Wait: true}, &res); err != nil {
		e.t.Fatal(err)
	}
	var rs rpc.RootStatus
	json.Unmarshal(res, &rs)
	if rs.State != rpc.StateReady {
		e.t.Fatalf("index %s: %s", root, res)
	}
}

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

// mcpTree makes the tests' workspace: files with increasing modification
// times in this order, so Grep lists the last one first.
func mcpTree(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := []struct{ name, content string }{
		{"a.go", "package a\n\nfunc Alpha() {}\n"},
		{"docs/readme.md", "# Beta docs\nuse beta < gamma & delta\n"},
		{"src/util/c.ts", "// TODO beta\nexport const c = 3;\n"},
		{"src/b.ts", "export const beta = 1;\nexport const BETA2 = 2;\n"},
		{".hidden/h.ts", "const beta = 0;\n"},
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		abs := filepath.Join(root, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		when := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(abs, when, when); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// mcpCall calls a tool with its arguments as JSON text.
func mcpCall(t testing.TB, cs *sdk.ClientSession, tool, args string) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

func resultText(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// mcpEnvelope is what the tests read of an envelope.
type mcpEnvelope struct {
	Status string `json:"status"`
	Data   struct {
		Paths   []string `json:"paths"`
		Matches []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"matches"`
		Entries []struct {
			Path string `json:"path"`
		} `json:"entries"`
		FallbackUsed   bool   `json:"fallback_used"`
		FallbackReason string `json:"fallback_reason"`
	} `json:"data"`
	Text  string `json:"text"`
	Stats struct {
		FilesScanned int  `json:"files_scanned"`
		Candidates   *int `json:"candidates"`
	} `json:"stats"`
	Context struct {
		ParamsInput json.RawMessage `json:"params_input"`
	} `json:"context"`
	Error *struct{ Code, Message string } `json:"error"`
}

// checkEnvelope checks an envelope tool's result (a valid envelope as
// structuredContent, its text as content, isError on status error,
// params_input = args) and returns the envelope.
func checkEnvelope(t testing.TB, res *sdk.CallToolResult, args string) *mcpEnvelope {
	t.Helper()
	js, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("structuredContent %v: %v", res.StructuredContent, err)
	}
	envelopetest.Validate(t, js)
	var env mcpEnvelope
	if err := json.Unmarshal(js, &env); err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != env.Text {
		t.Errorf("text %q is not the envelope's %q", got, env.Text)
	}
	if res.IsError != (env.Status == "error") {
		t.Errorf("isError %v with status %s", res.IsError, env.Status)
	}
	if got, want := canonical(t, env.Context.ParamsInput), canonical(t, json.RawMessage(args)); got != want {
		t.Errorf("params_input %s, want %s", got, want)
	}
	return &env
}

func canonical(t testing.TB, js json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func (e *mcpEnvelope) matchLines() []string {
	var out []string
	for _, m := range e.Data.Matches {
		out = append(out, fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Text))
	}
	return out
}

// TestMCP drives "indexctl mcp --tools compat" through the daemon and in
// process, and checks every tool's answers.
func TestMCP(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"daemon", "direct"} {
		t.Run(mode, func(t *testing.T) {
			e := newMCPEnv(t, mode == "direct")
			root := mcpTree(t)
			// "initialize": a client of protocol 2025-06-18 (the SDK's
			// latest discovers the server instead, see TestMCPSharedDaemon).
			cs := e.session("", nil, &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"}, "--root", root, "--tools", "compat")
			init := cs.InitializeResult()
			if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "indexd" || init.Capabilities.Tools == nil || init.Instructions == "" {
				t.Errorf("initialize result: %+v", init)
			}
			checkToolList(t, cs, []string{"Changes", "Glob", "Grep", "LS", "find_files_by_name", "search_in_files"})

			if mode == "daemon" {
				// The first call starts the daemon; once the root is
				// indexed, the index answers.
				env := checkEnvelope(t, mcpCall(t, cs, "LS", `{}`), `{}`)
				if env.Status != "success" {
					t.Fatalf("LS: %s", env.Text)
				}
				e.indexWait(root)
			}
			checkTools(t, cs, mode)

			st, running := e.status()
			switch {
			case mode == "direct" && running:
				t.Errorf("INDEXCTL_DIRECT=1 started a daemon (pid %d)", st.PID)
			case mode == "daemon" && (!running || len(st.Roots) != 1 || st.Roots[0].Root != root || st.Queries < 10):
				t.Errorf("daemon status: running %v, %+v", running, st)
			}
		})
	}
}

// checkToolList checks the tools listed and their input schemas.
func checkToolList(t *testing.T, cs *sdk.ClientSession, want []string) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		s, ok := tool.InputSchema.(map[string]any)
		if !ok {
			t.Errorf("%s: input schema %T", tool.Name, tool.InputSchema)
			continue
		}
		props, _ := s["properties"].(map[string]any)
		if s["type"] != "object" || len(props) == 0 {
			t.Errorf("%s: input schema %v", tool.Name, s)
		}
		if req, ok := s["required"].([]any); tool.Name != "LS" && tool.Name != "Changes" && (!ok || len(req) != 1 || props[req[0].(string)] == nil) {
			t.Errorf("%s: required %v", tool.Name, s["required"])
		}
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s: no description or output schema", tool.Name)
		}
	}
	sort.Strings(names)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// checkTools calls each tool on mcpTree's tree.
func checkTools(t *testing.T, cs *sdk.ClientSession, mode string) {
	t.Helper()
	// Through the daemon, once indexed, nothing falls back.
	complete := func(tool string, env *mcpEnvelope, status string) {
		t.Helper()
		if env.Status != status || env.Data.FallbackUsed {
			t.Errorf("%s: status %s, fallback %q:\n%s", tool, env.Status, env.Data.FallbackReason, env.Text)
		}
	}

	args := `{"pattern":"**/*.ts"}`
	env := checkEnvelope(t, mcpCall(t, cs, "Glob", args), args)
	complete("Glob", env, "success")
	if want := []string{"src/b.ts", "src/util/c.ts"}; !slices.Equal(env.Data.Paths, want) {
		t.Errorf("Glob paths %v, want %v", env.Data.Paths, want)
	}
	if !strings.HasPrefix(env.Text, "Found 2 files matching '**/*.ts' in '.'\n") || !strings.HasSuffix(env.Text, "\n\nsrc/b.ts\nsrc/util/c.ts") {
		t.Errorf("Glob text %q", env.Text)
	}

	args = `{"pattern":"BETA","include":"*.{ts,md}","limit":4}`
	env = checkEnvelope(t, mcpCall(t, cs, "Grep", args), args)
	complete("Grep", env, "partial")
	want := []string{
		"src/b.ts:1: export const beta = 1;",
		"src/b.ts:2: export const BETA2 = 2;",
		"src/util/c.ts:1: // TODO beta",
		"docs/readme.md:1: # Beta docs",
	}
	if got := env.matchLines(); !slices.Equal(got, want) {
		t.Errorf("Grep matches %q, want %q", got, want)
	}
	// limit 4 of 5 matches: partial, and exactly so.
	if !strings.Contains(env.Text, "[Truncated: Showing first 4 matches.") {
		t.Errorf("Grep text %q", env.Text)
	}

	args = `{"path":"src"}`
	env = checkEnvelope(t, mcpCall(t, cs, "LS", args), args)
	complete("LS", env, "success")
	if env.Text != "Listed 2 entries in 'src'\n\nutil/\nb.ts" {
		t.Errorf("LS text %q", env.Text)
	}

	for _, tc := range []struct{ tool, args, code, msg string }{
		{"Glob", `{"path":"src"}`, "INVALID_PARAM", "Missing required parameter 'pattern'."},
		{"Grep", `{"pattern":"beta","path":"../.."}`, "ACCESS_DENIED", "Access denied. Path must be within project root."},
		{"LS", `{"path":"/etc"}`, "ACCESS_DENIED", "Access denied. Path must be within project root."},
	} {
		res := mcpCall(t, cs, tc.tool, tc.args)
		env := checkEnvelope(t, res, tc.args)
		if !res.IsError || env.Error == nil || env.Error.Code != tc.code || env.Error.Message != tc.msg || resultText(t, res) != "Error: "+tc.msg {
			t.Errorf("%s %s: isError %v, %+v, text %q; want %s %q", tc.tool, tc.args, res.IsError, env.Error, resultText(t, res), tc.code, tc.msg)
		}
	}

	// The compatibility tools: their shapes (docs/tools.md), exactly.
	res := mcpCall(t, cs, "find_files_by_name", `{"name_pattern":"*.ts"}`)
	if got, want := resultText(t, res), `{"files":["src/b.ts","src/util/c.ts"],"total_found":2}`; res.IsError || got != want {
		t.Errorf("find_files_by_name: %s, want %s", got, want)
	}
	// files_searched is Grep's count of files read (or the index's
	// candidates): ask Grep the same question.
	args = `{"pattern":"beta","path":".","case_sensitive":true,"fixed_strings":true,"limit":1000,"timeout_ms":60000}`
	grep := checkEnvelope(t, mcpCall(t, cs, "Grep", args), args)
	searched := grep.Stats.FilesScanned
	if grep.Stats.Candidates != nil {
		searched = *grep.Stats.Candidates
	}
	if mode == "direct" && searched != 4 {
		t.Errorf("Grep scanned %d files, want 4", searched)
	}
	res = mcpCall(t, cs, "search_in_files", `{"query":"beta"}`)
	wantJSON := `{"matches":[` +
		`{"file_path":"src/b.ts","line_number":1,"line_content":"export const beta = 1;"},` +
		`{"file_path":"src/util/c.ts","line_number":1,"line_content":"// TODO beta"},` +
		`{"file_path":"docs/readme.md","line_number":2,"line_content":"use beta < gamma & delta"}],` +
		fmt.Sprintf(`"total_matches":3,"files_searched":%d,"timed_out":false}`, searched)
	if got := resultText(t, res); res.IsError || got != wantJSON {
		t.Errorf("search_in_files:\n got %s\nwant %s", got, wantJSON)
	}
	if got := canonical(t, mustJSON(t, res.StructuredContent)); got != canonical(t, json.RawMessage(wantJSON)) {
		t.Errorf("search_in_files structuredContent %s", got)
	}
	res = mcpCall(t, cs, "search_in_files", `{"query":"beta","exclude_query":"TODO","file_pattern":"*.ts"}`)
	if got := resultText(t, res); res.IsError || !strings.HasPrefix(got, `{"matches":[{"file_path":"src/b.ts","line_number":1,"line_content":"export const beta = 1;"}],"total_matches":1,`) {
		t.Errorf("search_in_files with exclude_query: %s", got)
	}
	for _, tc := range []struct{ tool, args, msg string }{
		{"search_in_files", `{"file_pattern":"*.ts"}`, "Missing required parameter 'query'."},
		{"find_files_by_name", `{"name_pattern":"*.ts","path":"../"}`, "Access denied. Path must be within project root."},
	} {
		res := mcpCall(t, cs, tc.tool, tc.args)
		if !res.IsError || resultText(t, res) != tc.msg {
			t.Errorf("%s %s: isError %v, %q; want %q", tc.tool, tc.args, res.IsError, resultText(t, res), tc.msg)
		}
	}
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestMCPSharedDaemon: two MCP servers on one root share one daemon, even
// when their first calls start it at the same time.
func TestMCPSharedDaemon(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, false)
	root := mcpTree(t)
	sessions := []*sdk.ClientSession{
		e.session("", nil, nil, "--root", root),
		e.session("", nil, nil, "--root", root),
	}
	calls := 0
	round := func() {
		var wg sync.WaitGroup
		for _, cs := range sessions {
			wg.Go(func() {
				args := `{"pattern":"beta","include":"*.ts"}`
				env := checkEnvelope(t, mcpCall(t, cs, "Grep", args), args)
				if len(env.Data.Matches) != 3 {
					t.Errorf("Grep: %s", env.Text)
				}
			})
		}
		wg.Wait()
		calls += len(sessions)
	}
	round()
	first, ok := e.status()
	if !ok || len(first.Roots) != 1 || first.Roots[0].Root != root || first.Queries != int64(calls) {
		t.Fatalf("after %d calls: running %v, status %+v", calls, ok, first)
	}
	round()
	round()
	st, _ := e.status()
	if st.PID != first.PID || len(st.Roots) != 1 || st.Queries != int64(calls) {
		t.Errorf("after %d calls: pid %d (first %d), %d roots, %d queries", calls, st.PID, first.PID, len(st.Roots), st.Queries)
	}
}

// TestMCPBadClients: clients that send garbage, or go away with calls in
// flight, end their own server, not the daemon.
func TestMCPBadClients(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, false)
	root := mcpTree(t)
	// Some work for the calls in flight: a thousand files, 10 MB.
	big := filepath.Join(root, "big")
	line := strings.Repeat("lorem ipsum dolor sit amet 12345 ", 30) + "\n"
	for i := range 1000 {
		dir := filepath.Join(big, fmt.Sprint(i%20))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat(line, 10)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := e.session("", nil, nil, "--root", root)
	checkEnvelope(t, mcpCall(t, cs, "LS", `{}`), `{}`)
	before, ok := e.status()
	if !ok {
		t.Fatal("no daemon after a call")
	}

	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	slowCall := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Grep","arguments":{"pattern":"\\w+ \\d{5} [x-z]","timeout_ms":60000,"limit":1000}}}`, id)
	}
	// Slow calls, then a quick one: once the quick one is answered, the
	// server has read (and started) the slow ones.
	var requests []string
	for i := 1; i <= 20; i++ {
		requests = append(requests, slowCall(i))
	}
	requests = append(requests, `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"LS","arguments":{}}}`)

	for _, tc := range []struct {
		name  string
		lines []string
		// kill: once this many response lines are read, kill the
		// server; -1: close its input and let it exit.
		kill int
	}{
		{"garbage", []string{"this is not JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Grep","arguments":{"pattern":"x"}}}`, `[1,2`, `{"id":`, "\x00\xff"}, -1},
		{"garbage after initialize", append([]string{initialize, initialized, slowCall(1), "}}}{{{", `{"jsonrpc":"2.0","id":2,"method":"nope"}`}, requests[2:5]...), -1},
		{"input closed with calls in flight", append([]string{initialize, initialized}, requests...), -1},
		{"killed with calls in flight", append([]string{initialize, initialized}, requests...), 2},
		{"huge request", []string{initialize, initialized,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Grep","arguments":{"pattern":"` + strings.Repeat("a", 10<<20) + `"}}}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"LS","arguments":{}}}`}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stdin, stdout := e.start("mcp", "--root", root)
			done := make(chan error, 1)
			read := make(chan struct{}) // closed once tc.kill lines are read
			go func() {
				// Whatever the server answers: read it all, to its end.
				sc := bufio.NewScanner(stdout)
				sc.Buffer(nil, 16<<20)
				n := 0
				for sc.Scan() {
					if n++; n == tc.kill {
						close(read)
					}
				}
				io.Copy(io.Discard, stdout)
				done <- cmd.Wait()
			}()
			for _, l := range tc.lines {
				if _, err := io.WriteString(stdin, l+"\n"); err != nil {
					break // the server went away
				}
			}
			if tc.kill < 0 {
				stdin.Close()
			} else {
				select {
				case <-read:
					cmd.Process.Kill()
				case err := <-done:
					t.Fatalf("indexctl mcp exited early: %v", err)
				}
			}
			select {
			case err := <-done:
				t.Logf("indexctl mcp exited: %v", err)
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatal("indexctl mcp did not exit")
			}
			stdin.Close()
			e.ping()
			st, _ := e.status()
			if st.PID != before.PID {
				t.Errorf("daemon pid %d, was %d", st.PID, before.PID)
			}
			// The daemon still answers MCP calls.
			args := `{"pattern":"beta","include":"*.ts"}`
			if env := checkEnvelope(t, mcpCall(t, cs, "Grep", args), args); len(env.Data.Matches) != 3 {
				t.Errorf("Grep after a bad client: %s", env.Text)
			}
		})
	}
}

// TestMCPDaemonUnavailable: when no daemon can be started, the server
// answers in process and says so.
func TestMCPDaemonUnavailable(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, false)
	shared := filepath.Join(filepath.Dir(e.socket), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777) // others may write: the daemon refuses it
	e.vars = append(e.vars, "INDEXD_SOCKET="+filepath.Join(shared, "indexd.sock"))
	root := mcpTree(t)
	cs := e.session("", nil, nil, "--root", root)
	args := `{"pattern":"**/*.go"}`
	env := checkEnvelope(t, mcpCall(t, cs, "Glob", args), args)
	if !slices.Equal(env.Data.Paths, []string{"a.go"}) || !env.Data.FallbackUsed || env.Data.FallbackReason != "daemon_unavailable" {
		t.Errorf("Glob without a daemon: %+v", env.Data)
	}
}

// TestMCPRoots: without --root, the client's first root, else the
// nearest ancestor of the current directory holding .git.
func TestMCPRoots(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, true)
	root := mcpTree(t)
	other := t.TempDir()
	os.Mkdir(filepath.Join(other, ".git"), 0o755)
	os.MkdirAll(filepath.Join(other, "sub", "dir"), 0o755)
	os.WriteFile(filepath.Join(other, "other.go"), []byte("package other\n"), 0o644)
	wd := filepath.Join(other, "sub", "dir")

	glob := func(cs *sdk.ClientSession) []string {
		args := `{"pattern":"*.go"}`
		return checkEnvelope(t, mcpCall(t, cs, "Glob", args), args).Data.Paths
	}
	// A client with roots, of protocol 2025-06-18 (roots/list) and of the
	// latest (input requests).
	for _, opts := range []*sdk.ClientSessionOptions{{ProtocolVersion: "2025-06-18"}, nil} {
		client := sdk.NewClient(&sdk.Implementation{Name: "roots", Version: "0"}, nil)
		client.AddRoots(&sdk.Root{URI: "file://" + root})
		cs := e.session(wd, client, opts)
		if got := glob(cs); !slices.Equal(got, []string{"a.go"}) {
			t.Errorf("client roots: Glob found %v, want [a.go]", got)
		}
	}
	// Without roots: the ancestor holding .git.
	cs := e.session(wd, nil, nil)
	if got := glob(cs); !slices.Equal(got, []string{"other.go"}) {
		t.Errorf("no client roots: Glob found %v, want [other.go]", got)
	}
	// --root wins over the client's roots.
	client := sdk.NewClient(&sdk.Implementation{Name: "roots", Version: "0"}, nil)
	client.AddRoots(&sdk.Root{URI: "file://" + root})
	cs = e.session(wd, client, nil, "--root", other)
	if got := glob(cs); !slices.Equal(got, []string{"other.go"}) {
		t.Errorf("--root: Glob found %v, want [other.go]", got)
	}
}

// TestMCPUsage checks the command line's errors, reported by the engine
// indexctl becomes.
func TestMCPUsage(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, false)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"mcp", "--tools", "Glob,Read"}, `indexctl mcp: unknown tool "Read" in --tools`},
		{[]string{"mcp", "extra"}, `indexctl mcp: unexpected argument "extra"`},
		{[]string{"--root", "/nonexistent/dir", "mcp"}, `indexctl mcp: root '/nonexistent/dir' does not exist`},
	} {
		cmd := e.command(tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err == nil || code != daemonapi.ExitError || !strings.HasPrefix(stderr.String(), tc.msg) || stdout.Len() > 0 {
			t.Errorf("indexctl %v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, &stdout, &stderr, tc.msg)
		}
	}
	// End of input ends the server, with exit status 0.
	cmd := e.command("--direct", "--root", t.TempDir(), "mcp")
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Run(); err != nil {
		t.Errorf("indexctl mcp on empty input: %v", err)
	}
}

// TestMCPLatencyFigures measures, for the report rather than as a check,
// the latency of a Grep call through MCP against the same query on the
// daemon's socket (one connection, and a connection per call as indexctl
// makes), on a small tree and on $(go env GOROOT)/src once indexed. Run
// it with INDEXD_MCP_FIGURES=1, without -race:
//
//	INDEXD_MCP_FIGURES=1 go test -run TestMCPLatencyFigures -v ./cmd/indexctl
func TestMCPLatencyFigures(t *testing.T) {
	t.Parallel()
	if os.Getenv("INDEXD_MCP_FIGURES") == "" {
		t.Skip("set INDEXD_MCP_FIGURES=1 to measure")
	}
	const n = 200
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	goroot, err := filepath.EvalSymlinks(filepath.Join(strings.TrimSpace(string(out)), "src"))
	if err != nil {
		t.Fatal(err)
	}
	e := newMCPEnv(t, false)
	for _, tc := range []struct{ name, root, args string }{
		{"small tree (5 files)", mcpTree(t), `{"pattern":"beta","include":"*.ts"}`},
		{"GOROOT/src", goroot, `{"pattern":"func NewReader","include":"*.go"}`},
	} {
		cs := e.session("", nil, nil, "--root", tc.root)
		checkEnvelope(t, mcpCall(t, cs, "Grep", tc.args), tc.args) // starts the daemon
		e.indexWait(tc.root)
		ctx := context.Background()
		cl, err := rpc.Dial(ctx, e.socket)
		if err != nil {
			t.Fatal(err)
		}
		params := rpc.ToolParams{Root: tc.root, Args: json.RawMessage(tc.args)}
		viaMCP := func() {
			if res := mcpCall(t, cs, "Grep", tc.args); res.IsError {
				t.Fatal(resultText(t, res))
			}
		}
		viaSocket := func() {
			var res json.RawMessage
			if err := cl.Call(ctx, tool.MethodGrep, params, &res); err != nil {
				t.Fatal(err)
			}
		}
		viaDial := func() {
			c, err := rpc.Dial(ctx, e.socket)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var res json.RawMessage
			if err := c.Call(ctx, tool.MethodGrep, params, &res); err != nil {
				t.Fatal(err)
			}
		}
		var matches int
		env := checkEnvelope(t, mcpCall(t, cs, "Grep", tc.args), tc.args)
		matches = len(env.Data.Matches)
		ways := []struct {
			name string
			f    func()
			d    []time.Duration
		}{{name: "MCP tools/call", f: viaMCP}, {name: "socket, one connection", f: viaSocket}, {name: "socket, a connection per call", f: viaDial}}
		for i := range 20 + n { // 20 to warm up; the ways take turns, so drift hits all alike
			for w := range ways {
				start := time.Now()
				ways[w].f()
				if i >= 20 {
					ways[w].d = append(ways[w].d, time.Since(start))
				}
			}
		}
		for _, w := range ways {
			d := w.d
			slices.Sort(d)
			t.Logf("%-22s %-31s median %8s  p10 %8s  p90 %8s  (%d calls, %d matches)", tc.name, w.name,
				d[n/2].Round(time.Microsecond), d[n/10].Round(time.Microsecond), d[n*9/10].Round(time.Microsecond), n, matches)
		}
		cl.Close()
	}
}
