package query

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/glob"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// Grep (docs/tools.md, "Grep"): order, exact truncation, binary and long
// lines, matching options, output modes, context, include, ignore rules,
// timeout.

// orderTree has five matches of "hit" in four files whose mtimes are set
// by setOrder: new.go (2 lines), tie_a.go and tie_b.go (same mtime), old.go.
func orderTree(t *testing.T) (*Tools, string) {
	tools, root := setup(t, fsTree{
		"old.go":     "hit old\n",
		"tie_b.go":   "x\nhit b\n",
		"tie_a.go":   "hit a\n",
		"sub/new.go": "hit one\nmiss\nhit two\n",
		"none.go":    "nothing\n",
	})
	setMtime(t, root, "old.go", base)
	setMtime(t, root, "tie_a.go", base.Add(time.Hour))
	setMtime(t, root, "tie_b.go", base.Add(time.Hour))
	setMtime(t, root, "sub/new.go", base.Add(2*time.Hour))
	setMtime(t, root, "none.go", base.Add(3*time.Hour))
	return tools, root
}

var orderAll = []string{"sub/new.go:1: hit one", "sub/new.go:3: hit two", "tie_a.go:1: hit a", "tie_b.go:2: hit b", "old.go:1: hit old"}

func TestGrepOrder(t *testing.T) {
	t.Parallel()
	tools, root := orderTree(t)
	r := run(t, tools, tool.Grep, `{"pattern":"hit"}`)
	wantStatus(t, r, "success")
	equal(t, "matches", r.matchLines(), orderAll)
	equal(t, "stats", [3]int{r.Stats.MatchedFiles, r.Stats.MatchedLines, r.Stats.FilesScanned}, [3]int{4, 5, 5})

	// Touching a file moves it to the front.
	setMtime(t, root, "old.go", base.Add(4*time.Hour))
	r = run(t, tools, tool.Grep, `{"pattern":"hit"}`)
	equal(t, "after touch", r.matchLines(), append([]string{"old.go:1: hit old"}, orderAll[:4]...))
}

func TestGrepTruncationExact(t *testing.T) {
	t.Parallel()
	tools, _ := orderTree(t)
	for limit := 1; limit <= 7; limit++ {
		r := run(t, tools, tool.Grep, jsonArgs("pattern", "hit", "limit", limit))
		n := min(limit, len(orderAll))
		truncated := limit < len(orderAll)
		equal(t, fmt.Sprint("limit ", limit), r.matchLines(), orderAll[:n])
		if r.Data.Truncated != truncated {
			t.Errorf("limit %d: truncated = %v, want %v", limit, r.Data.Truncated, truncated)
		}
		wantStatus(t, r, map[bool]string{true: "partial", false: "success"}[truncated])
		if r.Stats.MatchedLines != n {
			t.Errorf("limit %d: matched_lines = %d", limit, r.Stats.MatchedLines)
		}
	}
	// files_with_matches and count truncate by file.
	for _, mode := range []string{envelope.ModeFiles, envelope.ModeCount} {
		for limit, truncated := range map[int]bool{3: true, 4: false} {
			r := run(t, tools, tool.Grep, jsonArgs("pattern", "hit", "output_mode", mode, "limit", limit))
			if r.Data.Truncated != truncated || len(r.Data.Files)+len(r.Data.Counts) != limit {
				t.Errorf("%s limit %d: truncated %v, %d files", mode, limit, r.Data.Truncated, len(r.Data.Files)+len(r.Data.Counts))
			}
		}
	}
}

