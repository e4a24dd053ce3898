package envelope

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The fallback reasons are a closed set: every constant of type
// FallbackReason in this package is in FallbackReasons (and the other way
// round), each has its own value, and each is documented in
// docs/product.md's table of reasons.
func TestFallbackReasonsClosed(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []FallbackReason
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "FallbackReason" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: a FallbackReason constant that is not a literal", fset.Position(v.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					declared = append(declared, FallbackReason(s))
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("no FallbackReason constants found")
	}
	listed := slices.Clone(FallbackReasons)
	slices.Sort(declared)
	slices.Sort(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("FallbackReason constants %q, FallbackReasons %q: they must be the same set", declared, listed)
	}
	if len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("FallbackReasons holds a value twice: %q", listed)
	}
	doc, err := os.ReadFile("../docs/product.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range FallbackReasons {
		if !strings.Contains(string(doc), "| `"+string(r)+"` |") {
			t.Errorf("fallback reason %q is not in docs/product.md's table of reasons", r)
		}
	}
}
