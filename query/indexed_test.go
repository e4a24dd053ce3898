package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/glob"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// The index must answer exactly what the walk answers. These tests run the
// same queries through Walker and Indexed and compare whole envelopes,
// except the work statistics (time_ms, visited, files_scanned,
// binary_skipped, candidates) and the timing in the text.

// comparableEnvelope runs the query and returns its envelope in the
// form two engines' answers compare equal in (envelopetest.EngineNeutral).
func comparableEnvelope(t *testing.T, tools *Tools, tool, args string) map[string]any {
	t.Helper()
	return envelopetest.EngineNeutral(t, tools.Run(context.Background(), tool, ".", json.RawMessage(args)))
}

func diffEngines(t *testing.T, walk, idx *Tools, tool, args string) {
	t.Helper()
	w := comparableEnvelope(t, walk, tool, args)
	i := comparableEnvelope(t, idx, tool, args)
	if !reflect.DeepEqual(w, i) {
		wb, _ := json.MarshalIndent(w, "", " ")
		ib, _ := json.MarshalIndent(i, "", " ")
		t.Errorf("%s %s: index differs from walk\nwalk:  %s\nindex: %s", tool, args, trim(wb), trim(ib))
	}
	if testing.Verbose() {
		t.Logf("%s %s -> %s: %s", tool, args, w["status"], strings.ReplaceAll(w["text"].(string), "\n", " | "))
	}
}

func trim(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "…"
	}
	return string(b)
}

func buildTools(t testing.TB, root string) (walk, idx *Tools) {
	t.Helper()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	// The index's clock an hour ahead: the files a test has just written
	// are not Racy, which the index would tell every eighth of.
	ahead := time.Now().Add(time.Hour)
	ix, _, err := index.OpenOrBuild(context.Background(), filepath.Join(t.TempDir(), "ix.db"), ws.Root, &index.OpenOptions{Now: func() time.Time { return ahead }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	// Every candidate the index places in some of its eighths is probed
	// there (grep/probe.go), whatever its size.
	sz := grep.DefaultSizes()
	sz.ProbeMin = 0
	return NewDirect(ws), &Tools{WS: ws, Searcher: Indexed{Index: ix}, GrepSizes: &sz}
}

// gorootTools returns the walk and index tools of GOROOT/src, built once
// for all the tests that share them (a build under -race takes seconds).
func gorootTools(t testing.TB) (walk, idx *Tools) {
	gorootOnce.Do(func() {
		ws, err := NewWorkspace(goroot(t) + "/src")
		if err != nil {
			gorootOnce.err = err
			return
		}
		ix, err := index.Build(context.Background(), ws.Root, nil)
		if err != nil {
			gorootOnce.err = err
			return
		}
		// With block filters: GOROOT holds large files dense in trigrams.
		gorootOnce.walk, gorootOnce.idx = NewDirect(ws), &Tools{WS: ws, Searcher: Indexed{Index: ix, Blocks: index.NewBlockCache(index.DefaultBlockCacheBytes)}}
	})
	if gorootOnce.err != nil {
		t.Fatal(gorootOnce.err)
	}
	return gorootOnce.walk, gorootOnce.idx
}

var gorootOnce struct {
	sync.Once
	walk, idx *Tools
	err       error
}

func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("go env GOROOT:", err)
	}
	return strings.TrimSpace(string(out))
}