func TestGrepOutputModes(t *testing.T) {
	t.Parallel()
	tools, _ := orderTree(t)
	r := run(t, tools, tool.Grep, `{"pattern":"hit","output_mode":"files_with_matches"}`)
	wantStatus(t, r, "success")
	equal(t, "data keys", r.DataKeys, []string{"files", "truncated"})
	equal(t, "files", r.Data.Files, []string{"sub/new.go", "tie_a.go", "tie_b.go", "old.go"})
	wantText(t, r, "Found 4 files with matches for 'hit' in '.'\n(Sorted by mtime desc. Took Nms)\n\nsub/new.go\ntie_a.go\ntie_b.go\nold.go")

	r = run(t, tools, tool.Grep, `{"pattern":"hit","output_mode":"count"}`)
	wantStatus(t, r, "success")
	equal(t, "data keys", r.DataKeys, []string{"counts", "truncated"})
	equal(t, "counts", r.Data.Counts, []envelope.FileCount{{File: "sub/new.go", Count: 2}, {File: "tie_a.go", Count: 1}, {File: "tie_b.go", Count: 1}, {File: "old.go", Count: 1}})
	wantText(t, r, "Found 5 matches in 4 files for 'hit' in '.'\n(Sorted by mtime desc. Took Nms)\n\nsub/new.go:2\ntie_a.go:1\ntie_b.go:1\nold.go:1")

	r = run(t, tools, tool.Grep, `{"pattern":"hit","output_mode":"content"}`)
	equal(t, "data keys", r.DataKeys, []string{"matches", "truncated"})

	r = run(t, tools, tool.Grep, `{"pattern":"zzz","output_mode":"count"}`)
	equal(t, "empty counts keys", r.DataKeys, []string{"counts", "truncated"})
	equal(t, "empty counts", r.Data.Counts, []envelope.FileCount{})
}

func TestGrepBinary(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", BinarySniffBytes-1)
	tools, _ := setup(t, fsTree{
		"text.txt":   "needle\n",
		"bin1.dat":   "needle\x00\n",
		"bin2.dat":   big + "\x00needle\n",  // NUL at offset 8191
		"late.dat":   big + "a\x00needle\n", // NUL at offset 8192: text
		"empty.txt":  "",
		"nul_at0.go": "\x00",
	})
	r := run(t, tools, tool.Grep, `{"pattern":"needle","output_mode":"files_with_matches"}`)
	wantStatus(t, r, "success")
	got := append([]string(nil), r.Data.Files...)
	slices.Sort(got)
	equal(t, "files", got, []string{"late.dat", "text.txt"})
	if r.Stats.BinarySkipped != 3 || r.Stats.FilesScanned != 6 {
		t.Errorf("binary_skipped = %d, files_scanned = %d; want 3, 6", r.Stats.BinarySkipped, r.Stats.FilesScanned)
	}
}

func TestGrepLongLine(t *testing.T) {
	t.Parallel()
	long := "needle " + strings.Repeat("x", 3000)
	// "é" straddles the cut: the text is cut before it.
	straddle := "needle" + strings.Repeat("y", grep.MaxLineBytes-7) + "é" + "tail"
	exact := "needle" + strings.Repeat("z", grep.MaxLineBytes-6)
	tools, _ := setup(t, fsTree{"a.txt": long + "\n", "b.txt": straddle + "\n", "c.txt": exact + "\n"})
	r := run(t, tools, tool.Grep, `{"pattern":"needle","include":"a.txt"}`)
	if len(r.Data.Matches) != 1 || r.Data.Matches[0].Text != long[:grep.MaxLineBytes]+grep.LineCutMark {
		t.Errorf("long line text = %.60q... (len %d)", r.Data.Matches[0].Text, len(r.Data.Matches[0].Text))
	}
	r = run(t, tools, tool.Grep, `{"pattern":"needle","include":"b.txt"}`)
	if want := straddle[:grep.MaxLineBytes-1] + grep.LineCutMark; len(r.Data.Matches) != 1 || r.Data.Matches[0].Text != want {
		t.Errorf("straddling text has len %d, want %d", len(r.Data.Matches[0].Text), len(want))
	}
	r = run(t, tools, tool.Grep, `{"pattern":"needle","include":"c.txt"}`)
	if len(r.Data.Matches) != 1 || r.Data.Matches[0].Text != exact {
		t.Errorf("a line of exactly %d bytes was cut", grep.MaxLineBytes)
	}
}

