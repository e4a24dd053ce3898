package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/tool"
)

// Method names (see the package documentation for their params and
// results). The tools' methods are those of the table of tools
// (tool.Specs); ToolForMethod and MethodForTool map them.
const (
	MethodStatus   = "status"
	MethodIndex    = "index"
	MethodForget   = "forget"
	MethodShutdown = "shutdown"
	MethodPing     = "ping"
)

// Pong is the result of ping.
var Pong = json.RawMessage(`"pong"`)

// PingParams are ping's optional params. A client that sends its Build
// (its executable's Go build ID) is refused by a daemon of another build
// with an error (the daemon's CodeOtherBuild); without it, ping always
// answers Pong.
type PingParams struct {
	Build string `json:"build,omitempty"`
}

// ToolForMethod returns the agent tool name (tool.Glob, Grep, LS, ...)
// answered by a tool method, from the table of tools, and false for any
// other method.
func ToolForMethod(method string) (string, bool) {
	if s := tool.LookupMethod(method); s != nil {
		return s.Name, true
	}
	return "", false
}

// MethodForTool returns the method answering the agent tool name, from
// the table of tools; an unknown tool is an error.
func MethodForTool(name string) (string, error) {
	s, err := tool.Lookup(name)
	if err != nil {
		return "", err
	}
	return s.Method, nil
}

// The JSON-RPC 2.0 error codes this package produces. Handlers may use
// others (the range -32000 to -32099 is for implementation-defined server
// errors).
const (
	CodeParseError     = -32700 // the line is not valid JSON
	CodeInvalidRequest = -32600 // valid JSON but not a request (batch, missing jsonrpc/method, too large)
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // params missing or of the wrong shape
	CodeInternalError  = -32603 // the handler failed (or panicked)
)

// Error is a JSON-RPC error object. A handler returns one for a protocol
// fault; Client.Call returns one (as an error) when the server answered with
// an error response.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return "rpc: " + e.Message + " (" + strconv.Itoa(e.Code) + ")"
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrMethodNotFound is the error for an unknown method.
func ErrMethodNotFound(method string) *Error {
	return Errorf(CodeMethodNotFound, "method not found: %q", method)
}

// Handler answers requests. Handle is called in its own goroutine for each
// request and notification, concurrently with other calls; ctx is cancelled
// when the client disconnects or when the server stops without waiting (see
// Server.DrainTimeout). A nil *Error means success and result is sent as the
// response's result (nil is sent as null); it must be valid JSON. A non-nil
// *Error is sent as the error response. Tool faults are not protocol faults:
// glob, grep and ls return an error envelope as their result.
type Handler interface {
	Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error) {
	return f(ctx, method, params)
}

// MethodFunc answers one method.
type MethodFunc func(ctx context.Context, params json.RawMessage) (json.RawMessage, *Error)

// Methods is a Handler dispatching by method name; an unknown method is
// answered with CodeMethodNotFound.
type Methods map[string]MethodFunc

// Handle dispatches to the method's function.
func (m Methods) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error) {
	f, ok := m[method]
	if !ok {
		return nil, ErrMethodNotFound(method)
	}
	return f(ctx, params)
}

// ToolParams are the params of glob, grep and ls.
type ToolParams struct {
	// Root is the workspace root, an absolute path.
	Root string `json:"root"`
	// Cwd is the caller's working directory, relative to Root or absolute
	// inside it; "" means the root.
	Cwd string `json:"cwd,omitempty"`
	// Args are the tool's arguments exactly as the agent gave them; the
	// tool checks them (a bad argument is an error envelope, not a
	// protocol error). Absent means {}.
	Args json.RawMessage `json:"args,omitempty"`
	// Unlimited lets a limit of 0 in Args ask for every result, with
	// Glob's breakers lifted (query.Tools.Unlimited). indexctl sends it
	// for --all; agents' front-ends never do, so the agent tools keep
	// their limits.
	Unlimited bool `json:"unlimited,omitempty"`
	// Stream, with Unlimited, asks for Glob's and Grep's results as
	// "partial" notifications ahead of the response (Notify; the data of
	// each is a query.Batch), whose envelope then holds none of them,
	// when the limit in Args is beyond the agent tools' maximum (0
	// included); within it the envelope holds them as ever.
	Stream bool `json:"stream,omitempty"`
	// BatchText, with Stream, asks for each notification's data to hold
	// "text" too: the lines its results add to the envelope's text, so
	// that the client can put the whole envelope back together
	// (client.Daemon.Query does, for a caller that wants one).
	BatchText bool `json:"batch_text,omitempty"`
	// RootFrom says how the client chose Root when the user named none:
	// RootFromGit (the nearest ancestor of the current directory holding
	// .git) or RootFromCwd (no such ancestor: the current directory).
	// Then the daemon answers from the deepest root it already has that
	// holds the current directory, when that is deeper than a .git root
	// or holds a current directory taken as root; the envelope's
	// context.cwd is relative to the root it used. "" (the user named
	// the root): Root is used as given.
	RootFrom string `json:"root_from,omitempty"`
	// Voice is the reader the answer's hints and messages are worded
	// for: "" an agent (the parameter to set), VoiceCLI a person at
	// indexctl's command line (the flag to give).
	Voice string `json:"voice,omitempty"`
}

