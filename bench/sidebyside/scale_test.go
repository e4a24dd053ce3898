package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gentree writes a small generated tree into dir.
func gentree(t *testing.T, dir string, files, seed int) {
	t.Helper()
	out, err := exec.Command("go", "run", "github.com/indexd/indexd/bench/gentree",
		"-out", dir, "-files", strconv.Itoa(files), "-seed", strconv.Itoa(seed), "-workers", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("gentree: %v\n%s", err, out)
	}
}

// treeState describes every entry of a tree: path, mode, mtime and, for a
// file, a hash of its contents.
func treeState(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			// Directories' mtimes change with any entry added and
			// removed; files' must come back as they were.
			line += fmt.Sprintf(" %d %x", fi.ModTime().UnixNano(), sha256.Sum256(b))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScaleRun runs the scale harness end to end on two tiny generated
// trees and checks that every figure has a value, that the queries found
// what the manifest says through the index, and that the run left the
// tree as it was and no daemon behind.
func TestScaleRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds indexctl and runs a daemon: skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	tree, tree2 := filepath.Join(dir, "tree"), filepath.Join(dir, "tree2")
	gentree(t, tree, 300, 1)
	gentree(t, tree2, 100, 2)
	before := treeState(t, tree)

	cfg := scaleConfig{
		tree: tree, tree2: tree2,
		runs: 1, warmup: 0, restarts: 1, writes: 2, churn: 40, churnTail: 200 * time.Millisecond,
		grepLimit: 1000, globLimit: 200, timeoutMS: 60000, cmdTimeout: 2 * time.Minute,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := runScale(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}

	// Every row, in order, with a value.
	want := []string{rowBuild, rowBuildCPU, rowPeakRSS, rowAnonBuilt, rowDB, rowAnonReopen, rowRestart,
		"Grep `QuokkaNeedleZeta`", "Grep -i `quokkaneedlezeta`", "Grep `func main` limit 100", "Grep `func \\w+Handler\\(`",
		"Glob `**/*.go`", "Glob `**/testdata/**/*.json`", "Glob `**/internal/**/*.go`",
		rowVisible, rowStreamQuiet, rowStreamBurst, rowStreamMerge, rowAnonQueried, rowTwoRoots}
	rows := rep.rows()
	var got []string
	for _, r := range rows {
		got = append(got, r.figure)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	csRows := map[string]bool{rowBuild: true, rowPeakRSS: true, rowDB: true}
	for _, q := range want[7:11] {
		csRows[q] = true
	}
	for _, r := range rows {
		if r.indexd == "" || r.indexd == "not measured" || r.indexd == "failed" || r.indexd == "—" {
			t.Errorf("%s: indexd %q", r.figure, r.indexd)
		}
		switch {
		case !csRows[r.figure]:
			if r.cs != "—" {
				t.Errorf("%s: cindex/csearch %q, want —", r.figure, r.cs)
			}
		case rep.csMissing != "":
			if r.cs != "skipped" {
				t.Errorf("%s: cindex/csearch %q without codesearch, want skipped", r.figure, r.cs)
			}
		default:
			if r.cs == "" || r.cs == "skipped" || r.cs == "failed" || r.cs == "not measured" || r.cs == "—" {
				t.Errorf("%s: cindex/csearch %q", r.figure, r.cs)
			}
		}
	}
	if rep.csMissing != "" {
		t.Logf("codesearch columns not checked: %s", rep.csMissing)
	}
	var md bytes.Buffer
	rep.write(&md)
	for _, l := range want {
		if !strings.Contains(md.String(), "\n| "+l+" | ") {
			t.Errorf("the markdown has no row %q:\n%s", l, md.String())
		}
	}

	// The queries were answered by the index, with the manifest's counts.
	for _, res := range rep.results {
		st := res.stats[toolIndexctl]
		if strings.Contains(st.header, "could not be trusted") {
			t.Errorf("%s: answered by the walk: %s", res.q.name, st.header)
		}
		if res.q.expect != "" && strconv.Itoa(st.lines) != res.q.expect {
			t.Errorf("%s: %d results, the manifest says %s", res.q.name, st.lines, res.q.expect)
		}
	}
	if rep.visible.misses != 0 || len(rep.visible.walls) != cfg.writes {
		t.Errorf("one-file writes: %d timed, %d synced answers without the file", len(rep.visible.walls), rep.visible.misses)
	}
	if rep.churn.files != cfg.churn || len(rep.churn.quiet) == 0 || len(rep.churn.burst) == 0 {
		t.Errorf("churn: %d files rewritten, %d quiet and %d burst queries", rep.churn.files, len(rep.churn.quiet), len(rep.churn.burst))
	}
	for _, p := range rep.restarts {
		if p.rebuilt {
			t.Error("a restart rebuilt the index instead of reopening it")
		}
	}

	// Nothing left behind.
	if after := treeState(t, tree); !slices.Equal(before, after) {
		t.Errorf("the tree changed:\nbefore %d entries, after %d", len(before), len(after))
		for _, l := range after {
			if !slices.Contains(before, l) {
				t.Logf("after only: %s", l)
			}
		}
	}
	if len(rep.daemonPIDs) == 0 {
		t.Error("no daemon pid recorded")
	}
	for _, pid := range rep.daemonPIDs {
		if daemonAlive(pid, rep.indexctl) {
			t.Errorf("daemon pid %d still runs", pid)
		}
	}
}

// TestMergeState checks which status fields the scale run takes for a
// merge, and when it takes one as running.
func TestMergeState(t *testing.T) {
	t.Parallel()
	const root = "/r"
	for _, c := range []struct {
		rootJSON string
		kv       []string
		active   bool
	}{
		{`{"root":"/r","state":"ready","files":3}`, nil, false},
		{`{"root":"/r","merging":true}`, []string{"merging=true"}, true},
		{`{"root":"/r","compacting":false}`, []string{"compacting=false"}, false},
		{`{"root":"/r","merges":{"running":1,"done":4}}`, []string{"merges.done=4", "merges.running=1"}, true},
		{`{"root":"/r","merges":{"running":0,"segments":7}}`, []string{"merges.running=0", "merges.segments=7"}, false},
		{`{"root":"/r","merge_state":"merging"}`, []string{"merge_state=merging"}, true},
		{`{"root":"/r","merge_state":"idle"}`, []string{"merge_state=idle"}, false},
		{`{"root":"/other","merging":true}`, nil, false},
	} {
		var status map[string]any
		if err := json.Unmarshal([]byte(`{"pid":1,"roots":[`+c.rootJSON+`]}`), &status); err != nil {
			t.Fatal(err)
		}
		kv, active := mergeState(status, root)
		slices.Sort(kv)
		if !slices.Equal(kv, c.kv) || active != c.active {
			t.Errorf("%s: %q active %v, want %q active %v", c.rootJSON, kv, active, c.kv, c.active)
		}
	}
}
