package envelope

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/quote"
)

// FallbackReason says why the index could not be trusted for an answer
// (data.fallback_reason). The reasons are the constants below and no
// others: every package that walks in the index's place says why with one
// of them.
type FallbackReason string

// The fallback reasons (docs/product.md, "Freshness"; daemon/doc.go).
const (
	// ReasonIndexBuilding: the root's index is being built or reopened, or
	// its watcher has not caught up with the tree yet.
	ReasonIndexBuilding FallbackReason = "index_building"
	// ReasonIndexStale: the index may be behind the tree (the sync
	// barrier failed, events were lost, or the root is gone).
	ReasonIndexStale FallbackReason = "index_stale"
	// ReasonWatchLimit: part of the answer came from walking subtrees the
	// index is not kept current for (past the inotify watch limit).
	ReasonWatchLimit FallbackReason = "watch_limit"
	// ReasonIgnoredPaths: the query asks for ignored files, or its path
	// lies in an ignored subtree, which the index does not hold.
	ReasonIgnoredPaths FallbackReason = "ignored_paths"
	// ReasonIndexError: the root's index could not be built.
	ReasonIndexError FallbackReason = "index_error"
	// ReasonDaemonStopping: the daemon is shutting down and takes no new
	// roots.
	ReasonDaemonStopping FallbackReason = "daemon_stopping"
	// ReasonDaemonUnavailable: the client could not reach a daemon and
	// answered in its own process.
	ReasonDaemonUnavailable FallbackReason = "daemon_unavailable"
	// ReasonNoWatcher: the daemon has no file watcher to keep an index of
	// the root current (none is proven on this system: docs/platforms.md),
	// so it keeps none and walks for every query.
	ReasonNoWatcher FallbackReason = "no_watcher"
)

// FallbackReasons lists every FallbackReason, in the order above.
var FallbackReasons = []FallbackReason{
	ReasonIndexBuilding, ReasonIndexStale, ReasonWatchLimit, ReasonIgnoredPaths,
	ReasonIndexError, ReasonDaemonStopping, ReasonDaemonUnavailable, ReasonNoWatcher,
}

// Fallback describes an answer served by the uncached walk because the index
// could not be trusted. The zero value means the index (or a deliberate
// direct walk) served it.
type Fallback struct {
	Used   bool           `json:"fallback_used,omitempty"`
	Reason FallbackReason `json:"fallback_reason,omitempty"`
}

// infoLine renders the fallback note for text, in voice v.
func (f Fallback) infoLine(v Voice) string {
	switch {
	case !f.Used:
		return ""
	case f.Reason == ReasonIndexBuilding && v.CLI():
		return "[Info: This root's index is still being built (the first query of a root starts it; 'indexctl index --wait' shows its progress): answered by walking the tree.]"
	case f.Reason == ReasonNoWatcher:
		return fmt.Sprintf("[Info: No index is kept: the daemon has no file watcher on this system (%s); answered by a full walk.]", f.Reason)
	}
	return fmt.Sprintf("[Info: The index could not be trusted (%s); answered by a full walk.]", f.Reason)
}

// The limits the texts quote. They are defined here, where the texts are,
// and package query defines its limits from them.
const (
	// GlobMaxLimit is the largest Glob limit an agent may ask for.
	GlobMaxLimit = 200
	// GlobMaxVisited is the number of entries after which Glob's walk
	// stops (AbortCountLimit).
	GlobMaxVisited = 20000
	// GlobMaxDurationMS is Glob's time breaker (AbortTimeLimit), in
	// milliseconds.
	GlobMaxDurationMS = 2000
	// GrepMultilineMaxBytes is how much of one file Grep's multiline mode
	// reads (AbortSizeLimit).
	GrepMultilineMaxBytes = 32 << 20
)

// ---- Glob ----

// GlobData is Glob's payload (docs/tools.md, "Glob").
type GlobData struct {
	Paths         []string `json:"paths"`
	Truncated     bool     `json:"truncated"`
	AbortedReason string   `json:"aborted_reason,omitempty"`
	// FreshInstance: changed_since was given and the changes since it
	// could not be known, so every file was searched (partial).
	FreshInstance bool `json:"fresh_instance,omitempty"`
	// Unreadable names, root-relative and in path order, what the search
	// could not read for want of permission and could have found
	// something in: directories (with a trailing "/") it could not list,
	// and for Grep files it could not read. Any makes the answer partial.
	Unreadable []string `json:"unreadable,omitempty"`
	Fallback
}

