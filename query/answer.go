package query

import (
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/quote"
)

// The answers of the command line (Tools.Unlimited) may ask for more
// results than an agent's, every one when they give no limit (or 0).
// Such an answer
// beyond the agent tools' maximum (tool.GlobMaxLimit, tool.GrepMaxLimit) is not
// built in the envelope's data directly when its caller bounds it: its
// results go through an answerSink, in the answer's order, in batches
// (Grep's as its scan completes them, Glob's once its search is done),
// and the sink
//
//   - streams them to Tools.Sink, which sends them on (the daemon: as rpc
//     "partial" notifications, each waiting for room in the connection's
//     reply budget, so the answer comes at its reader's pace and the
//     envelope holds none of them); or
//   - collects them for the envelope's data, first charging each batch's
//     cost (answerCost) to Tools.Budget. When the budget refuses one, the
//     search stops there: the answer holds the batches taken before, its
//     aborted_reason is envelope.AbortMemoryLimit (partial; an error if
//     it holds nothing), never a complete answer.
//
// Either way the sink keeps the first limit results and notes whether a
// further one came (truncated, exact: the search looks for limit+1 as
// the data's path does), and counts what it kept as the envelope's stats
// count its data.

// answerCost is what a collected result is charged, per byte of its
// strings, against Tools.Budget: a result is held as its strings, then
// rendered in the envelope's text, then both are marshalled into the
// envelope's JSON and copied into the response line, all alive at the
// peak (the line is then what the server queues).
const answerCost = 4

// answerSink takes a Glob's or a Grep's results in the answer's order,
// in batches, for an answer built outside the envelope's data (see
// above). It is used by one goroutine at a time.
type answerSink struct {
	limit  int
	cwd    string           // the caller's directory, for Batch.Cwd
	stream func(Batch)      // Tools.Sink; nil: collect
	text   bool             // stream: each batch carries its Text
	budget func(int64) bool // collect: Tools.Budget

	render    envelope.Lines // the streamed batches' text so far
	kept      int            // results kept (streamed or collected)
	truncated bool           // a result came past the limit
	cut       bool           // the budget refused a batch
	// The envelope's stats of what was kept: files with a kept result,
	// and Grep's lines (matches, or the counts' sum).
	files, lines int
	lastFile     string
	data         Batch // collected results, raw names
}

// newAnswerSink returns the sink of an answer with limit for t, or nil
// when its results belong in the envelope's data: an agent's answer, one
// within the agent tools' maximum max, or one nobody bounds (no Sink
// and no Budget: a one-shot process).
func (t *Tools) newAnswerSink(limit, max int, cwd string) *answerSink {
	if !t.Unlimited || limit <= max || t.Sink == nil && t.Budget == nil {
		return nil
	}
	return &answerSink{limit: limit, cwd: cwd, stream: t.Sink, text: t.BatchText, budget: t.Budget}
}

// take hands over a batch of results in the answer's order. It reports
// false once no more is wanted: a result came past the limit, or the
// budget refused the batch (none of it is kept).
func (s *answerSink) take(b Batch) bool {
	if s.truncated || s.cut {
		return false
	}
	room := s.limit - s.kept
	n := len(b.Paths) + len(b.Matches) + len(b.Files) + len(b.Counts)
	if n > room {
		s.truncated = true
		b.Paths = b.Paths[:min(len(b.Paths), room)]
		b.Matches = b.Matches[:min(len(b.Matches), room)]
		b.Files = b.Files[:min(len(b.Files), room)]
		b.Counts = b.Counts[:min(len(b.Counts), room)]
		n = room
	}
	if n == 0 {
		return !s.truncated
	}
	if s.stream == nil && !s.budget(answerCost*batchBytes(&b)) {
		s.cut = true
		return false
	}
	s.kept += n
	s.count(&b)
	if s.stream == nil {
		s.data.Paths = append(s.data.Paths, b.Paths...)
		s.data.Matches = append(s.data.Matches, b.Matches...)
		s.data.Files = append(s.data.Files, b.Files...)
		s.data.Counts = append(s.data.Counts, b.Counts...)
		return !s.truncated
	}
	b.Cwd = quote.Name(s.cwd)
	for i := range b.Paths {
		b.Paths[i] = quote.Name(b.Paths[i])
	}
	for i := range b.Files {
		b.Files[i] = quote.Name(b.Files[i])
	}
	for i := range b.Matches {
		b.Matches[i].File = quote.Name(b.Matches[i].File)
	}
	for i := range b.Counts {
		b.Counts[i].File = quote.Name(b.Counts[i].File)
	}
	if s.text {
		var sb strings.Builder
		s.render.Paths(&sb, b.Paths)
		s.render.Paths(&sb, b.Files)
		s.render.Counts(&sb, b.Counts)
		s.render.Matches(&sb, b.Matches)
		b.Text = sb.String()
	}
	s.stream(b)
	return !s.truncated
}

// takeGrep is take for a batch of Grep's scan (GrepQuery.Sink).
func (s *answerSink) takeGrep(b grep.Batch) bool {
	return s.take(Batch{Matches: matchesOf(b.Matches), Files: b.Files, Counts: countsOf(b.Counts)})
}

// count adds a kept batch to the stats as assemble counts the data:
// Grep's matched files and lines (a file's matches are consecutive).
func (s *answerSink) count(b *Batch) {
	s.files += len(b.Files) + len(b.Counts)
	for _, c := range b.Counts {
		s.lines += c.Count
	}
	for _, m := range b.Matches {
		if m.File != s.lastFile {
			s.files++
			s.lastFile = m.File
		}
	}
	s.lines += len(b.Matches)
}

// batchBytes is the bytes of a batch's strings, each result with a
// little more for its JSON punctuation and numbers.
func batchBytes(b *Batch) int64 {
	const per = 16
	var n int
	for _, p := range b.Paths {
		n += len(p) + per
	}
	for _, f := range b.Files {
		n += len(f) + per
	}
	for _, c := range b.Counts {
		n += len(c.File) + per
	}
	for _, m := range b.Matches {
		n += len(m.File) + len(m.Text) + 2*per
		for _, l := range m.Before {
			n += len(m.File) + len(l) + per
		}
		for _, l := range m.After {
			n += len(m.File) + len(l) + per
		}
	}
	return int64(n)
}
