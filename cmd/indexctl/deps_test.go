package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// notLinked are the packages the query client must not link (import
// paths, each with the packages under it): the engine's, and the
// dependencies only the engine needs. What a query needs (flags, root
// detection, the socket client, JSON, the envelope's text) is enough;
// the rest is the engine's, which indexctl runs as another program.
var notLinked = []string{
	"go.etcd.io/bbolt",
	"github.com/google/codesearch",
	"github.com/fsnotify/fsnotify",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/google/jsonschema-go",
	"github.com/segmentio/encoding",
	"net/http",
	"encoding/gob",
	"github.com/indexd/indexd/index",
	"github.com/indexd/indexd/query",
	"github.com/indexd/indexd/watch",
	"github.com/indexd/indexd/daemon",
	"github.com/indexd/indexd/mcp",
	"github.com/indexd/indexd/tree",
	"github.com/indexd/indexd/ignore",
	"github.com/indexd/indexd/internal/engine",
}

// TestQueryClientDeps: the dependency list of the query client
// (go list -deps ./cmd/indexctl) holds none of notLinked, and the
// engine's (./cmd/indexd) holds each of them, so none is misspelt.
func TestQueryClientDeps(t *testing.T) {
	deps := listDeps(t, ".", "github.com/indexd/indexd/cmd/indexctl")
	engine := listDeps(t, "../indexd", "github.com/indexd/indexd/cmd/indexd")
	for _, bad := range notLinked {
		if !slices.ContainsFunc(engine, func(d string) bool { return d == bad || strings.HasPrefix(d, bad+"/") }) {
			t.Errorf("the engine does not link %s: a misspelt entry of notLinked?", bad)
		}
	}
	for _, d := range deps {
		for _, bad := range notLinked {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("indexctl links %s (under %s), which only the engine needs", d, bad)
			}
		}
	}
}

// listDeps returns go list -deps of the package in dir, whose import path
// is the list's last.
func listDeps(t *testing.T, dir, want string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", dir).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", dir, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || deps[len(deps)-1] != want {
		t.Fatalf("go list -deps %s listed %d packages, not %s's", dir, len(deps), want)
	}
	return deps
}