func (*GlobData) isData() {}

// GlobStats are Glob's statistics.
type GlobStats struct {
	BaseStats
	Matched int `json:"matched"`
	Visited int `json:"visited"`
	Ignored int `json:"ignored"`
}

// GlobRun is everything Glob found, handed to Glob to build the envelope.
type GlobRun struct {
	Data  GlobData
	Stats GlobStats
	// Limit is the limit that truncated the result, for the note.
	Limit int
	// Hints are extra info lines (what ignore rules left out).
	Hints []string
	// Streamed is the number of results handed to the caller as they
	// were found (an unlimited query of the command line) and so not in
	// Data: the text's counts and the status include them.
	Streamed int
	// Voice words the notes for the reader; LimitGiven: the call gave
	// its limit (else it is the tool's default).
	Voice      Voice
	LimitGiven bool
	// NoMaxLimit: the call was read under the command line's rules,
	// where a limit has no maximum (the agents' is GlobMaxLimit).
	NoMaxLimit bool
}

// Glob builds Glob's envelope: status by decide, text as docs/tools.md
// shows it.
func Glob(ctx Context, r GlobRun) *Envelope {
	d := r.Data
	if d.Paths == nil {
		d.Paths = []string{}
	}
	d.Paths = quoteNames(d.Paths)
	d.Unreadable = quoteNames(d.Unreadable)
	ctx = ctx.quoted()
	st := r.Stats
	st.Matched = len(d.Paths) + r.Streamed
	status, err := decide(outcome{results: st.Matched, truncated: d.Truncated, aborted: d.AbortedReason, discount: d.FreshInstance || len(d.Unreadable) > 0, voice: r.Voice})
	pattern, path := ctx.PatternNormalized, displayPath(ctx)

	var b strings.Builder
	if st.Matched == 0 {
		fmt.Fprintf(&b, "No files found matching '%s' in '%s'\n", pattern, path)
	} else {
		fmt.Fprintf(&b, "Found %d files matching '%s' in '%s'\n", st.Matched, pattern, path)
	}
	fmt.Fprintf(&b, "(Scanned %d items in %dms)", st.Visited, st.TimeMS)
	if d.Truncated {
		if r.Voice.CLI() {
			b.WriteString("\n" + cliTruncated(r.Limit, "files", r.LimitGiven))
		} else if r.NoMaxLimit {
			fmt.Fprintf(&b, "\n[Truncated: Showing first %d files. Narrow the pattern or path, or raise limit.]", r.Limit)
		} else {
			fmt.Fprintf(&b, "\n[Truncated: Showing first %d files. Narrow the pattern or path, or raise limit (max %d).]", r.Limit, GlobMaxLimit)
		}
	}
	switch {
	case err != nil:
		b.WriteString("\n[Error: " + err.Message + "]")
	case d.AbortedReason == AbortTimeLimit:
		fmt.Fprintf(&b, "\n[Partial: Search timed out (>%ss). Results are incomplete.]", strconv.FormatFloat(GlobMaxDurationMS/1000.0, 'f', -1, 64))
	case d.AbortedReason == AbortCountLimit:
		fmt.Fprintf(&b, "\n[Partial: Scanned too many entries (>%d). Results are incomplete.]", GlobMaxVisited)
	case d.AbortedReason == AbortMemoryLimit:
		b.WriteString("\n" + memoryLimitNote)
	}
	writeLines(&b, unreadableNote(d.Unreadable, "files"))
	writeLines(&b, d.Fallback.infoLine(r.Voice))
	writeLines(&b, r.Hints...)
	if len(d.Paths) > 0 {
		b.WriteString("\n")
		var l Lines
		l.Paths(&b, d.Paths)
	}
	e := &Envelope{Status: status, Data: &d, Text: b.String(), Stats: &st, Context: ctx, Error: err}
	if err != nil {
		e.Data = &GlobData{Paths: []string{}, AbortedReason: d.AbortedReason, Unreadable: d.Unreadable, Fallback: d.Fallback}
	}
	return e
}

// ---- Grep ----

// Grep output modes.
const (
	ModeContent = "content"
	ModeFiles   = "files_with_matches"
	ModeCount   = "count"
)

