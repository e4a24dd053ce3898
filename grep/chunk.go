package grep

// Scanning one file with bounded work between two looks at the context.
//
// Go's regexp engine cannot be interrupted, and the time one call takes
// is its input's length times a cost per byte that the pattern decides
// (from about 1 ns for a literal to over 1 µs for a pattern like
// `(\w+\s*){1,20}z`). So no call is given much input:
//
//   - In line mode a match never spans a line break, so a buffer can be
//     searched in windows of whole lines, each on its own: at most
//     Sizes.Window bytes per call, the context checked between windows.
//     A file of up to chunkSize bytes is read with one read and searched
//     in memory (a file up to scanWindow is one read and one match, as
//     before); a larger one is read in chunks of chunkSize, split after
//     their last line break, the partial line carried over to the next.
//   - A line longer than scanWindow is searched through an io.RuneReader
//     (lineReader) that checks the context every checkEvery runes and
//     ends the text early when it is done, so even one huge line stops
//     promptly. Before that, the line is checked for the prefilter
//     literals, so a line without them costs one scan by the kernel. A line
//     longer than chunkSize is never held whole: its first MaxLineBytes
//     are kept for display, the literals are looked for as it streams
//     by, and the regexp reads it again from the file (pread) only if one
//     was seen.
//   - Multiline mode needs the whole file: it reads at most multilineMax
//     bytes of one (cut after the last line break before that), searches
//     them through a lineReader when they are over scanWindow, and a file
//     it could not read whole makes the answer incomplete (SizeLimit).
//
// An interrupted file is reported as such (fileHit.interrupted) and Scan
// leaves it out of the answer, which then ends with a Timeout.

