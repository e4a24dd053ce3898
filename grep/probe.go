package grep

// Probing a file through the index's eighths.
//
// The index records, for each trigram of a file, the eighths of the
// file holding the start of a line the trigram occurs in (index
// package, trigram.go, "Masks"), and tells a search, with each candidate,
// the eighths in which the line of a match may start (File.Eighths).
// Outside multiline mode a match lies within one line, so the lines
// starting elsewhere hold none. A file whose admitted eighths are some
// but not all of it is therefore probed first: only the lines starting
// in them are read (pread) and searched, and
//
//   - if none matches, the file holds no match: its scan is done, having
//     read a part of it (a query whose literals share files but never a
//     line reads an eighth or two of most of its candidates);
//   - if one does, the lines starting in the eighths are all the file's
//     matches: the file is read up to the end of the last of them, the
//     bytes before each run of them only counted for their line breaks
//     (a match's number), and only those lines searched (resolve; with
//     context lines, which lie outside them, or a line running on past
//     probeTail, the file is read and searched whole, as without the
//     index's word).
//
// The word holds only for the file the index read. After its reads, the
// probe takes the open file's status (fstat): any change of its size,
// mtime, ctime, inode or device since it was indexed sends the file to
// the whole read, as does a read short of the bytes expected. One status
// after the reads is enough: a write sets the ctime to the time of the
// write, before it copies its data, and nobody can set it back, so a
// ctime still the one indexed says no write came after the index's read
// of the file, during the probe's reads or before them. Except within
// the clock tick of the index's read, where a write can leave the ctime
// as it was: such a file is Racy, and the index tells every eighth of
// it (a rewrite in place between two spans, a match moved from the one
// not yet read into the one read, is caught: TestProbeTornRewrite).
//
// Which files. A probe costs an fstat and reads the lines it needs; it
// pays off where the eighths it skips are more than a few pages, so
// only files of Sizes.ProbeMin bytes or more are probed, and at most
// 4*Sizes.Chunk (a larger file is read in chunks, block filters and all,
// as before).

import (
	"bytes"
	"iter"
	"math/bits"
	"sync/atomic"

	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/tree"
)

// probeLine is how far past its eighths the probe reads at first, for the
// end of the last line starting in them: most lines end within it (an
// eighth's read is often a page or more, and this costs less than one).
// probeTail bounds how far it reads when the line runs on; a longer line
// sends the file to the whole read.
const (
	probeLine = 256
	probeTail = 4 << 10
)

// probeWorth reports whether f is to be probed by a search of s whose
// probes so far are t (nil: none counted).
func probeWorth(s *Search, f File, t *probeTally) bool {
	return f.Eighths != 0 && f.Eighths != 0xFF && !s.Matcher.multiline && !s.Invert &&
		f.Size >= s.sizes().ProbeMin && f.Size <= 4*int64(s.sizes().Chunk) && t.worth()
}

// probeTally counts one scan's probes that came to a verdict, and those
// that proved their file clean. A probe that finds a match has read part
// of a file the scan then reads again up to its last admitted line, so a
// query whose candidates mostly match (the first 1,000 lines of a common
// word) would read much of them twice: after probeTrial probes,
// files are probed only while at least one probe in four proved its file
// clean. Safe for concurrent use; nil counts nothing and always probes.
type probeTally struct{ tried, clean atomic.Int64 }

// probeTrial is how many probes a scan makes before its tally decides.
const probeTrial = 8

func (t *probeTally) worth() bool {
	if t == nil {
		return true
	}
	n := t.tried.Load()
	return n < probeTrial || 4*t.clean.Load() >= n
}

// count records a probe's verdict: whether it proved its file clean.
func (t *probeTally) count(clean bool) {
	if t == nil {
		return
	}
	t.tried.Add(1)
	if clean {
		t.clean.Add(1)
	}
}

// ProbeMin returns the smallest file s probes through the index's
// eighths (Sizes.ProbeMin): the index need not work out the eighths of
// smaller ones (index.CandidateOptions.LinesFrom).
func (s *Search) ProbeMin() int64 { return s.sizes().ProbeMin }

// eighthStart returns where the lines of eighth e of a file of n bytes
// start: ⌈e·n/8⌉, the first byte s with 8s/n = e (integer division), the
// index's rule (index.EighthOf). eighthStart(8, n) is n.
func eighthStart(e int, n int64) int64 { return (int64(e)*n + 7) / 8 }

// probe searches the lines of file (f, open) that start in f.Eighths
// and reports whether it proved that the file holds no match: the file
// is as indexed and did not change while read, and none of those lines
// matches. Otherwise the caller reads it whole, unless st.interrupted;
// st.found tells that a line matched.
func (fs *fileScanner) probe(st *fileState, f File, file *rawfile.File) bool {
	st.probe = true
	for b, e := range eighthRuns(f.Eighths) {
		if !fs.probeSpan(st, file, eighthStart(b, f.Size), eighthStart(e, f.Size), f.Size) {
			return false
		}
	}
	return asIndexed(f, file)
}

// eighthRuns yields each run [b, e) of consecutive eighths set in
// eighths, in order.
func eighthRuns(eighths uint8) iter.Seq2[int, int] {
	return func(yield func(b, e int) bool) {
		for b := 0; b < 8; {
			if eighths&(1<<b) == 0 {
				b++
				continue
			}
			e := b + 1
			for e < 8 && eighths&(1<<e) != 0 {
				e++
			}
			if !yield(b, e) {
				return
			}
			b = e
		}
	}
}