// GrepMatch is one matching line. Before and After hold context lines when
// they were asked for.
type GrepMatch struct {
	File   string   `json:"file"`
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// FileCount is one file's number of matching lines (output_mode "count").
type FileCount struct {
	File  string `json:"file"`
	Count int    `json:"count"`
}

// GrepData is Grep's payload (docs/tools.md, "Grep"). Which list is written
// depends on Mode: matches (content), files (files_with_matches) or counts
// (count).
type GrepData struct {
	Mode          string      `json:"-"`
	Matches       []GrepMatch `json:"-"`
	Files         []string    `json:"-"`
	Counts        []FileCount `json:"-"`
	Truncated     bool        `json:"truncated"`
	AbortedReason string      `json:"aborted_reason,omitempty"`
	// FreshInstance: as GlobData.FreshInstance.
	FreshInstance bool `json:"fresh_instance,omitempty"`
	// Unreadable: as GlobData.Unreadable.
	Unreadable []string `json:"unreadable,omitempty"`
	Fallback
}

func (*GrepData) isData() {}

// MarshalJSON writes the list of the data's mode, always as an array,
// then the other members.
func (d *GrepData) MarshalJSON() ([]byte, error) {
	type plain GrepData // drops this method; the lists are not its members
	rest, err := jsonenc.Marshal((*plain)(d))
	if err != nil {
		return nil, err
	}
	// Room for the list, about: an element's strings and 48 bytes.
	n := len(rest)
	for _, f := range d.Files {
		n += len(f) + 3
	}
	for _, m := range d.Matches {
		n += 48 + len(m.File) + len(m.Text)
	}
	b := make([]byte, 0, n+48*len(d.Counts))
	switch d.Mode {
	case ModeFiles:
		b = appendList(append(b, `{"files":`...), d.Files, jsonenc.AppendString)
	case ModeCount:
		b = appendList(append(b, `{"counts":`...), d.Counts, appendCount)
	default:
		b = appendList(append(b, `{"matches":`...), d.Matches, appendMatch)
	}
	return append(append(b, ','), rest[1:]...), nil
}

// Grep's lists are written here, without reflection: 1,000 matches in
// about 105 µs, against encoding/json's 145. Each is what encoding/json
// writes of it (TestDataAsEncodingJSON).

// AppendMatches appends ms as a JSON array, as encoding/json writes it
// (for the batches of a streamed answer, query.Batch).
func AppendMatches(b []byte, ms []GrepMatch) []byte { return appendList(b, ms, appendMatch) }

// AppendCounts appends cs as a JSON array, as encoding/json writes it.
func AppendCounts(b []byte, cs []FileCount) []byte { return appendList(b, cs, appendCount) }

// AppendStrings appends l as a JSON array of strings, as encoding/json
// writes it (but for HTML's characters, left as they are: jsonenc).
func AppendStrings(b []byte, l []string) []byte { return appendList(b, l, jsonenc.AppendString) }

// appendList appends l as a JSON array, each element by appendElem; []
// if l is empty.
func appendList[T any](b []byte, l []T, appendElem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, e := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendElem(b, e)
	}
	return append(b, ']')
}

func appendMatch(b []byte, m GrepMatch) []byte {
	b = jsonenc.AppendString(append(b, `{"file":`...), m.File)
	b = strconv.AppendInt(append(b, `,"line":`...), int64(m.Line), 10)
	b = jsonenc.AppendString(append(b, `,"text":`...), m.Text)
	if len(m.Before) > 0 {
		b = appendList(append(b, `,"before":`...), m.Before, jsonenc.AppendString)
	}
	if len(m.After) > 0 {
		b = appendList(append(b, `,"after":`...), m.After, jsonenc.AppendString)
	}
	return append(b, '}')
}

func appendCount(b []byte, c FileCount) []byte {
	b = jsonenc.AppendString(append(b, `{"file":`...), c.File)
	b = strconv.AppendInt(append(b, `,"count":`...), int64(c.Count), 10)
	return append(b, '}')
}

// GrepStats are Grep's statistics. Candidates is set when the index chose
// the files to read.
type GrepStats struct {
	BaseStats
	MatchedFiles  int  `json:"matched_files"`
	MatchedLines  int  `json:"matched_lines"`
	Candidates    *int `json:"candidates,omitempty"`
	FilesScanned  int  `json:"files_scanned"`
	BinarySkipped int  `json:"binary_skipped"`
	Ignored       int  `json:"ignored"`
}

