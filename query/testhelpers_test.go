package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/internal/testtree"
)

// TestMain makes the tests hermetic, once for all of them, so that none
// sets the environment and all can run in parallel: the global git
// excludes file (core.excludesFile, ~/.config/git/ignore) is read from
// HOME and XDG_CONFIG_HOME, so both point at a directory of the tests'
// own, whose excludes file ignores *.swp (the differential fixtures
// compare rg's reading of it and the walk's); git's system configuration
// is not read (GIT_CONFIG_NOSYSTEM), by the tests or by the git and rg
// they run.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "indexd-query-home-")
	if err == nil {
		err = os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.swp\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	testtree.QuickChildExit()
	code := m.Run()
	os.RemoveAll(home)
	if big.root != "" {
		os.RemoveAll(big.root)
	}
	os.Exit(code)
}

// ---- fixture trees ----

// fsTree describes a fixture: each key is a root-relative slash path. A key
// ending in "/" is a directory; a value starting with "->" makes a symlink
// to the rest of the value (relative targets are relative to the link's
// directory); anything else is a regular file with that content.
type fsTree map[string]string

// mkTree creates the fixture under root (which must exist).
func mkTree(t testing.TB, root string, files fsTree) {
	t.Helper()
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := files[k]
		abs := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(k, "/")))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(k, "/"):
			err = os.MkdirAll(abs, 0o755)
		case strings.HasPrefix(v, "->"):
			err = os.Symlink(strings.TrimPrefix(v, "->"), abs)
		default:
			err = os.WriteFile(abs, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// newRoot creates a temporary directory holding files and returns its real
// path (t.TempDir may itself sit behind a symlink).
func newRoot(t testing.TB, files fsTree) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkTree(t, root, files)
	return root
}

// newTools opens a workspace at root and returns its walk-engine tools.
func newTools(t testing.TB, root string) *Tools {
	t.Helper()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return NewDirect(ws)
}

// setup is newRoot followed by newTools.
func setup(t testing.TB, files fsTree) (*Tools, string) {
	t.Helper()
	root := newRoot(t, files)
	return newTools(t, root), root
}

// setMtime sets a fixture file's modification time (without following a
// final symlink it would follow; fixtures only do this to regular files).
func setMtime(t testing.TB, root, rel string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), mt, mt); err != nil {
		t.Fatal(err)
	}
}

