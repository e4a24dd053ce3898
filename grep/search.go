package grep

import "strconv"

// Limits of what a scan reads and shows.
const (
	// BinarySniffBytes is how much of a file is checked for a NUL byte to
	// call it binary (as git and ripgrep do).
	BinarySniffBytes = 8 << 10
	// MaxLineBytes is the longest line text a match holds; longer lines
	// are cut and marked with LineCutMark.
	MaxLineBytes = 2000
	LineCutMark  = " [... line truncated]"
	// MultilineMaxBytes is how much of one file a multiline search reads
	// (see chunk.go); a larger file is searched in its beginning and the
	// answer says so (SizeLimit).
	MultilineMaxBytes = 32 << 20
)

// Mode is what a scan collects of the files that match.
type Mode uint8

// Modes.
const (
	ModeContent Mode = iota // the matching lines (Match), with their context
	ModeFiles               // the files with a matching line
	ModeCount               // each file's number of matching lines (Count)
)

func (m Mode) String() string {
	switch m {
	case ModeContent:
		return "content"
	case ModeFiles:
		return "files"
	case ModeCount:
		return "count"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Search is one Grep's scan: which lines match, what of them is kept,
// and how many. A Search is read, never changed, by the scan; one may be
// used by several scans at once.
type Search struct {
	// Root is the absolute path of the directory the files are named
	// beneath (File.Rel); nothing is opened but beneath it (rooted).
	Root    string
	Matcher *Matcher
	Mode    Mode
	// Limit is how many results the answer holds (lines in ModeContent,
	// files otherwise): the scan looks for Limit+1 so that Truncated is
	// exact.
	Limit int
	// Before and After are the context lines each match carries
	// (ModeContent).
	Before, After int
	// Invert selects the lines that do not match (not with a multiline
	// Matcher).
	Invert bool
	// Sink, if set, takes the results in the answer's order as the scan
	// completes them, instead of the Result, which then counts them
	// (Streamed) and holds none. It reports false once it wants no more:
	// the scan then stops, its answer ending before the batch refused.
	Sink func(Batch) bool
	// Blocks, if set, lets the scan read a large file through its block
	// filter (blocks.go). Only for a plain search: not Invert, not
	// multiline, no context lines, which all read lines beyond the
	// matching ones.
	Blocks Blocks
	// Sizes, if set, replaces the scan's sizes (chunk.go): tests shrink
	// them so that small files cross every boundary.
	Sizes *Sizes

	// noInline: a small scan is read on the workers too (smallScan; this
	// package's tests compare the two).
	noInline bool
}

// File is a file to scan: its path beneath Search.Root, and its mtime and
// size when it was listed.
type File struct {
	Rel     string
	ModTime int64
	Size    int64
	// NoInfo: ModTime and Size are not known yet (a walk listed the file
	// without its status): whoever reads it takes them from the open
	// file (fileHit.info).
	NoInfo bool
	// Eighths, when neither 0 nor all eight (0xFF), is the index's word
	// on where a match can be: only in the lines starting in these eighths
	// of the file, bit e standing for bytes [⌈e·Size/8⌉, ⌈(e+1)·Size/8⌉),
	// while the file is as it was indexed (Size, ModTime and Indexed).
	// Scan then reads those lines first and, if one of them matches, the
	// file up to the last of them (see probe.go).
	Eighths uint8
	Indexed Stamp
	// pre, if set, is what the file holds, already read (by a prescan, or
	// in an earlier prefix of the same query: Known): Scan takes it
	// instead of reading the file again.
	pre *fileHit
}

// Stamp is the rest of a file's status as the index saw it, beside
// File's Size and ModTime: a file whose fstat shows all five unchanged is
// taken to hold what was indexed.
type Stamp struct {
	Ctime    int64 // Unix nanoseconds, as tree.Nanos clamps them
	Ino, Dev uint64
}

// Match is one matching line (in multiline mode, the lines of one match)
// of a file.
type Match struct {
	File   string
	Line   int
	Text   string
	Before []string
	After  []string
}

// Count is one file's number of matching lines (ModeCount).
type Count struct {
	File  string
	Count int
}

// Batch is a run of results handed to Search.Sink, in the answer's order:
// the Matches (ModeContent), Files (ModeFiles) or Counts (ModeCount) the
// scan completed since the last one. A file's matches are never split
// between two batches.
type Batch struct {
	Matches []Match
	Files   []string
	Counts  []Count
}

// BatchSize is how many results a Batch holds at most, but for the
// matches of its last file.
const BatchSize = 1024

// Abort says why a scan's answer may lack results the files hold; the
// zero value says it does not.
type Abort uint8

// Aborts, in the order a scan reports them: the first that applies.
const (
	Complete Abort = iota
	// Timeout: the context ended before the answer settled; the answer
	// is the completed prefix.
	Timeout
	// ReadError: a file could not be read, and not because it is gone.
	ReadError
	// SizeLimit: a file was searched only in part (a multiline search
	// reads at most MultilineMaxBytes of one).
	SizeLimit
)

func (a Abort) String() string {
	switch a {
	case Complete:
		return "complete"
	case Timeout:
		return "timeout"
	case ReadError:
		return "read error"
	case SizeLimit:
		return "size limit"
	}
	return "Abort(" + strconv.Itoa(int(a)) + ")"
}

// Result is a scan's answer: the first Limit results in Grep's order
// (mtime descending, then path, then line), and what the scan read.
type Result struct {
	Matches []Match  // ModeContent
	Files   []string // ModeFiles
	Counts  []Count  // ModeCount
	// Truncated is exact: true only when a further result exists.
	Truncated bool
	Abort     Abort
	// The work: files read (and, of those, binary), and the files and
	// lines the answer's results come from (as the envelope counts them).
	FilesScanned, BinarySkipped int
	MatchedFiles, MatchedLines  int
	// Streamed, with a Sink: the results handed to it (lines, or files).
	Streamed int
	// Denied are the files of the answer's prefix this process may not
	// read (rooted.Denied), in Grep's order: matches in them are missing,
	// and the answer must name them (they are not an Abort: the scan
	// went on).
	Denied []string
}