// asIndexed reports whether the open file is still the one the index
// read as f: its status, taken after the reads it vouches for (see the
// top of this file).
func asIndexed(f File, file *rawfile.File) bool {
	sys, err := file.Stat()
	return err == nil && tree.StatType(uint32(sys.Mode)) == 0 && sys.Size == f.Size &&
		tree.Nanos(sys.Mtim.Unix()) == f.ModTime && tree.Nanos(sys.Ctim.Unix()) == f.Indexed.Ctime &&
		uint64(sys.Ino) == f.Indexed.Ino && uint64(sys.Dev) == f.Indexed.Dev
}

// resolvable reports whether a search of s may finish a probed file
// that holds a match by resolve: its answer needs only the matching
// lines, not those around them.
func resolvable(s *Search) bool { return s.Before == 0 && s.After == 0 }

// resolve finishes the scan of file (f, open), in which a probe found a
// matching line, without searching all of it: by the index's word the
// lines of every match start in f.Eighths, so only those are searched;
// the bytes before them are read only to count their lines (a match's
// number), and the bytes after the last of them not at all. It reads the
// file up to the end of the last such line (at least BinarySniffBytes
// of it) and reports false, having recorded nothing, when the reads fall
// short, the line runs on past probeTail, the bytes read hold a NUL, or
// the status after the reads is not the one indexed: the caller then
// reads the file whole.
func (fs *fileScanner) resolve(st *fileState, f File, file *rawfile.File) bool {
	n := f.Size
	hi := eighthStart(bits.Len8(f.Eighths), n) // the last line to search holds byte hi-1
	buf, ok := fs.readLines(st, file, 0, hi, BinarySniffBytes, n)
	if !ok || bytes.IndexByte(buf[:min(len(buf), BinarySniffBytes)], 0) >= 0 || !asIndexed(f, file) {
		return false
	}
	line, at := 1, 0 // line is the number of the line starting at offset at
	for b, e := range eighthRuns(f.Eighths) {
		start, end, any := spanLines(buf, 0, eighthStart(b, n), eighthStart(e, n))
		if !any {
			continue
		}
		line += bytes.Count(buf[at:start], []byte{'\n'})
		st.line = line
		if !st.region(buf[start:end], end == len(buf) && int64(end) == n) || end == len(buf) {
			break
		}
		line, at = st.line, end
	}
	return true
}

// probeSpan searches the lines of file (n bytes) that start in bytes
// [lo, hi) and reports whether none of them matches (false too when the
// file is not as expected, or the context ended).
func (fs *fileScanner) probeSpan(st *fileState, file *rawfile.File, lo, hi, n int64) bool {
	if lo >= hi {
		return true // no byte, no line
	}
	// From the byte before lo: a line starts at lo if that byte is a
	// line break.
	from := max(lo-1, 0)
	buf, ok := fs.readLines(st, file, from, hi, 0, n)
	if !ok {
		return false // changed since the fstat, unreadable or a line too long: the whole read tells
	}
	start, end, any := spanLines(buf, from, lo, hi)
	if !any {
		return true // none starts there
	}
	st.region(buf[start:end], true)
	return !st.found && !st.interrupted
}

// readLines reads the file (n bytes) from byte from through the end of
// the line holding byte hi-1 (from < hi), and at least to byte least:
// first probeLine bytes past hi, for the end of that line, then on to
// probeTail past hi if it has not ended. The bytes are fs.chunk's; ok is
// false when a read falls short (the file changed, or cannot be read)
// or the line runs on past probeTail before the end of the file.
func (fs *fileScanner) readLines(st *fileState, file *rawfile.File, from, hi, least, n int64) (buf []byte, ok bool) {
	want := int(min(max(hi+probeLine, least), n) - from)
	most := max(int(min(hi+probeTail, n)-from), want)
	if cap(fs.chunk) < most {
		fs.chunk = make([]byte, 0, max(most, 2*st.sz.Chunk))
	}
	buf = fs.chunk[:most]
	if got, err := file.ReadFullAt(buf[:want], from); err != nil || got != want {
		return nil, false
	}
	if want < most && bytes.IndexByte(buf[hi-1-from:want], '\n') < 0 {
		if got, err := file.ReadFullAt(buf[want:], from+int64(want)); err != nil || got != most-want {
			return nil, false
		}
		want = most
	}
	buf = buf[:want]
	if bytes.IndexByte(buf[hi-1-from:], '\n') < 0 && from+int64(want) < n {
		return nil, false // a line longer than probeTail past hi
	}
	return buf, true
}

// spanLines returns where in buf (the file's bytes from byte from on,
// through the end of the line holding byte hi-1, as readLines reads
// them) the lines that start in bytes [lo, hi) begin and end: after the
// first line break in [lo-1, hi-1) (at the file's start when lo is 0,
// past a UTF-8 byte-order mark, which is not part of the first line:
// scanOpen), through the line break after byte hi-1, or the end of buf.
// any is false when no line starts there.
func spanLines(buf []byte, from, lo, hi int64) (start, end int, any bool) {
	if lo >= hi {
		return 0, 0, false
	}
	if lo > 0 {
		i := bytes.IndexByte(buf[lo-1-from:hi-1-from], '\n')
		if i < 0 {
			return 0, 0, false
		}
		start = int(lo-from) + i
	} else if bytes.HasPrefix(buf, utf8BOM) {
		start = len(utf8BOM)
	}
	end = len(buf)
	if j := bytes.IndexByte(buf[hi-1-from:], '\n'); j >= 0 {
		end = int(hi-from) + j
	}
	return start, end, true
}
