package index_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// Helpers answering Grep and Glob through the query layer, from an index
// or from the walk, for the tests that check what a user would see.

// run answers one tool call and returns its envelope, failing on an
// error envelope.
func run(t testing.TB, tools *query.Tools, tool, args string) *envelope.Envelope {
	t.Helper()
	e := tools.Run(context.Background(), tool, ".", json.RawMessage(args))
	if e.Status == envelope.StatusError {
		t.Fatalf("%s %s: %+v", tool, args, e.Error)
	}
	return e
}

// grep returns the matches of a content-mode Grep as "file:line:text", in
// the answer's order.
func grep(t testing.TB, tools *query.Tools, pattern string) []string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"pattern": pattern, "output_mode": "content"})
	if err != nil {
		t.Fatal(err)
	}
	e := run(t, tools, tool.Grep, string(b))
	var out []string
	for _, m := range e.Data.(*envelope.GrepData).Matches {
		out = append(out, fmt.Sprintf("%s:%d:%s", m.File, m.Line, m.Text))
	}
	return out
}

// glob returns the paths a Glob answers, in its order.
func glob(t testing.TB, tools *query.Tools, pattern string) []string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"pattern": pattern})
	if err != nil {
		t.Fatal(err)
	}
	return run(t, tools, tool.Glob, string(b)).Data.(*envelope.GlobData).Paths
}

// tools returns the walk's tools and the index's for root.
func tools(t testing.TB, root string, ix *index.Index) (walk, idx *query.Tools) {
	t.Helper()
	ws, err := query.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return query.NewDirect(ws), &query.Tools{WS: ws, Searcher: query.Indexed{Index: ix}}
}

// sameAnswers checks that ix answers each Grep pattern and Glob pattern
// exactly as the walk does, and that the walk's Grep answer is want[i]
// when that is not nil (so that an empty answer from both cannot pass;
// []string{} wants none).
func sameAnswers(t testing.TB, stage, root string, ix *index.Index, greps []string, want [][]string, globs []string) {
	t.Helper()
	walk, idx := tools(t, root, ix)
	for i, p := range greps {
		w, g := grep(t, walk, p), grep(t, idx, p)
		if want != nil && want[i] != nil && !slices.Equal(w, want[i]) {
			t.Fatalf("%s: the walk's Grep %q = %q, want %q (fixture?)", stage, p, w, want[i])
		}
		if !slices.Equal(g, w) {
			t.Fatalf("%s: Grep %q through the index:\n got %q\nwant %q", stage, p, g, w)
		}
	}
	for _, p := range globs {
		if w, g := glob(t, walk, p), glob(t, idx, p); !slices.Equal(g, w) {
			t.Fatalf("%s: Glob %q through the index:\n got %q\nwant %q", stage, p, g, w)
		}
	}
}
