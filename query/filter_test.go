package query_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// filterFixture holds no hidden or ignored file: ripgrep's -g globs
// override its ignore rules while ours only filter what they let through,
// and on such a tree both mean the same.
var filterFixture = map[string]string{
	"main.go":              "package main // TODO\n",
	"main_test.go":         "package main // TODO\n",
	"Makefile":             "all: # TODO\n",
	"README.md":            "TODO\n",
	"docs/guide.md":        "TODO\n",
	"docs/conf.yaml":       "x: TODO\n",
	"src/app.ts":           "// TODO\n",
	"src/view.tsx":         "// TODO\n",
	"src/lib/util.py":      "# TODO\n",
	"src/lib/types.pyi":    "# TODO\n",
	"vendor2/x/dep.go":     "package x // TODO\n",
	"vendor2/x/notes.txt":  "TODO\n",
	"c/a.c":                "// TODO\n",
	"c/a.h":                "// TODO\n",
	"Dockerfile":           "# TODO\n",
	"build.gradle":         "// TODO\n",
	"scripts/run.sh":       "# TODO\n",
	"scripts/lib/more.sh":  "# TODO\n",
	"scripts/lib/data.csv": "TODO\n",
}

// filterCases are type, type_not and glob parameters with the ripgrep
// flags that mean the same.
var filterCases = []struct {
	args map[string]any
	rg   []string
}{
	{map[string]any{"type": "go"}, []string{"-t", "go"}},
	{map[string]any{"type": []string{"ts", "py"}}, []string{"-t", "ts", "-t", "py"}},
	{map[string]any{"type": "c"}, []string{"-t", "c"}},
	{map[string]any{"type": "docker"}, []string{"-t", "docker"}},
	{map[string]any{"type": "make"}, []string{"-t", "make"}},
	{map[string]any{"type_not": "md"}, []string{"-T", "md"}},
	{map[string]any{"type": []string{"go", "md"}, "type_not": "md"}, []string{"-t", "go", "-t", "md", "-T", "md"}},
	{map[string]any{"glob": []string{"*.go"}}, []string{"-g", "*.go"}},
	{map[string]any{"glob": []string{"*.go", "*.md"}}, []string{"-g", "*.go", "-g", "*.md"}},
	{map[string]any{"glob": []string{"!*.md"}}, []string{"-g", "!*.md"}},
	{map[string]any{"glob": []string{"!docs"}}, []string{"-g", "!docs"}},
	{map[string]any{"glob": []string{"!scripts/lib"}}, []string{"-g", "!scripts/lib"}},
	{map[string]any{"glob": []string{"scripts/**"}}, []string{"-g", "scripts/**"}},
	{map[string]any{"glob": []string{"*.sh", "!more.sh"}}, []string{"-g", "*.sh", "-g", "!more.sh"}},
	{map[string]any{"glob": []string{"!*.sh", "more.sh"}}, []string{"-g", "!*.sh", "-g", "more.sh"}},
	{map[string]any{"glob": []string{"!vendor2/"}}, []string{"-g", "!vendor2/"}},
	// A leading "/" anchors a glob at the search directory: README.md,
	// not docs/guide.md.
	{map[string]any{"glob": []string{"/*.md"}}, []string{"-g", "/*.md"}},
	{map[string]any{"glob": []string{"!/*.md"}}, []string{"-g", "!/*.md"}},
	{map[string]any{"glob": []string{"*.sh", "!/scripts/lib/*.sh"}}, []string{"-g", "*.sh", "-g", "!/scripts/lib/*.sh"}},
	{map[string]any{"type": "go", "glob": []string{"!*_test.go"}}, []string{"-t", "go", "-g", "!*_test.go"}},
}

// TestFilterAgainstRipgrep: Glob's files and Grep's files with matches
// under type, type_not and glob equal ripgrep's under -t, -T and -g.
func TestFilterAgainstRipgrep(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	root := testtree.Write(t, filterFixture)
	tools := newToolsExt(t, root)
	for _, c := range filterCases {
		want := diffRgFiles(t, rg, root, ".", c.rg...)
		if len(want) == 0 {
			t.Fatalf("rg %q listed nothing: a case that cannot fail", c.rg)
		}
		args := map[string]any{"pattern": "**", "limit": tool.GlobMaxLimit}
		for k, v := range c.args {
			args[k] = v
		}
		env := diffRun(t, tools, tool.Glob, args)
		if got := env.Data.(*envelope.GlobData).Paths; !slices.Equal(got, want) {
			t.Errorf("Glob %v = %q, rg %q lists %q", c.args, got, c.rg, want)
		}
		args["pattern"] = "todo"
		args["output_mode"] = envelope.ModeFiles
		args["limit"] = tool.GrepMaxLimit
		env = diffRun(t, tools, tool.Grep, args)
		got := slices.Sorted(slices.Values(env.Data.(*envelope.GrepData).Files))
		if !slices.Equal(got, want) {
			t.Errorf("Grep %v = %q, rg %q lists %q", c.args, got, c.rg, want)
		}
	}
}