func TestGrepMatching(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"a.txt":    "Hello World\nhello world\nHELLO\n",
		"meta.txt": "call a.b(c)* here\ncall axb(c) there\n",
		"crlf.txt": "first line\r\nsecond HELLO\r\nthird\r\n",
		"utf.txt":  "caf\xe9 hello \xff\xfe\nplain\n",
		"ml.txt":   "start foo\nbar end\nfoo\nbaz\n",
	})
	tests := []struct {
		name, args string
		want       []string
	}{
		{"case-insensitive default", `{"pattern":"hello","include":"a.txt"}`, []string{"a.txt:1: Hello World", "a.txt:2: hello world", "a.txt:3: HELLO"}},
		{"case-sensitive", `{"pattern":"hello","include":"a.txt","case_sensitive":true}`, []string{"a.txt:2: hello world"}},
		{"regex", `{"pattern":"^h\\w+ w","include":"a.txt"}`, []string{"a.txt:1: Hello World", "a.txt:2: hello world"}},
		{"line anchors", `{"pattern":"^HELLO$","include":"a.txt","case_sensitive":true}`, []string{"a.txt:3: HELLO"}},
		{"regex metachars", `{"pattern":"a.b(c)*","include":"meta.txt"}`, []string{"meta.txt:1: call a.b(c)* here", "meta.txt:2: call axb(c) there"}},
		{"fixed strings", `{"pattern":"a.b(c)*","include":"meta.txt","fixed_strings":true}`, []string{"meta.txt:1: call a.b(c)* here"}},
		{"fixed strings invalid regex", `{"pattern":"b(c","include":"meta.txt","fixed_strings":true}`, []string{"meta.txt:1: call a.b(c)* here", "meta.txt:2: call axb(c) there"}},
		{"crlf", `{"pattern":"hello","include":"crlf.txt"}`, []string{"crlf.txt:2: second HELLO"}},
		{"crlf end anchor", `{"pattern":"^third","include":"crlf.txt"}`, []string{"crlf.txt:3: third"}},
		{"invalid utf-8", `{"pattern":"hello","include":"utf.txt"}`, []string{"utf.txt:1: caf\ufffd hello \ufffd\ufffd"}},
		{"dot does not cross lines", `{"pattern":"foo.*end","include":"ml.txt"}`, []string{}},
		{"class does not cross lines", `{"pattern":"foo[^x]bar","include":"ml.txt"}`, []string{}},
		{"space class does not cross lines", `{"pattern":"foo\\sbar","include":"ml.txt"}`, []string{}},
		{"multiline", `{"pattern":"foo\\nbar","include":"ml.txt","multiline":true}`, []string{"ml.txt:1: start foo\nbar end"}},
		{"multiline dot", `{"pattern":"(?s)start.*?end","include":"ml.txt","multiline":true}`, []string{"ml.txt:1: start foo\nbar end"}},
		{"multiline one line", `{"pattern":"^baz$","include":"ml.txt","multiline":true}`, []string{"ml.txt:4: baz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tools, tool.Grep, tc.args)
			wantStatus(t, r, "success")
			equal(t, "matches", r.matchLines(), tc.want)
			for _, m := range r.Data.Matches {
				if strings.Contains(m.Text, "\r") {
					t.Errorf("text %q holds a CR", m.Text)
				}
			}
		})
	}
}

func TestGrepNewlineNeedsMultiline(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{"a.txt": "a\nb\n"})
	for p, want := range map[string]string{`a\nb`: "a\nb", `a\x0ab`: "a\nb", "a\nb": "a\nb", `a\n`: "a"} {
		r := run(t, tools, tool.Grep, jsonArgs("pattern", p))
		wantError(t, r, envelope.CodeInvalidParam, "Invalid regex pattern: it matches a line break; set multiline=true to match across lines")
		r = run(t, tools, tool.Grep, jsonArgs("pattern", p, "multiline", true))
		wantStatus(t, r, "success")
		equal(t, p, r.matchLines(), []string{"a.txt:1: " + want})
	}
}