func TestIndexEqualsWalkGOROOT(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds an index of GOROOT/src")
	}
	if testtree.RaceEnabled {
		t.Skip("a comparison over GOROOT/src: CI runs it without -race (.ci/run), where it checks answers, not races")
	}
	walk, idx := gorootTools(t)
	var cases [][2]string
	greps := []string{
		`xyzzy_not_there`, `func main`, `func \w+Handler\(`, `(?i)deadbeef`, `^package main$`,
		`TODO|FIXME`, `\bsync\.Mutex\b`, `[A-Z]{5}_[0-9]+`, `\w+\d{4}\w*`, `errors\.Is\(err, `,
		`a`, `^$`, `(?i)REFLECT\.VALUEOF`, `"net/http"`, `unsafe\.Pointer\(&`, `fmt\.Errorf\("%w`,
		`runtime\.GOOS == "windows"`, `0x[0-9a-f]{16}`, `//go:build`, `Copyright 20(09|1[0-9])`,
	}
	includes := []string{"", "*.go", "*_test.go", "*.{s,c,h}", "**/testdata/**"}
	paths := []string{".", "net/http", "cmd/go/internal", "go"}
	for i, g := range greps {
		// A timeout far beyond any run, so -race cannot turn a case partial.
		args := map[string]any{"pattern": g, "timeout_ms": 60000}
		if inc := includes[i%len(includes)]; inc != "" {
			args["include"] = inc
		}
		if p := paths[i%len(paths)]; p != "." {
			args["path"] = p
		}
		if i%3 == 0 {
			args["case_sensitive"] = true
		}
		if i%4 == 1 {
			args["limit"] = 7
		}
		if i%5 == 2 {
			args["output_mode"] = []string{"files_with_matches", "count"}[i%2]
		}
		b, _ := json.Marshal(args)
		cases = append(cases, [2]string{tool.Grep, string(b)})
	}
	for _, g := range []string{`**/*.go`, `**/testdata/**/*.json`, `**/internal/**/*.go`, `net/http/*.go`, `*.go`,
		`**/*_test.go`, `cmd/**/main.go`, `**/*.{s,h}`, `**/README*`, `go/*/*.go`, `**/.hidden*`, `**/[A-Z]*.go`} {
		for _, extra := range []string{``, `,"limit":200`, `,"case_sensitive":false`, `,"path":"cmd"`, `,"include_hidden":true`} {
			cases = append(cases, [2]string{tool.Glob, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	// The filters (type, type_not, glob) select the same files from the
	// index as from the walk.
	for _, f := range []string{`"type":"go"`, `"type":["c","asm"]`, `"type_not":"go"`, `"glob":["*.go","!*_test.go"]`,
		`"glob":["!internal"]`, `"type":"go","glob":["!**/testdata/**"]`} {
		cases = append(cases,
			[2]string{tool.Glob, `{"pattern":"**","limit":200,"path":"net",` + f + `}`},
			[2]string{tool.Grep, `{"pattern":"TODO","timeout_ms":60000,"output_mode":"files_with_matches","limit":1000,` + f + `}`})
	}
	// invert_match reads every file the index holds.
	for _, a := range []string{`"pattern":"e","path":"net/http","output_mode":"count"`, `"pattern":"^package","include":"*.s","limit":300`} {
		cases = append(cases, [2]string{tool.Grep, `{"invert_match":true,"timeout_ms":60000,` + a + `}`})
	}
	for _, c := range cases {
		diffEngines(t, walk, idx, c[0], c[1])
	}
}

// Generated queries on GOROOT/src: literals cut from random lines (so of
// every rarity), turned into regexes in several ways, with and without
// (?i), include, path, limits and output modes.
func TestIndexEqualsWalkGeneratedGOROOT(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds an index of GOROOT/src")
	}
	if testtree.RaceEnabled {
		t.Skip("a comparison over GOROOT/src: CI runs it without -race (.ci/run), where it checks answers, not races")
	}
	walk, idx := gorootTools(t)
	root := walk.WS.Root
	n := 300
	r := rand.New(rand.NewPCG(11, 12))
	var files []string
	idx.Searcher.(Indexed).Index.CandidateLines(index.CandidateOptions{}, func(f *index.File, _ index.Eighths) bool {
		if strings.HasSuffix(f.Path, ".go") && f.Size > 200 && f.Size < 50000 {
			files = append(files, f.Path)
		}
		return true
	})
	if len(files) < 1000 {
		t.Fatalf("only %d .go files in %s", len(files), root)
	}
	for i := 0; i < n; i++ {
		file := files[r.IntN(len(files))]
		data, err := os.ReadFile(root + "/" + file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		line := strings.TrimSpace(lines[r.IntN(len(lines))])
		if len(line) < 6 {
			i--
			continue
		}
		a := r.IntN(len(line) - 4)
		lit := line[a : a+4+r.IntN(min(16, len(line)-a-4)+1)]
		pat := regexp.QuoteMeta(lit)
		switch r.IntN(6) {
		case 1: // a wildcard in the middle
			m := len(pat) / 2
			pat = pat[:m] + `.*` + pat[m:]
		case 2: // alternation with a rare literal
			pat = "(" + pat + "|xyzzy_rare)"
		case 3: // anchored
			pat = "^\\s*" + pat
		case 4: // a class
			pat = "[a-zA-Z_]" + pat
		}
		args := map[string]any{"pattern": pat, "timeout_ms": 60000}
		if r.IntN(2) == 0 {
			args["case_sensitive"] = true
		}
		if r.IntN(3) == 0 {
			args["include"] = []string{"*.go", "*_test.go", "*.{go,s}", "**/internal/**"}[r.IntN(4)]
		}
		if r.IntN(3) == 0 {
			args["path"] = strings.SplitN(file, "/", 2)[0]
		}
		args["limit"] = []int{1, 5, 100, 1000}[r.IntN(4)]
		if r.IntN(5) == 0 {
			args["output_mode"] = []string{"files_with_matches", "count"}[r.IntN(2)]
		}
		b, _ := json.Marshal(args)
		diffEngines(t, walk, idx, tool.Grep, string(b))
	}
}

// A fixture with everything that makes the walk's answer subtle: nested
// .gitignore with negation, .ignore, hidden files and directories, a
// whitelisted hidden directory, default-ignored directories, binary files,
// symlinks inside and outside the root, mtimes in both sort windows.
func TestIndexEqualsWalkFixture(t *testing.T) {
	t.Parallel()
	outside := newRoot(t, fsTree{"secret.txt": "needle outside\n"})
	root := newRoot(t, fsTree{
		".git/HEAD":                "ref: refs/heads/main\n",
		".gitignore":               "*.log\nout/\n!keep.log\n/anchored.txt\n",
		".ignore":                  "!.allowed/\n",
		".allowed/a.txt":           "needle allowed hidden\n",
		".allowed/.h.txt":          "needle hidden in a whitelisted directory\n",
		".allowed/.inner/x.txt":    "needle under a hidden directory in a whitelisted one\n",
		".github/workflows/c.yml":  "name: needle ci\n",
		".github/workflows/.d.yml": "name: needle, hidden under a hidden directory\n",
		".env":                     "NEEDLE=1\n",
		"src/main.go":              "package main\n\nfunc main() { needle() }\n",
		"src/util.go":              "package main\n\n// Needle helper\nfunc needle() {}\n",
		"src/.hidden/h.go":         "package h // needle\n",
		"src/.hidden/out/o.txt":    "needle in an ignored directory in a hidden one\n",
		".github/workflows/w.log":  "needle ignored in a hidden directory\n",
		".allowed/z.log":           "needle ignored in a whitelisted hidden directory\n",
		"src/sub/.gitignore":       "gen_*\n",
		"src/sub/gen_x.go":         "needle generated\n",
		"src/sub/real.go":          "needle real\n",
		"src/app.log":              "needle log\n",
		"src/keep.log":             "needle kept\n",
		"anchored.txt":             "needle anchored\n",
		"src/anchored.txt":         "needle not anchored\n",
		"out/o.txt":                "needle out\n",
		"node_modules/m/i.js":      "needle module\n",
		"build/b.txt":              "needle build\n",
		"docs/readme.md":           "# Needle docs\nmore needle\n",
		"docs/bin.dat":             "needle\x00binary",
		"link_in.txt":              "->src/util.go",
		"link_out.txt":             "->" + outside + "/secret.txt",
		"dirlink":                  "->src",
		"deep/a/b/c/d/e.txt":       "needle deep\n",
	})
	// Hidden directories holding no file: the walk reports them skipped,
	// and so must the index, which has no file of theirs to tell.
	for _, d := range []string{".empty", "src/.cache/objects", "docs/.drafts"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	setMtime(t, root, "docs/readme.md", time.Now().Add(-time.Hour))
	setMtime(t, root, "src/util.go", time.Now().Add(-2*time.Hour))
	walk, idx := buildTools(t, root)
	var cases [][2]string
	for _, g := range []string{`needle`, `(?i)NEEDLE`, `^needle`, `needle\b`, `func \w+\(`, `zzz`, `n.e.d.e`, `needle (real|kept|out)`} {
		for _, extra := range []string{``, `,"case_sensitive":true`, `,"include":"*.go"`, `,"include":"**/.github/**"`,
			`,"include_hidden":true`, `,"path":"src"`, `,"path":"src/.hidden"`, `,"path":".github"`, `,"limit":2`,
			`,"output_mode":"count"`, `,"output_mode":"files_with_matches","limit":1`, `,"context":1`, `,"include":".env"`,
			`,"include":"src/**"`} {
			cases = append(cases, [2]string{tool.Grep, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	for _, g := range []string{`**/*`, `**/*.go`, `*.txt`, `**/.github/**/*.yml`, `**/.env`, `src/**`, `**/*.log`,
		`**/e.txt`, `link_*`, `**/{main,real}.go`, `**/[a-m]*.go`, `**/zzz`, `.allowed/*`, `deep/*/b/**/*.txt`, `**/.cache/**`, `**/objects/*`} {
		for _, extra := range []string{``, `,"include_hidden":true`, `,"path":"src"`, `,"limit":3`, `,"sort":"recent"`, `,"case_sensitive":false`} {
			cases = append(cases, [2]string{tool.Glob, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	for _, c := range cases {
		diffEngines(t, walk, idx, c[0], c[1])
	}
}

// A git work tree whose default-list directories are tracked in places
// (go/build, cmd/dist, a node_modules with one package added), untracked
// in others (build/, target/, a nested repository's dist/), and a
// repository inside the tree: the index prunes and records exactly what
// the walk skips, and both name the untracked ones in every answer.
func TestIndexEqualsWalkTrackedDirs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	root := newRoot(t, fsTree{
		"go/build/build.go":            "package build\n\nfunc Import(path string) {}\n",
		"go/build/testdata/build/x.go": "package x // needle\n",
		"build/gen/build.go":           "package gen\n\nfunc Import(path string) {} // needle\n",
		"cmd/dist/main.go":             "package main // needle\n",
		"web/node_modules/left/i.js":   "needle left\n",
		"web/node_modules/right/i.js":  "needle right\n",
		"target/debug/out.txt":         "needle target\n",
		"src/a.go":                     "package src // needle\n",
		"vendor/lib/dist/d.js":         "needle in the nested repository's untracked dist\n",
		"vendor/lib/build/b.go":        "package b // needle in its tracked build\n",
		".venv/lib/site.py":            "needle venv\n",
	})
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(root, dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	git("vendor/lib", "init", "-q", "--template=")
	git("vendor/lib", "add", "build")
	git(".", "init", "-q", "--template=")
	git(".", "add", "go", "cmd", "web/node_modules/left", "src")
	walk, idx := buildTools(t, root)
	var cases [][2]string
	for _, g := range []string{`needle`, `func Import\(`, `zzz`} {
		for _, extra := range []string{``, `,"output_mode":"files_with_matches"`, `,"path":"go"`, `,"path":"web"`,
			`,"path":"vendor"`, `,"include":"*.js"`, `,"include_hidden":true`, `,"limit":1`} {
			cases = append(cases, [2]string{tool.Grep, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	for _, g := range []string{`**`, `**/*.go`, `**/build/**`, `*.txt`, `**/.venv/**`, `src/*`} {
		for _, extra := range []string{``, `,"include_hidden":true`, `,"path":"vendor"`, `,"sort":"recent"`} {
			cases = append(cases, [2]string{tool.Glob, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	for _, c := range cases {
		diffEngines(t, walk, idx, c[0], c[1])
	}
	// What they agree on is the answer docs/product.md's "What is
	// skipped" gives.
	e := idx.Run(context.Background(), tool.Grep, ".", json.RawMessage(`{"pattern":"func Import\\(","output_mode":"files_with_matches"}`))
	if want := "Found 1 files with matches for 'func Import\\(' in '.'\n(Sorted by mtime desc. Took 0ms)\n" +
		"[Info: Directories on the default ignore list were skipped: build/, target/, vendor/lib/dist/. Set include_ignored=true to search them.]\n\n" +
		"go/build/build.go"; envelopetest.Timing.ReplaceAllString(e.Text, "Took 0ms") != want {
		t.Errorf("grep -l 'func Import\\(':\n%s\nwant\n%s", e.Text, want)
	}
}

// Subtrees the index is not kept current for (Live) are walked and merged:
// after changes under them that the index never saw, answers still equal
// the walk's, and say fallback watch_limit when a live subtree was walked.
func TestIndexedLiveSubtrees(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{
		"warm/a.go":   "package warm // needle\n",
		"cold/b.go":   "package cold // needle\n",
		"cold/x/c.go": "package x\n",
		".git/HEAD":   "x\n",
	})
	walk, idx := buildTools(t, root)
	// Changes the index does not see.
	mkTree(t, root, fsTree{"cold/new.go": "package cold // needle new\n", "cold/x/c.go": "package x // needle too\n"})
	if err := os.Remove(root + "/cold/b.go"); err != nil {
		t.Fatal(err)
	}
	idx.Searcher = Indexed{Index: idx.Searcher.(Indexed).Index, Live: []string{"cold"}}
	for _, c := range [][2]string{
		{tool.Grep, `{"pattern":"needle"}`}, {tool.Grep, `{"pattern":"needle","path":"cold"}`},
		{tool.Grep, `{"pattern":"needle","path":"warm"}`}, {tool.Grep, `{"pattern":"needle","include":"c.go"}`},
		{tool.Glob, `{"pattern":"**/*.go"}`}, {tool.Glob, `{"pattern":"cold/*.go"}`}, {tool.Glob, `{"pattern":"warm/*.go"}`},
		{tool.Glob, `{"pattern":"*.go","path":"cold/x"}`},
	} {
		w := comparableEnvelope(t, walk, c[0], c[1])
		i := comparableEnvelope(t, idx, c[0], c[1])
		wd, id := w["data"].(map[string]any), i["data"].(map[string]any)
		reaches := strings.Contains(c[1], "cold") || !strings.Contains(c[1], "warm")
		if reaches && (id["fallback_used"] != true || id["fallback_reason"] != string(envelope.ReasonWatchLimit)) {
			t.Errorf("%s %s: reaches cold/ but says no watch_limit fallback: %v", c[0], c[1], id)
		}
		if !reaches && id["fallback_used"] != nil {
			t.Errorf("%s %s: stays out of cold/ but says fallback: %v", c[0], c[1], id)
		}
		delete(id, "fallback_used")
		delete(id, "fallback_reason")
		if !reflect.DeepEqual(wd, id) {
			t.Errorf("%s %s:\nwalk:  %v\nindex: %v", c[0], c[1], wd, id)
		}
	}
}

// A walk of a live subtree cut by the deadline never leaves a Grep that
// looks complete, though neither the index nor the walk gave it a file
// (Glob's walk says time_limit, Grep's timeout).
func TestIndexedLiveWalkPastDeadline(t *testing.T) {
	t.Parallel()
	root := newRoot(t, fsTree{"cold/b.go": "needle\n", "cold/x/c.go": "needle\n"})
	_, idx := buildTools(t, root)
	s := Indexed{Index: idx.Searcher.(Indexed).Index, Live: []string{"cold"}}
	m, err := grep.CompileMatcher("needle", grep.MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	q := &GrepQuery{WS: idx.WS, Dir: ".", Matcher: m, Start: past,
		Params: GrepParams{Pattern: "needle", Limit: 100, OutputMode: envelope.ModeContent, TimeoutMS: 1}}
	res, err := s.Grep(context.Background(), q)
	if err == nil && res.Run.Data.AbortedReason == "" {
		t.Fatalf("Grep with its deadline passed reports a complete search (%d matches)", len(res.Run.Data.Matches))
	}
	g, _ := glob.Compile("**", false)
	gq := &GlobQuery{WS: idx.WS, Dir: ".", Pattern: "**", Glob: g, Start: past,
		Params: GlobParams{Pattern: "**", Limit: 50, Sort: SortPath}}
	gres, err := s.Glob(context.Background(), gq)
	if err == nil && gres.Run.Data.AbortedReason == "" {
		t.Fatalf("Glob with its deadline passed reports a complete search (paths %v)", gres.Run.Data.Paths)
	}
}
