package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/query"
)

// TestMain makes the tests hermetic: the global git excludes file is read
// from HOME and XDG_CONFIG_HOME, so both point at an empty directory.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "indexd-mcp-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// mkTree creates files (slash paths → contents) under root, giving each
// the modification time of its position in order: the first is the
// oldest, so Grep lists the last one first.
func mkTree(t testing.TB, root string, order []string, files map[string]string) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range order {
		abs := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		when := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(abs, when, when); err != nil {
			t.Fatal(err)
		}
	}
}

// sampleTree is the tree most tests search; see mkSample.
var sampleOrder = []string{
	"a.go",
	"docs/readme.md",
	"src/util/c.ts",
	"src/b.ts",
	".hidden/h.ts",
}

var sampleFiles = map[string]string{
	"a.go":           "package a\n\nfunc Alpha() {}\n",
	"docs/readme.md": "# Beta docs\nuse beta < gamma & delta\n",
	"src/util/c.ts":  "// TODO beta\nexport const c = 3;\n",
	"src/b.ts":       "export const beta = 1;\nexport const BETA2 = 2;\n",
	".hidden/h.ts":   "const beta = 0;\n",
}

// mkSample creates the sample tree in a new directory and returns it.
func mkSample(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	mkTree(t, root, sampleOrder, sampleFiles)
	return root
}

// directQuery answers calls in process by walking, as indexctl --direct
// does.
func directQuery(ctx context.Context, tool, root string, args json.RawMessage) (json.RawMessage, error) {
	ws, err := query.NewWorkspace(root)
	if err != nil {
		return nil, err
	}
	return query.NewDirect(ws).Run(ctx, tool, ".", args).MarshalJSON()
}

// recorder wraps a QueryFunc and records the calls it forwards.
type recorder struct {
	next  QueryFunc
	mu    sync.Mutex
	calls []string // "TOOL ROOT ARGS"
}

func (r *recorder) query(ctx context.Context, tool, root string, args json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	r.calls = append(r.calls, fmt.Sprintf("%s %s %s", tool, root, args))
	r.mu.Unlock()
	return r.next(ctx, tool, root, args)
}

func (r *recorder) last(t testing.TB) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("no call reached Query")
	}
	return r.calls[len(r.calls)-1]
}

// connect serves cfg on an in-memory transport and returns a client
// session connected to it. The client's options and session options may
// be nil.
func connect(t testing.TB, cfg Config, client *sdk.Client, opts *sdk.ClientSessionOptions) (*Server, *sdk.ClientSession) {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if client == nil {
		client = sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	}
	cs, err := client.Connect(ctx, ct, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return srv, cs
}

// call calls a tool with args given as JSON text.
func call(t testing.TB, cs *sdk.ClientSession, tool, args string) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: tool}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

// text returns the result's one text content.
func text(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content, got %d: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// structured returns the result's structuredContent as JSON.
func structured(t testing.TB, res *sdk.CallToolResult) []byte {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatal("no structuredContent")
	}
	js, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// envelopeOf checks that the result of an envelope tool is what the
// package promises (text = envelope text, isError = status error, a valid
// envelope whose params_input is args) and returns the envelope decoded.
func envelopeOf(t testing.TB, res *sdk.CallToolResult, args string) *testEnvelope {
	t.Helper()
	js := structured(t, res)
	envelopetest.Validate(t, js)
	var env testEnvelope
	if err := json.Unmarshal(js, &env); err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != env.Text {
		t.Errorf("text content %q differs from the envelope's text %q", got, env.Text)
	}
	if res.IsError != (env.Status == "error") {
		t.Errorf("isError %v with status %q", res.IsError, env.Status)
	}
	if args == "" {
		args = "{}"
	}
	if got := compact(t, env.Context.ParamsInput); got != compact(t, json.RawMessage(args)) {
		t.Errorf("params_input %s, want %s", got, args)
	}
	return &env
}

type testEnvelope struct {
	Status string `json:"status"`
	Data   struct {
		Paths   []string `json:"paths"`
		Matches []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"matches"`
		Files   []string `json:"files"`
		Entries []struct {
			Path string `json:"path"`
			Type string `json:"type"`
		} `json:"entries"`
		Truncated bool `json:"truncated"`
	} `json:"data"`
	Text    string `json:"text"`
	Context struct {
		ParamsInput json.RawMessage `json:"params_input"`
	} `json:"context"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// matchLines renders Grep matches as "file:line: text".
func (e *testEnvelope) matchLines() []string {
	var out []string
	for _, m := range e.Data.Matches {
		out = append(out, fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Text))
	}
	return out
}

func (e *testEnvelope) entryNames() []string {
	var out []string
	for _, en := range e.Data.Entries {
		out = append(out, en.Path)
	}
	return out
}

// compact re-encodes JSON so that key order and spacing do not matter.
func compact(t testing.TB, js json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func equal(a, b []string) bool { return slices.Equal(a, b) }

func lines(s ...string) string { return strings.Join(s, "\n") }
