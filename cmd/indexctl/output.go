package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/tool"
)

// How a query's answer is printed (see mainHelp's "Output"):
//
//   - --json: the envelope, one line, on stdout; paths root-relative.
//   - stdout a terminal: the envelope's text as an agent reads it (summary
//     and notes, a blank line, the results), the results re-rendered from
//     the data with paths relative to the current directory and coloured.
//   - otherwise: the results only on stdout, one per line; the summary on
//     stderr with --stats; the notes ("[Truncated: ...]", "[Info: ...]")
//     on stderr always; a tool's error on stderr, "indexctl: MESSAGE".
//
// Every write to stdout goes through one buffered writer that remembers
// its first error: once the reader has gone (EPIPE), nothing more is
// written and indexctl exits 0, as rg does.

// isTerminal reports whether w is a terminal (system.isTerminal; tests
// pretend).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// output prints the answers of one query command.
type output struct {
	out    *bufio.Writer
	sink   *errWriter
	stderr io.Writer
	json   bool
	tty    bool
	color  bool
	stats  bool
	cwd    string   // the current directory relative to the root; "." at the root or outside it
	hl     *matcher // the pattern, to colour matches or print them alone; nil: none

	// Per answer: the results streamed ahead of it (batch), and where
	// the matches printed so far ended, for the "--" between groups.
	streamed int
	lastFile string
	lastLine int

	// gone is called once the reader of stdout has gone while results
	// are streamed: it ends the query.
	gone func()
	// firstBatch, if set, is called at the first batch of results
	// streamed ahead of an answer.
	firstBatch func()

	bound    bound // whose limit the query is held to
	only     bool  // -o: the matching parts of lines
	maxCount int   // -m: at most this many matching lines a file (0: no bound)
	null     bool  // -0: a NUL after each file name
	word     bool  // -w: the pattern was wrapped by wordPattern

	// -m's count: matching lines printed of the file printed last.
	mFile string
	mN    int
}

// begin prepares for the answer to a query with the tool arguments args.
func (o *output) begin(args json.RawMessage) {
	o.streamed, o.lastFile, o.lastLine = 0, "", 0
	o.mFile, o.mN = "", 0
	o.hl = nil
	if o.color || o.only {
		o.hl = highlighter(args, o.word)
	}
}

// batch prints results streamed ahead of the answer (a query.Batch, as JSON).
func (o *output) batch(data json.RawMessage) {
	if o.firstBatch != nil {
		o.firstBatch()
		o.firstBatch = nil
	}
	var d answerData
	if err := readData(data, &d); err != nil {
		o.note(fmt.Sprintf("malformed results: %v", err))
		return
	}
	if d.Cwd != "" {
		o.cwd = quote.Unquote(d.Cwd)
	}
	var b strings.Builder
	o.streamed += len(d.Paths) + len(d.Matches) + len(d.Files) + len(d.Counts)
	o.renderData(&b, &d)
	o.out.WriteString(b.String())
	if o.tty {
		o.out.Flush() // a person watches the results come
	}
	if o.closed() && o.gone != nil {
		o.gone()
	}
}

// errWriter remembers the first error of its writer and writes nothing
// after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	if err != nil {
		e.err = err
	}
	return n, err
}

// checkColor checks a --color value.
func checkColor(when string) error {
	switch when {
	case "", "auto", "always", "never":
		return nil
	}
	return fmt.Errorf("invalid value %q for --color: want auto, always or never", when)
}

func (c *cli) newOutput(g *globals, cwd string) *output {
	sink := &errWriter{w: c.stdout}
	o := &output{out: bufio.NewWriterSize(sink, 64<<10), sink: sink, stderr: c.stderr,
		json: g.json, tty: c.sys.isTerminal(c.stdout), stats: g.stats, cwd: cwd}
	switch g.color {
	case "always":
		o.color = true
	case "never":
	default:
		o.color = o.tty && os.Getenv("NO_COLOR") == ""
	}
	return o
}

// closed reports whether the reader of stdout has gone.
func (o *output) closed() bool { return errors.Is(o.sink.err, syscall.EPIPE) }