// unreadableNote is the text's note of an answer that could not read
// names (quoted; "" when there are none) for want of permission, whose
// unit (files, matches) are missing, naming the first few.
func unreadableNote(names []string, unit string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("[Partial: %s could not be read (permission denied); any %s in it are missing.]", names[0], unit)
	}
	return fmt.Sprintf("[Partial: %d paths could not be read (permission denied): %s; any %s in them are missing.]", len(names), ListSome(names), unit)
}

// ListSome lists the first five names, then how many more there are:
// "a, b, c, d, e and 2 more".
func ListSome(names []string) string {
	const show = 5
	list := strings.Join(names[:min(len(names), show)], ", ")
	if len(names) > show {
		list += fmt.Sprintf(" and %d more", len(names)-show)
	}
	return list
}

// cliTruncated is the command line's note of an answer cut at its limit:
// n results shown of unit, the limit given or the agent tool's default
// (with --args).
func cliTruncated(n int, unit string, given bool) string {
	if given {
		return fmt.Sprintf("[Truncated: showing the first %d %s (--limit %d); more exist.]", n, unit, n)
	}
	return fmt.Sprintf("[Truncated: showing the first %d %s, the agent tool's default limit with --args; --limit N or --all shows more.]", n, unit)
}

// GrepRun is everything Grep found, handed to Grep to build the envelope.
type GrepRun struct {
	Data  GrepData
	Stats GrepStats
	// Limit is the limit that truncated the result, for the note.
	Limit int
	// Hints are extra info lines (what ignore rules left out).
	Hints []string
	// Streamed is as GlobRun's: results (lines, or files) not in Data.
	Streamed int
	// Voice and LimitGiven are as GlobRun's.
	Voice      Voice
	LimitGiven bool
	// TimeoutMS is the search's time limit (0: none), for the message of
	// a search that timed out.
	TimeoutMS int
}

// Grep builds Grep's envelope: status by decide (the fallback counts as a
// discount), text as docs/tools.md shows it.
func Grep(ctx Context, r GrepRun) *Envelope {
	d := r.Data
	d.Matches = quoteMatches(d.Matches)
	d.Files = quoteNames(d.Files)
	d.Counts = quoteCounts(d.Counts)
	d.Unreadable = quoteNames(d.Unreadable)
	ctx = ctx.quoted()
	st := r.Stats
	results := len(d.Matches) + len(d.Files) + len(d.Counts)
	all := results + r.Streamed
	status, err := decide(outcome{results: all, truncated: d.Truncated, aborted: d.AbortedReason, discount: d.Fallback.Used || d.FreshInstance || len(d.Unreadable) > 0, voice: r.Voice, timeoutMS: r.TimeoutMS})
	pattern, path := echo(ctx.Pattern), displayPath(ctx)

	var b strings.Builder
	switch {
	case all == 0:
		fmt.Fprintf(&b, "No matches found for '%s' in '%s'\n", pattern, path)
	case d.Mode == ModeFiles:
		fmt.Fprintf(&b, "Found %d files with matches for '%s' in '%s'\n", st.MatchedFiles, pattern, path)
	default:
		fmt.Fprintf(&b, "Found %d matches in %d files for '%s' in '%s'\n", st.MatchedLines, st.MatchedFiles, pattern, path)
	}
	fmt.Fprintf(&b, "(Sorted by mtime desc. Took %dms)", st.TimeMS)
	if d.Truncated {
		unit := "matches"
		if d.Mode == ModeFiles || d.Mode == ModeCount {
			unit = "files"
		}
		if r.Voice.CLI() {
			b.WriteString("\n" + cliTruncated(r.Limit, unit, r.LimitGiven))
		} else {
			fmt.Fprintf(&b, "\n[Truncated: Showing first %d %s. Narrow pattern or path.]", r.Limit, unit)
		}
	}
	switch {
	case err != nil:
		b.WriteString("\n[Error: " + err.Message + "]")
	case d.AbortedReason == AbortReadError:
		b.WriteString("\n[Partial: some files could not be read (out of file descriptors or an I/O error). Results may be incomplete.]")
	case d.AbortedReason == AbortSizeLimit:
		fmt.Fprintf(&b, "\n[Partial: a file was too large to search whole in multiline mode (limit %d MiB); only its beginning was searched. Results may be incomplete.]", GrepMultilineMaxBytes>>20)
	case d.AbortedReason == AbortMemoryLimit:
		b.WriteString("\n" + memoryLimitNote)
	case d.AbortedReason != "":
		fmt.Fprintf(&b, "\n[Partial: Search timed out after %dms. Results are incomplete.]", st.TimeMS)
	}
	writeLines(&b, unreadableNote(d.Unreadable, "matches"))
	writeLines(&b, d.Fallback.infoLine(r.Voice))
	writeLines(&b, r.Hints...)
	if results > 0 {
		grow := 0 // the matches' lines, their context left out
		for _, m := range d.Matches {
			grow += len(m.File) + len(m.Text) + 16
		}
		b.Grow(grow)
		b.WriteString("\n")
		var l Lines
		l.Paths(&b, d.Files)
		l.Counts(&b, d.Counts)
		l.Matches(&b, d.Matches)
	}
	e := &Envelope{Status: status, Data: &d, Text: b.String(), Stats: &st, Context: ctx, Error: err}
	if err != nil {
		e.Data = &GrepData{Mode: d.Mode, AbortedReason: d.AbortedReason, Unreadable: d.Unreadable, Fallback: d.Fallback}
	}
	return e
}