func TestGrepContext(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{"f.txt": "one\ntwo\nmatch A\nfour\nfive\nsix\nmatch B\neight\n", "g.txt": "match C\nlast\n"})
	r := run(t, tools, tool.Grep, `{"pattern":"match","include":"f.txt","context":1}`)
	wantStatus(t, r, "success")
	equal(t, "matches", r.Data.Matches, []envelope.GrepMatch{
		{File: "f.txt", Line: 3, Text: "match A", Before: []string{"two"}, After: []string{"four"}},
		{File: "f.txt", Line: 7, Text: "match B", Before: []string{"six"}, After: []string{"eight"}},
	})
	wantText(t, r, "Found 2 matches in 1 files for 'match' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+
		"f.txt-2- two\nf.txt:3: match A\nf.txt-4- four\n--\nf.txt-6- six\nf.txt:7: match B\nf.txt-8- eight")

	// Overlapping context is written once, adjacent groups without "--";
	// context stops at the file's edges.
	r = run(t, tools, tool.Grep, `{"pattern":"match","include":"f.txt","context_before":3,"context_after":0}`)
	equal(t, "before only", r.Data.Matches, []envelope.GrepMatch{
		{File: "f.txt", Line: 3, Text: "match A", Before: []string{"one", "two"}},
		{File: "f.txt", Line: 7, Text: "match B", Before: []string{"four", "five", "six"}},
	})
	wantText(t, r, "Found 2 matches in 1 files for 'match' in '.'\n(Sorted by mtime desc. Took Nms)\n\n"+
		"f.txt-1- one\nf.txt-2- two\nf.txt:3: match A\nf.txt-4- four\nf.txt-5- five\nf.txt-6- six\nf.txt:7: match B")

	r = run(t, tools, tool.Grep, `{"pattern":"match","include":"g.txt","context_after":5,"context_before":2}`)
	equal(t, "edges", r.Data.Matches, []envelope.GrepMatch{{File: "g.txt", Line: 1, Text: "match C", After: []string{"last"}}})
	wantText(t, r, "Found 1 matches in 1 files for 'match' in '.'\n(Sorted by mtime desc. Took Nms)\n\ng.txt:1: match C\ng.txt-2- last")

	// context_before/context_after override context.
	r = run(t, tools, tool.Grep, `{"pattern":"match B","include":"f.txt","context":2,"context_after":0}`)
	equal(t, "override", r.Data.Matches, []envelope.GrepMatch{{File: "f.txt", Line: 7, Text: "match B", Before: []string{"five", "six"}}})
}

func TestGrepIncludeAndPath(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"main.go":                  "needle\n",
		"src/a.ts":                 "needle\n",
		"src/b.tsx":                "needle\n",
		"src/deep/c.ts":            "needle\n",
		"lib/d.ts":                 "needle\n",
		"src/e.js":                 "needle\n",
		".github/workflows/ci.yml": "needle\n",
		".env":                     "needle\n",
		"config.yml":               "needle\n",
	})
	tests := []struct {
		name, args string
		want       []string
	}{
		{"all", `{}`, []string{"config.yml", "lib/d.ts", "main.go", "src/a.ts", "src/b.tsx", "src/deep/c.ts", "src/e.js"}},
		{"base name", `{"include":"*.go"}`, []string{"main.go"}},
		{"base name braces", `{"include":"*.{ts,tsx}"}`, []string{"lib/d.ts", "src/a.ts", "src/b.tsx", "src/deep/c.ts"}},
		{"path glob", `{"include":"src/**/*.ts"}`, []string{"src/a.ts", "src/deep/c.ts"}},
		{"path glob one level", `{"include":"src/*.ts"}`, []string{"src/a.ts"}},
		{"include relative to path", `{"path":"src","include":"deep/*.ts"}`, []string{"src/deep/c.ts"}},
		{"path", `{"path":"src"}`, []string{"src/a.ts", "src/b.tsx", "src/deep/c.ts", "src/e.js"}},
		{"path deep", `{"path":"src/deep/"}`, []string{"src/deep/c.ts"}},
		{"hidden dir named by include", `{"include":".github/**/*.yml"}`, []string{".github/workflows/ci.yml"}},
		{"hidden file named by include", `{"include":".env"}`, []string{".env"}},
		{"hidden not named", `{"include":"*.yml"}`, []string{"config.yml"}},
		{"include_hidden", `{"include":"*.yml","include_hidden":true}`, []string{".github/workflows/ci.yml", "config.yml"}},
		{"hidden path", `{"path":".github"}`, []string{".github/workflows/ci.yml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := mergeArgs(`{"pattern":"needle","output_mode":"files_with_matches"}`, tc.args)
			r := run(t, tools, tool.Grep, args)
			wantStatus(t, r, "success")
			got := append([]string(nil), r.Data.Files...)
			slices.Sort(got) // all mtimes are about equal; compare as sets
			equal(t, "files", got, tc.want)
		})
	}
}