import (
	"bytes"
	"context"
	"io"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// Sizes are the bounds of one file's scan (the names below are their
// fields'): DefaultSizes for every Search but the tests', which shrink them
// to reach every boundary with small files.
type Sizes struct {
	// Window (scanWindow) bounds the bytes of whole lines one regexp
	// call searches.
	Window int
	// Chunk (chunkSize) is the largest file read in one go, and the size
	// of each read of a larger one.
	Chunk int
	// Multiline (multilineMax) is how much of a file multiline mode
	// reads.
	Multiline int
	// CheckEvery is how many runes a lineReader hands out between two
	// looks at the context.
	CheckEvery int
	// Check, if set, is called each time a scan looks at its context
	// (tests cancel mid-file).
	Check func()
	// ProbeMin is the smallest file probed through the index's eighths
	// (see probe.go); 0, as in a Sizes that leaves it out, probes every
	// file the index places in some eighths.
	ProbeMin int64
}

// DefaultSizes returns the sizes of every Search that sets none.
func DefaultSizes() Sizes { return defaultSizes }

// defaultSizes are the scan's sizes (never written). Each scanner's
// buffers grow to a few times the chunk and are written by read(2) while
// fresh, one page fault a page: at 1 MiB a walk's Grep of GOROOT/src took
// 1,300 more faults (of 5,400) and 5% more time than at 256 KiB.
var defaultSizes = Sizes{Window: 64 << 10, Chunk: 256 << 10, Multiline: MultilineMaxBytes, CheckEvery: 16 << 10, ProbeMin: 4 << 10}

// sizes returns the Search's sizes.
func (s *Search) sizes() *Sizes {
	if s.Sizes != nil {
		return s.Sizes
	}
	return &defaultSizes
}

// fileScanner holds one worker's reusable buffers. Scan takes them from
// scanners for each file and puts them back after.
type fileScanner struct {
	root  *rooted.Root
	rd    rawfile.Reader
	sc    Scanner
	chunk []byte // chunked reads: 2*Sizes.Chunk
	head  []byte // the first bytes of a streamed line, for display
	tail  []byte // a streamed line's last bytes, for literals across reads
	rr    lineReader
	hits  []int // Search.Invert: the starts of a window's matching lines
	// tally counts the probes of the scan the file being read is part
	// of (nil: none counted), set with root.
	tally *probeTally
	// st is the scan of the file being read (scanOpen). It lives here,
	// not on scanOpen's stack, because a scan through a block filter
	// hands a function that reaches it to Blocks.Admitted, which would
	// otherwise move it to the heap for every file.
	st fileState
}

// keepBytes is how much buffer a fileScanner keeps between files; a
// multiline read of a larger file is dropped after use.
func keepBytes() int { return 3 * defaultSizes.Chunk }

// release drops the buffers a large file grew beyond what the common
// case needs.
func (fs *fileScanner) release() {
	fs.root, fs.tally = nil, nil
	fs.st = fileState{}
	fs.rd.Release(keepBytes())
	if cap(fs.chunk) > keepBytes() {
		fs.chunk = nil // grown for a block filter's build
	}
}

// scan reads one file and collects up to maxHits matches (all if
// maxHits < 0; counting continues past it only in count mode). It looks
// at ctx between bounded pieces of work (see the top of this file) and
// reports a file it could not finish as interrupted.
func (fs *fileScanner) scan(ctx context.Context, s *Search, f File, maxHits int) fileHit {
	file, err := rawfile.Open(fs.root, f.Rel)
	if err != nil {
		// Gone or replaced since it was listed: nothing to find. Anything
		// else may hide a match.
		return failed(err)
	}
	defer file.Close()
	h := fs.scanOpen(ctx, s, f, file, maxHits)
	if f.NoInfo && !h.interrupted && h.reports() {
		// The answer's order needs this file's mtime (see stateFiles):
		// it is the open file's. A file with nothing to report goes
		// without: a read is all a full scan needs of it.
		st, err := file.Stat()
		switch {
		case err != nil:
			return failed(err)
		case tree.StatType(uint32(st.Mode)) != 0:
			return fileHit{} // no longer a regular file: never listed now
		}
		h.info, h.mod, h.size = true, tree.Nanos(st.Mtim.Unix()), st.Size
	}
	return h
}

// scanOpen is scan of the open file.
func (fs *fileScanner) scanOpen(ctx context.Context, s *Search, f File, file *rawfile.File, maxHits int) fileHit {
	h := fileHit{}
	st := &fs.st
	begin := func() {
		*st = fileState{
			fs:      fs,
			done:    ctx.Done(),
			m:       s.Matcher,
			s:       s,
			sz:      s.sizes(),
			rel:     f.Rel,
			content: s.Mode == ModeContent,
			max:     maxHits,
			h:       &h,
			line:    1,
			cur:     1,
		}
	}
	begin()
	if probeWorth(s, f, fs.tally) {
		clean := fs.probe(st, f, file)
		if clean || st.found {
			fs.tally.count(clean) // a verdict; a changed file is none
		}
		if clean || st.interrupted {
			h.read, h.interrupted = true, st.interrupted
			return h
		}
		found := st.found
		begin()
		if found && resolvable(s) && fs.resolve(st, f, file) {
			h.read, h.interrupted = true, st.interrupted
			return h
		}
		// A line may match: the file is read whole (a resolve that
		// fails has recorded nothing).
	}
	if s.Blocks != nil && s.Blocks.Worth(f.Size) && fs.scanBlocks(st, f, file) {
		h.interrupted = st.interrupted
		return h
	}
	limit := st.sz.Chunk
	if s.Matcher.multiline {
		limit = st.sz.Multiline
	}
	data, eof, err := fs.rd.ReadPrefix(file, f.Size, limit)
	if err != nil {
		return failed(err)
	}
	h.read = true
	if bytes.IndexByte(data[:min(len(data), BinarySniffBytes)], 0) >= 0 {
		h.binary = true
		return h
	}
	// A UTF-8 byte-order mark is not part of the first line (as ripgrep
	// reads it): "^package" matches a file that starts with one, and the
	// line's text is shown without it.
	if bytes.HasPrefix(data, utf8BOM) {
		data, st.skipped = data[len(utf8BOM):], int64(len(utf8BOM))
	}
	switch {
	case s.Matcher.multiline:
		if !eof {
			data = data[:lineStart(data, st.sz.Multiline)]
			h.cut = true
		}
		st.multiline(data)
	case eof:
		st.region(data, true)
	default:
		fs.chunked(st, file, data)
	}
	h.interrupted = st.interrupted
	if st.later && !h.interrupted {
		s.Blocks.Later(f.Rel, st.laterStat, h.count > 0)
	}
	return h
}

// fileState is the scan of one file, fed region by region (each region a
// run of whole lines) and line by line for streamed lines.
type fileState struct {
	fs      *fileScanner
	done    <-chan struct{}
	m       *Matcher
	s       *Search
	sz      *Sizes // s.sizes()
	rel     string
	content bool
	max     int
	h       *fileHit

	line    int      // the number of the first line of the current region
	cur, at int      // line cur starts at or before offset at of the region (match numbering)
	prev    []string // the last s.Before lines before the current region
	pending []int    // matches (indexes in h.matches) still short of s.After lines
	full    bool     // max matches found: only pending context is still wanted

	interrupted bool // the context ended before the file was done

	// later: the file has no block filter yet; laterStat is its status,
	// for Blocks.Later after the scan (scanBlocks).
	later     bool
	laterStat unix.Stat_t

	skipped int64 // bytes at the file's start not scanned (a UTF-8 BOM)

	// probe: the lines are searched only to prove that none matches
	// (fileScanner.probe); a match sets found and ends the search,
	// recording nothing.
	probe, found bool
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte-order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// cancelled reports whether the context has ended, and records it.
func (st *fileState) cancelled() bool {
	if st.sz.Check != nil {
		st.sz.Check()
	}
	select {
	case <-st.done:
		st.interrupted = true
		return true
	default:
		return false
	}
}

// region scans buf, a run of whole lines following what was scanned
// before (each ends with "\n" except, when final, the last). It reports
// whether the scan should go on.
func (st *fileState) region(buf []byte, final bool) bool {
	st.cur, st.at = st.line, 0
	if len(st.pending) > 0 {
		st.fillPending(linesAfter(buf, -1, st.s.After))
	}
	for pos := 0; pos < len(buf) && !st.full; {
		if st.cancelled() {
			return false
		}
		end := min(pos+st.sz.Window, len(buf))
		if end < len(buf) {
			end = lineStart(buf, end)
		}
		if end > pos {
			base := pos
			if st.s.Invert {
				st.invertWindow(buf, base, end)
			} else {
				st.m.Scan(&st.fs.sc, buf[pos:end], func(s, e int) bool { return st.match(buf, base+s, base+e) })
			}
			pos = end
			continue
		}
		// The line at pos is longer than a window.
		le := lineEnd(buf, pos)
		matched, ok := st.longLine(buf[pos:le])
		if !ok {
			return false
		}
		if matched != st.s.Invert {
			st.match(buf, pos, le)
		}
		pos = le + 1
	}
	if final {
		return false
	}
	st.line = st.cur + bytes.Count(buf[st.at:], []byte{'\n'})
	if st.s.Before > 0 && len(buf) > 0 {
		st.prev = lastLines(st.prev, linesBefore(buf, len(buf), st.s.Before), st.s.Before)
	}
	return !st.full || len(st.pending) > 0
}

// invertWindow records, for Search.Invert, each line of buf[s:e] (whole
// lines) that does not match, and reports whether to look for more.
func (st *fileState) invertWindow(buf []byte, s, e int) bool {
	hits := st.fs.hits[:0]
	st.m.Scan(&st.fs.sc, buf[s:e], func(ms, _ int) bool {
		hits = append(hits, s+ms)
		return true
	})
	st.fs.hits = hits
	for pos := s; pos < e; {
		le := min(lineEnd(buf, pos), e)
		for len(hits) > 0 && hits[0] < pos {
			hits = hits[1:]
		}
		if len(hits) == 0 || hits[0] != pos {
			if !st.match(buf, pos, le) {
				return false
			}
		}
		pos = le + 1
	}
	return true
}

// match records the match on the line(s) [s, e) of buf, the current
// region, and reports whether to look for more.
func (st *fileState) match(buf []byte, s, e int) bool {
	if st.probe {
		st.found, st.full = true, true
		return false
	}
	st.cur += bytes.Count(buf[st.at:s], []byte{'\n'})
	st.at = s
	st.h.count++
	if st.content {
		m := Match{File: st.rel, Line: st.cur, Text: lineText(buf[s:e])}
		if n := st.s.Before; n > 0 {
			m.Before = linesBefore(buf, s, n)
			if len(m.Before) < n && len(st.prev) > 0 {
				m.Before = append(lastLines(nil, st.prev, n-len(m.Before)), m.Before...)
			}
		}
		if n := st.s.After; n > 0 {
			m.After = linesAfter(buf, e, n)
			if len(m.After) < n {
				st.pending = append(st.pending, len(st.h.matches))
			}
		}
		st.h.matches = append(st.h.matches, m)
	}
	if st.max >= 0 && st.h.count >= st.max {
		st.full = true
	}
	return !st.full
}

// streamedLine records a line too long to hold (see fileScanner.streamLine):
// its display text and whether it matched.
func (st *fileState) streamedLine(text string, matched bool) {
	if len(st.pending) > 0 {
		st.fillPending([]string{text})
	}
	if matched && !st.full {
		st.h.count++
		if st.content {
			m := Match{File: st.rel, Line: st.line, Text: text}
			if n := st.s.Before; n > 0 {
				m.Before = lastLines(nil, st.prev, n)
			}
			if st.s.After > 0 {
				st.pending = append(st.pending, len(st.h.matches))
			}
			st.h.matches = append(st.h.matches, m)
		}
		if st.max >= 0 && st.h.count >= st.max {
			st.full = true
		}
	}
	if n := st.s.Before; n > 0 {
		st.prev = lastLines(st.prev, []string{text}, n)
	}
	st.line++
}

// fillPending gives the matches still short of after-context the lines
// that follow them (next: the lines after the last ones they got).
func (st *fileState) fillPending(next []string) {
	keep := st.pending[:0]
	for _, i := range st.pending {
		m := &st.h.matches[i]
		take := min(st.s.After-len(m.After), len(next))
		m.After = append(m.After, next[:take]...)
		if len(m.After) < st.s.After {
			keep = append(keep, i)
		}
	}
	st.pending = keep
}

// lastLines returns the last n of old followed by add, in a new slice
// unless it can reuse old's.
func lastLines(old, add []string, n int) []string {
	if len(add) >= n {
		return append(old[:0], add[len(add)-n:]...)
	}
	keep := min(len(old), n-len(add))
	out := append(old[:0], old[len(old)-keep:]...)
	return append(out, add...)
}

// longLine reports whether one line longer than a window, held in memory,
// matches; ok is false if the context ended first.
func (st *fileState) longLine(line []byte) (matched, ok bool) {
	if !st.m.mayMatch(line) {
		return false, true
	}
	if st.m.litOnly {
		return true, true // the literal is the match
	}
	rr := &st.fs.rr
	rr.resetBytes(st.done, st.sz, line)
	matched = st.m.re.MatchReader(rr)
	if rr.cancelled {
		st.interrupted = true
		return false, false
	}
	return matched, true
}

// multiline scans buf, a whole file (or its first multilineMax bytes),
// for multiline matches.
func (st *fileState) multiline(buf []byte) {
	if len(buf) <= st.sz.Window {
		st.m.Scan(&st.fs.sc, buf, func(s, e int) bool { return st.match(buf, s, e) })
		return
	}
	// As Matcher.scanMultiline, through a lineReader that sees the
	// context.
	rr := &st.fs.rr
	multilineMatches(buf, func(rest []byte) []int {
		rr.resetBytes(st.done, st.sz, rest)
		loc := st.m.re.FindReaderIndex(rr)
		if rr.cancelled {
			st.interrupted = true
			return nil
		}
		return loc
	}, func(ls, le int) bool { return st.match(buf, ls, le) })
}

// chunked scans a file larger than a chunk, of which data (more than a
// chunk) has been read, reading the rest a chunk at a time.
func (fs *fileScanner) chunked(st *fileState, f *rawfile.File, data []byte) {
	chunk := st.sz.Chunk
	if cap(fs.chunk) < 2*chunk {
		fs.chunk = make([]byte, 0, 2*chunk)
	}
	cut := lastLineBreak(data) + 1
	if cut > 0 && !st.region(data[:cut], false) {
		return
	}
	// buf holds the bytes read and not scanned yet, from the start of a
	// line; only buf[fresh:] may hold a line break. off is the file's
	// position, just past them.
	buf := append(fs.chunk[:0], data[cut:]...)
	fresh := len(buf)
	off := st.skipped + int64(len(data))
	for {
		if st.cancelled() {
			return
		}
		if nl := lastLineBreak(buf[fresh:]); nl >= 0 {
			cut := fresh + nl + 1
			if !st.region(buf[:cut], false) {
				return
			}
			buf = buf[:copy(buf, buf[cut:])]
		}
		fresh = len(buf)
		if len(buf) >= chunk {
			// No line break in a chunk's worth: a line too long to hold.
			var ok bool
			if buf, off, ok = fs.streamLine(st, f, buf, off); !ok {
				return
			}
			fresh = 0
			continue
		}
		n, err := f.Read(buf[len(buf) : len(buf)+chunk])
		if err == io.EOF {
			if len(buf) > 0 {
				st.region(buf, true)
			}
			return
		}
		if err != nil {
			st.h.fault = true
			return
		}
		buf = buf[:len(buf)+n]
		off += int64(n)
	}
}

// streamLine scans a line longer than a chunk, whose first bytes (no
// line break among them) are buf, a slice of fs.chunk, read up to the
// file's position off; the file is read up to the line's end. It returns
// the bytes read past that end (in fs.chunk), the file's new position and
// whether to go on.
func (fs *fileScanner) streamLine(st *fileState, f *rawfile.File, buf []byte, off int64) ([]byte, int64, bool) {
	start := off - int64(len(buf))
	fs.head = append(fs.head[:0], buf[:min(len(buf), MaxLineBytes+1)]...)
	lit := st.m.lits == nil || st.full // (a class run is not looked for here)
	longest := 0
	if st.m.lits != nil {
		longest = st.m.lits.longest
	}
	fs.tail = fs.tail[:0]
	// see looks for the literals in b, the next bytes of the line, and
	// in the seam between them and the bytes before.
	see := func(b []byte) {
		if lit {
			return
		}
		seam := append(fs.tail, b[:min(len(b), longest-1)]...)
		lit = st.m.lits.contains(seam) || st.m.lits.contains(b)
		// The new tail: the last longest-1 bytes seen.
		if len(b) >= longest-1 {
			fs.tail = append(fs.tail[:0], b[len(b)-(longest-1):]...)
		} else {
			fs.tail = append(fs.tail, b...)
			fs.tail = fs.tail[:copy(fs.tail, fs.tail[max(0, len(fs.tail)-(longest-1)):])]
		}
	}
	see(buf)
	end := start + int64(len(buf))
	var rest []byte
	for {
		if st.cancelled() {
			return nil, 0, false
		}
		b := fs.chunk[:st.sz.Chunk]
		n, err := f.Read(b)
		if err == io.EOF {
			break
		}
		if err != nil {
			st.h.fault = true
			return nil, 0, false
		}
		b = b[:n]
		off += int64(n)
		i := bytes.IndexByte(b, '\n')
		line := b
		if i >= 0 {
			line = b[:i]
		}
		if len(fs.head) <= MaxLineBytes {
			fs.head = append(fs.head, line[:min(len(line), MaxLineBytes+1-len(fs.head))]...)
		}
		see(line)
		end += int64(len(line))
		if i >= 0 {
			rest = b[i+1:]
			break
		}
	}
	matched := false
	if lit && !st.full {
		rr := &fs.rr
		rr.resetFile(st.done, st.sz, f, start, end)
		matched = st.m.re.MatchReader(rr)
		switch {
		case rr.cancelled:
			st.interrupted = true
			return nil, 0, false
		case rr.err != nil:
			st.h.fault = true
			return nil, 0, false
		}
	}
	text := cutText(fs.head)
	if end-start <= MaxLineBytes { // only with a chunk shrunk by a test
		text = lineText(fs.head)
	}
	st.streamedLine(text, matched != st.s.Invert)
	if st.full && len(st.pending) == 0 {
		return nil, 0, false
	}
	return fs.chunk[:copy(fs.chunk[:len(rest)], rest)], off, true
}

// cutText is lineText for the first bytes of a line known to be longer
// than MaxLineBytes: cut on a character boundary and marked (nothing is
// trimmed: the line's end is not there).
func cutText(b []byte) string {
	if len(b) <= MaxLineBytes {
		return string(b) + LineCutMark
	}
	cut := MaxLineBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + LineCutMark
}

// lineReader hands the regexp engine a text rune by rune (an
// io.RuneReader), from memory or from a file (by pread, so the file's
// position does not move), and ends the text early (io.EOF, cancelled
// set) once done is closed, which it checks every Sizes.CheckEvery runes.
// Invalid UTF-8 is read as the regexp package reads a []byte: one
// utf8.RuneError per byte.
type lineReader struct {
	done      <-chan struct{}
	sz        *Sizes
	buf       []byte
	i         int
	budget    int
	cancelled bool

	// A file source: the bytes [off, end) of f are still to be read.
	f        *rawfile.File
	off, end int64
	scratch  []byte
	err      error // a read failed
}

func (r *lineReader) resetBytes(done <-chan struct{}, sz *Sizes, b []byte) {
	*r = lineReader{done: done, sz: sz, buf: b, scratch: r.scratch}
	r.check()
}

func (r *lineReader) resetFile(done <-chan struct{}, sz *Sizes, f *rawfile.File, off, end int64) {
	*r = lineReader{done: done, sz: sz, f: f, off: off, end: end, scratch: r.scratch}
	if len(r.scratch) == 0 {
		r.scratch = make([]byte, 64<<10)
	}
	r.check()
}

// check looks at the context and resets the budget.
func (r *lineReader) check() {
	r.budget = r.sz.CheckEvery
	if r.sz.Check != nil {
		r.sz.Check()
	}
	select {
	case <-r.done:
		r.cancelled = true
	default:
	}
}

// ReadRune implements io.RuneReader.
func (r *lineReader) ReadRune() (rune, int, error) {
	if r.budget--; r.budget <= 0 {
		r.check()
	}
	if r.cancelled {
		return 0, 0, io.EOF
	}
	if rem := r.buf[r.i:]; len(rem) < utf8.UTFMax && !utf8.FullRune(rem) && r.f != nil && r.off < r.end && r.err == nil {
		r.fill()
	}
	if r.i >= len(r.buf) {
		return 0, 0, io.EOF
	}
	if c := r.buf[r.i]; c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	c, w := utf8.DecodeRune(r.buf[r.i:])
	r.i += w
	return c, w, nil
}

// fill reads the next bytes of a file source after the unread ones.
func (r *lineReader) fill() {
	rem := copy(r.scratch, r.buf[r.i:])
	want := int(min(int64(len(r.scratch)-rem), r.end-r.off))
	n, err := r.f.ReadAt(r.scratch[rem:rem+want], r.off)
	switch {
	case err == io.EOF:
		r.end = r.off // the file shrank
	case err != nil:
		r.err = err
	}
	r.off += int64(n)
	r.buf, r.i = r.scratch[:rem+n], 0
}