// Lines renders results as their envelope's text lists them: each
// result line led by "\n" ("file:line: text" for a match, with its
// context lines "file-line- text" and "--" between groups of them that
// are not adjacent, as grep and ripgrep print them; "file:count" for a
// count; the name alone for a path or file). Names must be in their
// printed form (quote.Name); a file's lines are printed here
// (quote.Line). An envelope's text is its summary and notes, then, when
// it holds results, "\n" and their lines; Lines keeps what it needs
// from one call to the next (the last match's file and line), so the
// lines of results handed out in batches (query.Batch.Text), joined, are
// the lines the whole answer's text would hold. The zero value is ready;
// use one Lines per answer.
type Lines struct {
	lastFile string
	lastLine int
}

// Paths writes one line per name.
func (l *Lines) Paths(b *strings.Builder, names []string) {
	for _, n := range names {
		b.WriteString("\n")
		b.WriteString(n)
	}
}

// Counts writes one "file:count" line per count.
func (l *Lines) Counts(b *strings.Builder, cs []FileCount) {
	for _, c := range cs {
		fmt.Fprintf(b, "\n%s:%d", c.File, c.Count)
	}
}

// Matches writes "file:line: text" lines, and the matches' context lines
// "file-line- text", each line once, with "--" between groups that are
// not adjacent.
func (l *Lines) Matches(b *strings.Builder, ms []GrepMatch) {
	for _, m := range ms {
		first := m.Line - len(m.Before)
		if m.File != l.lastFile {
			if l.lastFile != "" && (len(m.Before) > 0 || len(m.After) > 0) {
				b.WriteString("\n--")
			}
			l.lastLine = 0
		} else if (len(m.Before) > 0 || len(m.After) > 0) && first > l.lastLine+1 {
			b.WriteString("\n--")
		}
		for i, t := range m.Before {
			if n := first + i; n > l.lastLine {
				writeLine(b, m.File, '-', n, t)
			}
		}
		if m.Line > l.lastLine || m.File != l.lastFile {
			writeLine(b, m.File, ':', m.Line, m.Text)
		}
		for i, t := range m.After {
			writeLine(b, m.File, '-', m.Line+1+i, t)
		}
		l.lastFile, l.lastLine = m.File, m.Line+len(m.After)
	}
}

// writeLine writes "\nfile:n: text" (sep ':', a match) or "\nfile-n- text"
// (sep '-', a context line), the text quoted by quote.Line; as
// fmt.Fprintf would, at a tenth of its cost.
func writeLine(b *strings.Builder, file string, sep byte, n int, text string) {
	var num [20]byte
	b.WriteByte('\n')
	b.WriteString(file)
	b.WriteByte(sep)
	b.Write(strconv.AppendInt(num[:0], int64(n), 10))
	b.WriteByte(sep)
	b.WriteByte(' ')
	b.WriteString(quote.Line(text))
}

// ---- LS ----

// Entry types.
const (
	TypeDir  = "dir"
	TypeFile = "file"
	TypeLink = "link"
)

// Link states, for the text of a symbolic link's entry.
const (
	LinkInside  = ""        // target inside the root
	LinkOutside = "outside" // target outside the root
	LinkBroken  = "broken"  // dangling
)

// LSEntry is one directory entry. Path is the name with "/" for a
// directory, "@" for a link and "@/" for a link to a directory.
type LSEntry struct {
	Path string `json:"path"`
	Type string `json:"type"`
	// Link is the link's state (LinkOutside, LinkBroken) for the text.
	Link string `json:"-"`
}

