package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/indexd/indexd/index"
)

// The index must answer exactly what the walk answers. These tests run the
// same queries through Walker and Indexed and compare whole envelopes,
// except the work statistics (time_ms, visited, files_scanned,
// binary_skipped, candidates) and the timing in the text.

var engineTimingRE = regexp.MustCompile(`(Scanned \d+ items in \d+ms|Took \d+ms|timed out after \d+ms)`)

// comparable returns the envelope as generic JSON without the fields that
// legitimately differ between the engines.
func comparableEnvelope(t *testing.T, tools *Tools, tool, args string) map[string]any {
	t.Helper()
	e := tools.Run(context.Background(), tool, ".", json.RawMessage(args))
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	st := m["stats"].(map[string]any)
	for _, k := range []string{"time_ms", "visited", "files_scanned", "binary_skipped", "candidates"} {
		delete(st, k)
	}
	m["text"] = engineTimingRE.ReplaceAllString(m["text"].(string), "<timing>")
	return m
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
	if w["status"] == "error" {
		t.Logf("%s %s: error: %v", tool, args, w["text"])
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
	ix, err := index.Build(context.Background(), ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewDirect(ws), &Tools{WS: ws, Searcher: Indexed{Index: ix}}
}

func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return runtime.GOROOT()
	}
	return strings.TrimSpace(string(out))
}

func TestIndexEqualsWalkGOROOT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of GOROOT/src")
	}
	walk, idx := buildTools(t, goroot(t)+"/src")
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
		cases = append(cases, [2]string{ToolGrep, string(b)})
	}
	for _, g := range []string{`**/*.go`, `**/testdata/**/*.json`, `**/internal/**/*.go`, `net/http/*.go`, `*.go`,
		`**/*_test.go`, `cmd/**/main.go`, `**/*.{s,h}`, `**/README*`, `go/*/*.go`, `**/.hidden*`, `**/[A-Z]*.go`} {
		for _, extra := range []string{``, `,"limit":200`, `,"case_sensitive":false`, `,"path":"cmd"`, `,"include_hidden":true`} {
			cases = append(cases, [2]string{ToolGlob, fmt.Sprintf(`{"pattern":%q%s}`, g, extra)})
		}
	}
	for _, c := range cases {
		diffEngines(t, walk, idx, c[0], c[1])
	}
}
