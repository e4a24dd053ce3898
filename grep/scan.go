package grep

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// stateFiles gives each file the walk listed its prescanned hit (hits[i]
// is files[i]'s, nil if it was not read) and fills in the mtime and size
// of the files listed without them: from the hit when the prescan took
// them from the open file, else as the walk would have (statListed). A
// file that is gone or no longer a regular file is dropped, as a walk
// listing it now would leave it out.
//
// The prescan takes the status only of files with something to report
// (fileHit.reports): when it read every file and they hold fewer
// results than settle the answer (s.Limit, scanNeeds), Scan takes
// every file and orders only those (assembleRead), so the others are
// left without an mtime (0), and the walk without one stat per file.
// Otherwise they are stat'd like the files never read.
func stateFiles(ctx context.Context, s *Search, files []File, hits []*fileHit) ([]File, error) {
	var todo, quiet []int // listed without status: not read; read, with nothing to report
	results := 0
	for i := range files {
		f := &files[i]
		if i < len(hits) {
			f.pre = hits[i]
		}
		if f.pre != nil {
			results += f.pre.results(s.Mode)
		}
		switch {
		case !f.NoInfo:
		case f.pre != nil && f.pre.info:
			f.ModTime, f.Size, f.NoInfo = f.pre.mod, f.pre.size, false
		case f.pre != nil && f.pre.quiet():
			quiet = append(quiet, i)
		default:
			f.pre = nil // not read, or not as a regular file: Scan reads it
			todo = append(todo, i)
		}
	}
	if need, _ := scanNeeds(s); len(todo) == 0 && results < need {
		for _, i := range quiet {
			files[i].NoInfo = false // its mtime cannot change the answer
		}
	} else {
		todo = append(todo, quiet...)
		slices.Sort(todo) // statListed takes them in walk order
	}
	if len(todo) > 0 {
		if err := statListed(ctx, s.Root, files, todo); err != nil {
			return nil, err
		}
	}
	out := files[:0]
	for _, f := range files {
		if !f.NoInfo {
			out = append(out, f)
		}
	}
	return out, nil
}