func TestGrepIgnoreRules(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{
		"repo/.git/HEAD":                   "ref: refs/heads/main\n",
		"repo/.gitignore":                  "gen/\n*.log\n",
		"repo/src/a.go":                    "needle\n",
		"repo/gen/g.go":                    "needle\n",
		"repo/gen/more/h.go":               "needle\n",
		"repo/x.log":                       "needle\n",
		"repo/node_modules/pkg/i.js":       "needle\n",
		"plain/.gitignore":                 "skipped_by_gitignore/\n",
		"plain/.ignore":                    "skipped_by_ignore/\n",
		"plain/skipped_by_gitignore/a.txt": "needle\n",
		"plain/skipped_by_ignore/b.txt":    "needle\n",
		"plain/c.txt":                      "needle\n",
	})
	files := func(args string) (result, []string) {
		t.Helper()
		r := run(t, tools, tool.Grep, mergeArgs(`{"pattern":"needle","output_mode":"files_with_matches"}`, args))
		got := append([]string(nil), r.Data.Files...)
		slices.Sort(got)
		return r, got
	}
	r, got := files(`{"path":"repo"}`)
	equal(t, "repo", got, []string{"repo/src/a.go"})
	if r.Stats.Ignored != 4 { // .git/, gen/, x.log, node_modules/
		t.Errorf("stats.ignored = %d, want 4", r.Stats.Ignored)
	}
	_, got = files(`{"path":"repo/gen"}`)
	equal(t, "gitignored dir as path", got, []string{"repo/gen/g.go", "repo/gen/more/h.go"})
	_, got = files(`{"path":"repo/node_modules/pkg"}`)
	equal(t, "node_modules/pkg as path", got, []string{"repo/node_modules/pkg/i.js"})
	_, got = files(`{"path":"repo","include_ignored":true}`)
	equal(t, "include_ignored", got, []string{"repo/gen/g.go", "repo/gen/more/h.go", "repo/node_modules/pkg/i.js", "repo/src/a.go", "repo/x.log"})

	// Outside a git repository .gitignore does not apply, .ignore does.
	_, got = files(`{"path":"plain"}`)
	equal(t, "plain", got, []string{"plain/c.txt", "plain/skipped_by_gitignore/a.txt"})
	_, got = files(`{"path":"plain/skipped_by_ignore"}`)
	equal(t, ".ignored dir as path", got, []string{"plain/skipped_by_ignore/b.txt"})
}