func (o *output) flush() { o.out.Flush() }

// finish flushes stdout and returns code, or 0 if the reader has gone, or
// 2 after reporting any other write error.
func (o *output) finish(code int) int {
	o.out.Flush()
	switch {
	case o.sink.err == nil:
		return code
	case o.closed():
		return daemonapi.ExitFound
	}
	fmt.Fprintf(o.stderr, "indexctl: writing the output: %v\n", o.sink.err)
	return daemonapi.ExitError
}

// note writes a line for people to standard error, flushing stdout first
// so the two streams interleave as produced.
func (o *output) note(line string) {
	o.out.Flush()
	fmt.Fprintf(o.stderr, "indexctl: %s\n", line)
}

// answer prints one answer of tool to the call with the arguments args
// and returns the exit code it calls for: an answer that is not whole
// (incomplete) is printed, then said to be so, and exits 2.
func (o *output) answer(name string, args, answer json.RawMessage) int {
	rep, err := readReply(answer)
	if err != nil {
		o.note(fmt.Sprintf("malformed response: %v", err))
		return daemonapi.ExitError
	}
	var d answerData
	var derr error
	if rep.status != envelope.StatusError {
		derr = readData(rep.data, &d)
	}
	code, cerr := exitCode(name, rep.status, &d)
	if code == daemonapi.ExitNothing && o.streamed > 0 {
		code = daemonapi.ExitFound
	}
	why := ""
	if cerr == nil && derr == nil {
		why = o.incomplete(name, args, rep, &d)
		if name == tool.Changes && code == daemonapi.ExitNothing && !argument(args, "since", new(json.RawMessage)) && d.Clock != "" {
			code = daemonapi.ExitFound // the answer is the clock
		}
	}
	defer func() {
		if cerr != nil {
			o.note(cerr.Error())
		}
		if why != "" {
			o.note("incomplete: " + why)
		}
	}()
	if why != "" {
		code = daemonapi.ExitError
	}
	if o.json {
		o.out.Write(answer)
		o.out.WriteByte('\n')
		return code
	}
	if derr != nil {
		o.note(fmt.Sprintf("malformed response: %v", derr))
		return daemonapi.ExitError
	}
	if rep.status == envelope.StatusError {
		msg := strings.TrimPrefix(rep.text, "Error: ")
		if rep.hasErr {
			msg = rep.err
		}
		o.note(msg)
		return code
	}
	// The answer's cwd: the daemon may have answered from a deeper root
	// than the one asked for (rpc.ToolParams.RootFrom).
	if rep.cwd != "" {
		o.cwd = quote.Unquote(rep.cwd)
	}
	head, _, _ := strings.Cut(rep.text, "\n\n")
	var summary, notes []string
	// The daemon words the text for the command line (rpc.VoiceCLI), or
	// for an agent (--voice agent).
	for _, l := range strings.Split(head, "\n") {
		switch {
		case strings.HasPrefix(l, "[Partial:"):
			// The incomplete line says it.
		case strings.HasPrefix(l, "["), strings.HasPrefix(l, "Fresh instance: "):
			// A fresh instance's listing is every file: that is a note
			// the reader of the list must see.
			notes = append(notes, l)
		case l != "" && !(name == tool.Changes && strings.HasPrefix(l, "Clock: ")):
			summary = append(summary, l)
		}
	}
	body := o.render(name, rep.text, &d)
	if name == tool.Changes {
		body = ""
		for _, c := range d.Changes {
			body += c.Kind + " " + o.path(c.Path) + "\n"
		}
		defer printClock(o.stderr, rep.data) // after the results: the clock to give back as since
	}
	if o.tty {
		if o.streamed > 0 {
			// The results are out already: the summary follows them.
			o.out.WriteString("\n")
		}
		o.out.WriteString(strings.Join(append(summary, notes...), "\n") + "\n")
		if body != "" {
			o.out.WriteString("\n" + body)
		}
		return code
	}
	if o.stats {
		o.out.Flush()
		for _, l := range summary {
			fmt.Fprintln(o.stderr, l)
		}
	}
	o.out.WriteString(body)
	for _, n := range notes {
		o.note(n)
	}
	return code
}

