package query

import (
	"context"
	"encoding/json"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
)

// Benchmarks of the walk engine on $(go env GOROOT)/src, the reference
// corpus. Compare runs with benchstat; never assert times in tests.

func gorootSrc(b *testing.B) *Workspace {
	b.Helper()
	root := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	ws, err := NewWorkspace(root + "/src")
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
