package query

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/indexd/indexd/envelope"
)

// Benchmarks of the walk engine on $(go env GOROOT)/src, the reference
// corpus. Compare runs with benchstat; never assert times in tests.

func gorootSrc(b *testing.B) *Workspace {
	b.Helper()
	ws, err := NewWorkspace(goroot(b) + "/src")
	if err != nil {
		b.Skip(err)
	}
	return ws
}

func benchTool(b *testing.B, tool, args string) {
	t := NewDirect(gorootSrc(b))
	for b.Loop() {
		e := t.Run(context.Background(), tool, ".", json.RawMessage(args))
		if e.Status == envelope.StatusError {
			b.Fatal(e.Text)
		}
	}
}

func BenchmarkWalkGrepRareLiteral(b *testing.B) {
	benchTool(b, ToolGrep, `{"pattern":"xyzzy_indexd_rare","case_sensitive":true}`)
}

func BenchmarkWalkGrepRareLiteralFold(b *testing.B) {
	benchTool(b, ToolGrep, `{"pattern":"xyzzy_indexd_rare"}`)
}

func BenchmarkWalkGrepFuncMain(b *testing.B) {
	benchTool(b, ToolGrep, `{"pattern":"func main","case_sensitive":true}`)
}

func BenchmarkWalkGrepHandler(b *testing.B) {
	benchTool(b, ToolGrep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true}`)
}

func BenchmarkWalkGlobGo(b *testing.B) {
	benchTool(b, ToolGlob, `{"pattern":"**/*.go"}`)
}

var benchIndexed *Tools

func indexedTools(b *testing.B) *Tools {
	if benchIndexed == nil {
		_, benchIndexed = buildTools(b, gorootSrc(b).Root)
	}
	return benchIndexed
}

func benchIndexedTool(b *testing.B, tool, args string) {
	t := indexedTools(b)
	for b.Loop() {
		e := t.Run(context.Background(), tool, ".", json.RawMessage(args))
		if e.Status == envelope.StatusError {
			b.Fatal(e.Text)
		}
	}
}

func BenchmarkIndexGrepRareLiteral(b *testing.B) {
	benchIndexedTool(b, ToolGrep, `{"pattern":"xyzzy_indexd_rare","case_sensitive":true}`)
}

func BenchmarkIndexGrepRareLiteralFold(b *testing.B) {
	benchIndexedTool(b, ToolGrep, `{"pattern":"xyzzy_indexd_rare"}`)
}

func BenchmarkIndexGrepFuncMain(b *testing.B) {
	benchIndexedTool(b, ToolGrep, `{"pattern":"func main","case_sensitive":true}`)
}

func BenchmarkIndexGrepHandler(b *testing.B) {
	benchIndexedTool(b, ToolGrep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true}`)
}

func BenchmarkIndexGrepNoTrigram(b *testing.B) {
	benchIndexedTool(b, ToolGrep, `{"pattern":"\\w+\\d{4}\\w*","case_sensitive":true}`)
}

func BenchmarkIndexGlobGo(b *testing.B) {
	benchIndexedTool(b, ToolGlob, `{"pattern":"**/*.go"}`)
}

func BenchmarkIndexGlobTestdataJSON(b *testing.B) {
	benchIndexedTool(b, ToolGlob, `{"pattern":"**/testdata/**/*.json"}`)
}

func BenchmarkIndexGlobInternalGo(b *testing.B) {
	benchIndexedTool(b, ToolGlob, `{"pattern":"**/internal/**/*.go"}`)
}
