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

// isTerminal reports whether w is a terminal (a variable: tests pretend).
var isTerminal = func(w io.Writer) bool {
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
	cwd    string         // the current directory relative to the root; "." at the root or outside it
	hl     *regexp.Regexp // the pattern, to colour matches; nil: none

	// Per answer: the results streamed ahead of it (batch), and where
	// the matches printed so far ended, for the "--" between groups.
	streamed int
	lastFile string
	lastLine int

	// gone is called once the reader of stdout has gone while results
	// are streamed: it ends the query.
	gone func()
}

// begin prepares for the answer to a query with the tool arguments args.
func (o *output) begin(args json.RawMessage) {
	o.streamed, o.lastFile, o.lastLine = 0, "", 0
	o.hl = nil
	if o.color {
		o.hl = highlighter(args)
	}
}

// batch prints results streamed ahead of the answer (a query.Batch, as JSON).
func (o *output) batch(data json.RawMessage) {
	var d answerData
	if err := readData(data, &d); err != nil {
		o.note(fmt.Sprintf("malformed results: %v", err))
		return
	}
	if d.Cwd != "" {
		o.cwd = quote.Unquote(d.Cwd)
	}
	var b strings.Builder
	o.renderData(&b, &d)
	o.streamed += len(d.Paths) + len(d.Matches) + len(d.Files) + len(d.Counts)
	o.out.WriteString(b.String())
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
		json: g.json, tty: isTerminal(c.stdout), stats: g.stats, cwd: cwd}
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
		return exitFound
	}
	fmt.Fprintf(o.stderr, "indexctl: writing the output: %v\n", o.sink.err)
	return exitError
}

// note writes a line for people to standard error, flushing stdout first
// so the two streams interleave as produced.
func (o *output) note(line string) {
	o.out.Flush()
	fmt.Fprintf(o.stderr, "indexctl: %s\n", line)
}

// answer prints one answer of tool and returns the exit code it calls for.
func (o *output) answer(name string, answer json.RawMessage) int {
	rep, err := readReply(answer)
	if err != nil {
		o.note(fmt.Sprintf("malformed response: %v", err))
		return exitError
	}
	var d answerData
	var derr error
	if rep.status != envelope.StatusError {
		derr = readData(rep.data, &d)
	}
	code, cerr := exitCode(name, rep.status, &d)
	if code == exitNothing && o.streamed > 0 {
		code = exitFound
	}
	defer func() {
		if cerr != nil {
			o.note(cerr.Error())
		}
	}()
	if o.json {
		o.out.Write(answer)
		o.out.WriteByte('\n')
		return code
	}
	if derr != nil {
		o.note(fmt.Sprintf("malformed response: %v", derr))
		return exitError
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
	if strings.Contains(head, "Set include_") {
		head = flagHints.Replace(head) // built on first use: 0.05 ms
	}
	var summary, notes []string
	for _, l := range strings.Split(head, "\n") {
		if strings.HasPrefix(l, "[") {
			notes = append(notes, l)
		} else if l != "" {
			summary = append(summary, l)
		}
	}
	body := o.render(name, rep.text, &d)
	if name == tool.Changes {
		// Changes' text is its answer, clock line included; the clock to
		// give back as changed_since also goes to stderr, alone.
		o.out.WriteString(rep.text + "\n")
		o.out.Flush()
		printClock(o.stderr, rep.data)
		return code
	}
	if o.tty {
		if o.streamed > 0 {
			// The results are out already: the summary follows them.
			o.out.WriteString("\n")
		}
		o.out.WriteString(head + "\n")
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

// flagHints turns the text's hints for agents (the parameter to set) into
// hints for people at a command line (the flag to give).
var flagHints = strings.NewReplacer(
	"Set include_ignored=true to search them.", "Use --include-ignored to search them.",
	"Set include_hidden=true to search them.", "Use --include-hidden to search them.",
)

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
	for _, p := range d.Paths {
		b.WriteString(o.path(p))
		b.WriteByte('\n')
	}
	for _, p := range d.Files {
		b.WriteString(o.path(p))
		b.WriteByte('\n')
	}
	for _, c := range d.Counts {
		b.WriteString(o.path(c.File) + o.paint(":", "") + strconv.Itoa(c.Count) + "\n")
	}
	if len(d.Matches) > 0 {
		o.matches(b, d.Matches)
	}
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
		b.WriteString(o.path(file) + sep + o.paint(strconv.Itoa(n), colLine) + sep + " ")
		q := quote.Line(text)
		if match && o.color && hl != nil && q == text {
			q = hl.ReplaceAllStringFunc(text, func(m string) string { return o.paint(m, colMatch) })
		}
		b.WriteString(q + "\n")
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

// highlighter compiles the pattern of Grep's arguments args, to colour
// the matches in its lines; nil when it cannot.
func highlighter(args json.RawMessage) *regexp.Regexp {
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
	if !a.CaseSensitive {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil
	}
	return re
}
