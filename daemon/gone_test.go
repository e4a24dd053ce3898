package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// savedRoots returns the roots listed in RootsName.
func savedRoots(t *testing.T, td *testDaemon) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(td.cfg.StateDir, RootsName))
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	if err := json.Unmarshal(b, &roots); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return roots
}

// servedRoots returns the roots status lists (which drops vanished ones
// first).
func servedRoots(td *testDaemon) []string {
	var roots []string
	for _, rs := range td.status("").Roots {
		roots = append(roots, rs.Root)
	}
	return roots
}

// indexRoots indexes n new sample trees and returns them with their DBs.
func indexRoots(t *testing.T, td *testDaemon, n int) (roots, dbs []string) {
	t.Helper()
	for range n {
		r := writeTree(t, sample)
		rs := td.index(r, true)
		if rs.State != rpc.StateReady {
			t.Fatalf("index %s: %+v", r, rs)
		}
		roots, dbs = append(roots, r), append(dbs, rs.DB)
	}
	return roots, dbs
}

func checkDeleted(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want it deleted", p, err)
		}
	}
}

// Roots whose directories were deleted do not count against MaxRoots: a
// new root is accepted, and they are dropped from the registry, from the
// saved list, and with their DBs.
func TestVanishedRootsDoNotCount(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{MaxRoots: 3})
	roots, dbs := indexRoots(t, td, 3)
	extra := writeTree(t, sample)
	if _, err := td.callErr(rpc.MethodIndex, rpc.RootParams{Root: extra}); rpcCode(err) != rpc.CodeTooManyRoots {
		t.Fatalf("a fourth root with three served: %v", err)
	}
	for _, r := range roots {
		if err := os.RemoveAll(r); err != nil {
			t.Fatal(err)
		}
	}
	if rs := td.index(extra, true); rs.State != rpc.StateReady {
		t.Fatalf("a new root once the others are gone: %+v", rs)
	}
	if got := savedRoots(t, td); !slices.Equal(got, []string{extra}) {
		t.Errorf("%s lists %v, want [%s]", RootsName, got, extra)
	}
	checkDeleted(t, dbs)
	if got := servedRoots(td); !slices.Equal(got, []string{extra}) {
		t.Errorf("status lists %v, want [%s]", got, extra)
	}
	// The same through a query: the envelope's limit error is gone too.
	roots2, _ := indexRoots(t, td, 2)
	os.RemoveAll(roots2[0])
	another := writeTree(t, sample)
	if ans := td.query(tool.MethodGlob, another, `{"pattern":"*.go"}`); ans.Error != nil {
		t.Errorf("a query for a new root, one root gone: %s", ans.js)
	}
	if got, want := savedRoots(t, td), []string{another, extra, roots2[1]}; !slices.Equal(got, sorted(want)) {
		t.Errorf("%s lists %v, want %v", RootsName, got, sorted(want))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A root that vanished is dropped when a query names it, and on status.
func TestVanishedRootDropped(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	roots, dbs := indexRoots(t, td, 2)

	os.RemoveAll(roots[0])
	ans := td.query(tool.MethodGlob, roots[0], `{"pattern":"*"}`)
	if ans.Error == nil || ans.Error.Code != envelope.CodeNotFound {
		t.Errorf("query of a vanished root: %s", ans.js)
	}
	if got := savedRoots(t, td); !slices.Equal(got, roots[1:]) {
		t.Errorf("after the query, %s lists %v, want %v", RootsName, got, roots[1:])
	}
	checkDeleted(t, dbs[:1])

	// Replaced by a file: gone as well, noticed by status.
	os.RemoveAll(roots[1])
	os.WriteFile(roots[1], nil, 0o644)
	if got := servedRoots(td); len(got) != 0 {
		t.Errorf("status lists %v, want none", got)
	}
	if got := savedRoots(t, td); len(got) != 0 {
		t.Errorf("%s lists %v, want none", RootsName, got)
	}
	checkDeleted(t, dbs[1:])
}