// TestFilterErrors: an unknown type or a bad glob is an invalid
// parameter, named.
func TestFilterErrors(t *testing.T) {
	t.Parallel()
	tools := newToolsExt(t, testtree.Write(t, map[string]string{"a.go": "x"}))
	for _, tc := range []struct {
		tool, args, msg string
	}{
		{tool.Glob, `{"pattern":"*","type":"golang"}`, "type: unknown file type 'golang'"},
		{tool.Grep, `{"pattern":"x","type_not":["go","nope"]}`, "type_not: unknown file type 'nope'"},
		{tool.Grep, `{"pattern":"x","glob":["[x"]}`, "Invalid glob '[x'."},
		{tool.Glob, `{"pattern":"*","type":3}`, "type must be a list of strings."},
	} {
		env := tools.Run(t.Context(), tc.tool, ".", []byte(tc.args))
		if env.Status != envelope.StatusError || env.Error.Code != envelope.CodeInvalidParam || !startsWith(env.Error.Message, tc.msg) {
			t.Errorf("%s %s: %s %v, want INVALID_PARAM starting %q", tc.tool, tc.args, env.Status, env.Error, tc.msg)
		}
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func newToolsExt(t *testing.T, root string) *query.Tools {
	t.Helper()
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return query.NewDirect(ws)
}

// TestInvertAgainstRipgrep: invert_match selects the lines rg -v selects
// (empty lines, a last line without a newline, CRLF lines, a line longer
// than a scan window), in every output mode.
func TestInvertAgainstRipgrep(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	long := strings.Repeat("x", 300<<10)
	root := testtree.Write(t, map[string]string{
		"a.txt":     "alpha\n\nbeta\nALPHA beta\ngamma",
		"b.txt":     "alpha\nalpha\n",
		"c.txt":     "one\r\ntwo alpha\r\n\r\nthree\r\n",
		"d.txt":     "",
		"long.txt":  long + "\nalpha\n" + long + "alpha\nlast\n",
		"e/f.go":    "package f\n\n// alpha\nfunc F() {}\n",
		"e/only.go": "alpha\n",
	})
	tools := newToolsExt(t, root)
	for _, pat := range []string{"alpha", "^$", "a", "zzz"} {
		want := diffRgGrep(t, rg, root, diffGrep{Pattern: pat, RgPattern: pat, RgExtra: []string{"--invert-match"}})
		env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": pat, "invert_match": true, "limit": tool.GrepMaxLimit})
		got := map[diffPair]bool{}
		for _, m := range env.Data.(*envelope.GrepData).Matches {
			got[diffPair{m.File, m.Line}] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("invert %q: got %v\nrg -v: %v", pat, diffPairs(slices.Collect(maps.Keys(got))), diffPairs(slices.Collect(maps.Keys(want))))
		}
		files := map[string]int{}
		for p := range want {
			files[p.File]++
		}
		env = diffRun(t, tools, tool.Grep, map[string]any{"pattern": pat, "invert_match": true, "output_mode": "count", "limit": tool.GrepMaxLimit})
		gotCounts := map[string]int{}
		for _, c := range env.Data.(*envelope.GrepData).Counts {
			gotCounts[c.File] = c.Count
		}
		if !maps.Equal(gotCounts, files) {
			t.Errorf("invert %q counts: got %v, rg -v: %v", pat, gotCounts, files)
		}
	}
	env := tools.Run(t.Context(), tool.Grep, ".", []byte(`{"pattern":"x","invert_match":true,"multiline":true}`))
	if env.Status != envelope.StatusError || env.Error.Message != "invert_match cannot be combined with multiline." {
		t.Errorf("invert with multiline: %s %v", env.Status, env.Error)
	}
}

// TestSink: an unlimited query with a Sink hands every result over in the
// answer's order, in batches of at most BatchSize, and its envelope holds
// none while its text and status count them; beyond tool.GlobMaxLimit and
// tool.GrepMaxLimit.
func TestSink(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 1500 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%30, i)] = "x needle\nneedle y\n"
	}
	root := testtree.Write(t, files)
	tools := newToolsExt(t, root)
	var batches []query.Batch
	tools.Unlimited = true
	tools.Sink = func(b query.Batch) { batches = append(batches, b) }

	env := diffRun(t, tools, tool.Glob, map[string]any{"pattern": "**/*.txt", "limit": 0})
	var paths []string
	for _, b := range batches {
		if len(b.Paths) == 0 || len(b.Paths) > query.BatchSize || b.Cwd != "." {
			t.Fatalf("Glob batch of %d paths, cwd %q", len(b.Paths), b.Cwd)
		}
		paths = append(paths, b.Paths...)
	}
	if len(paths) != 1500 || !slices.IsSorted(paths) {
		t.Fatalf("Glob streamed %d paths (sorted: %v), want 1500 in order", len(paths), slices.IsSorted(paths))
	}
	if d := env.Data.(*envelope.GlobData); len(d.Paths) != 0 || d.Truncated || env.Status != envelope.StatusSuccess ||
		!strings.HasPrefix(env.Text, "Found 1500 files matching") {
		t.Fatalf("Glob envelope: %s, %d paths, %q", env.Status, len(d.Paths), env.Text)
	}

	batches = nil
	env = diffRun(t, tools, tool.Grep, map[string]any{"pattern": "needle", "limit": 0, "timeout_ms": 60000})
	var got []envelope.GrepMatch
	for _, b := range batches {
		got = append(got, b.Matches...)
	}
	tools.Sink, tools.Unlimited = nil, false
	var want []envelope.GrepMatch
	for _, dir := range []string{"d00", "d01", "d02"} { // under tool.GrepMaxLimit each
		w := diffRun(t, tools, tool.Grep, map[string]any{"pattern": "needle", "limit": tool.GrepMaxLimit, "path": dir})
		want = append(want, w.Data.(*envelope.GrepData).Matches...)
	}
	if len(got) != 3000 {
		t.Fatalf("Grep streamed %d matches, want 3000", len(got))
	}
	sub := slices.DeleteFunc(slices.Clone(got), func(m envelope.GrepMatch) bool {
		return !strings.HasPrefix(m.File, "d00/") && !strings.HasPrefix(m.File, "d01/") && !strings.HasPrefix(m.File, "d02/")
	})
	slices.SortStableFunc(sub, func(a, b envelope.GrepMatch) int { return strings.Compare(a.File[:3], b.File[:3]) })
	if !slices.EqualFunc(sub, want, func(a, b envelope.GrepMatch) bool { return a.File == b.File && a.Line == b.Line && a.Text == b.Text }) {
		t.Errorf("streamed matches differ from the answers' order")
	}
	if d := env.Data.(*envelope.GrepData); len(d.Matches) != 0 || env.Status != envelope.StatusSuccess ||
		!strings.HasPrefix(env.Text, "Found 3000 matches in 1500 files") {
		t.Fatalf("Grep envelope: %s, %d matches, %q", env.Status, len(d.Matches), env.Text)
	}
}

