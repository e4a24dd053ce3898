package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/rpc"
)

// The socket protocol's reference, docs/protocol.md, is pinned here:
// its example sessions are run against a daemon serving the fixture
// below and must get the answers the document shows, the methods and
// params it documents must be those of the code, and so must its error
// codes. go test ./daemon -run TestProtocolDoc -update rewrites the
// sessions' answers from the daemon's.

var updateDoc = flag.Bool("update", false, "rewrite the answers of docs/protocol.md's sessions with the daemon's")

const (
	protocolDoc = "../docs/protocol.md"
	// docRoot is the root the document's sessions name; the test's
	// fixture stands in for it.
	docRoot = "/home/ann/proj"
	// The daemon's build and version, and its directories, in the
	// sessions.
	docBuild     = "0123abcd"
	docVersion   = "v1.0.0"
	docStateDir  = "/home/ann/.local/state/indexd"
	docSocketDir = "/run/user/1000/indexd"
)

// protocolFixture is the tree at docRoot, with its files' mtimes (days
// after docEpoch), so that Grep's order is fixed.
var protocolFixture = []struct {
	path, content string
	day           int
}{
	{"README.md", "# proj\n\nRun it with go run ./cmd/app.\n", 1},
	{"go.mod", "module example.com/proj\n", 1},
	{"cmd/app/main.go", "package main\n\nimport \"example.com/proj/server\"\n\nfunc main() {\n\tserver.Run()\n}\n", 3},
	{"server/server.go", "package server\n\n// Run serves until stopped.\nfunc Run() {}\n", 4},
	{"server/server_test.go", "package server\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { Run() }\n", 2},
	{".ignore", "*.log\n", 1},
	{"debug.log", "func main was here\n", 5},
}

var docEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// exchange is one request of a session and the lines answering it.
type exchange struct {
	request   string
	line      int      // the request's line in the document (1-based)
	responses []string // the ← lines after it
}

// session is one fenced block of → and ← lines, run on one connection.
type session struct {
	exchanges []exchange
}

// parseSessions returns the sessions of doc: the fenced blocks whose
// first line starts with "→ ".
func parseSessions(t *testing.T, doc string) []session {
	t.Helper()
	var sessions []session
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "→ ") {
			continue
		}
		var s session
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			switch l := lines[i]; {
			case strings.HasPrefix(l, "→ "):
				s.exchanges = append(s.exchanges, exchange{request: strings.TrimPrefix(l, "→ "), line: i + 1})
			case strings.HasPrefix(l, "← ") && len(s.exchanges) > 0:
				e := &s.exchanges[len(s.exchanges)-1]
				e.responses = append(e.responses, strings.TrimPrefix(l, "← "))
			default:
				t.Fatalf("%s:%d: a session's line is neither a request (→) nor an answer (←): %q", protocolDoc, i+1, l)
			}
		}
		sessions = append(sessions, s)
	}
	return sessions
}

// expectsAnswer reports whether a request is answered: anything but a
// JSON object without an id (a notification).
func expectsAnswer(req string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(req), &m) != nil {
		return true
	}
	_, ok := m["id"]
	return ok
}

// isResponse reports whether a line is a response (not a notification).
func isResponse(line string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return true
	}
	_, res := m["result"]
	_, e := m["error"]
	return res || e
}

// The values that differ from run to run: masked on both sides before
// they are compared.
var (
	maskedNumbers = regexp.MustCompile(`"(time_ms|uptime_ms|pid|ready_ms|elapsed_ms|eta_ms|rss_bytes|heap_bytes|base_bytes|index_bytes|delta_files|delta_bytes|answer_bytes|answer_peak_bytes|heap_returns)":\d+`)
	maskedStrings = regexp.MustCompile(`"(version|socket|state_dir|db|mtime)":"(?:[^"\\]|\\.)*"`)
	maskedTimes   = regexp.MustCompile(`\b\d+ms\b`)
	clockRE       = regexp.MustCompile(`"clock":"(c[A-Za-z0-9_-]+)"`)
)

func mask(line string) string {
	line = maskedNumbers.ReplaceAllString(line, `"$1":0`)
	line = maskedStrings.ReplaceAllString(line, `"$1":""`)
	return maskedTimes.ReplaceAllString(line, "0ms")
}