// incomplete says why an answer holds less than was asked for, "" when
// it is whole. A limit cuts an answer short as asked (the user's --limit,
// or the agents' with --args); a fallback walk and a fresh instance's
// whole listing are whole answers. Anything else that makes an answer
// partial does not: a time limit, a breaker, an unreadable file, a file
// searched in part, paths that may not be read (data.unreadable),
// changes that are not tracked.
func (o *output) incomplete(name string, args json.RawMessage, rep *reply, d *answerData) string {
	if name == tool.Changes && rep.status != envelope.StatusError && d.Clock == "" && !argument(args, "since", new(json.RawMessage)) {
		// The answer is the clock, and there is none.
		return "no clock: no change journal is kept for this root (its index is still being built, and 'indexctl index --wait' waits for it; or the daemon has no file watcher on this system; or the answer was made without the daemon)"
	}
	if rep.status != envelope.StatusPartial {
		return ""
	}
	switch d.Aborted {
	case envelope.AbortTimeout:
		if ms := 0; argument(args, "timeout_ms", &ms) {
			return fmt.Sprintf("the search stopped at its time limit (--timeout-ms %d); what it found by then is shown", ms)
		}
		return fmt.Sprintf("the search stopped at the agent tools' time limit (%d ms, with --args); what it found by then is shown", tool.GrepDefaultTimeoutMS)
	case envelope.AbortTimeLimit:
		return fmt.Sprintf("the walk stopped at the agent tools' time limit (%d ms, with --args); what it found by then is shown", envelope.GlobMaxDurationMS)
	case envelope.AbortCountLimit:
		return fmt.Sprintf("the walk stopped after the agent tools' %d entries (with --args); what it found by then is shown", envelope.GlobMaxVisited)
	case envelope.AbortReadError:
		return "some files or directories could not be read (out of file descriptors, or an I/O error): matches in them are missing"
	case envelope.AbortMemoryLimit:
		return "the answer outgrew the memory the daemon gives answers being built (other large answers held it): what fitted is shown"
	case envelope.AbortSizeLimit:
		return fmt.Sprintf("a file was too large to search whole with --multiline (limit %d MiB): only its beginning was searched", envelope.GrepMultilineMaxBytes>>20)
	case "":
	default:
		return "the search stopped early (" + d.Aborted + ")"
	}
	if len(d.Unreadable) > 0 {
		return "permission denied: could not read " + envelope.ListSome(d.Unreadable) + "; anything in them is missing"
	}
	// A note that the answer lacks something ("[Partial: ...]", changes
	// not tracked) says so whatever else cut it, a limit met included.
	if n := note(rep.text, func(l string) bool {
		return strings.HasPrefix(l, "[Partial: ") || strings.HasPrefix(l, "[Info: ") && strings.Contains(l, "not tracked")
	}); n != "" {
		return n
	}
	if d.Truncated || d.Fallback || d.Fresh {
		return ""
	}
	// Partial for another reason of its own: its note says which.
	if n := note(rep.text, func(l string) bool { return strings.HasPrefix(l, "[Info: ") && strings.Contains(l, "could not") }); n != "" {
		return n
	}
	return "the daemon marked the answer partial"
}

// note returns the first line of text for which is reports true, without
// its brackets and kind ("[Info: ...]"); "" when there is none.
func note(text string, is func(line string) bool) string {
	for _, l := range strings.Split(text, "\n") {
		if is(l) {
			return strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l, "[Info: "), "[Partial: "), "]")
		}
	}
	return ""
}

// argument reads args[key] into v, reporting whether it was there (not
// null) and of v's type.
func argument(args json.RawMessage, key string, v any) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return false
	}
	raw, ok := obj[key]
	return ok && string(raw) != "null" && json.Unmarshal(raw, v) == nil
}

