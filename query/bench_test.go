package query

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/tool"
)

// Benchmarks of the walk engine on $(go env GOROOT)/src, the reference
// corpus. Compare runs with benchstat; never assert times in tests.
//
// The index benchmarks report "candidates", the files the index proposed
// (stats.candidates). To compare two builds of the engine on a loaded
// machine, build each one's test binary (go test -c) and alternate them
// benchmark by benchmark, each with its own INDEXD_BENCH_DB (a format
// change cannot share one):
//
//	for i in 1 2 3 4 5; do for b in BenchmarkIndexGrepHandler ...; do
//	  for v in old new; do INDEXD_BENCH_DB=/tmp/$v.db ./$v.test \
//	    -test.run '^$' -test.bench "^$b\$" -test.benchtime 0.3s; done; done; done

func gorootSrc(b *testing.B) *Workspace {
	b.Helper()
	root := goroot(b) + "/src"
	if r := os.Getenv("INDEXD_BENCH_TREE"); r != "" {
		root = r
	}
	ws, err := NewWorkspace(root)
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
	benchTool(b, tool.Grep, `{"pattern":"xyzzy_indexd_rare","case_sensitive":true}`)
}

func BenchmarkWalkGrepRareLiteralFold(b *testing.B) {
	benchTool(b, tool.Grep, `{"pattern":"xyzzy_indexd_rare"}`)
}

func BenchmarkWalkGrepFuncMain(b *testing.B) {
	benchTool(b, tool.Grep, `{"pattern":"func main","case_sensitive":true}`)
}

func BenchmarkWalkGrepHandler(b *testing.B) {
	benchTool(b, tool.Grep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true}`)
}

func BenchmarkWalkGlobGo(b *testing.B) {
	benchTool(b, tool.Glob, `{"pattern":"**/*.go"}`)
}

var benchIndexed *Tools

// indexedTools returns the index tools of the benchmark tree, built once.
// With INDEXD_BENCH_DB set (and INDEXD_BENCH_TREE, e.g. a tree
// bench/gentree made) the index is saved there on the first run and
// reopened by later ones, so a large tree is built once.
func indexedTools(b *testing.B) *Tools {
	if benchIndexed != nil {
		return benchIndexed
	}
	// Built as the daemon builds it, kept for the later benchmarks (not
	// by buildTools, which closes its index when the test ends).
	ws := gorootSrc(b)
	db := os.Getenv("INDEXD_BENCH_DB")
	if db == "" {
		ix, err := index.Build(context.Background(), ws.Root, nil)
		if err != nil {
			b.Fatal(err)
		}
		return benchIndexedWith(ix, ws)
	}
	ix, err := index.Open(db, ws.Root)
	if err != nil {
		if ix, err = index.Build(context.Background(), ws.Root, nil); err != nil {
			b.Fatal(err)
		}
		if err := ix.Save(db); err != nil {
			b.Fatal(err)
		}
	}
	return benchIndexedWith(ix, ws)
}

// benchIndexedWith sets benchIndexed to the tools of ws from ix, block
// filters kept as the daemon's, and returns them.
func benchIndexedWith(ix *index.Index, ws *Workspace) *Tools {
	benchIndexed = &Tools{WS: ws, Searcher: Indexed{Index: ix, Blocks: index.NewBlockCache(index.DefaultBlockCacheBytes)}}
	return benchIndexed
}

func benchIndexedTool(b *testing.B, tool, args string) {
	t := indexedTools(b)
	for b.Loop() {
		e := t.Run(context.Background(), tool, ".", json.RawMessage(args))
		if e.Status == envelope.StatusError {
			b.Fatal(e.Text)
		}
		if st, ok := e.Stats.(*envelope.GrepStats); ok && st.Candidates != nil {
			b.ReportMetric(float64(*st.Candidates), "candidates")
		}
	}
}

func BenchmarkIndexGrepRareLiteral(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"xyzzy_indexd_rare","case_sensitive":true}`)
}

func BenchmarkIndexGrepRareLiteralFold(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"xyzzy_indexd_rare"}`)
}

func BenchmarkIndexGrepFuncMain(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func main","case_sensitive":true}`)
}

func BenchmarkIndexGrepHandler(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true}`)
}

func BenchmarkIndexGrepFuncMainFold(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func main"}`)
}

func BenchmarkIndexGrepFuncMain1000(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func main","case_sensitive":true,"limit":1000}`)
}

func BenchmarkIndexGrepHandlerFold(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func \\w+Handler\\("}`)
}

func BenchmarkIndexGrepErrShortWrite(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"ErrShortWrite","case_sensitive":true}`)
}

func BenchmarkIndexGrepErrShortWriteFold(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"ErrShortWrite"}`)
}

func BenchmarkIndexGrepNoTrigram(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"\\w+\\d{4}\\w*","case_sensitive":true}`)
}

func BenchmarkIndexGlobGo(b *testing.B) {
	benchIndexedTool(b, tool.Glob, `{"pattern":"**/*.go"}`)
}

func BenchmarkIndexGlobTestdataJSON(b *testing.B) {
	benchIndexedTool(b, tool.Glob, `{"pattern":"**/testdata/**/*.json"}`)
}

func BenchmarkIndexGlobInternalGo(b *testing.B) {
	benchIndexedTool(b, tool.Glob, `{"pattern":"**/internal/**/*.go"}`)
}

// The queries of the scale harness (bench/sidebyside -scale), with its
// limits; meant for INDEXD_BENCH_TREE set to a tree bench/gentree made.

func BenchmarkIndexScaleRare(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"QuokkaNeedleZeta","case_sensitive":true,"limit":1000}`)
}

func BenchmarkIndexScaleRareFold(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"quokkaneedlezeta","limit":1000}`)
}

func BenchmarkIndexScaleFuncMain(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func main","case_sensitive":true,"limit":100}`)
}

func BenchmarkIndexScaleHandler(b *testing.B) {
	benchIndexedTool(b, tool.Grep, `{"pattern":"func \\w+Handler\\(","case_sensitive":true,"limit":1000}`)
}