// docTokens maps the clock tokens of the document to the daemon's and
// back: the sessions give an earlier answer's token in a later request.
type docTokens struct{ toDaemon, toDoc map[string]string }

// learn pairs the tokens of a document's answer with the daemon's.
func (k *docTokens) learn(doc, got string) {
	d, g := clockRE.FindAllStringSubmatch(doc, -1), clockRE.FindAllStringSubmatch(got, -1)
	for i := range min(len(d), len(g)) {
		if _, ok := k.toDoc[g[i][1]]; !ok {
			k.toDoc[g[i][1]] = d[i][1]
			k.toDaemon[d[i][1]] = g[i][1]
		}
	}
}

func replaceAll(s string, m map[string]string) string {
	for from, to := range m {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

// writeProtocolFixture writes the fixture and returns its real path.
func writeProtocolFixture(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range protocolFixture {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		when := docEpoch.Add(time.Duration(f.day) * 24 * time.Hour)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProtocolDoc runs every session of docs/protocol.md on a daemon of
// its own, in the document's order, one connection per session, and
// compares each answer with the document's (times, sizes, paths of the
// daemon's files and clock tokens masked).
func TestProtocolDoc(t *testing.T) {
	raw, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	sessions := parseSessions(t, doc)
	if len(sessions) == 0 {
		t.Fatalf("%s has no session", protocolDoc)
	}
	root := writeProtocolFixture(t)
	td := startDaemon(t, Config{Build: docBuild, Version: docVersion})
	tokens := docTokens{toDaemon: map[string]string{}, toDoc: map[string]string{}}
	// The daemon's answers name the document's root, and its files
	// where a user's daemon keeps them.
	fromDaemon := strings.NewReplacer(
		td.cfg.StateDir, docStateDir,
		filepath.Dir(td.cfg.SocketPath), docSocketDir,
		DBName(root), DBName(docRoot),
		root, docRoot,
	).Replace

	var rewritten []string // the document's lines, with the daemon's answers
	lines := strings.Split(doc, "\n")
	next := 0 // the next line of the document to copy
	for _, s := range sessions {
		conn, err := net.Dial("unix", td.cfg.SocketPath)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		for _, ex := range s.exchanges {
			req := strings.ReplaceAll(replaceAll(ex.request, tokens.toDaemon), docRoot, root)
			conn.SetDeadline(time.Now().Add(wait))
			if _, err := io.WriteString(conn, req+"\n"); err != nil {
				t.Fatalf("%s:%d: %v", protocolDoc, ex.line, err)
			}
			var got []string
			for expectsAnswer(ex.request) {
				l, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("%s:%d: reading the answer: %v (read so far: %q)", protocolDoc, ex.line, err, got)
				}
				l = strings.TrimSuffix(l, "\n")
				got = append(got, l)
				if isResponse(l) {
					break
				}
			}
			rewritten = append(rewritten, lines[next:ex.line]...)
			next = ex.line + len(ex.responses)
			for i, g := range got {
				g = fromDaemon(g)
				if i < len(ex.responses) {
					tokens.learn(ex.responses[i], g)
				}
				g = replaceAll(g, tokens.toDoc)
				if *updateDoc {
					rewritten = append(rewritten, "← "+g)
					continue
				}
				if i >= len(ex.responses) {
					t.Errorf("%s:%d: %s\nis answered by a line the document lacks:\n%s", protocolDoc, ex.line, ex.request, g)
					continue
				}
				if mask(g) != mask(ex.responses[i]) {
					t.Errorf("%s:%d: %s\nis answered\n%s\nnot as the document says\n%s", protocolDoc, ex.line+1+i, ex.request, g, ex.responses[i])
				}
			}
			if !*updateDoc && len(got) < len(ex.responses) {
				t.Errorf("%s:%d: %s\nis answered by %d lines, not %d", protocolDoc, ex.line, ex.request, len(got), len(ex.responses))
			}
		}
		conn.Close()
	}
	if *updateDoc {
		rewritten = append(rewritten, lines[next:]...)
		if err := os.WriteFile(protocolDoc, []byte(strings.Join(rewritten, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProtocolDocMethods checks that the document's method sections are
// the daemon's methods, each shown in a session, and that each section's
// params table names the fields of its params type.
func TestProtocolDocMethods(t *testing.T) {
	raw, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	d := newDaemon(context.Background(), Config{}.withDefaults(), slog.New(slog.DiscardHandler))
	d.blocks.Close()
	d.stop()
	var served []string
	for m := range d.methods {
		served = append(served, m)
	}
	slices.Sort(served)

	// The sections: "### `m1`, `m2`: ..." and the params table after it,
	// up to the next heading.
	heading := regexp.MustCompile("(?m)^### (`[a-z_]+`(?:, `[a-z_]+`)*)")
	names := regexp.MustCompile("`([a-z_]+)`")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|")
	sections := heading.FindAllStringSubmatchIndex(doc, -1)
	documented := map[string][]string{} // method → its params
	var methods []string
	for i, s := range sections {
		end := len(doc)
		if i+1 < len(sections) {
			end = sections[i+1][0]
		}
		body := doc[s[1]:end]
		if h := strings.Index(body, "\n## "); h >= 0 {
			body = body[:h]
		}
		var params []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			params = append(params, m[1])
		}
		slices.Sort(params)
		for _, m := range names.FindAllStringSubmatch(doc[s[2]:s[3]], -1) {
			methods = append(methods, m[1])
			documented[m[1]] = params
		}
	}
	slices.Sort(methods)
	if !slices.Equal(methods, served) {
		t.Errorf("%s documents the methods %q; the daemon serves %q", protocolDoc, methods, served)
	}

	// Each method's params are its type's JSON fields.
	fields := func(v any, drop ...string) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" && !slices.Contains(drop, name) {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	want := map[string][]string{
		rpc.MethodPing:     fields(rpc.PingParams{}),
		rpc.MethodStatus:   fields(rpc.RootParams{}, "wait"), // status reads root only
		rpc.MethodIndex:    fields(rpc.RootParams{}),
		rpc.MethodForget:   fields(rpc.RootParams{}, "wait"), // forget reads root only
		rpc.MethodShutdown: nil,
	}
	for _, m := range served {
		w, ok := want[m]
		if !ok {
			if _, isTool := rpc.ToolForMethod(m); !isTool {
				t.Errorf("method %s: this test does not know its params type", m)
				continue
			}
			w = fields(rpc.ToolParams{})
		}
		if got := documented[m]; !slices.Equal(got, w) {
			t.Errorf("%s: the params of %s are documented as %q; the code's are %q", protocolDoc, m, got, w)
		}
	}

	// Every method is shown in a session.
	shown := map[string]bool{}
	for _, s := range parseSessions(t, doc) {
		for _, ex := range s.exchanges {
			var req struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(ex.request), &req) == nil {
				shown[req.Method] = true
			}
		}
	}
	for _, m := range served {
		if !shown[m] {
			t.Errorf("%s: no session shows %s", protocolDoc, m)
		}
	}
}

// TestProtocolDocErrorCodes checks that the document's table of error
// codes lists exactly the JSON-RPC error codes the module declares:
// every constant Code... whose value is in JSON-RPC's range
// (-32768 to -32000).
func TestProtocolDocErrorCodes(t *testing.T) {
	raw, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	var documented []int
	for _, m := range regexp.MustCompile("(?m)^\\| `(-32[0-9]{3})` \\|").FindAllStringSubmatch(string(raw), -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	slices.Sort(documented)

	declared := map[int][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir("..", func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			if n := de.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					if n, ok := intLiteral(vs.Values[i]); ok && n >= -32768 && n <= -32000 {
						declared[n] = append(declared[n], fmt.Sprintf("%s (%s)", name.Name, path))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for n := range declared {
		codes = append(codes, n)
	}
	slices.Sort(codes)
	if !slices.Equal(documented, codes) {
		t.Errorf("%s's table of error codes lists %v; the code declares %v:\n%v", protocolDoc, documented, codes, declared)
	}
}

// intLiteral returns the value of an integer literal, negated or not.
func intLiteral(e ast.Expr) (int, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	n, err := strconv.Atoi(lit.Value)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