// LSData is LS's payload (docs/tools.md, "LS").
type LSData struct {
	Entries   []LSEntry `json:"entries"`
	Truncated bool      `json:"truncated"`
	Fallback
}

func (*LSData) isData() {}

// LSStats are LS's statistics over the whole listing (before pagination).
type LSStats struct {
	BaseStats
	Total   int `json:"total"`
	Dirs    int `json:"dirs"`
	Files   int `json:"files"`
	Links   int `json:"links"`
	Ignored int `json:"ignored"`
}

// LSRun is everything LS found, handed to LS to build the envelope.
type LSRun struct {
	Data  LSData
	Stats LSStats
	Hints []string
	Voice Voice // as GlobRun's
}

// LS builds LS's envelope: partial when truncated; text as docs/tools.md
// shows it.
func LS(ctx Context, r LSRun) *Envelope {
	d := r.Data
	if d.Entries == nil {
		d.Entries = []LSEntry{}
	}
	d.Entries = quoteEntries(d.Entries)
	ctx = ctx.quoted()
	st := r.Stats
	status, err := decide(outcome{results: len(d.Entries), truncated: d.Truncated})
	var b strings.Builder
	fmt.Fprintf(&b, "Listed %d entries in '%s'", len(d.Entries), displayPath(ctx))
	if d.Truncated {
		if r.Voice.CLI() {
			fmt.Fprintf(&b, " (truncated from %d total). Use --offset to see the rest.", st.Total)
		} else {
			fmt.Fprintf(&b, " (truncated from %d total). Use 'offset' to paginate.", st.Total)
		}
	}
	writeLines(&b, d.Fallback.infoLine(r.Voice))
	writeLines(&b, r.Hints...)
	if len(d.Entries) > 0 {
		b.WriteString("\n")
		for _, e := range d.Entries {
			b.WriteString("\n" + e.Path)
			switch e.Link {
			case LinkOutside:
				b.WriteString(" -> <Outside Sandbox>")
			case LinkBroken:
				b.WriteString(" -> <Broken Link>")
			}
		}
	}
	return &Envelope{Status: status, Data: &d, Text: b.String(), Stats: &st, Context: ctx, Error: err}
}

// displayPath is the searched directory for the text, from a context
// already quoted.
func displayPath(ctx Context) string {
	if ctx.PathResolved == "" {
		return "."
	}
	return ctx.PathResolved
}

func writeLines(b *strings.Builder, lines ...string) {
	for _, l := range lines {
		if l != "" {
			b.WriteString("\n" + l)
		}
	}
}

// Names and lines (docs/product.md, "Names and lines"): every file name an
// envelope carries, in data, context and text, is in its printed form,
// quote.Name: as it is unless it holds a control character, a byte that is not
// UTF-8, a backslash or a double quote; then a double-quoted C-style string.
// The constructors convert the raw names the tools hand them, once. Lines of
// files stay raw in data (JSON escapes them) and are printed in text by
// quote.Line.

// quoteNames returns names in their printed form; names itself when none
// changes.
func quoteNames(names []string) []string {
	return quoteEach(names, func(n *string) *string { return n })
}

func quoteMatches(ms []GrepMatch) []GrepMatch {
	return quoteEach(ms, func(m *GrepMatch) *string { return &m.File })
}

func quoteCounts(cs []FileCount) []FileCount {
	return quoteEach(cs, func(c *FileCount) *string { return &c.File })
}

func quoteEntries(es []LSEntry) []LSEntry {
	return quoteEach(es, func(e *LSEntry) *string { return &e.Path })
}

// quoteEach replaces the name field of each element of list with its
// printed form, in a copy: the caller's slice is left alone, and returned
// as it is when no name changes.
func quoteEach[T any](list []T, name func(*T) *string) []T {
	var out []T
	for i := range list {
		n := *name(&list[i])
		q := quote.Name(n)
		if q == n {
			continue
		}
		if out == nil {
			out = append([]T(nil), list...)
		}
		*name(&out[i]) = q
	}
	if out == nil {
		return list
	}
	return out
}

// echo returns a string the caller gave (Grep's pattern, an error message
// that repeats an argument) for the text: as it is unless it holds a
// character quote.Safe rejects, then in its quoted form. Unlike names it
// is not meant to be read back, so a string that merely looks quoted is
// left alone.
func echo(s string) string {
	if quote.Safe(s) {
		return s
	}
	return quote.Line(s)
}