// render returns the results of an answer as lines, each ending in "\n".
func (o *output) render(name, text string, d *answerData) string {
	if name == tool.LS {
		// LS's entries are names in the listed directory: the text's
		// results are what to print.
		_, body, ok := strings.Cut(text, "\n\n")
		if !ok {
			return ""
		}
		return body + "\n"
	}
	var b strings.Builder
	o.renderData(&b, d)
	return b.String()
}

// renderData writes the results of d as lines.
func (o *output) renderData(b *strings.Builder, d *answerData) {
	end := "\n" // after a file name alone
	if o.null {
		end = "\x00"
	}
	for _, p := range d.Paths {
		b.WriteString(o.path(p) + end)
	}
	for _, p := range d.Files {
		b.WriteString(o.path(p) + end)
	}
	for _, c := range d.Counts {
		n := c.Count
		if o.maxCount > 0 {
			n = min(n, o.maxCount)
		}
		b.WriteString(o.path(c.File) + o.sep(":") + strconv.Itoa(n) + "\n")
	}
	if len(d.Matches) > 0 {
		o.matches(b, o.capped(d.Matches))
	}
}

// sep is the separator after a file name: sep, or NUL with -0.
func (o *output) sep(sep string) string {
	if o.null {
		return "\x00"
	}
	return sep
}

// capped returns the matches -m lets through: the first maxCount of each
// file (a file's matches come together, in line order).
func (o *output) capped(ms []envelope.GrepMatch) []envelope.GrepMatch {
	if o.maxCount <= 0 {
		return ms
	}
	kept := ms[:0:0]
	for _, m := range ms {
		if m.File != o.mFile {
			o.mFile, o.mN = m.File, 0
		}
		if o.mN < o.maxCount {
			o.mN++
			kept = append(kept, m)
		}
	}
	return kept
}

// ANSI colours, as rg's defaults: paths magenta, line numbers green,
// matches bold red.
const (
	colPath  = "\x1b[35m"
	colLine  = "\x1b[32m"
	colMatch = "\x1b[1;31m"
	colReset = "\x1b[0m"
)

func (o *output) paint(s, col string) string {
	if !o.color || col == "" || s == "" {
		return s
	}
	return col + s + colReset
}

// path returns a root-relative path (in its printed form) as printed:
// relative to the current directory, coloured.
func (o *output) path(p string) string {
	return o.paint(relPath(o.cwd, p), colPath)
}

// relPath returns the root-relative path p (a name in its printed form,
// internal/quote) relative to cwd, also root-relative, in printed form.
func relPath(cwd, p string) string {
	if cwd == "." || cwd == "" {
		return p
	}
	raw := quote.Unquote(p)
	rel := raw
	if r, ok := strings.CutPrefix(raw, cwd+"/"); ok {
		rel = r
	} else {
		up, dir := "", cwd
		for dir != "." && !strings.HasPrefix(raw, dir+"/") {
			up += "../"
			dir = path.Dir(dir)
		}
		if dir == "." {
			rel = up + raw
		} else {
			rel = up + strings.TrimPrefix(raw, dir+"/")
		}
	}
	return quote.Name(rel)
}

// matches writes Grep's content lines as envelope.Grep's text does:
// "file:line: text", context lines "file-line- text", "--" between
// groups that are not adjacent.
func (o *output) matches(b *strings.Builder, ms []envelope.GrepMatch) {
	hl := o.hl
	lastFile, lastLine := o.lastFile, o.lastLine
	defer func() { o.lastFile, o.lastLine = lastFile, lastLine }()
	line := func(file string, n int, sep, text string, match bool) {
		b.WriteString(o.path(file) + o.sep(sep) + o.paint(strconv.Itoa(n), colLine) + sep + " ")
		q := quote.Line(text)
		if match && o.color && hl != nil && q == text {
			q = hl.paint(text, func(m string) string { return o.paint(m, colMatch) })
		}
		b.WriteString(q + "\n")
	}
	if o.only {
		// -o: each matching part of each matching line, a line each.
		for _, m := range ms {
			if hl == nil {
				line(m.File, m.Line, ":", m.Text, false)
				continue
			}
			for _, sp := range hl.spans(m.Text) {
				line(m.File, m.Line, ":", m.Text[sp[0]:sp[1]], true)
			}
		}
		return
	}
	for _, m := range ms {
		first := m.Line - len(m.Before)
		ctx := len(m.Before) > 0 || len(m.After) > 0
		if m.File != lastFile {
			if lastFile != "" && ctx {
				b.WriteString("--\n")
			}
			lastLine = 0
		} else if ctx && first > lastLine+1 {
			b.WriteString("--\n")
		}
		for i, t := range m.Before {
			if n := first + i; n > lastLine {
				line(m.File, n, "-", t, false)
			}
		}
		if m.Line > lastLine || m.File != lastFile {
			line(m.File, m.Line, ":", m.Text, true)
		}
		for i, t := range m.After {
			line(m.File, m.Line+1+i, "-", t, false)
		}
		lastFile, lastLine = m.File, m.Line+len(m.After)
	}
}

