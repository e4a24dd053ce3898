package query_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tool"
)

// answerTree is a tree for the command line's large answers: 1,100
// files of 4 matching lines each (past tool.GrepMaxLimit, and a Glob of more
// than a batch), some with context to join, names and lines that print
// quoted.
func answerTree(t *testing.T) string {
	t.Helper()
	files := map[string]string{
		"ctl\x01name.txt": "needle one\nx\nneedle \x1b[31m two\n",
		"bad\xffline.txt": "needle \xff\xfe three\n",
	}
	for i := range 1100 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = "needle a\nb\nneedle c\nneedle d\ne\nf\ng\nneedle h\n"
	}
	return testtree.Write(t, files)
}

// tookMS matches the time in a Glob's or a Grep's text.
var tookMS = regexp.MustCompile(`(Took|in) \d+ms`)

// sameEnvelope compares two envelopes' JSON but for the time they took.
func sameEnvelope(t *testing.T, what string, got, want *envelope.Envelope) {
	t.Helper()
	norm := func(e *envelope.Envelope) string {
		js, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		m["stats"].(map[string]any)["time_ms"] = 0
		m["text"] = tookMS.ReplaceAllString(m["text"].(string), "$1 0ms")
		out, _ := json.Marshal(m)
		return string(out)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Errorf("%s:\n got  %.2000s\n want %.2000s", what, g, w)
	}
}

// The command line's answers beyond the agents' limits, streamed with
// their text (Tools.BatchText) or collected under a budget that never
// refuses, are the answers built whole: the batches' lists in order are
// the data's, the envelope's text then "\n" and the batches' texts is
// the whole text, limits and truncation included.
func TestAnswerSinkIsTheWholeAnswer(t *testing.T) {
	t.Parallel()
	root := answerTree(t)
	cases := []struct {
		tool string
		args map[string]any
	}{
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 0}},
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 0, "context": 1}},
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 1001}},
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 1001, "context_before": 2}},
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 0, "output_mode": "files_with_matches"}},
		{tool.Grep, map[string]any{"pattern": "needle", "limit": 1050, "output_mode": "count"}},
		{tool.Glob, map[string]any{"pattern": "**", "limit": 0}},
		{tool.Glob, map[string]any{"pattern": "**/*.txt", "limit": 201}},
		{tool.Grep, map[string]any{"pattern": "nothing-here", "limit": 0}},
	}
	for _, c := range cases {
		what := fmt.Sprintf("%s %v", c.tool, c.args)
		whole := newToolsExt(t, root)
		whole.Unlimited = true
		want := diffRun(t, whole, c.tool, c.args)

		var charged int64
		collected := newToolsExt(t, root)
		collected.Unlimited = true
		collected.Budget = func(n int64) bool { charged += n; return true }
		sameEnvelope(t, what+", collected", diffRun(t, collected, c.tool, c.args), want)
		if strings.HasPrefix(want.Text, "Found") && charged == 0 {
			t.Errorf("%s: nothing charged to the budget", what)
		}

		var batches []query.Batch
		streamed := newToolsExt(t, root)
		streamed.Unlimited = true
		streamed.BatchText = true
		streamed.Sink = func(b query.Batch) { batches = append(batches, b) }
		got := diffRun(t, streamed, c.tool, c.args)
		var text strings.Builder
		text.WriteString(got.Text)
		switch d := got.Data.(type) {
		case *envelope.GlobData:
			if len(d.Paths) != 0 {
				t.Fatalf("%s: the streamed envelope holds %d paths", what, len(d.Paths))
			}
			for _, b := range batches {
				d.Paths = append(d.Paths, b.Paths...)
			}
		case *envelope.GrepData:
			if len(d.Matches)+len(d.Files)+len(d.Counts) != 0 {
				t.Fatalf("%s: the streamed envelope holds results", what)
			}
			for _, b := range batches {
				d.Matches = append(d.Matches, b.Matches...)
				d.Files = append(d.Files, b.Files...)
				d.Counts = append(d.Counts, b.Counts...)
			}
		}
		if len(batches) > 0 {
			text.WriteString("\n")
		}
		for _, b := range batches {
			if b.Text == "" {
				t.Errorf("%s: a batch without its text", what)
			}
			text.WriteString(b.Text)
		}
		got.Text = text.String()
		// The batches' names are printed (quoted) already, as the
		// envelope's constructor left its own: marshalled, they compare.
		sameEnvelope(t, what+", streamed", got, want)
	}
}

// A collected answer the budget refuses part of stops there and says so:
// the results taken are the whole answer's first ones, its status is
// partial with aborted_reason memory_limit and the note; refused from
// the first batch, it is an EXECUTION_ERROR. Never does it look complete.
func TestAnswerBudgetCutsAndSaysSo(t *testing.T) {
	t.Parallel()
	root := answerTree(t)
	whole := newToolsExt(t, root)
	whole.Unlimited = true
	args := map[string]any{"pattern": "needle", "limit": 0}
	want := diffRun(t, whole, tool.Grep, args).Data.(*envelope.GrepData).Matches

	for _, name := range []string{tool.Grep, tool.Glob} {
		args := args
		if name == tool.Glob {
			args = map[string]any{"pattern": "**", "limit": 0}
		}
		tools := newToolsExt(t, root)
		tools.Unlimited = true
		batches := 0
		tools.Budget = func(int64) bool { batches++; return batches == 1 }
		env := diffRun(t, tools, name, args)
		st, _ := json.Marshal(env.Stats)
		var n int
		switch d := env.Data.(type) {
		case *envelope.GrepData:
			n = len(d.Matches)
			if d.AbortedReason != envelope.AbortMemoryLimit || d.Truncated {
				t.Errorf("Grep cut: aborted %q, truncated %v", d.AbortedReason, d.Truncated)
			}
			if n == 0 || n >= len(want) || !slices.EqualFunc(d.Matches, want[:n], func(a, b envelope.GrepMatch) bool {
				return a.File == b.File && a.Line == b.Line && a.Text == b.Text
			}) {
				t.Errorf("Grep cut: %d matches, not the first of the %d", n, len(want))
			}
			if !strings.Contains(string(st), fmt.Sprintf(`"matched_lines":%d`, n)) {
				t.Errorf("Grep cut: stats %s for %d matches", st, n)
			}
		case *envelope.GlobData:
			n = len(d.Paths)
			if d.AbortedReason != envelope.AbortMemoryLimit || n != query.BatchSize {
				t.Errorf("Glob cut: aborted %q, %d paths", d.AbortedReason, n)
			}
			if !strings.Contains(string(st), fmt.Sprintf(`"matched":%d`, n)) {
				t.Errorf("Glob cut: stats %s for %d paths", st, n)
			}
		}
		if env.Status != envelope.StatusPartial || !strings.Contains(env.Text, "[Partial: the answer outgrew the memory the daemon gives answers being built; results are incomplete.") {
			t.Errorf("%s cut: %s %q", name, env.Status, env.Text[:200])
		}

		tools.Budget = func(int64) bool { return false }
		env = tools.Run(t.Context(), name, ".", mustJSON(t, args))
		if env.Status != envelope.StatusError || env.Error.Code != envelope.CodeExecution ||
			!strings.HasPrefix(env.Error.Message, "The answer outgrew the memory the daemon gives answers being built") {
			t.Errorf("%s refused at once: %s %+v", name, env.Status, env.Error)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
