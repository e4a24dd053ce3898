package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/indexd/indexd/envelope"
)

// QueryFunc answers one Glob, Grep or LS call (tool is tool.Glob,
// tool.Grep or tool.LS) in the workspace at root, an absolute path, with the
// tool's arguments exactly as received (nil when the client sent none).
// It returns the response envelope as JSON. An error means there is no
// envelope at all (no daemon and no walk could answer); a failed tool call
// is an error envelope, not an error.
type QueryFunc func(ctx context.Context, tool, root string, args json.RawMessage) (json.RawMessage, error)

// Config configures a server.
type Config struct {
	// Query answers the calls. Required.
	Query QueryFunc
	// Tools are the tools offered (see ParseTools); nil means DefaultTools.
	Tools []string
	// Root, when set, is every session's workspace root (an absolute
	// path), whatever roots the client offers.
	Root string
	// DefaultRoot returns the root of a session whose client offers no
	// usable root, when Root is not set.
	DefaultRoot func() (string, error)
	// Version is the server's version, shown to clients.
	Version string
	// Logger receives the SDK's and the server's warnings; nil discards
	// them.
	Logger *slog.Logger
}

// Server is an MCP server answering the tools of one Config. It may serve
// many sessions at once.
type Server struct {
	cfg   Config
	sdk   *sdk.Server
	roots rootCache
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Query == nil {
		return nil, errors.New("mcp: Config.Query is required")
	}
	if cfg.Tools == nil {
		cfg.Tools = DefaultTools
	}
	if cfg.Root == "" && cfg.DefaultRoot == nil {
		return nil, errors.New("mcp: Config.Root or Config.DefaultRoot is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	s := &Server{cfg: cfg}
	s.sdk = sdk.NewServer(&sdk.Implementation{
		Name:    "indexd",
		Title:   "indexd: Glob, Grep and LS from a persistent index",
		Version: cfg.Version,
	}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(sdkLogHandler{cfg.Logger.Handler()}),
		// No logging capability: the tools report through their results.
		Capabilities: &sdk.ServerCapabilities{},
		RootsListChangedHandler: func(_ context.Context, req *sdk.RootsListChangedRequest) {
			s.roots.forget(req.Session)
		},
	})
	for _, name := range cfg.Tools {
		t := Tool(name)
		if t == nil {
			return nil, fmt.Errorf("mcp: unknown tool %q", name)
		}
		s.sdk.AddTool(t, s.handler(name))
	}
	return s, nil
}

// instructions are the server's instructions to clients.
const instructions = `indexd answers file-search tools for one workspace from a persistent index kept current by a daemon: Glob finds files by path pattern, Grep searches file contents (newest files first, case-insensitive by default), LS lists one directory, Changes lists the files changed since the clock of an earlier answer (use it after a build, formatter or git command instead of searching everything again). Paths in arguments and results are relative to the workspace root; nothing outside it can be searched. Prefer narrow searches: a path, an include filter, a specific pattern.`

// SDK returns the underlying SDK server.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one session on in and out (newline-delimited JSON-RPC, as on
// stdio) until in ends (or is closed) or ctx is done. A line that is not
// a JSON-RPC message is answered with a JSON-RPC error and the session
// goes on (see lineTransport). An orderly end of the session (end of
// input, cancelled ctx) is not an error.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &lineTransport{in: in, out: out, logf: s.cfg.Logger.Warn}
	err := s.sdk.Run(ctx, t)
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, io.EOF), errors.Is(err, sdk.ErrConnectionClosed):
		return nil
	}
	return err
}

// sdkLogHandler passes the SDK's log records on, except those about the
// end of the session, which Run reports (or, for an orderly end, does not).
type sdkLogHandler struct{ slog.Handler }

func (h sdkLogHandler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "server run cancelled", "server session ended with error":
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h sdkLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sdkLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h sdkLogHandler) WithGroup(name string) slog.Handler {
	return sdkLogHandler{h.Handler.WithGroup(name)}
}

// handler returns the SDK handler of the named tool.
func (s *Server) handler(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		root, ask, err := s.root(ctx, req)
		switch {
		case ask != nil:
			return ask, nil
		case err != nil:
			return s.failure(ctx, name, req.Params.Arguments, err), nil
		}
		if e := unknownArgument(name, req.Params.Arguments); e != nil {
			return s.refusal(name, req.Params.Arguments, e), nil
		}
		switch name {
		case ToolFindFiles:
			return s.findFiles(ctx, root, req.Params.Arguments), nil
		case ToolSearchInFiles:
			return s.searchInFiles(ctx, root, req.Params.Arguments), nil
		}
		env, err := s.cfg.Query(ctx, name, root, req.Params.Arguments)
		if err != nil {
			return s.failure(ctx, name, req.Params.Arguments, err), nil
		}
		return envelopeResult(env)
	}
}

// envelopeResult is the result of a Glob, Grep or LS call: the envelope's
// text as content, the envelope as structuredContent, isError on status
// "error".
func envelopeResult(env json.RawMessage) (*sdk.CallToolResult, error) {
	var raw envelope.Raw
	if err := json.Unmarshal(env, &raw); err != nil {
		return nil, fmt.Errorf("malformed response envelope: %w", err)
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: raw.Text}},
		StructuredContent: env,
		IsError:           raw.Status == envelope.StatusError,
	}, nil
}

// failure is the result of a call nothing could answer (no root, no
// daemon and no walk): for the envelope tools an INTERNAL_ERROR envelope
// built here (ACCESS_DENIED for a refused root), so structuredContent is an envelope all the same; for the
// compatibility tools the message.
func (s *Server) failure(ctx context.Context, tool string, args json.RawMessage, err error) *sdk.CallToolResult {
	if ctx.Err() == nil { // else the client gave up: nothing to report
		s.cfg.Logger.Warn("tool call failed", "tool", tool, "error", err)
	}
	e := envelope.Errorf(envelope.CodeInternal, "%v", err)
	if errors.Is(err, ErrRootRefused) {
		e = envelope.Errorf(envelope.CodeAccessDenied, "%v", err)
	}
	return s.refusal(tool, args, e)
}

// refusal is the result of a call refused with e: an error envelope for
// the envelope tools, the message for the compatibility tools.
func (s *Server) refusal(tool string, args json.RawMessage, e *envelope.Error) *sdk.CallToolResult {
	if tool == ToolFindFiles || tool == ToolSearchInFiles {
		return errorResult(e.Message)
	}
	env := envelope.Fail(envelope.Context{Cwd: ".", ParamsInput: args}, e, 0)
	js, merr := env.MarshalJSON()
	if merr != nil {
		return errorResult(e.Message)
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: env.Text}},
		StructuredContent: json.RawMessage(js),
		IsError:           true,
	}
}

// errorResult is an isError result whose text is msg.
func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: msg}},
		IsError: true,
	}
}