// TestBOMAgainstRipgrep: a UTF-8 byte-order mark is not part of the first
// line, as ripgrep reads it: "^package" matches, the text has no BOM;
// also when the file is read in chunks (over a chunk long) and as one
// multiline buffer. The tools run under the command line's rules, with
// no time limit: the race detector on a loaded machine took over the
// default 2 s for big.go's 60,000 lines, and how long a scan takes is not
// what is tested here.
func TestBOMAgainstRipgrep(t *testing.T) {
	t.Parallel()
	rg := diffRg(t)
	bom := "\xef\xbb\xbf"
	root := testtree.Write(t, map[string]string{
		"a.go":    bom + "package a\n",
		"big.go":  bom + "package big\n" + strings.Repeat("// filler line of text\n", 60000) + "package again\n",
		"none.go": "package none\n",
		"mid.txt": "x" + bom + "package not at the start\n",
	})
	tools := newToolsExt(t, root)
	tools.Unlimited = true // no time limit
	for _, pat := range []string{"^package", "^\\S+ a$", "^.{0,1}package"} {
		want := diffRgGrep(t, rg, root, diffGrep{Pattern: pat, RgPattern: pat, CaseSensitive: true})
		env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": pat, "case_sensitive": true, "limit": tool.GrepMaxLimit})
		got := map[diffPair]bool{}
		for _, m := range env.Data.(*envelope.GrepData).Matches {
			got[diffPair{m.File, m.Line}] = true
			if strings.HasPrefix(m.Text, bom) {
				t.Errorf("%q: %s:%d text %q holds the BOM", pat, m.File, m.Line, m.Text)
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%q: got %v\nrg: %v", pat, diffPairs(slices.Collect(maps.Keys(got))), diffPairs(slices.Collect(maps.Keys(want))))
		}
	}
	env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": "^package a\\n", "multiline": true, "case_sensitive": true})
	if ms := env.Data.(*envelope.GrepData).Matches; len(ms) != 1 || ms[0].File != "a.go" || ms[0].Line != 1 {
		t.Errorf("multiline ^ after a BOM: %+v", ms)
	}
}

// TestBlankPatterns: Glob refuses a pattern of blanks as missing (as
// gemini-cli's Glob does); Grep searches for them, as rg does.
func TestBlankPatterns(t *testing.T) {
	t.Parallel()
	tools := newToolsExt(t, testtree.Write(t, map[string]string{"a.txt": "a b\n", "c.txt": "c\n"}))
	for _, pat := range []string{" ", "  \t"} {
		env := tools.Run(t.Context(), tool.Glob, ".", []byte(fmt.Sprintf(`{"pattern":%q}`, pat)))
		if env.Status != envelope.StatusError || env.Error.Message != "Missing required parameter 'pattern'." {
			t.Errorf("Glob %q: %s %v", pat, env.Status, env.Error)
		}
	}
	env := diffRun(t, tools, tool.Grep, map[string]any{"pattern": " "})
	if ms := env.Data.(*envelope.GrepData).Matches; len(ms) != 1 || ms[0].File != "a.txt" {
		t.Errorf("Grep ' ': %+v", ms)
	}
}
