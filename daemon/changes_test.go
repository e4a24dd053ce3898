package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/watch"
)

// changesAnswer is a decoded Changes envelope.
type changesAnswer struct {
	envelope.Raw
	js   json.RawMessage
	data envelope.ChangesData
	ctx  struct {
		Clock string `json:"clock"`
	}
}

func (td *testDaemon) changes(root, args string) changesAnswer {
	td.t.Helper()
	js := td.call(tool.MethodChanges, rpc.ToolParams{Root: root, Args: json.RawMessage(args)})
	a := changesAnswer{js: js}
	decodeAnswer(td.t, js) // a valid envelope
	if err := json.Unmarshal(js, &a.Raw); err != nil {
		td.t.Fatal(err)
	}
	if a.Status != envelope.StatusError {
		if err := json.Unmarshal(a.Raw.Data, &a.data); err != nil {
			td.t.Fatalf("%v: %s", err, js)
		}
	}
	if err := json.Unmarshal(a.Raw.Context, &a.ctx); err != nil {
		td.t.Fatal(err)
	}
	return a
}

// clockOf returns the clock of root now.
func (td *testDaemon) clockOf(root string) string {
	td.t.Helper()
	a := td.changes(root, `{}`)
	if a.Status != envelope.StatusSuccess || a.data.Clock == "" || a.ctx.Clock != a.data.Clock {
		td.t.Fatalf("no clock: %s", a.js)
	}
	return a.data.Clock
}

// lines returns the changes as "kind path", in the answer's order.
func (a changesAnswer) lines() []string {
	var out []string
	for _, c := range a.data.Changes {
		out = append(out, c.Kind+" "+c.Path)
	}
	return out
}

// sortedLines returns lines() sorted.
func (a changesAnswer) sortedLines() []string {
	return slices.Sorted(slices.Values(a.lines()))
}

func since(tok string, extra ...string) string {
	args := map[string]any{"since": tok}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			v = extra[i+1]
		}
		args[extra[i]] = v
	}
	js, _ := json.Marshal(args)
	return string(js)
}

func wantChanges(t *testing.T, a changesAnswer, status envelope.Status, want ...string) {
	t.Helper()
	slices.Sort(want)
	if a.Status != status || !slices.Equal(a.sortedLines(), want) {
		t.Errorf("status %s, changes %q; want %s, %q\n%s", a.Status, a.sortedLines(), status, want, a.js)
	}
}

func mtimeString(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime().UTC().Format(time.RFC3339Nano)
}

func readyRoot(t *testing.T, td *testDaemon, files map[string]string) string {
	t.Helper()
	root := writeTree(t, files)
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		t.Fatalf("index --wait: %+v", rs)
	}
	return root
}