func TestGrepSkipHints(t *testing.T) {
	t.Parallel()
	tools, root := setup(t, fsTree{
		"src/a.go":           "nothing\n",
		"node_modules/m.js":  "needle\n",
		"node_modules/n.js":  "needle\n",
		".hidden/h.txt":      "needle\n",
		".hidden/sub/.inner": "needle\n", // under a hidden directory: never reached
		".secret":            "needle\n",
		"build/out/b.txt":    "needle\n",
		"src/.cache/c.txt":   "needle\n",
		"src/sub/nested.txt": "nothing\n",
	})
	// Newest first: nested.txt is the newer (files written in a row can
	// share a coarse mtime tick).
	now := time.Now()
	setMtime(t, root, "src/a.go", now.Add(-time.Hour))
	setMtime(t, root, "src/sub/nested.txt", now)
	r := run(t, tools, tool.Grep, `{"pattern":"needle"}`)
	wantStatus(t, r, "success")
	if r.Stats.Ignored != 3 { // build/, node_modules/, src/.cache/: once each
		t.Errorf("stats.ignored = %d, want 3", r.Stats.Ignored)
	}
	wantText(t, r, "No matches found for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		"[Info: Directories on the default ignore list were skipped: build/, node_modules/. Set include_ignored=true to search them.]\n"+
		"[Info: Ignored paths were skipped: src/.cache/. Set include_ignored=true to search them.]\n"+
		"[Info: Hidden paths were skipped: .hidden/, .secret. Set include_hidden=true to search them.]")

	// The include limits the hint to what it could have matched.
	r = run(t, tools, tool.Grep, `{"pattern":"needle","include":"src/**"}`)
	wantText(t, r, "No matches found for 'needle' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		"[Info: Ignored paths were skipped: src/.cache/. Set include_ignored=true to search them.]")

	// A result that is not empty names only the directories the default
	// list skipped (outside a git work tree, every one met), not the
	// rest.
	r = run(t, tools, tool.Grep, `{"pattern":"needle|nothing","case_sensitive":true}`)
	wantText(t, r, "Found 2 matches in 2 files for 'needle|nothing' in '.'\n(Sorted by mtime desc. Took Nms)\n"+
		"[Info: Directories on the default ignore list were skipped: build/, node_modules/. Set include_ignored=true to search them.]\n\n"+
		"src/sub/nested.txt:1: nothing\nsrc/a.go:1: nothing")
	r = run(t, tools, tool.Grep, `{"pattern":"nothing","path":"src"}`)
	if strings.Contains(r.Text, "[Info:") {
		t.Errorf("hint with results and no default-list directory in scope:\n%s", r.Text)
	}
}

// With timeout_ms=1 on a tree too big to walk in a millisecond, Grep
// always times out. The files are empty, so nothing can be found before
// the deadline: the answer is always a TIMEOUT error (with a match found
// it would be partial with aborted_reason "timeout").
func TestGrepTimeout(t *testing.T) {
	t.Parallel()
	tools := newTools(t, bigRoot(t))
	runs := 20
	if testtree.RaceEnabled {
		runs = 5 // CI runs the 20 without -race
	}
	for i := range runs {
		r := run(t, tools, tool.Grep, `{"pattern":"needle","timeout_ms":1}`)
		wantStatus(t, r, "error")
		equal(t, "error", *r.Error, envelope.Error{Code: envelope.CodeTimeout,
			Message: "Search timed out before finding any match. Narrow the pattern or path."})
		if r.Data.AbortedReason != envelope.AbortTimeout {
			t.Errorf("run %d: aborted_reason = %q", i, r.Data.AbortedReason)
		}
		if !strings.Contains(r.Text, "[Error: Search timed out before finding any match.") {
			t.Errorf("run %d: text does not say it timed out: %q", i, r.Text)
		}
	}
	// The same search with the default timeout finds the file.
	r := run(t, tools, tool.Grep, `{"pattern":"needle"}`)
	wantStatus(t, r, "success")
	equal(t, "matches", r.matchLines(), []string{"needle/needle.txt:1: needle"})
}

// Regression test for a race tree.Walk had (fixed: consume checks the
// context after its select): a directory whose read started after the
// deadline got the context's error as its read error, and consume, when
// its select picked nd.done over ctx.Done (both ready), counted it as
// unreadable and went on; if that happened for every directory left,
// Walk returned nil and Glob and Grep answered "success" with missing
// results instead of time_limit/timeout. A deadline already past when the
// walk starts is the easiest way into the window; the old code failed
// about 1 walk in 5000, so the test loops.
func TestWalkerExpiredDeadlineIsNeverComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("loops over a race")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16)) // more walk workers: a wider window
	tools, _ := setup(t, fsTree{"a/x.txt": "needle\n", "y.txt": "needle\n"})
	m, _ := grep.CompileMatcher("needle", grep.MatchOptions{})
	g, _ := glob.Compile("**", false)
	loops := 30000
	if testtree.RaceEnabled {
		loops = 8000 // CI runs the 30,000 without -race
	}
	for i := range loops {
		past := time.Now().Add(-time.Minute)
		if i%2 == 0 {
			q := &GrepQuery{WS: tools.WS, Dir: ".", Matcher: m, Start: past,
				Params: GrepParams{Pattern: "needle", Limit: 100, OutputMode: envelope.ModeContent, TimeoutMS: 1}}
			res, err := Walker{}.Grep(context.Background(), q)
			if err == nil && res.Run.Data.AbortedReason == "" {
				t.Fatalf("walk %d: Grep with its deadline passed reports a complete search (%d matches)", i, len(res.Run.Data.Matches))
			}
		} else {
			q := &GlobQuery{WS: tools.WS, Dir: ".", Pattern: "**", Glob: g, Start: past,
				Params: GlobParams{Pattern: "**", Limit: 50, Sort: SortPath}}
			res, err := Walker{}.Glob(context.Background(), q)
			if err == nil && res.Run.Data.AbortedReason == "" {
				t.Fatalf("walk %d: Glob with its deadline passed reports a complete search (paths %v)", i, res.Run.Data.Paths)
			}
		}
	}
}
