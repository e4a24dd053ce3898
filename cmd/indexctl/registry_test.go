package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/daemon"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/mcp"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// exampleCalls are a call of each tool that finds something in the tree
// TestEveryLayerKnowsEveryTool writes: a.txt holding "needle".
var exampleCalls = map[string]string{
	tool.Glob: `{"pattern":"*.txt"}`,
	tool.Grep: `{"pattern":"needle"}`,
	tool.LS:   `{}`,
	// A token of another daemon instance: fresh_instance, every file.
	tool.Changes: `{"since":"` + journal.Clock{Instance: 1, Root: 1, Journal: 1, Pos: 1}.String() + `"}`,
}

// Every tool of the table (package tool) is known to every layer: query
// (it runs it), the CLI (a command for it, its method, the exit-code
// rule), rpc (method to tool and back), the daemon (it answers the tool's
// method), the engine's walk (indexctl --direct), the MCP server (a
// definition, offered by default) and the envelope (a text). A tool added to the table
// and forgotten by a layer fails here.
func TestEveryLayerKnowsEveryTool(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "indexd.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{SocketPath: socket, StateDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the daemon did not stop")
		}
	}()
	cl, err := rpc.EnsureDaemon(ctx, socket, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()

	specs := tool.Specs()
	if len(specs) == 0 {
		t.Fatal("no tools in the table")
	}
	sys := testSystem()
	engine := (&cli{stderr: io.Discard, sys: sys}).engine()
	// indexctl mcp's --tools default is the table's; the MCP server's
	// must be the same.
	if !slices.Equal(mcp.DefaultTools, tool.Names()) {
		t.Errorf("mcp.DefaultTools %v, the table's tools %v", mcp.DefaultTools, tool.Names())
	}
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			// query: it runs the tool.
			if qs, err := query.LookupTool(spec.Name); err != nil || qs.Spec != spec {
				t.Errorf("query.LookupTool(%q) = %v, %v; want the table's row", spec.Name, qs, err)
			}
			// CLI: a command runs the tool.
			if !slices.ContainsFunc(commands, func(c *command) bool { return c.tool == spec.Name }) {
				t.Errorf("no indexctl command runs %s", spec.Name)
			}
			// rpc: method to tool and back.
			if m, err := rpc.MethodForTool(spec.Name); err != nil || m != spec.Method {
				t.Errorf("rpc.MethodForTool(%q) = %q, %v; want %q", spec.Name, m, err, spec.Method)
			}
			if name, ok := rpc.ToolForMethod(spec.Method); !ok || name != spec.Name {
				t.Errorf("rpc.ToolForMethod(%q) = %q, %v; want %q", spec.Method, name, ok, spec.Name)
			}
			// MCP: defined, and offered by default.
			if mcp.Tool(spec.Name) == nil || !slices.Contains(mcp.DefaultTools, spec.Name) {
				t.Errorf("the MCP server does not offer %s", spec.Name)
			}
			args, ok := exampleCalls[spec.Name]
			if !ok {
				t.Fatalf("no example call of %s in exampleCalls: add one", spec.Name)
			}
			req := request{Tool: spec.Name, Root: root, Args: json.RawMessage(args)}
			// The daemon answers the tool's method (viaDaemon fails on
			// an rpc error such as method not found), and in process;
			// each answer has a text and finds something by the
			// tool's exit-code rule.
			for _, r := range []runner{&viaDaemon{socket: socket, stderr: io.Discard, engine: engine, sys: &sys}, inProcess{engine: engine}} {
				answer, err := r.query(ctx, req)
				if err != nil {
					t.Fatalf("%T: %v", r, err)
				}
				rep, err := readReply(answer)
				if err != nil {
					t.Fatal(err)
				}
				if rep.text == "" {
					t.Errorf("%T: %s's answer has no text: %s", r, spec.Name, answer)
				}
				if code, err := answerCode(t, spec.Name, answer); code != daemonapi.ExitFound || err != nil {
					t.Errorf("%T: exit code %d, %v for %s", r, code, err, answer)
				}
			}
		})
	}

	// An unknown tool is an error in every layer, never another tool.
	if m, err := rpc.MethodForTool("Find"); err == nil {
		t.Errorf("rpc.MethodForTool(Find) = %q, want an error", m)
	}
	if _, err := (&viaDaemon{socket: socket, stderr: io.Discard, engine: engine, sys: &sys}).query(ctx, request{Tool: "Find", Root: root, Args: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), `unknown tool "Find"`) {
		t.Errorf("a query of an unknown tool: %v", err)
	}
	if _, ok := rpc.ToolForMethod(rpc.MethodStatus); ok {
		t.Error("rpc.ToolForMethod(status) names a tool")
	}
}