// bigTree creates dirs directories d000, d001, … under root, each holding
// perDir empty files f00, f01, …: dirs*(perDir+1) entries. Empty files are
// cheap to create, and the directories are filled in parallel.
func bigTree(root string, dirs, perDir int) error {
	var g errgroup
	sem := make(chan struct{}, 8)
	for d := range dirs {
		g.Go(func() error {
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			for f := range perDir {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", f)), nil, 0o644); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// errgroup is a minimal golang.org/x/sync/errgroup.
type errgroup struct {
	wg   sync.WaitGroup
	once sync.Once
	err  error
}

func (g *errgroup) Go(f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil {
			g.once.Do(func() { g.err = err })
		}
	})
}

func (g *errgroup) Wait() error { g.wg.Wait(); return g.err }

// The big tree is shared by the breaker tests (it takes a while to create)
// and must not be modified: "big/" holds exactly envelope.GlobMaxVisited entries
// (200 directories of 99 files), "needle/needle.txt" holds "needle".
var big struct {
	once sync.Once
	root string
	err  error
}

func bigRoot(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("creates 20000 files")
	}
	big.once.Do(func() {
		dir, err := os.MkdirTemp("", "indexd-big-")
		if err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			big.err = err
			return
		}
		big.root = dir
		if big.err = os.Mkdir(filepath.Join(dir, "big"), 0o755); big.err != nil {
			return
		}
		if big.err = bigTree(filepath.Join(dir, "big"), 200, envelope.GlobMaxVisited/200-1); big.err != nil {
			return
		}
		if big.err = os.Mkdir(filepath.Join(dir, "needle"), 0o755); big.err == nil {
			big.err = os.WriteFile(filepath.Join(dir, "needle", "needle.txt"), []byte("needle\n"), 0o644)
		}
	})
	if big.err != nil {
		t.Fatal(big.err)
	}
	return big.root
}

// base is a fixed point in the past for mtimes that must be ordered.
var base = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// ---- running tools ----

// result is a decoded envelope with every field the tools use.
type result struct {
	Status string `json:"status"`
	Text   string `json:"text"`
	Data   struct {
		Paths         []string             `json:"paths"`
		Truncated     bool                 `json:"truncated"`
		AbortedReason string               `json:"aborted_reason"`
		FallbackUsed  bool                 `json:"fallback_used"`
		Unreadable    []string             `json:"unreadable"`
		Matches       []envelope.GrepMatch `json:"matches"`
		Files         []string             `json:"files"`
		Counts        []envelope.FileCount `json:"counts"`
		Entries       []envelope.LSEntry   `json:"entries"`
	} `json:"data"`
	Stats struct {
		TimeMS        int64 `json:"time_ms"`
		Matched       int   `json:"matched"`
		Visited       int   `json:"visited"`
		Ignored       int   `json:"ignored"`
		MatchedFiles  int   `json:"matched_files"`
		MatchedLines  int   `json:"matched_lines"`
		FilesScanned  int   `json:"files_scanned"`
		BinarySkipped int   `json:"binary_skipped"`
		Total         int   `json:"total"`
		Dirs          int   `json:"dirs"`
		Files         int   `json:"files"`
		Links         int   `json:"links"`
	} `json:"stats"`
	Context struct {
		Cwd               string          `json:"cwd"`
		ParamsInput       json.RawMessage `json:"params_input"`
		PathResolved      string          `json:"path_resolved"`
		PatternNormalized string          `json:"pattern_normalized"`
		Pattern           string          `json:"pattern"`
		SortedBy          string          `json:"sorted_by"`
	} `json:"context"`
	Error *envelope.Error `json:"error"`

	// JSON is the envelope as marshalled.
	JSON []byte `json:"-"`
	// DataKeys are the keys of data.
	DataKeys []string `json:"-"`
}

// runTimeout bounds every tool call: a call that blocks (on a FIFO, say)
// fails the test instead of hanging it.
const runTimeout = 60 * time.Second

// run calls tool with args (JSON) at the root of tools' workspace,
// marshals the envelope, validates it and decodes it.
func run(t testing.TB, tools *Tools, tool, args string) result {
	t.Helper()
	return runCwd(t, tools, tool, ".", args)
}

// runCwd is run with a working directory.
func runCwd(t testing.TB, tools *Tools, tool, cwd, args string) result {
	t.Helper()
	js := runJSON(t, tools, tool, cwd, json.RawMessage(args))
	var r result
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("%s %s: decoding envelope: %v\n%s", tool, args, err, js)
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(js, &struct {
		Data *map[string]json.RawMessage `json:"data"`
	}{&data}); err != nil {
		t.Fatal(err)
	}
	for k := range data {
		r.DataKeys = append(r.DataKeys, k)
	}
	slices.Sort(r.DataKeys)
	r.JSON = js
	return r
}

// runJSON runs one tool call under runTimeout and returns the validated
// envelope JSON.
func runJSON(t testing.TB, tools *Tools, tool, cwd string, args json.RawMessage) []byte {
	t.Helper()
	ch := make(chan *envelope.Envelope, 1)
	go func() { ch <- tools.Run(context.Background(), tool, cwd, args) }()
	var e *envelope.Envelope
	select {
	case e = <-ch:
	case <-time.After(runTimeout):
		t.Fatalf("%s %s: no answer within %v (blocked?)", tool, args, runTimeout)
	}
	// MarshalJSON directly: json.Marshal would HTML-escape its output.
	js, err := e.MarshalJSON()
	if err != nil {
		t.Fatalf("%s %s: marshal: %v", tool, args, err)
	}
	envelopetest.Validate(t, js)
	return js
}

// ---- assertions ----

var timingRE = regexp.MustCompile(`(in |Took |after )\d+ms`)

// normText replaces the timings in a tool's text with "Nms".
func normText(s string) string { return timingRE.ReplaceAllString(s, "${1}Nms") }

// wantError checks an error envelope's code and exact message.
func wantError(t testing.TB, r result, code envelope.Code, msg string) {
	t.Helper()
	if r.Status != "error" || r.Error == nil {
		t.Fatalf("want error %s %q, got status %s\n%s", code, msg, r.Status, r.JSON)
	}
	if r.Error.Code != code || r.Error.Message != msg {
		t.Fatalf("want error %s %q, got %s %q", code, msg, r.Error.Code, r.Error.Message)
	}
	if r.Text != "Error: "+msg {
		t.Errorf("error text = %q, want %q", r.Text, "Error: "+msg)
	}
}

// wantStatus checks the status, showing the envelope when it differs.
func wantStatus(t testing.TB, r result, status string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %s, want %s\n%s", r.Status, status, r.JSON)
	}
}

// wantText compares the normalised text with want (already normalised).
func wantText(t testing.TB, r result, want string) {
	t.Helper()
	if got := normText(r.Text); got != want {
		t.Errorf("text:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// equal fails with what differs when got != want.
func equal[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// paths returns a Glob result's paths, never nil.
func (r result) paths() []string {
	if r.Data.Paths == nil {
		return []string{}
	}
	return r.Data.Paths
}

// matchLines renders Grep matches as "file:line: text".
func (r result) matchLines() []string {
	out := []string{}
	for _, m := range r.Data.Matches {
		out = append(out, fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Text))
	}
	return out
}

// entryNames returns LS entry paths.
func (r result) entryNames() []string {
	out := []string{}
	for _, e := range r.Data.Entries {
		out = append(out, e.Path)
	}
	return out
}

// jsonArgs builds an args object from key/value pairs.
func jsonArgs(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// mergeArgs returns the JSON object with the keys of a, then of b (b wins).
func mergeArgs(a, b string) string {
	m := map[string]json.RawMessage{}
	for _, s := range []string{a, b} {
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			panic(err)
		}
	}
	out, _ := json.Marshal(m)
	return string(out)
}
