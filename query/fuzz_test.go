package query

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/envelope/envelopetest"
	"github.com/indexd/indexd/tool"
)

// Fuzz tests. Run one for a while with, e.g.:
//
//	go test -run XXX -fuzz FuzzResolve -fuzztime 20s ./query

// FuzzResolve: Resolve never panics, and it admits exactly the paths whose
// real location (symlinks of the existing prefix resolved) is inside the
// real root, compared by components. What it returns is a clean relative
// path naming that location.
func FuzzResolve(f *testing.F) {
	fx := newEscapeFixture(f)
	ws, err := NewWorkspace(fx.root)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][2]string{
		{".", "."}, {".", ""}, {".", ".."}, {".", "../proj-evil"}, {".", "src/../../outside"},
		{".", "outdir/deeper"}, {".", "outfile"}, {".", "src/up/up/x.txt"}, {"src", "up/src/up"},
		{".", fx.root}, {".", fx.evil}, {".", fx.root + "-evil/x"}, {".", "/"}, {".", "//etc/passwd"},
		{"src", "../.."}, {"..", "proj"}, {".", "a\x00b"}, {".", "nope/../../proj/x.txt"},
		{".", "x.txt/sub"}, {".", "evillink/evil.go"}, {".", "inlink.txt"}, {"sub", "./../src/./a.go"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, cwd, p string) {
		rel, exists, e := ws.Resolve(cwd, p)
		if strings.ContainsRune(p, 0) || strings.ContainsRune(cwd, 0) {
			if e == nil || e.Code != envelope.CodeInvalidParam {
				t.Fatalf("Resolve(%q, %q) with NUL = %v", cwd, p, e)
			}
			return
		}
		// The reference: resolve independently and check containment.
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(ws.Root, cwd, p)
		}
		real, realExists := realPrefix(filepath.Clean(abs))
		inside := withinByComponents(ws.Root, real)
		if e != nil {
			if e.Code != envelope.CodeAccessDenied {
				t.Fatalf("Resolve(%q, %q): %v, want ACCESS_DENIED or success", cwd, p, e)
			}
			if inside {
				t.Fatalf("Resolve(%q, %q) denied %q, which is inside %q", cwd, p, real, ws.Root)
			}
			return
		}
		if !inside {
			t.Fatalf("Resolve(%q, %q) = %q admitted %q, outside %q", cwd, p, rel, real, ws.Root)
		}
		if rel != "." && (rel == "" || filepath.IsAbs(rel) || rel != filepath.ToSlash(filepath.Clean(rel)) ||
			rel == ".." || strings.HasPrefix(rel, "../")) {
			t.Fatalf("Resolve(%q, %q) = %q: not a clean relative path", cwd, p, rel)
		}
		joined := ws.Abs(rel)
		if joined != real {
			t.Fatalf("Resolve(%q, %q) = %q names %q, want %q", cwd, p, rel, joined, real)
		}
		if exists != realExists {
			t.Fatalf("Resolve(%q, %q): exists = %v, want %v", cwd, p, exists, realExists)
		}
		if !withinByComponents(ws.Root, joined) {
			t.Fatalf("Resolve(%q, %q) = %q: joined %q outside the root", cwd, p, rel, joined)
		}
	})
}

// realPrefix resolves the symlinks of the longest existing prefix of abs
// (clean, absolute), trying the prefixes from the longest, and appends the
// rest as it is.
func realPrefix(abs string) (string, bool) {
	comps := strings.Split(abs, string(filepath.Separator))[1:]
	if abs == string(filepath.Separator) {
		comps = nil
	}
	for i := len(comps); i >= 0; i-- {
		prefix := string(filepath.Separator) + filepath.Join(comps[:i]...)
		real, err := filepath.EvalSymlinks(prefix)
		if err != nil {
			continue
		}
		return filepath.Join(append([]string{real}, comps[i:]...)...), i == len(comps)
	}
	return abs, false
}

// withinByComponents reports whether p is root or below it, comparing path
// components.
func withinByComponents(root, p string) bool {
	rc := strings.Split(filepath.Clean(root), string(filepath.Separator))
	pc := strings.Split(filepath.Clean(p), string(filepath.Separator))
	if root == string(filepath.Separator) {
		return filepath.IsAbs(p)
	}
	if len(pc) < len(rc) {
		return false
	}
	for i := range rc {
		if rc[i] != pc[i] {
			return false
		}
	}
	return true
}

// FuzzDecodeArgs: Run with arbitrary bytes as arguments never panics and
// always answers with a valid envelope, for every tool.
func FuzzDecodeArgs(f *testing.F) {
	root := newRoot(f, fsTree{
		"a.go":              "package a\n// needle\n",
		"src/b.ts":          "export const x = 1 // needle\n",
		"src/deep/c.txt":    "needle\r\nline two\n",
		".hidden/h.txt":     "needle\n",
		"node_modules/m.js": "needle\n",
		"bin.dat":           "needle\x00\n",
		"link.go":           "->a.go",
		"broken":            "->nope",
	})
	if err := os.WriteFile(filepath.Join(root, "long.txt"), []byte(strings.Repeat("x", 3000)+"needle\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	tools := newTools(f, root)
	for _, s := range []string{
		`{"pattern":"**/*.go"}`, `{"pattern":"needle","context":2}`, `{"path":"src"}`, `{}`, `null`, ``, `[]`,
		`{"pattern":5}`, `{"pattern":"(","limit":1.5}`, `{"pattern":"x","path":"../.."}`, `{"pattern":"a\nb","multiline":true}`,
		`{"pattern":"needle","output_mode":"count","include":"*.{go,ts}"}`, `{"ignore":["**/*.txt"],"offset":1,"limit":1}`,
		`{"pattern":"**","sort":"recent","include_hidden":true,"include_ignored":true}`, "{\"pattern\":\"\\u0000\"}",
		`{"pattern":"x","path":"a.go"}`, `{"pattern":"x","timeout_ms":1}`, `{"a":{"b":[1,2,{"c":null}]}}`, `"str"`, `1e999`,
		"{\"pattern\":\"\xff\"}", `{"pattern":"needle","fixed_strings":true,"case_sensitive":true}`,
	} {
		for kind := range uint8(4) {
			f.Add(kind, []byte(s))
		}
	}
	names := []string{tool.Glob, tool.Grep, tool.LS, "Other"}
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		name := names[int(kind)%len(names)]
		e := tools.Run(context.Background(), name, ".", json.RawMessage(raw))
		js, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("%s %q: marshal: %v", name, raw, err)
		}
		envelopetest.Validate(t, js)
		// json.Marshal (which re-checks the marshaller's output) agrees.
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("%s %q: json.Marshal: %v", name, raw, err)
		}
		if json.Valid(raw) {
			var back struct {
				Context struct {
					ParamsInput json.RawMessage `json:"params_input"`
				} `json:"context"`
			}
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, raw); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Context.ParamsInput, want.Bytes()) {
				t.Fatalf("%s: params_input %s, want %s", name, back.Context.ParamsInput, raw)
			}
		}
	})
}
