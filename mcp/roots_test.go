package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootDirs makes three workspaces, each holding one file named after it.
func rootDirs(t *testing.T) (a, b, c string) {
	t.Helper()
	dirs := make([]string, 3)
	for i, name := range []string{"a", "b", "c"} {
		dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], name+"_only.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dirs[0], dirs[1], dirs[2]
}

func fileURI(dir string) string { return (&url.URL{Scheme: "file", Path: dir}).String() }

// searched returns the file Glob finds in the session's root.
func searched(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res := call(t, cs, "Glob", `{"pattern":"*.txt"}`)
	env := envelopeOf(t, res, `{"pattern":"*.txt"}`)
	if res.IsError || len(env.Data.Paths) != 1 {
		t.Fatalf("Glob: %s", env.Text)
	}
	return env.Data.Paths[0]
}

// rootsClient returns a client offering roots and counting the
// roots/list requests it answers.
func rootsClient(count *atomic.Int32, caps *sdk.ClientCapabilities, roots ...string) *sdk.Client {
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, &sdk.ClientOptions{Capabilities: caps})
	for _, r := range roots {
		c.AddRoots(&sdk.Root{URI: r})
	}
	c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "roots/list" && count != nil {
				count.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return c
}

var legacy = &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"}

func TestRootFlagWins(t *testing.T) {
	a, b, _ := rootDirs(t)
	var asked atomic.Int32
	_, cs := connect(t, Config{Query: directQuery, Root: a}, rootsClient(&asked, nil, fileURI(b)), legacy)
	if got := searched(t, cs); got != "a_only.txt" {
		t.Errorf("searched %s, want a_only.txt (Config.Root)", got)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the client was asked for its roots %d times, want 0", n)
	}
}

// TestClientRoots: a client of an earlier protocol is asked with
// roots/list, once, and again after it says its roots changed.
func TestClientRoots(t *testing.T) {
	a, b, c := rootDirs(t)
	var asked atomic.Int32
	client := rootsClient(&asked, nil, fileURI(b))
	_, cs := connect(t, Config{Query: directQuery, DefaultRoot: func() (string, error) { return a, nil }}, client, legacy)
	for range 3 {
		if got := searched(t, cs); got != "b_only.txt" {
			t.Errorf("searched %s, want b_only.txt (the client's root)", got)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("roots/list asked %d times for 3 calls, want 1", n)
	}

	// Notifications are handled in order, before the next call.
	client.RemoveRoots(fileURI(b))
	client.AddRoots(&sdk.Root{URI: fileURI(c)})
	if got := searched(t, cs); got != "c_only.txt" {
		t.Errorf("after roots/list_changed: searched %s, want c_only.txt", got)
	}
	client.RemoveRoots(fileURI(c))
	if got := searched(t, cs); got != "a_only.txt" {
		t.Errorf("with no roots: searched %s, want a_only.txt (the default)", got)
	}
}

// TestClientRootsInputRequest: a client of protocol 2026-07-28 is asked
// through the call's input requests.
func TestClientRootsInputRequest(t *testing.T) {
	a, b, _ := rootDirs(t)
	client := rootsClient(nil, nil, fileURI(b))
	_, cs := connect(t, Config{Query: directQuery, DefaultRoot: func() (string, error) { return a, nil }}, client, nil)
	if v := cs.InitializeResult().ProtocolVersion; v < protocolInputRequests {
		t.Fatalf("negotiated protocol %s, want %s or later", v, protocolInputRequests)
	}
	for range 2 {
		if got := searched(t, cs); got != "b_only.txt" {
			t.Errorf("searched %s, want b_only.txt (the client's root)", got)
		}
	}
}

func TestNoRootsCapability(t *testing.T) {
	a, _, _ := rootDirs(t)
	for _, opts := range []*sdk.ClientSessionOptions{legacy, nil} {
		var asked atomic.Int32
		client := rootsClient(&asked, &sdk.ClientCapabilities{})
		_, cs := connect(t, Config{Query: directQuery, DefaultRoot: func() (string, error) { return a, nil }}, client, opts)
		if got := searched(t, cs); got != "a_only.txt" {
			t.Errorf("searched %s, want a_only.txt (the default)", got)
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("a client without roots was asked for them %d times", n)
		}
	}
}

// TestRootChoice: the first root that is a local directory wins.
func TestRootChoice(t *testing.T) {
	a, b, c := rootDirs(t)
	roots := []string{
		"https://example.com/repo",
		"file://otherhost" + b,
		"file:relative/dir",
		fileURI(filepath.Join(a, "nope")),
		fileURI(filepath.Join(b, "b_only.txt")), // a file
		fileURI(c),
		fileURI(b),
	}
	// The SDK's client lists its roots sorted by URI: answer in this order.
	client := rootsClient(nil, nil)
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			res := &sdk.ListRootsResult{}
			for _, r := range roots {
				res.Roots = append(res.Roots, &sdk.Root{URI: r})
			}
			return res, nil
		}
	})
	_, cs := connect(t, Config{Query: directQuery, DefaultRoot: func() (string, error) { return a, nil }}, client, legacy)
	if got := searched(t, cs); got != "c_only.txt" {
		t.Errorf("searched %s, want c_only.txt", got)
	}
}

// TestRootsListFails: a client that fails roots/list gets the default.
func TestRootsListFails(t *testing.T) {
	a, b, _ := rootDirs(t)
	client := rootsClient(nil, nil, fileURI(b))
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "roots/list" {
				return nil, errors.New("no roots today")
			}
			return next(ctx, method, req)
		}
	})
	_, cs := connect(t, Config{Query: directQuery, DefaultRoot: func() (string, error) { return a, nil }}, client, legacy)
	if got := searched(t, cs); got != "a_only.txt" {
		t.Errorf("searched %s, want a_only.txt (the default)", got)
	}
}

