package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/rawfile"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// BinarySniffBytes is how much of a file is checked for a NUL byte to call
// it binary (as git and ripgrep do).
const BinarySniffBytes = 8 << 10

// GrepResult is what a Searcher found for a Grep.
type GrepResult struct {
	Run     envelope.GrepRun
	Skipped []tree.Skip
}

func (t *Tools) grep(ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope {
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, elapsedMS(start))
	}
	if v, ok := a["pattern"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			ectx.Pattern = s
		}
	}
	p, err := decodeGrep(a, t.Unlimited)
	if err != nil {
		return fail(err)
	}
	ectx.SortedBy = "mtime_desc"
	m, err := CompileMatcher(p.Pattern, MatchOptions{CaseSensitive: p.CaseSensitive, FixedStrings: p.FixedStrings, Multiline: p.Multiline})
	if err != nil {
		return fail(err)
	}
	inc, err := compileInclude(p.Include)
	if err != nil {
		return fail(err)
	}
	filter, err := CompileFilter(p.Filter)
	if err != nil {
		return fail(err)
	}
	inc = inc.WithFilter(filter)
	dir, err := t.WS.resolveDir(ectx.Cwd, p.Path, "Search root")
	if err != nil {
		return fail(err)
	}
	ectx.PathResolved = dir
	q := &GrepQuery{WS: t.WS, Dir: dir, Params: p, Matcher: m, Include: inc, Start: start}
	sink := t.newAnswerSink(p.Limit, GrepMaxLimit, ectx.Cwd)
	if sink != nil {
		q.Sink = sink.take
	}
	ectx.Clock = t.clock(ctx, p.Sync)
	searcher, fresh, err := t.changedSince(ctx, p.ChangedSince, p.Sync, dir, p.IncludeIgnored)
	if err != nil {
		return fail(err)
	}
	res, runErr := searcher.Grep(ctx, q)
	if runErr != nil {
		return fail(internal(runErr))
	}
	run := res.Run
	if sink != nil {
		// The scan counted what it handed over; the answer is what the
		// sink kept.
		run.Data.Matches, run.Data.Files, run.Data.Counts = sink.data.Matches, sink.data.Files, sink.data.Counts
		run.Data.Truncated = sink.truncated
		run.Stats.MatchedFiles, run.Stats.MatchedLines = sink.files, sink.lines
		run.Streamed = 0
		if sink.stream != nil {
			run.Streamed = sink.kept
		}
		if sink.cut {
			run.Data.AbortedReason = envelope.AbortMemoryLimit
		}
	}
	run.Stats.TimeMS = elapsedMS(start)
	run.Limit = p.Limit
	run.Data.Mode = p.OutputMode
	run.Hints = skipHints(res.Skipped, len(run.Data.Matches)+len(run.Data.Files)+len(run.Data.Counts)+run.Streamed > 0, func(s tree.Skip) bool {
		r := relTo(dir, s.Rel)
		if s.IsDir {
			return inc.Descend(r)
		}
		return inc.Match(r)
	}, func(name string) bool { return p.IncludeHidden || inc.AllowHidden(name) })
	if fresh != "" {
		run.Data.FreshInstance = true
		run.Hints = append(run.Hints, freshHint(fresh))
	}
	return envelope.Grep(ectx, run)
}