// Create, modify, delete, rename and a directory rename, each seen by a
// Changes call right after it (read-your-writes), with kinds and mtimes;
// every Glob, Grep and LS answer carries the clock.
func TestChangesKinds(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := readyRoot(t, td, map[string]string{
		"a.txt": "a\n", "b.txt": "b\n", "old.txt": "old\n",
		"d/x/one.go": "one\n", "d/x/two.go": "two\n", "d/three.go": "three\n",
	})
	tok := td.clockOf(root)

	writeFile(t, root, "new.txt", "new\n")
	writeFile(t, root, "a.txt", "a changed\n")
	must(t, os.Remove(filepath.Join(root, "b.txt")))
	must(t, os.Rename(filepath.Join(root, "old.txt"), filepath.Join(root, "renamed.txt")))
	a := td.changes(root, since(tok))
	wantChanges(t, a, envelope.StatusSuccess, "created new.txt", "modified a.txt", "deleted b.txt", "deleted old.txt", "created renamed.txt")
	for _, c := range a.data.Changes {
		switch c.Kind {
		case envelope.KindDeleted:
			if c.Mtime == nil {
				t.Errorf("%s: no last known mtime", c.Path)
			}
		default:
			if want := mtimeString(t, filepath.Join(root, c.Path)); c.Mtime == nil || *c.Mtime != want {
				t.Errorf("%s: mtime %v, want %s", c.Path, c.Mtime, want)
			}
		}
	}
	if a.data.FreshInstance || a.data.Clock == tok || a.ctx.Clock != a.data.Clock {
		t.Errorf("fresh %v, clock %q (since %q), context clock %q", a.data.FreshInstance, a.data.Clock, tok, a.ctx.Clock)
	}

	// Since the new clock: nothing, then a directory rename reports every
	// file under both names, most recent first across calls.
	tok = a.data.Clock
	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess)
	must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
	a = td.changes(root, since(tok))
	wantChanges(t, a, envelope.StatusSuccess, "deleted d/x/one.go", "deleted d/x/two.go", "deleted d/three.go",
		"created e/x/one.go", "created e/x/two.go", "created e/three.go")
	// path and pattern narrow the list.
	wantChanges(t, td.changes(root, since(tok, "path", "e/x")), envelope.StatusSuccess, "created e/x/one.go", "created e/x/two.go")
	wantChanges(t, td.changes(root, since(tok, "pattern", "**/one.go")), envelope.StatusSuccess, "deleted d/x/one.go", "created e/x/one.go")
	// limit truncates, exactly.
	if a := td.changes(root, since(tok, "limit", "6")); a.Status != envelope.StatusSuccess || a.data.Truncated {
		t.Errorf("limit 6 of 6: %s", a.js)
	}
	if a := td.changes(root, since(tok, "limit", "5")); a.Status != envelope.StatusPartial || !a.data.Truncated || len(a.data.Changes) != 5 {
		t.Errorf("limit 5 of 6: %s", a.js)
	}

	// Newest first: the last change comes first.
	tok = a.data.Clock
	writeFile(t, root, "first.txt", "1\n")
	td.changes(root, `{}`) // the barrier: first.txt is journaled before second.txt
	writeFile(t, root, "second.txt", "2\n")
	if got := td.changes(root, since(tok)).lines(); !slices.Equal(got, []string{"created second.txt", "created first.txt"}) {
		t.Errorf("order %q, want second.txt first", got)
	}

	// Every tool's answer carries the clock; one taken after a write does
	// not report it again.
	writeFile(t, root, "third.txt", "3\n")
	for _, m := range []string{"glob", "grep", "ls"} {
		args := map[string]string{"glob": `{"pattern":"*.txt"}`, "grep": `{"pattern":"3"}`, "ls": `{}`}[m]
		var ctx struct {
			Clock string `json:"clock"`
		}
		q := td.query(m, root, args)
		if err := json.Unmarshal(q.Context, &ctx); err != nil || ctx.Clock == "" {
			t.Fatalf("%s: no context.clock: %s", m, q.js)
		}
		if m != "ls" { // LS takes its clock without the barrier
			wantChanges(t, td.changes(root, since(ctx.Clock)), envelope.StatusSuccess)
		}
	}
}

// Read-your-writes: a write that returned before the call is in its
// answer, every time.
func TestChangesReadYourWrites(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := readyRoot(t, td, map[string]string{"seed.txt": "seed\n"})
	tok := td.clockOf(root)
	for i := range 50 {
		rel := fmt.Sprintf("d%d/f%d.txt", i%5, i)
		writeFile(t, root, rel, "x\n")
		a := td.changes(root, since(tok))
		if len(a.data.Changes) != 1 || a.data.Changes[0].Path != rel || a.data.Changes[0].Kind != envelope.KindCreated {
			t.Fatalf("round %d: %s", i, a.js)
		}
		tok = a.data.Clock
	}
}

// Hidden and ignored files follow Glob's rules; changes inside ignored
// directories are not tracked, and asking for them says so.
func TestChangesHiddenAndIgnored(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := readyRoot(t, td, map[string]string{".gitignore": "*.log\n", "src/a.go": "a\n", "node_modules/m/index.js": "m\n"})
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	tok := td.clockOf(root)
	writeFile(t, root, "src/debug.log", "log\n")
	writeFile(t, root, ".hidden/h.go", "h\n")
	writeFile(t, root, "src/.dot.go", "d\n")
	writeFile(t, root, "node_modules/m/index.js", "changed\n")
	writeFile(t, root, "src/b.go", "b\n")

	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess, "created src/b.go")
	wantChanges(t, td.changes(root, since(tok, "include_hidden", "true")), envelope.StatusSuccess,
		"created src/b.go", "created .hidden/h.go", "created src/.dot.go")
	// A pattern naming a hidden directory shows it, as in Glob.
	wantChanges(t, td.changes(root, since(tok, "pattern", ".hidden/**")), envelope.StatusSuccess, "created .hidden/h.go")
	a := td.changes(root, since(tok, "include_ignored", "true"))
	wantChanges(t, a, envelope.StatusPartial, "created src/b.go", "created src/debug.log")
	if !strings.Contains(a.Text, "are not tracked (.git, node_modules)") {
		t.Errorf("include_ignored does not say what is not tracked: %s", a.js)
	}
}