func TestDefaultRootFails(t *testing.T) {
	_, cs := connect(t, Config{Query: directQuery, Tools: AllTools, DefaultRoot: func() (string, error) {
		return "", errors.New("current directory: no such file or directory")
	}}, rootsClient(nil, &sdk.ClientCapabilities{}), nil)
	res := call(t, cs, "LS", `{}`)
	env := envelopeOf(t, res, `{}`)
	if !res.IsError || env.Error == nil || env.Error.Message != "current directory: no such file or directory" {
		t.Errorf("isError %v, error %+v", res.IsError, env.Error)
	}
	res = call(t, cs, ToolFindFiles, `{"name_pattern":"*"}`)
	if !res.IsError || text(t, res) != "current directory: no such file or directory" {
		t.Errorf("find_files_by_name: isError %v, %q", res.IsError, text(t, res))
	}
}

func TestNewChecksConfig(t *testing.T) {
	if _, err := New(Config{Root: "/"}); err == nil {
		t.Error("New without Query succeeded")
	}
	if _, err := New(Config{Query: directQuery}); err == nil {
		t.Error("New without Root or DefaultRoot succeeded")
	}
	if _, err := New(Config{Query: directQuery, Root: "/", Tools: []string{"Read"}}); err == nil {
		t.Error("New with an unknown tool succeeded")
	}
}

// refusedRoot checks that a call was answered with the refusal of root
// for reason, and that nothing was searched.
func refusedRoot(t *testing.T, cs *sdk.ClientSession, rec *recorder, root, reason string) {
	t.Helper()
	want := "Workspace root '" + root + "' refused: " + reason + ". Start the server with --root DIR to choose the directory to search."
	for _, args := range []string{`{"pattern":"*"}`, `{"pattern":"root","path":"/etc/passwd"}`} {
		tool := "Glob"
		if strings.Contains(args, "path") {
			tool = "Grep"
		}
		res := call(t, cs, tool, args)
		env := envelopeOf(t, res, args)
		if !res.IsError || env.Error == nil || env.Error.Code != "ACCESS_DENIED" || env.Error.Message != want {
			t.Errorf("%s %s: %s", tool, args, structured(t, res))
		}
	}
	res := call(t, cs, ToolFindFiles, `{"name_pattern":"passwd"}`)
	if !res.IsError || text(t, res) != want {
		t.Errorf("find_files_by_name: isError %v, %q", res.IsError, text(t, res))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 0 {
		t.Errorf("searched despite the refusal: %v", rec.calls)
	}
}

// TestClientRootRefused: a client root of / (the whole filesystem) or of
// a directory another user owns is refused, unless --root pins it.
func TestClientRootRefused(t *testing.T) {
	a, b, _ := rootDirs(t)
	theirs := t.TempDir()
	if err := os.Lchown(theirs, 12345, 12345); err != nil {
		t.Logf("cannot give a directory to another user (%v): not testing it", err)
		theirs = ""
	}
	defaultA := func() (string, error) { return a, nil }
	for _, opts := range []*sdk.ClientSessionOptions{legacy, nil} {
		rec := &recorder{next: directQuery}
		_, cs := connect(t, Config{Query: rec.query, Tools: AllTools, DefaultRoot: defaultA}, rootsClient(nil, nil, "file:///"), opts)
		refusedRoot(t, cs, rec, "/", "it is the whole filesystem")

		// A link to / is / too.
		link := filepath.Join(t.TempDir(), "slash")
		os.Symlink("/", link)
		rec = &recorder{next: directQuery}
		_, cs = connect(t, Config{Query: rec.query, Tools: AllTools, DefaultRoot: defaultA}, rootsClient(nil, nil, fileURI(link)), opts)
		refusedRoot(t, cs, rec, link, "it is the whole filesystem")

		if theirs != "" {
			rec = &recorder{next: directQuery}
			_, cs = connect(t, Config{Query: rec.query, Tools: AllTools, DefaultRoot: defaultA}, rootsClient(nil, nil, fileURI(theirs)), opts)
			refusedRoot(t, cs, rec, theirs, fmt.Sprintf("it is owned by uid 12345, not by the user running the server (uid %d)", os.Getuid()))
		}

		// Another root the client offers is searched instead.
		_, cs = connect(t, Config{Query: directQuery, DefaultRoot: defaultA}, rootsClient(nil, nil, "file:///", fileURI(b)), opts)
		if got := searched(t, cs); got != "b_only.txt" {
			t.Errorf("with / and b offered: searched %s, want b_only.txt", got)
		}
	}

	// The default root / is refused too: the server was started in /.
	rec := &recorder{next: directQuery}
	_, cs := connect(t, Config{Query: rec.query, Tools: AllTools, DefaultRoot: func() (string, error) { return "/", nil }}, rootsClient(nil, &sdk.ClientCapabilities{}), nil)
	refusedRoot(t, cs, rec, "/", "it is the whole filesystem")

	// --root / is the user's explicit choice.
	rec = &recorder{next: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"status":"success","data":{"paths":[],"truncated":false},"text":"No files found","stats":{"time_ms":0},"context":{"cwd":".","params_input":{"pattern":"*"}}}`), nil
	}}
	_, cs = connect(t, Config{Query: rec.query, Root: "/"}, rootsClient(nil, nil, "file:///"), nil)
	call(t, cs, "Glob", `{"pattern":"*"}`)
	if got := rec.last(t); got != `Glob / {"pattern":"*"}` {
		t.Errorf("with --root /: %s", got)
	}
}