// VoiceCLI is ToolParams.Voice for indexctl's command line.
const VoiceCLI = "cli"

// MarshalJSON writes p as encoding/json writes it from its tags (Args as
// given: the request it goes into is compacted and checked whole), with
// no reflection: the query client sends one on every call, and
// encoding/json's first use of a struct type costs that short-lived
// process about 45 µs (TestParamsMarshalJSON checks the two agree).
func (p ToolParams) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 96+len(p.Root)+len(p.Cwd)+len(p.Args))
	b = jsonenc.AppendString(append(b, `{"root":`...), p.Root)
	if p.Cwd != "" {
		b = jsonenc.AppendString(append(b, `,"cwd":`...), p.Cwd)
	}
	if len(p.Args) > 0 {
		b = append(append(b, `,"args":`...), p.Args...)
	}
	if p.Unlimited {
		b = append(b, `,"unlimited":true`...)
	}
	if p.Stream {
		b = append(b, `,"stream":true`...)
	}
	if p.BatchText {
		b = append(b, `,"batch_text":true`...)
	}
	if p.RootFrom != "" {
		b = jsonenc.AppendString(append(b, `,"root_from":`...), p.RootFrom)
	}
	if p.Voice != "" {
		b = jsonenc.AppendString(append(b, `,"voice":`...), p.Voice)
	}
	return append(b, '}'), nil
}

// MarshalJSON writes p as encoding/json writes it from its tags, with no
// reflection (see ToolParams.MarshalJSON).
func (p PingParams) MarshalJSON() ([]byte, error) {
	if p.Build == "" {
		return []byte("{}"), nil
	}
	return append(jsonenc.AppendString([]byte(`{"build":`), p.Build), '}'), nil
}

// How a client chose the root (ToolParams.RootFrom).
const (
	RootFromGit = "git"
	RootFromCwd = "cwd"
)

// DecodeToolParams decodes and checks the params of a tool method: an
// object with root (an absolute path), optionally cwd (a string) and args
// (passed through unchecked). Anything else is CodeInvalidParams.
func DecodeToolParams(params json.RawMessage) (*ToolParams, *Error) {
	var p ToolParams
	if err := DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Root == "" {
		return nil, Errorf(CodeInvalidParams, "invalid params: missing root")
	}
	if !filepath.IsAbs(p.Root) {
		return nil, Errorf(CodeInvalidParams, "invalid params: root must be an absolute path, got %q", p.Root)
	}
	return &p, nil
}

// RootParams are the params of index and forget (root required) and status
// (root optional).
type RootParams struct {
	// Root is a workspace root, an absolute path.
	Root string `json:"root,omitempty"`
	// Wait asks index to answer only once the root's index is ready and
	// holds every change made to the tree before the call (or, when the
	// watcher cannot catch up within the sync barrier's timeout, as it
	// stands: docs/protocol.md, "index").
	Wait bool `json:"wait,omitempty"`
}

// DecodeParams decodes params, which must be a JSON object, into v (a
// pointer to a struct). Missing params, another JSON type or a member of
// the wrong type is CodeInvalidParams with a message naming the member.
func DecodeParams(params json.RawMessage, v any) *Error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return Errorf(CodeInvalidParams, "invalid params: missing params object")
	}
	if params[0] != '{' {
		return Errorf(CodeInvalidParams, "invalid params: params must be an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			return Errorf(CodeInvalidParams, "invalid params: %s must be a %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return Errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// jsonKind names a Go kind the way a JSON user would.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	}
	return "number"
}

// Defaults for the zero fields of the server's configuration (Server in
// package rpc/server); the client sizes its requests by
// DefaultMaxRequestSize.
const (
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultWriteTimeout   = time.Minute
	DefaultDrainTimeout   = 10 * time.Second
	DefaultMaxRequestSize = 1 << 20
	DefaultMaxInFlight    = 64
	// DefaultMaxConnReplyBytes and DefaultMaxReplyBytes are the reply
	// budgets (see the server's MaxConnReplyBytes).
	DefaultMaxConnReplyBytes = 16 << 20
	DefaultMaxReplyBytes     = 128 << 20
)

// CodeRepliesUnread is the error that replaces a response the server
// could not hold: its client had left too many earlier responses unread
// (see the server's MaxConnReplyBytes).
const CodeRepliesUnread = -32050

// MethodPartial is the notification a handler sends through the server's
// Notify: part
// of the answer to the request whose id it names, before that request's
// response, as {"id": ID, "data": DATA}.
const MethodPartial = "partial"
