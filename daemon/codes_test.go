package daemon

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every JSON-RPC error code the daemon or the protocol can answer means
// one thing: no two share a number. The constants are found in the
// source (every const named Code… with a negative literal value in rpc/,
// rpc/server/ and daemon/), so a new code is checked without being listed here.
func TestErrorCodesUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]string{} // value -> constant
	for _, dir := range []string{"../rpc", "../rpc/server", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok || len(vs.Values) != len(vs.Names) {
					return true
				}
				for i, name := range vs.Names {
					u, ok := vs.Values[i].(*ast.UnaryExpr)
					if !ok || u.Op != token.SUB || !strings.HasPrefix(name.Name, "Code") {
						continue
					}
					lit, ok := u.X.(*ast.BasicLit)
					if !ok {
						continue
					}
					v := "-" + lit.Value
					if other, dup := seen[v]; dup {
						t.Errorf("%s and %s are both %s", name.Name, other, v)
					}
					seen[v] = name.Name
				}
				return true
			})
		}
	}
	if len(seen) < 8 {
		t.Fatalf("found only %d error codes (%v): the scan is broken", len(seen), seen)
	}
}