// A token of another root, of another daemon instance (a restart), from
// before lost events, or before the journal's start answers fresh_instance
// with every current file; a string that is no token is INVALID_PARAM.
func TestChangesFreshInstance(t *testing.T) {
	t.Parallel()
	var jr *journal.Journal
	newFresh := func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
		j := journal.New(0)
		w, err := watch.Start(ctx, root, ix, watch.Options{Logger: log, Journal: j})
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(root, "one") {
			jr = j
		}
		return watched{w, j}, nil
	}
	state := t.TempDir()
	td := startDaemon(t, Config{StateDir: state, NewFreshener: newFresh})
	parent := writeTree(t, map[string]string{"one/a.go": "a\n", "one/sub/b.go": "b\n", "one/.h": "h\n", "two/c.go": "c\n"})
	one, two := filepath.Join(parent, "one"), filepath.Join(parent, "two")
	td.index(one, true)
	td.index(two, true)
	tokOne, tokTwo := td.clockOf(one), td.clockOf(two)
	writeFile(t, one, "sub/new.go", "n\n")

	full := []string{"created a.go", "created sub/b.go", "created sub/new.go"}
	check := func(what string, a changesAnswer, want []string) {
		t.Helper()
		wantChanges(t, a, envelope.StatusPartial, want...)
		if !a.data.FreshInstance || a.data.Clock == "" || !strings.HasPrefix(a.Text, "Fresh instance: ") {
			t.Errorf("%s: not fresh_instance with a clock: %s", what, a.js)
		}
		for _, c := range a.data.Changes {
			if want := mtimeString(t, filepath.Join(one, c.Path)); c.Mtime == nil || *c.Mtime != want {
				t.Errorf("%s: %s mtime %v, want %s", what, c.Path, c.Mtime, want)
			}
		}
	}
	check("another root", td.changes(one, since(tokTwo)), full)
	if a := td.changes(two, since(tokOne)); !a.data.FreshInstance || !slices.Equal(a.sortedLines(), []string{"created c.go"}) {
		t.Errorf("another root: %s", a.js)
	}
	check("another root, a pattern", td.changes(one, since(tokTwo, "pattern", "sub/*.go")), []string{"created sub/b.go", "created sub/new.go"})

	// Across lost events (what the watcher does on an overflow).
	tok := td.clockOf(one)
	jr.Truncate()
	check("after lost events", td.changes(one, since(tok)), full)

	// Before the journal's start: a position older than any kept.
	c, err := journal.ParseClock(tok)
	must(t, err)
	c.Pos = 0
	check("before the start", td.changes(one, since(c.String())), full)

	for _, bad := range []string{"nope", "c", tok + "x"} {
		a := td.changes(one, since(bad))
		if a.Status != envelope.StatusError || a.Error == nil || a.Error.Code != envelope.CodeInvalidParam {
			t.Errorf("since %q: %s", bad, a.js)
		}
	}

	// Across a daemon restart.
	tok = td.clockOf(one)
	must(t, td.stop())
	td = startDaemon(t, Config{StateDir: state, SocketPath: td.cfg.SocketPath})
	td.index(one, true)
	check("after a restart", td.changes(one, since(tok)), full)
}

// The sandbox: path and pattern cannot reach outside the root.
func TestChangesSandbox(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	outside := writeTree(t, map[string]string{"secret.go": "s\n"})
	root := readyRoot(t, td, map[string]string{"in/a.go": "a\n"})
	must(t, os.Symlink(outside, filepath.Join(root, "link")))
	tok := td.clockOf(root)
	writeFile(t, outside, "secret2.go", "s\n")
	writeFile(t, root, "in/b.go", "b\n")
	for _, tc := range []struct {
		args string
		code envelope.Code
	}{
		{since(tok, "path", ".."), envelope.CodeAccessDenied},
		{since(tok, "path", "../"+filepath.Base(outside)), envelope.CodeAccessDenied},
		{since(tok, "path", outside), envelope.CodeAccessDenied},
		{since(tok, "path", "link"), envelope.CodeAccessDenied},
		{since(tok, "pattern", outside+"/**"), envelope.CodeInvalidParam},
	} {
		a := td.changes(root, tc.args)
		if a.Status != envelope.StatusError || a.Error == nil || a.Error.Code != tc.code {
			t.Errorf("%s: %s, want %s", tc.args, a.js, tc.code)
		}
	}
	for _, pat := range []string{"../**", "../*/secret2.go", "link/**"} {
		wantChanges(t, td.changes(root, since(tok, "pattern", pat)), envelope.StatusSuccess)
	}
	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess, "created in/b.go")
}