// TestEveryLayerAgrees: the command line's flags of each tool are its
// table's (tool.Spec.Params): every parameter with a flag has it, with
// its short name, setting that parameter with a value of its type; every
// flag of a query command sets a parameter of the table (or is one of
// the command line's own: --args, --all, rg's -e, -w, ...); and the MCP
// server offers exactly the table's parameters that are not hidden, with
// the table's bounds and choices. (query's TestParamsAgree holds the
// decoders to the same table.)
func TestEveryLayerAgrees(t *testing.T) {
	t.Parallel()
	values := map[tool.Kind]struct{ arg, json string }{
		tool.String:  {"v", `"v"`},
		tool.Int:     {"3", `3`},
		tool.Bool:    {"", `true`},
		tool.Strings: {"v", `["v"]`},
	}
	for _, spec := range tool.Specs() {
		var cmd *command
		for _, c := range commands {
			if c.tool == spec.Name {
				cmd = c
			}
		}
		if cmd == nil {
			t.Errorf("%s: no command", spec.Name)
			continue
		}
		for _, p := range cmd.params {
			if spec.Param(p.key) == nil {
				t.Errorf("indexctl %s --%s sets %s, which the table of %s lacks", cmd.name, p.flag(), p.key, spec.Name)
			}
		}
		var g globals
		var q queryFlags
		own, _ := cmd.flagSets(&g, &q)
		for _, tp := range spec.Params {
			name := tp.FlagName()
			if name == "" {
				continue
			}
			f := own.Lookup(name)
			if f == nil {
				t.Errorf("indexctl %s: no --%s for %s's %s", cmd.name, name, spec.Name, tp.Name)
				continue
			}
			if f.Short != tp.Short {
				t.Errorf("indexctl %s --%s: short -%s, the table's -%s", cmd.name, name, f.Short, tp.Short)
			}
			v := values[tp.Kind]
			args := []string{"--" + name}
			if v.arg != "" {
				args = append(args, v.arg)
			}
			if cmd.positional == "pattern" {
				args = append(args, "pat")
			}
			var g2 globals
			var q2 queryFlags
			fs, global := cmd.flagSets(&g2, &q2)
			fs.Include(global)
			if err := fs.Parse(args); err != nil {
				t.Errorf("indexctl %s %q: %v", cmd.name, args, err)
				continue
			}
			raw, _, err := toolArgs(cmd, fs, &q2, fs.Args(), strings.NewReader(""))
			if err != nil {
				t.Errorf("indexctl %s %q: %v", cmd.name, args, err)
				continue
			}
			var obj map[string]json.RawMessage
			json.Unmarshal(raw, &obj)
			if got := string(obj[tp.Name]); got != v.json {
				t.Errorf("indexctl %s %q sends %s = %s, want %s", cmd.name, args, tp.Name, got, v.json)
			}
		}
		// The MCP schema offers the table's parameters that are not hidden.
		def := mcp.Tool(spec.Name)
		var schema struct {
			Properties map[string]struct {
				Minimum *int     `json:"minimum"`
				Maximum *int     `json:"maximum"`
				Enum    []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(def.InputSchema.(json.RawMessage), &schema); err != nil {
			t.Fatal(err)
		}
		var offered []string
		for _, tp := range spec.Params {
			if tp.Hidden {
				continue
			}
			offered = append(offered, tp.Name)
			ps, ok := schema.Properties[tp.Name]
			if !ok {
				t.Errorf("MCP %s: %s is not offered", spec.Name, tp.Name)
				continue
			}
			if tp.Kind == tool.Int && (ps.Minimum == nil || *ps.Minimum != tp.Min || tp.HasMax != (ps.Maximum != nil) || tp.HasMax && *ps.Maximum != tp.Max) {
				t.Errorf("MCP %s.%s: bounds %v..%v, the table's %d..%d", spec.Name, tp.Name, ps.Minimum, ps.Maximum, tp.Min, tp.Max)
			}
			if !slices.Equal(ps.Enum, tp.Enum) {
				t.Errorf("MCP %s.%s: choices %q, the table's %q", spec.Name, tp.Name, ps.Enum, tp.Enum)
			}
		}
		if len(schema.Properties) != len(offered) {
			t.Errorf("MCP %s offers %d parameters, the table %d (%v)", spec.Name, len(schema.Properties), len(offered), offered)
		}
	}
}
