package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/fakesock"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// A go.mod declares this module only with its exact path.
func TestModFileDeclares(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{"module github.com/indexd/indexd\n\ngo 1.26\n", true},
		{"// a comment\nmodule \"github.com/indexd/indexd\"\n", true},
		{"module github.com/indexd/indexd/v2\n", false},
		{"module example.com/other\n", false},
		{"modules github.com/indexd/indexd\n", false},
		{"go 1.26\n", false},
	} {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := modFileDeclares(p, modulePath); got != tc.want {
			t.Errorf("modFileDeclares(%q) = %v, want %v", tc.content, got, tc.want)
		}
	}
	if modFileDeclares(filepath.Join(dir, "missing", "go.mod"), modulePath) {
		t.Error("a missing go.mod declares the module")
	}
}

// A client whose only engine is of another build walks with it, the
// warning saying why, and never reaches the daemon on the socket (here
// one that would hang): that engine's daemon would serve every root.
func TestOtherBuildEngineWalks(t *testing.T) {
	why := noOwn("this indexctl is not what /src builds now")
	e := &Engine{find: func() (found, error) {
		return found{path: "/elsewhere/indexd", build: "other/build", other: why}, nil
	}}
	var stderr strings.Builder
	var walked []string
	d := &Daemon{Socket: fakesock.Mute(t), Stderr: &stderr, Engine: e, Dialer: rpc.Dialer{AnswerTimeout: 200 * time.Millisecond},
		Fallback: func(ctx context.Context, req Request, reason envelope.FallbackReason) (json.RawMessage, error) {
			path, other, err := e.WalkPath()
			walked = append(walked, fmt.Sprintf("%s %s (%v) %v", path, reason, other, err))
			return json.RawMessage(`{}`), nil
		}}
	res, err := d.Query(context.Background(), Request{Tool: tool.Glob, Root: "/", Cwd: ".", Args: json.RawMessage(`{"pattern":"*"}`)})
	if err != nil || string(res) != "{}" {
		t.Fatalf("Query = %s, %v; want the walk's answer", res, err)
	}
	if want := []string{"/elsewhere/indexd daemon_unavailable (" + why.Error() + ") <nil>"}; !slices.Equal(walked, want) {
		t.Errorf("walked %q, want %q", walked, want)
	}
	if want := "indexctl: warning: answering without the daemon: " + why.Error() + "\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if _, err := e.Path(); !errors.Is(err, ErrNoOwnEngine) {
		t.Errorf("Path: %v, want ErrNoOwnEngine", err)
	}
	if b := e.Build(); b != "" {
		t.Errorf("Build() = %q, want none", b)
	}
	if _, err := d.Connect(context.Background()); !errors.Is(err, ErrNoOwnEngine) {
		t.Errorf("Connect: %v, want ErrNoOwnEngine", err)
	}
}