// matcher finds the matching parts of a line, to colour them or print
// them alone (-o): the pattern's matches, or with -w rg's whole-word
// matches (a match with no word character right before or after it).
type matcher struct {
	re *regexp.Regexp
	// With -w: re is (?:^|\W)(PATTERN)(?:$|\W), mid the same with \W
	// in front, for a search resuming after a word character.
	word bool
	mid  *regexp.Regexp
}

// spans returns the byte ranges of the matching parts of line.
func (m *matcher) spans(line string) [][2]int {
	if !m.word {
		var out [][2]int
		for _, loc := range m.re.FindAllStringIndex(line, -1) {
			out = append(out, [2]int{loc[0], loc[1]})
		}
		return out
	}
	// Each search resumes where the last match (group 1) ended, so that
	// the non-word character after it can precede the next; the line's
	// start matches only at the start.
	var out [][2]int
	for pos := 0; pos <= len(line); {
		re := m.re
		if pos > 0 && isWordByte(line[pos-1]) {
			re = m.mid
		}
		loc := re.FindStringSubmatchIndex(line[pos:])
		if loc == nil || loc[2] < 0 {
			break
		}
		start, end := pos+loc[2], pos+loc[3]
		out = append(out, [2]int{start, end})
		if end == start {
			end++ // an empty match: step on
		}
		pos = end
	}
	return out
}

// paint returns line with each matching part replaced by colour(part).
func (m *matcher) paint(line string, colour func(string) string) string {
	var b strings.Builder
	last := 0
	for _, sp := range m.spans(line) {
		if sp[0] < last {
			continue
		}
		b.WriteString(line[last:sp[0]] + colour(line[sp[0]:sp[1]]))
		last = sp[1]
	}
	b.WriteString(line[last:])
	return b.String()
}

// isWordByte reports whether c is an ASCII word character (Go's \w).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// highlighter compiles the pattern of Grep's arguments args, to find the
// matching parts of its lines (word: the pattern was wrapped by -w);
// nil when it cannot.
func highlighter(args json.RawMessage, word bool) *matcher {
	var a struct {
		Pattern       string `json:"pattern"`
		CaseSensitive bool   `json:"case_sensitive"`
		FixedStrings  bool   `json:"fixed_strings"`
		Invert        bool   `json:"invert_match"`
	}
	if json.Unmarshal(args, &a) != nil || a.Pattern == "" || a.Invert {
		return nil
	}
	p := a.Pattern
	if a.FixedStrings {
		p = regexp.QuoteMeta(p)
	}
	flags := ""
	if !a.CaseSensitive {
		flags = "(?i)"
	}
	inner, ok := strings.CutPrefix(p, wordPrefix)
	if inner, ok2 := strings.CutSuffix(inner, wordSuffix); word && ok && ok2 {
		re, err1 := regexp.Compile(flags + `(?:^|\W)(` + inner + wordSuffix)
		mid, err2 := regexp.Compile(flags + `\W(` + inner + wordSuffix)
		if err1 != nil || err2 != nil {
			return nil
		}
		return &matcher{re: re, word: true, mid: mid}
	}
	re, err := regexp.Compile(flags + p)
	if err != nil {
		return nil
	}
	return &matcher{re: re}
}