// changed_since restricts Glob and Grep to the files changed since the
// token (gone ones left out), with their own rules; a token it cannot
// answer relative to searches everything and says so.
func TestChangedSince(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := readyRoot(t, td, map[string]string{"a.go": "needle a\n", "b.go": "needle b\n", "c.txt": "needle c\n", "gone.go": "needle gone\n"})
	tok := td.clockOf(root)
	writeFile(t, root, "b.go", "needle b changed\n")
	writeFile(t, root, "d.go", "needle d\n")
	writeFile(t, root, "e.txt", "needle e\n")
	writeFile(t, root, ".h.go", "needle h\n")
	must(t, os.Remove(filepath.Join(root, "gone.go")))

	g := td.query("glob", root, fmt.Sprintf(`{"pattern":"*.go","changed_since":%q}`, tok))
	if g.Status != envelope.StatusSuccess || !slices.Equal(g.data.Paths, []string{"b.go", "d.go"}) {
		t.Errorf("glob changed_since: %s", g.js)
	}
	g = td.query("glob", root, fmt.Sprintf(`{"pattern":"*.go","changed_since":%q,"include_hidden":true}`, tok))
	if !slices.Equal(g.data.Paths, []string{".h.go", "b.go", "d.go"}) {
		t.Errorf("glob changed_since include_hidden: %s", g.js)
	}
	r := td.query("grep", root, fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","changed_since":%q}`, tok))
	var files struct {
		Files []string `json:"files"`
	}
	must(t, json.Unmarshal(r.Data, &files))
	if r.Status != envelope.StatusSuccess || !slices.Equal(slices.Sorted(slices.Values(files.Files)), []string{"b.go", "d.go", "e.txt"}) {
		t.Errorf("grep changed_since: %s", r.js)
	}
	r = td.query("grep", root, fmt.Sprintf(`{"pattern":"needle","include":"*.txt","changed_since":%q}`, tok))
	if len(r.data.Matches) != 1 || !strings.Contains(string(r.data.Matches[0]), `"e.txt"`) {
		t.Errorf("grep changed_since with include: %s", r.js)
	}

	// Another instance's token: every file, partial, fresh_instance.
	other := journal.Clock{Instance: 1, Root: 1, Journal: 1, Pos: 1}.String()
	g = td.query("glob", root, fmt.Sprintf(`{"pattern":"*.go","changed_since":%q}`, other))
	var fresh struct {
		Fresh bool `json:"fresh_instance"`
	}
	must(t, json.Unmarshal(g.Data, &fresh))
	if g.Status != envelope.StatusPartial || !fresh.Fresh || !slices.Equal(g.data.Paths, []string{"a.go", "b.go", "d.go"}) || !strings.Contains(g.Text, "changed_since could not be answered") {
		t.Errorf("glob with a fresh-instance token: %s", g.js)
	}
	r = td.query("grep", root, fmt.Sprintf(`{"pattern":"needle","changed_since":%q}`, other))
	if r.Status != envelope.StatusPartial || len(r.data.Matches) != 5 {
		t.Errorf("grep with a fresh-instance token: %s", r.js)
	}
	if a := td.query("grep", root, `{"pattern":"needle","changed_since":"bogus"}`); a.Status != envelope.StatusError || a.Error.Code != envelope.CodeInvalidParam {
		t.Errorf("a bad token: %s", a.js)
	}
	// Without changed_since the answers are unchanged.
	if g := td.query("glob", root, `{"pattern":"*.go"}`); g.Status != envelope.StatusSuccess || !slices.Equal(g.data.Paths, []string{"a.go", "b.go", "d.go"}) || strings.Contains(string(g.Data), "fresh_instance") {
		t.Errorf("glob without changed_since: %s", g.js)
	}
}

// changed_since with an ignored file changed: the journal names the file
// (marked ignored), and Glob and Grep leave it out as they leave out
// ignored files without the parameter, unless include_ignored asks for
// them; an ignored file that did not change stays out either way.
func TestChangedSinceIgnored(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	root := readyRoot(t, td, map[string]string{".ignore": "*.log\n", "a.go": "needle a\n", "b.go": "needle b\n", "old.log": "needle old\n", "keep.log": "needle keep\n"})
	tok := td.clockOf(root)
	writeFile(t, root, "a.go", "needle a changed\n")
	writeFile(t, root, "old.log", "needle old changed\n")
	writeFile(t, root, "new.log", "needle new\n")

	for _, tc := range []struct {
		extra string
		want  []string
	}{
		{"", []string{"a.go"}},
		{`,"include_ignored":true`, []string{"a.go", "new.log", "old.log"}},
	} {
		g := td.query("glob", root, fmt.Sprintf(`{"pattern":"*","changed_since":%q%s}`, tok, tc.extra))
		if g.Status != envelope.StatusSuccess || !slices.Equal(g.data.Paths, tc.want) {
			t.Errorf("glob changed_since%s: %s, want %q", tc.extra, g.js, tc.want)
		}
		r := td.query("grep", root, fmt.Sprintf(`{"pattern":"needle","output_mode":"files_with_matches","changed_since":%q%s}`, tok, tc.extra))
		var files struct {
			Files []string `json:"files"`
		}
		must(t, json.Unmarshal(r.Data, &files))
		if r.Status != envelope.StatusSuccess || !slices.Equal(slices.Sorted(slices.Values(files.Files)), tc.want) {
			t.Errorf("grep changed_since%s: %s, want %q", tc.extra, r.js, tc.want)
		}
	}
}

// Changes and Glob agree on what a symlink is (Glob's rule: a link is a
// file when it points, through any links, to a regular file inside the
// root): a link made to a directory, outside the root or to nothing is
// never reported created, as Glob never lists it; one that stops
// pointing to such a file leaves Glob's list, and Changes reports its
// deletion. What Changes reports created or modified is what Glob lists,
// what it reports deleted Glob does not list, and the fresh_instance
// answer (Glob's) agrees too.
func TestChangesSymlinksAsGlob(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, Config{})
	outside := writeTree(t, map[string]string{"secret.txt": "s\n"})
	root := readyRoot(t, td, map[string]string{"a.txt": "a\n", "d/x.txt": "x\n"})
	link := func(target, name string) {
		t.Helper()
		must(t, os.Symlink(target, filepath.Join(root, name)))
	}
	globAll := func() []string {
		t.Helper()
		a := td.query(tool.MethodGlob, root, `{"pattern":"**"}`)
		if a.Status != envelope.StatusSuccess || a.data.Used {
			t.Fatalf("glob: %s", a.js)
		}
		return a.data.Paths
	}
	tok := td.clockOf(root)
	link("a.txt", "to-file")
	link("to-file", "to-link")
	link("d", "to-dir")
	link(filepath.Join(outside, "secret.txt"), "to-outside")
	link("nope.txt", "dangling")
	if got, want := globAll(), []string{"a.txt", "d/x.txt", "to-file", "to-link"}; !slices.Equal(got, want) {
		t.Fatalf("glob lists %q, want %q", got, want)
	}
	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess, "created to-file", "created to-link")

	// to-file retargeted outside the root: it leaves Glob's list (and
	// to-link with it, whose own entry did not change).
	tok = td.clockOf(root)
	must(t, os.Remove(filepath.Join(root, "to-file")))
	link(filepath.Join(outside, "secret.txt"), "to-file")
	if got, want := globAll(), []string{"a.txt", "d/x.txt"}; !slices.Equal(got, want) {
		t.Fatalf("glob lists %q, want %q", got, want)
	}
	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess, "deleted to-file")

	// A regular file replaced by a dangling link: deleted. A link made a
	// regular file: modified (something was there; whether Glob listed
	// it then cannot be told now), and Glob lists it.
	tok = td.clockOf(root)
	must(t, os.Remove(filepath.Join(root, "a.txt")))
	link("gone.txt", "a.txt")
	must(t, os.Remove(filepath.Join(root, "to-dir")))
	writeFile(t, root, "to-dir", "now a file\n")
	if got, want := globAll(), []string{"d/x.txt", "to-dir"}; !slices.Equal(got, want) {
		t.Fatalf("glob lists %q, want %q", got, want)
	}
	wantChanges(t, td.changes(root, since(tok)), envelope.StatusSuccess, "deleted a.txt", "modified to-dir")

	// fresh_instance lists Glob's files.
	c, err := journal.ParseClock(tok)
	must(t, err)
	c.Pos = 0
	wantChanges(t, td.changes(root, since(c.String())), envelope.StatusPartial, "created d/x.txt", "created to-dir")
}
