package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

func TestToolForMethod(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{tool.MethodGlob: tool.Glob, tool.MethodGrep: tool.Grep, tool.MethodLS: tool.LS} {
		if got, ok := rpc.ToolForMethod(method); !ok || got != want {
			t.Errorf("ToolForMethod(%q) = %q, %v; want %q", method, got, ok, want)
		}
	}
	for _, m := range []string{rpc.MethodPing, rpc.MethodStatus, "Glob", ""} {
		if _, ok := rpc.ToolForMethod(m); ok {
			t.Errorf("ToolForMethod(%q) is a tool", m)
		}
	}
}

// queryHandler answers the tool methods with the walk engine, the way the
// daemon wires them (without its workspace registry and index).
func queryHandler() rpc.Handler {
	tool := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		p, perr := rpc.DecodeToolParams(params)
		if perr != nil {
			return nil, perr
		}
		name, _ := rpc.ToolForMethod(method)
		ws, err := query.NewWorkspace(p.Root)
		if err != nil {
			return nil, rpc.Errorf(-32000, "root: %v", err)
		}
		env := query.NewDirect(ws).Run(ctx, name, p.Cwd, p.Args)
		js, err := env.MarshalJSON()
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "envelope: %v", err)
		}
		return js, nil
	}
	return rpc.HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		if _, ok := rpc.ToolForMethod(method); ok {
			return tool(ctx, method, params)
		}
		return nil, rpc.ErrMethodNotFound(method)
	})
}

// Real envelopes through the socket: results and tool faults alike are
// envelopes, byte for byte as the tool made them.
func TestQueryEnvelopes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("package a\n// <b> & c\n"), 0o644)
	ts := startServer(t, queryHandler(), nil)
	c, err := rpc.Dial(context.Background(), ts.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	tests := []struct {
		method, cwd, args string
		status            envelope.Status
		code              envelope.Code
	}{
		{tool.MethodGlob, "", `{"pattern":"**/*.go"}`, envelope.StatusSuccess, ""},
		{tool.MethodGrep, "src", `{"pattern":"<b> &"}`, envelope.StatusSuccess, ""},
		{tool.MethodLS, "", `{"path":"src"}`, envelope.StatusSuccess, ""},
		{tool.MethodGlob, "", `{}`, envelope.StatusError, envelope.CodeInvalidParam},
		{tool.MethodGrep, "", `{"pattern":"("}`, envelope.StatusError, envelope.CodeInvalidParam},
		{tool.MethodLS, "", `{"path":"../.."}`, envelope.StatusError, envelope.CodeAccessDenied},
		{tool.MethodLS, "", `[1]`, envelope.StatusError, envelope.CodeInvalidParam},
		{tool.MethodGlob, "nope", `{"pattern":"*"}`, envelope.StatusError, envelope.CodeNotFound},
	}
	for _, tc := range tests {
		var res json.RawMessage
		err := c.Call(context.Background(), tc.method, rpc.ToolParams{Root: root, Cwd: tc.cwd, Args: json.RawMessage(tc.args)}, &res)
		if err != nil {
			t.Errorf("%s %s: %v", tc.method, tc.args, err)
			continue
		}
		envelopetest.Validate(t, res)
		var raw envelope.Raw
		if err := json.Unmarshal(res, &raw); err != nil {
			t.Fatal(err)
		}
		if raw.Status != tc.status || (raw.Error != nil) != (tc.code != "") || (raw.Error != nil && raw.Error.Code != tc.code) {
			t.Errorf("%s %s: %s", tc.method, tc.args, res)
		}
		var ctx struct {
			ParamsInput json.RawMessage `json:"params_input"`
		}
		json.Unmarshal(raw.Context, &ctx)
		if string(ctx.ParamsInput) != tc.args {
			t.Errorf("%s: params_input %s, want %s", tc.method, ctx.ParamsInput, tc.args)
		}
	}
	// Protocol faults stay protocol faults.
	var rerr *rpc.Error
	if err := c.Call(context.Background(), tool.MethodGlob, map[string]string{"root": "relative"}, nil); !asCode(err, &rerr, rpc.CodeInvalidParams) {
		t.Errorf("relative root: %v", err)
	}
	if err := c.Call(context.Background(), "Glob", rpc.ToolParams{Root: root}, nil); !asCode(err, &rerr, rpc.CodeMethodNotFound) {
		t.Errorf("tool name as method: %v", err)
	}
}

func asCode(err error, target **rpc.Error, code int) bool {
	e, ok := err.(*rpc.Error)
	*target = e
	return ok && e.Code == code
}
