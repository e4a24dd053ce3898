package main

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"runtime"
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

// notLinkedExactly are packages the query client must not link, the
// packages under them aside: net (the client's socket is made with
// golang.org/x/sys/unix and read through an *os.File; see rpc.Dial) and
// runtime/cgo, which net brings with cgo enabled and which makes the
// program dynamically linked (ld.so and libc loaded at every start).
// net/netip, which holds no socket code, may stay.
var notLinkedExactly = []string{"net", "runtime/cgo"}

// TestQueryClientDeps: the dependency list of the query client
// (go list -deps ./cmd/indexctl) holds none of notLinked, and the
// engine's (./cmd/indexd) holds each of them, so none is misspelt.
func TestQueryClientDeps(t *testing.T) {
	t.Parallel()
	deps := listDeps(t, ".", "github.com/indexd/indexd/cmd/indexctl")
	engine := listDeps(t, "../indexd", "github.com/indexd/indexd/cmd/indexd")
	for _, bad := range notLinked {
		if !slices.ContainsFunc(engine, func(d string) bool { return d == bad || strings.HasPrefix(d, bad+"/") }) {
			t.Errorf("the engine does not link %s: a misspelt entry of notLinked?", bad)
		}
	}
	for _, bad := range notLinkedExactly {
		if !slices.Contains(engine, bad) {
			t.Errorf("the engine does not link %s: a misspelt entry of notLinkedExactly?", bad)
		}
		if slices.Contains(deps, bad) {
			t.Errorf("indexctl links %s, which only the engine needs", bad)
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

// TestQueryClientStatic: indexctl, built as by default (cgo as the
// toolchain has it), is a statically linked program: no interpreter
// (ld.so) and no shared library to load when it starts.
func TestQueryClientStatic(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds indexctl")
	}
	if runtime.GOOS != "linux" {
		t.Skip("checks an ELF executable")
	}
	bin := filepath.Join(t.TempDir(), "indexctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("indexctl is dynamically linked (it has a %v program header)", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("indexctl needs shared libraries %v (%v)", libs, err)
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