// Grep walks q.Dir for the files the query admits, orders them newest
// first and scans them.
//
// The walk does not stat the files the prescan reads, and waits for the
// prescan's queue rather than list past it: the prescan takes the mtime
// and size of a file with something to report from the file it opened
// (one fstat, no path lookup), and a file with nothing needs none when
// the answer is not truncated. Once the prescan stops reading (it holds
// the results that settle the answer), the walk stats what it lists
// from then on, and the files listed before that are stat'd after the
// walk (see stateFiles). Either way Scan orders files by the mtime they
// had when first looked at, as before.
func (Walker) Grep(ctx context.Context, q *GrepQuery) (*GrepResult, error) {
	ctx, cancel := q.deadline(ctx)
	defer cancel()
	var files []FileRef
	pre := startPrescan(ctx, q)
	opts := grepWalkOptions(q)
	opts.InfoWhen = pre.stopped
	st, err := tree.Walk(ctx, q.WS.Root, walkStart(q.Dir), dirRules(q.WS, q.Dir), opts, func(e tree.Entry) error {
		if e.Type.IsRegular() && q.Include.Match(relTo(q.Dir, e.Rel)) {
			files = append(files, FileRef{Rel: e.Rel, ModTime: e.ModTime, Size: e.Size, NoInfo: !e.Info})
			pre.offer(files[len(files)-1], !e.Info)
		}
		return nil
	})
	hits := pre.finish(err == nil)
	if err == nil {
		files, err = stateFiles(ctx, q.WS.Root, q.Params, files, hits)
	}
	timedOut := false
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		timedOut = true
	default:
		return nil, err
	}
	res := &GrepResult{Skipped: st.Skipped}
	if !timedOut {
		res.Run = Scan(ctx, q, files)
	} else {
		res.Run.Data.AbortedReason = envelope.AbortTimeout
	}
	res.Run.Stats.Ignored = st.Ignored
	return res, nil
}