// statListed stats the files at todo (indexes into files, in walk order)
// as the walk does: each directory opened once beneath the root, each
// file lstat'd by its name in it, directories spread over a few
// goroutines (a prescan that stops early leaves the files of every
// directory its walk had listed ahead: 2,177 of GOROOT/src's for
// "func main" limit 100, 7 ms one by one through the root). A file
// found gone or not regular keeps NoInfo (stateFiles drops it); one
// that cannot be stat'd for another reason is kept as a file that could
// not be read, which Scan reports as it reports any.
//
// Goroutines: statListed starts its workers and waits for them.
func statListed(ctx context.Context, root string, files []File, todo []int) error {
	r, err := rooted.Open(root)
	if err != nil {
		return fmt.Errorf("%w: %w", tree.ErrUnreadable, err)
	}
	defer r.Close()
	// Runs of todo in one directory (files of a directory are listed
	// together).
	var runs [][]int
	for k := 0; k < len(todo); {
		dir := parentOf(files[todo[k]].Rel)
		e := k + 1
		for e < len(todo) && parentOf(files[todo[e]].Rel) == dir {
			e++
		}
		runs = append(runs, todo[k:e])
		k = e
	}
	unreadable := func(f *File, err error) {
		h := failed(err)
		f.pre, f.NoInfo = &h, false
	}
	statRun := func(run []int) {
		d, err := r.OpenDir(parentOf(files[run[0]].Rel))
		if err != nil {
			if !rooted.Gone(err) {
				for _, i := range run {
					unreadable(&files[i], err)
				}
			}
			return
		}
		defer d.Close()
		fd := int(d.Fd())
		for _, i := range run {
			f := &files[i]
			var st unix.Stat_t
			switch err := unix.Fstatat(fd, baseName(f.Rel), &st, unix.AT_SYMLINK_NOFOLLOW); {
			case err != nil && rooted.Gone(err):
			case err != nil:
				unreadable(f, err)
			case tree.StatType(uint32(st.Mode)) == 0:
				f.ModTime, f.Size, f.NoInfo = tree.Nanos(st.Mtim.Unix()), st.Size, false
			}
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(runs), 4) {
		wg.Go(func() {
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= len(runs) {
					return
				}
				statRun(runs[k])
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// fileHit is what scanning one file found.
type fileHit struct {
	matches []Match // content mode
	count   int     // matching lines (or matches in multiline mode)
	read    bool    // the file was read
	binary  bool
	fault   bool // the file could not be read, and not because it is gone or denied
	denied  bool // the file may not be read (rooted.Denied)
	cut     bool // only the first multilineMax bytes were searched
	// interrupted: the context ended before the file was done; the hit
	// is incomplete and never part of an answer.
	interrupted bool
	// info: mod and size are the open file's (read for a File with
	// NoInfo when the hit reports something, and the file was found to
	// be a regular file).
	info      bool
	mod, size int64
}

// reports says whether h puts something in an answer, or sets its
// Abort: what only a file in its place in Grep's order may do.
func (h *fileHit) reports() bool { return h.count > 0 || h.fault || h.denied || h.cut }

// failed is the hit of a file that could not be opened or read for err:
// nothing when it is gone (nothing to find), else what the answer says.
func failed(err error) fileHit {
	return fileHit{fault: !rooted.Gone(err) && !rooted.Denied(err), denied: rooted.Denied(err)}
}

// quiet says whether h is a whole read of a file with nothing to report.
func (h *fileHit) quiet() bool { return h.read && !h.reports() && !h.interrupted }

// scanners bounds the files being scanned at once by every Grep in the
// process together, and holds their buffers (see fileScanner) for reuse,
// so that concurrent queries add waiting, not memory: a Scan worker takes
// one for each file and puts it back after.
var scanners = newScanPool(max(4, 2*runtime.GOMAXPROCS(0)))

// results returns what h adds to an answer in output mode mode, as its
// need counts them: matching lines (content), else 1 for a matching file.
func (h *fileHit) results(mode Mode) int {
	switch {
	case mode == ModeContent:
		return len(h.matches)
	case h.count > 0:
		return 1
	}
	return 0
}

// scanNeeds returns the results (lines, or files) that settle a Grep's
// truncation, and the matches worth collecting from one file (-1: count
// them all).
func scanNeeds(s *Search) (need, perFile int) {
	need = s.Limit + 1
	perFile = need
	switch s.Mode {
	case ModeFiles:
		perFile = 1
	case ModeCount:
		perFile = -1
	}
	return need, perFile
}

// Scan reads files (in any order: it puts them in Grep's order, mtime
// descending then path, as it reaches them, and owns the slice) in
// parallel and returns the first matches in that order: the first limit,
// and truncated exactly when one more exists. Workers take files in
// order; results are consumed as a completed prefix, so the answer does
// not depend on scheduling, and the scan stops as soon as the prefix
// holds limit+1 results. When ctx ends first, the completed prefix is
// the (partial) answer.
//
// Goroutines: Scan starts its workers (a small scan's one worker runs on
// the caller's goroutine) and waits for them before it returns. A worker
// looks at ctx between bounded pieces of work (see
// chunk.go), so once ctx ends Scan returns within about one such piece
// (a scanWindow of lines, checkEvery runes of a long line, one read),
// however large the file being scanned.
func Scan(ctx context.Context, s *Search, files []File) Result {
	if s.Sink == nil && ctx.Err() == nil && allRead(files) {
		return assembleRead(s, files)
	}
	res, _ := scanFiles(ctx, s, files)
	return res
}

// allRead reports whether every file carries its hit (File.pre), as
// after a walk whose prescan read them all.
func allRead(files []File) bool {
	for i := range files {
		if files[i].pre == nil {
			return false
		}
	}
	return len(files) > 0
}

// assembleRead is Scan's answer for files that all carry their hits: the
// completed prefix Scan would reach, taking the files in Grep's order
// until it holds the results that settle the answer, found by putting in
// order only the files with something to report (results, or a fault or
// cut that sets the answer's Abort).
func assembleRead(s *Search, files []File) Result {
	mode := s.Mode
	need, _ := scanNeeds(s)
	var notable []*File
	for i := range files {
		if files[i].pre.reports() {
			notable = append(notable, &files[i])
		}
	}
	slices.SortFunc(notable, func(a, b *File) int {
		if newer(a, b) {
			return -1
		}
		return 1 // paths differ: never equal
	})
	have, end := 0, len(notable)
	for k, f := range notable {
		if have += f.pre.results(mode); have >= need {
			end = k + 1
			break
		}
	}
	refs := make([]File, end)
	hits := make([]fileHit, end)
	for k, f := range notable[:end] {
		refs[k], hits[k] = *f, *f.pre
	}
	res := assemble(s, refs, hits, false)
	// The prefix holds every file up to its last notable one (all, when
	// the results never settle it); count what it read.
	res.FilesScanned, res.BinarySkipped = 0, 0
	for i := range files {
		if end < len(notable) && newer(notable[end-1], &files[i]) {
			continue // past the prefix
		}
		if files[i].pre.read {
			res.FilesScanned++
		}
		if files[i].pre.binary {
			res.BinarySkipped++
		}
	}
	return res
}

// Read is what a scan read (ScanRead): the files of its completed prefix
// in Grep's order with their hits, and whether that prefix is all the
// files (the scan was neither stopped by ctx nor unable to open the
// root).
type Read struct {
	files    []File
	hits     []fileHit
	complete bool
}

// Complete reports whether the scan read every file it was given.
func (r *Read) Complete() bool { return r.complete }

// Known returns the hits of the files r holds, by path, for a later scan
// of the same query over more files (Known.File): a prefix of Grep's
// order read whole is the start of the next, larger one, and none of its
// files is read twice.
func (r *Read) Known() Known {
	m := make(map[string]*fileHit, len(r.files))
	for i := range r.files {
		m[r.files[i].Rel] = &r.hits[i]
	}
	return Known{m}
}

// Known is what earlier scans of one query read, by path (Read.Known).
// The zero value knows nothing.
type Known struct{ m map[string]*fileHit }

// File returns the file rel, listed with mtime mod and size, to scan:
// carrying its hit when k knows it, so that a scan takes the hit instead
// of reading the file again.
func (k Known) File(rel string, mod, size int64) File {
	return File{Rel: rel, ModTime: mod, Size: size, pre: k.m[rel]}
}

// ScanRead is Scan, also returning what it read. It always scans (Scan
// puts files that all carry their hits together without the workers).
func ScanRead(ctx context.Context, s *Search, files []File) (Result, Read) {
	return scanFiles(ctx, s, files)
}

// scanFiles is Scan, also returning what it read.
func scanFiles(ctx context.Context, s *Search, files []File) (Result, Read) {
	need, perFile := scanNeeds(s)
	if len(files) == 0 {
		return assemble(s, nil, nil, false), Read{complete: true} // nothing to read
	}
	if s.Blocks != nil {
		s.Blocks.Scanning(1)
		defer s.Blocks.Scanning(-1)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	root, err := rooted.Open(s.Root)
	if err != nil {
		return Result{Abort: ReadError}, Read{}
	}
	defer root.Close()

	// The workers advance the completed prefix themselves as each file is
	// done, and stop taking files once it settles the answer: a consumer
	// goroutine of its own could be left waiting for a CPU while they ran
	// far ahead (on 2 cores, "func main" limit 100 scanned ten times the
	// files its answer needed).
	// files are put in Grep's order as the workers reach them (see
	// ordering): a scan stopped by its limit sorts only what it read.
	order := newOrdering(files)
	hits := make(hitTable, (len(files)+hitChunk-1)/hitChunk)
	finished := make([]bool, len(files))
	// A worker takes a file at most ahead files past the prefix (with a
	// Sink, past what the Sink has been given): beyond that it waits,
	// since files past the answer are read for nothing, and a slow Sink
	// must not let results pile up.
	workers := min(len(files), 2*runtime.GOMAXPROCS(0))
	// A small scan without a Sink (smallScan) has one worker, run on
	// this goroutine before the wait below: starting workers would wake
	// another thread for less work than waking it costs (a rare
	// literal's handful of candidates). Without a Sink, the worker never
	// waits for this goroutine (base is its own prefix).
	inline := s.Sink == nil && !s.noInline && smallScan(files)
	if inline {
		workers = 1
	}
	ahead := 8 * workers
	var (
		mu           sync.Mutex
		prefix, have int
		sent         int // with a Sink: files handed over (≤ prefix)
		stop         atomic.Bool
	)
	base := func() int { // caller holds mu
		if s.Sink != nil {
			return sent
		}
		return prefix
	}
	moved := sync.NewCond(&mu)
	settled := make(chan struct{})
	progress := make(chan struct{}, 1) // the prefix moved (for the Sink)
	advance := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		finished[i] = true
		for prefix < len(files) && finished[prefix] && have < need {
			have += hits.at(prefix).results(s.Mode)
			prefix++
		}
		if (prefix == len(files) || have >= need) && !stop.Load() {
			stop.Store(true)
			close(settled)
		}
		moved.Broadcast()
		if s.Sink != nil { // only a Sink needs Scan's goroutine woken
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}
	// A scan that has taken scanPrefetchAfter files reads ahead of its
	// workers from then on (rawfile.Prefetcher: on a cold page cache its
	// workers alone have a handful of reads in flight). The prefetcher
	// places the files it asks for, as the workers would; a smaller scan
	// never starts one, so a warm query stopped by its limit places and
	// probes nothing more than it reads.
	var pf *rawfile.Prefetcher // set under mu
	startPrefetch := func() {  // caller holds mu
		pf = rawfile.StartPrefetch(root, scanPrefetchAfter, len(files), func(i int) (string, bool) {
			mu.Lock()
			defer mu.Unlock()
			if stop.Load() {
				return "", false
			}
			order.upTo(i + 1)
			return files[i].Rel, files[i].pre == nil // a file already read is not read again
		})
	}
	var next atomic.Int64
	var tally probeTally
	worker := func() {
		for !stop.Load() {
			mu.Lock()
			for int(next.Load()) >= base()+ahead && !stop.Load() {
				moved.Wait()
			}
			mu.Unlock()
			// This query's files taken so far rank it among the
			// waiters: the fewer, the sooner (see scanPool).
			fs := scanners.take(ctx, int(next.Load()))
			if fs == nil {
				return
			}
			mu.Lock()
			i := int(next.Add(1) - 1)
			if i < len(files) {
				order.upTo(i + 1)
				hits.reserve(i)
			}
			if i == scanPrefetchAfter && i < len(files) {
				startPrefetch()
			}
			fetch := pf
			mu.Unlock()
			fetch.Reached(i)
			if i >= len(files) || stop.Load() {
				scanners.put(fs)
				return
			}
			var h fileHit
			if pre := files[i].pre; pre != nil {
				scanners.put(fs)
				h = *pre
			} else {
				fs.root, fs.tally = root, &tally
				h = fs.scan(ctx, s, files[i], perFile)
				scanners.put(fs)
				if h.interrupted {
					return // ctx has ended: the prefix stops before this file
				}
			}
			*hits.at(i) = h
			advance(i)
		}
	}
	exited := make(chan struct{})
	if inline {
		worker()
		close(exited)
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(worker)
		}
		go func() { wg.Wait(); close(exited) }()
	}

	// deliver hands the completed prefix's results to the Sink, in order,
	// outside mu (a Sink may wait for its reader), and lets go of them.
	// Once the Sink refuses a batch (it wants no more), nothing more is
	// handed over and the scan stops.
	var batch Batch
	refused := false
	flush := func() {
		if len(batch.Matches)+len(batch.Files)+len(batch.Counts) > 0 && !refused {
			refused = !s.Sink(batch)
			batch = Batch{}
		}
	}
	delivered := 0 // sent, as the main goroutine sees it between updates
	deliver := func() {
		mu.Lock()
		n := prefix
		mu.Unlock()
		for ; delivered < n && !refused; delivered++ {
			h := hits.at(delivered)
			if h.count == 0 {
				continue
			}
			switch s.Mode {
			case ModeContent:
				batch.Matches = append(batch.Matches, h.matches...)
				h.matches = nil
			case ModeFiles:
				batch.Files = append(batch.Files, files[delivered].Rel)
			case ModeCount:
				batch.Counts = append(batch.Counts, Count{File: files[delivered].Rel, Count: h.count})
			}
			if len(batch.Matches)+len(batch.Files)+len(batch.Counts) >= BatchSize {
				flush()
			}
		}
		mu.Lock()
		sent = delivered
		moved.Broadcast() // workers waiting on sent go on
		mu.Unlock()
	}

	aborted := false
	for waiting := true; waiting; {
		select {
		case <-progress:
			deliver()
			if refused {
				waiting = false
				mu.Lock()
				stop.Store(true) // the answer is settled: the workers stop
				moved.Broadcast()
				mu.Unlock()
			}
		case <-settled:
			waiting = false
		case <-parent.Done():
			waiting, aborted = false, true
			mu.Lock()
			stop.Store(true) // wakes the workers waiting for the prefix
			moved.Broadcast()
			mu.Unlock()
		case <-exited:
			// Every worker has stopped: the prefix settled, or ctx ended
			// first.
			waiting = false
			select {
			case <-settled:
			default:
				aborted = true
			}
		}
	}
	cancel()
	<-exited
	mu.Lock()
	n := prefix
	fetch := pf
	mu.Unlock()
	fetch.Stop()
	if s.Sink != nil {
		deliver()
		flush()
	}
	done := Read{files: files[:n], hits: hits.prefix(n), complete: !aborted && n == len(files)}
	return assemble(s, done.files, done.hits, aborted), done
}

// scanPrefetchAfter is how many files a scan takes before it reads
// ahead of its workers (see Scan).
const scanPrefetchAfter = 1024

// A scan of at most inlineFiles files holding at most inlineBytes in all
// is small: Scan reads it on the caller's goroutine (but for a Search of
// this package's tests with noInline). Measured in process on GOROOT/src with the pair
// kernel: xyzzy's 7 candidates (over 512 KiB) 151 → 117 µs,
// ErrShortWrite's 22 180 → 148 µs, and 263 → 235 µs folded, against 8
// files and 512 KiB; a scan of 50 files (sync\.Pool) was no faster
// inline, and those of more are faster with the workers.
const (
	inlineFiles       = 32
	inlineBytes int64 = 4 << 20
)

func smallScan(files []File) bool {
	if len(files) > inlineFiles {
		return false
	}
	var size int64
	for _, f := range files {
		size += f.Size
	}
	return size <= inlineBytes
}

// hitTable holds a Scan's hits by file position, a chunk allocated when
// a worker first takes a file in it (under the Scan's lock): a scan
// stopped by its limit allocates for the files it reached, not for every
// candidate.
type hitTable [][]fileHit

const hitChunk = 256

func (t hitTable) at(i int) *fileHit { return &t[i/hitChunk][i%hitChunk] }

func (t hitTable) reserve(i int) {
	if t[i/hitChunk] == nil {
		t[i/hitChunk] = make([]fileHit, hitChunk)
	}
}

// prefix returns the hits of the first n files (each reserved).
func (t hitTable) prefix(n int) []fileHit {
	out := make([]fileHit, 0, n)
	for c := 0; len(out) < n; c++ {
		out = append(out, t[c][:min(hitChunk, n-len(out))]...)
	}
	return out
}

// assemble turns the scanned prefix into the result: the first limit results,
// truncated if there were more.
func assemble(s *Search, files []File, hits []fileHit, aborted bool) Result {
	var res Result
	if aborted {
		res.Abort = Timeout
	}
	for i, h := range hits {
		if h.fault && res.Abort == Complete {
			res.Abort = ReadError
		}
		if h.denied {
			res.Denied = append(res.Denied, files[i].Rel)
		}
		if h.cut && res.Abort == Complete {
			res.Abort = SizeLimit
		}
		if h.read {
			res.FilesScanned++
		}
		if h.binary {
			res.BinarySkipped++
		}
		if h.count == 0 {
			continue
		}
		if s.Sink != nil { // the results went to the sink (Scan)
			res.MatchedFiles++
			if s.Mode != ModeFiles {
				res.MatchedLines += h.count
			}
			if s.Mode == ModeContent {
				res.Streamed += h.count
			} else {
				res.Streamed++
			}
			continue
		}
		switch s.Mode {
		case ModeContent:
			room := s.Limit - len(res.Matches)
			if room <= 0 {
				res.Truncated = true
				continue
			}
			ms := h.matches
			if len(ms) > room {
				ms, res.Truncated = ms[:room], true
			}
			res.Matches = append(res.Matches, ms...)
			res.MatchedFiles++
			res.MatchedLines += len(ms)
		case ModeFiles:
			if len(res.Files) == s.Limit {
				res.Truncated = true
				continue
			}
			res.Files = append(res.Files, files[i].Rel)
			res.MatchedFiles++
		case ModeCount:
			if len(res.Counts) == s.Limit {
				res.Truncated = true
				continue
			}
			res.Counts = append(res.Counts, Count{File: files[i].Rel, Count: h.count})
			res.MatchedFiles++
			res.MatchedLines += h.count
		}
	}
	return res
}

// lineText returns a line for display: without "\r", cut at MaxLineBytes
// (on a character boundary) and marked.
func lineText(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) <= MaxLineBytes {
		return string(b)
	}
	cut := MaxLineBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + LineCutMark
}

func linesBefore(data []byte, s, n int) []string {
	var out []string
	for end := s - 1; end >= 0 && len(out) < n; {
		st := lineStart(data, end)
		out = append(out, lineText(data[st:end]))
		end = st - 1
	}
	slices.Reverse(out)
	return out
}

func linesAfter(data []byte, e, n int) []string {
	var out []string
	for st := e + 1; st < len(data) && len(out) < n; {
		end := lineEnd(data, st)
		out = append(out, lineText(data[st:end]))
		st = end + 1
	}
	return out
}

// parentOf returns the directory of the root-relative path rel ("" for
// the root).
func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func baseName(rel string) string { return rel[strings.LastIndexByte(rel, '/')+1:] }