// stateFiles gives each file the walk listed its prescanned hit (hits[i]
// is files[i]'s, nil if it was not read) and fills in the mtime and size
// of the files listed without them: from the hit when the prescan took
// them from the open file, else as the walk would have (statListed). A
// file that is gone or no longer a regular file is dropped, as a walk
// listing it now would leave it out.
//
// The prescan takes the status only of files with something to report
// (fileHit.reports): when it read every file and they hold fewer
// results than settle the answer (p's limit, scanNeeds), Scan takes
// every file and orders only those (assembleRead), so the others are
// left without an mtime (0), and the walk without one stat per file.
// Otherwise they are stat'd like the files never read.
func stateFiles(ctx context.Context, root string, p GrepParams, files []FileRef, hits []*fileHit) ([]FileRef, error) {
	var todo, quiet []int // listed without status: not read; read, with nothing to report
	results := 0
	for i := range files {
		f := &files[i]
		if i < len(hits) {
			f.pre = hits[i]
		}
		if f.pre != nil {
			results += f.pre.results(p.OutputMode)
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
	if need, _ := scanNeeds(p); len(todo) == 0 && results < need {
		for _, i := range quiet {
			files[i].NoInfo = false // its mtime cannot change the answer
		}
	} else {
		todo = append(todo, quiet...)
		slices.Sort(todo) // statListed takes them in walk order
	}
	if len(todo) > 0 {
		if err := statListed(ctx, root, files, todo); err != nil {
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
func statListed(ctx context.Context, root string, files []FileRef, todo []int) error {
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
	unreadable := func(f *FileRef) { f.pre, f.NoInfo = &fileHit{fault: true}, false }
	statRun := func(run []int) {
		d, err := r.OpenDir(parentOf(files[run[0]].Rel))
		if err != nil {
			if !rooted.Gone(err) {
				for _, i := range run {
					unreadable(&files[i])
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
				unreadable(f)
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

// grepWalkOptions are the walk's options for a Grep query.
func grepWalkOptions(q *GrepQuery) tree.Options {
	return tree.Options{
		IncludeHidden:  q.Params.IncludeHidden,
		IncludeIgnored: q.Params.IncludeIgnored,
		AllowHidden:    q.Include.AllowHidden,
		Descend:        func(rel string) bool { return q.Include.Descend(relTo(q.Dir, rel)) },
		Info:           true,
	}
}

// FileRef is a file to scan: its root-relative path, and its mtime and
// size when it was listed.
type FileRef struct {
	Rel     string
	ModTime int64
	Size    int64
	// NoInfo: ModTime and Size are not known yet (a walk listed the file
	// without its status): whoever reads it takes them from the open
	// file (fileHit.info).
	NoInfo bool
	// pre, if set, is what the file holds, already read (by a prescan, or
	// in an earlier prefix of the same query): Scan takes it instead of
	// reading the file again.
	pre *fileHit
}

// fileHit is what scanning one file found.
type fileHit struct {
	matches []envelope.GrepMatch // content mode
	count   int                  // matching lines (or matches in multiline mode)
	read    bool                 // the file was read
	binary  bool
	fault   bool // the file could not be read, and not because it is gone
	cut     bool // only the first multilineMax bytes were searched
	// interrupted: the context ended before the file was done; the hit
	// is incomplete and never part of an answer.
	interrupted bool
	// info: mod and size are the open file's (read for a FileRef with
	// NoInfo when the hit reports something, and the file was found to
	// be a regular file).
	info      bool
	mod, size int64
}

// reports says whether h puts something in an answer, or sets its
// aborted_reason: what only a file in its place in Grep's order may do.
func (h *fileHit) reports() bool { return h.count > 0 || h.fault || h.cut }

// quiet says whether h is a whole read of a file with nothing to report.
func (h *fileHit) quiet() bool { return h.read && !h.reports() && !h.interrupted }

// scanners bounds the files being scanned at once by every Grep in the
// process together, and holds their buffers (see fileScanner) for reuse,
// so that concurrent queries add waiting, not memory: a Scan worker takes
// one for each file and puts it back after.
var scanners = newScanPool(max(4, 2*runtime.GOMAXPROCS(0)))

// results returns what h adds to an answer in output mode mode, as its
// need counts them: matching lines (content), else 1 for a matching file.
func (h *fileHit) results(mode string) int {
	switch {
	case mode == envelope.ModeContent:
		return len(h.matches)
	case h.count > 0:
		return 1
	}
	return 0
}

// scanNeeds returns the results (lines, or files) that settle a Grep's
// truncation, and the matches worth collecting from one file (-1: count
// them all).
func scanNeeds(p GrepParams) (need, perFile int) {
	need = p.Limit + 1
	perFile = need
	switch p.OutputMode {
	case envelope.ModeFiles:
		perFile = 1
	case envelope.ModeCount:
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
func Scan(ctx context.Context, q *GrepQuery, files []FileRef) envelope.GrepRun {
	if q.Sink == nil && ctx.Err() == nil && allRead(files) {
		return assembleRead(q, files)
	}
	run, _ := scanFiles(ctx, q, files)
	return run
}

// allRead reports whether every file carries its hit (FileRef.pre), as
// after a walk whose prescan read them all.
func allRead(files []FileRef) bool {
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
// cut that sets the answer's aborted_reason).
func assembleRead(q *GrepQuery, files []FileRef) envelope.GrepRun {
	mode := q.Params.OutputMode
	need, _ := scanNeeds(q.Params)
	var notable []*FileRef
	for i := range files {
		if files[i].pre.reports() {
			notable = append(notable, &files[i])
		}
	}
	slices.SortFunc(notable, func(a, b *FileRef) int {
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
	refs := make([]FileRef, end)
	hits := make([]fileHit, end)
	for k, f := range notable[:end] {
		refs[k], hits[k] = *f, *f.pre
	}
	run := assemble(q, refs, hits, false)
	// The prefix holds every file up to its last notable one (all, when
	// the results never settle it); count what it read.
	run.Stats.FilesScanned, run.Stats.BinarySkipped = 0, 0
	for i := range files {
		if end < len(notable) && newer(notable[end-1], &files[i]) {
			continue // past the prefix
		}
		if files[i].pre.read {
			run.Stats.FilesScanned++
		}
		if files[i].pre.binary {
			run.Stats.BinarySkipped++
		}
	}
	return run
}

// scanned is what a scan read: the files of its completed prefix in
// Grep's order with their hits, and whether that prefix is all the files
// (the scan was neither stopped by ctx nor unable to open the root).
type scanned struct {
	files    []FileRef
	hits     []fileHit
	complete bool
}

// scanFiles is Scan, also returning what it read.
func scanFiles(ctx context.Context, q *GrepQuery, files []FileRef) (envelope.GrepRun, scanned) {
	p := q.Params
	need, perFile := scanNeeds(p)
	if len(files) == 0 {
		return assemble(q, nil, nil, false), scanned{complete: true} // nothing to read
	}
	if q.blocks != nil {
		q.blocks.scanning(1)
		defer q.blocks.scanning(-1)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	root, err := rooted.Open(q.WS.Root)
	if err != nil {
		return envelope.GrepRun{Data: envelope.GrepData{AbortedReason: envelope.AbortReadError}}, scanned{}
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
	inline := q.Sink == nil && smallScan(files)
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
		if q.Sink != nil {
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
			have += hits.at(prefix).results(p.OutputMode)
			prefix++
		}
		if (prefix == len(files) || have >= need) && !stop.Load() {
			stop.Store(true)
			close(settled)
		}
		moved.Broadcast()
		if q.Sink != nil { // only a Sink needs Scan's goroutine woken
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
				fs.root = root
				h = fs.scan(ctx, q, files[i], perFile)
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
			refused = !q.Sink(batch)
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
			switch p.OutputMode {
			case envelope.ModeContent:
				batch.Matches = append(batch.Matches, h.matches...)
				h.matches = nil
			case envelope.ModeFiles:
				batch.Files = append(batch.Files, files[delivered].Rel)
			case envelope.ModeCount:
				batch.Counts = append(batch.Counts, envelope.FileCount{File: files[delivered].Rel, Count: h.count})
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
	if q.Sink != nil {
		deliver()
		flush()
	}
	done := scanned{files: files[:n], hits: hits.prefix(n), complete: !aborted && n == len(files)}
	return assemble(q, done.files, done.hits, aborted), done
}

// scanPrefetchAfter is how many files a scan takes before it reads
// ahead of its workers (see Scan).
const scanPrefetchAfter = 1024

// A scan of at most inlineFiles files holding at most inlineBytes in all
// is small: Scan reads it on the caller's goroutine. Variables so that
// tests can turn it off. Measured in process on GOROOT/src with the pair
// kernel: xyzzy's 7 candidates (over 512 KiB) 151 → 117 µs,
// ErrShortWrite's 22 180 → 148 µs, and 263 → 235 µs folded, against 8
// files and 512 KiB; a scan of 50 files (sync\.Pool) was no faster
// inline, and those of more are faster with the workers.
var (
	inlineFiles       = 32
	inlineBytes int64 = 4 << 20
)

func smallScan(files []FileRef) bool {
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

// assemble turns the scanned prefix into the run: the first limit results,
// truncated if there were more.
func assemble(q *GrepQuery, files []FileRef, hits []fileHit, aborted bool) envelope.GrepRun {
	p := q.Params
	var run envelope.GrepRun
	d, st := &run.Data, &run.Stats
	if aborted {
		d.AbortedReason = envelope.AbortTimeout
	}
	for i, h := range hits {
		if h.fault && d.AbortedReason == "" {
			d.AbortedReason = envelope.AbortReadError
		}
		if h.cut && d.AbortedReason == "" {
			d.AbortedReason = envelope.AbortSizeLimit
		}
		if h.read {
			st.FilesScanned++
		}
		if h.binary {
			st.BinarySkipped++
		}
		if h.count == 0 {
			continue
		}
		if q.Sink != nil { // the results went to the sink (Scan)
			st.MatchedFiles++
			if p.OutputMode != envelope.ModeFiles {
				st.MatchedLines += h.count
			}
			if p.OutputMode == envelope.ModeContent {
				run.Streamed += h.count
			} else {
				run.Streamed++
			}
			continue
		}
		switch p.OutputMode {
		case envelope.ModeContent:
			room := p.Limit - len(d.Matches)
			if room <= 0 {
				d.Truncated = true
				continue
			}
			ms := h.matches
			if len(ms) > room {
				ms, d.Truncated = ms[:room], true
			}
			d.Matches = append(d.Matches, ms...)
			st.MatchedFiles++
			st.MatchedLines += len(ms)
		case envelope.ModeFiles:
			if len(d.Files) == p.Limit {
				d.Truncated = true
				continue
			}
			d.Files = append(d.Files, files[i].Rel)
			st.MatchedFiles++
		case envelope.ModeCount:
			if len(d.Counts) == p.Limit {
				d.Truncated = true
				continue
			}
			d.Counts = append(d.Counts, envelope.FileCount{File: files[i].Rel, Count: h.count})
			st.MatchedFiles++
			st.MatchedLines += h.count
		}
	}
	return run
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
