package grep

// Prescan: reading files while the walk lists them.
//
// A Grep that walks must know every file's mtime before Scan can take the
// files newest first, so walking and then scanning leaves a core idle in
// each phase (on GOROOT/src, by a CPU profile, the walk is 31 of a rare
// literal's 118 ms of CPU, and no file was read until it ended). A
// prescan reads the files the walk hands over, in walk order, while the
// walk goes on; Scan then takes the hit of each prescanned file
// instead of reading it again. A file's
// hit depends only on its bytes, so the answer is the one Scan alone
// gives (a file changed meanwhile may give either version, as it may to
// Scan).
//
// A file the walk listed with its status is offered: left to Scan when
// the prescan's workers are busy and its queue full, so the walk is not
// slowed. A file listed without it (the walk does not stat the files the
// prescan reads: query's Walker.Grep) is handed over,
// waiting for room in the queue: the prescan learns its mtime as it
// reads it. The prescan stops reading once the files it read hold need
// results (the lines, or files, that settle the answer's truncation): a
// query with that many matches is settled by its newest files, which
// Scan reads, and more prescanned results would be reads and memory
// spent on files the answer may never reach.
//
// Once the walk is done, Finish gives each file its hit and fills in the
// status of the files listed without it (stateFiles): Scan's input.
//
// Goroutines: StartPrescan starts the workers; Finish stops them and
// waits for them (the walk's caller calls it once the walk is done,
// whatever its outcome), so no worker outlives the query.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/indexd/indexd/internal/rooted"
)

// prescanQueue is how many offered files may wait for a worker.
const prescanQueue = 256

// Prescan reads the files a walk lists while it lists them (see above).
// Its methods are called by the walk's goroutine.
type Prescan struct {
	ctx           context.Context
	s             *Search
	root          *rooted.Root // nil: the root could not be opened, nothing is read
	need, perFile int
	work          chan offered
	stop          atomic.Bool // finish was called, or enough results are held
	taken         atomic.Int64
	wg            sync.WaitGroup

	mu    sync.Mutex
	hits  []*fileHit // what the workers found, by the file's place (nil: not read)
	found int        // results held (lines, or files)
}

// offered is a file handed to the workers, and its place.
type offered struct {
	i   int
	ref File
}

// StartPrescan starts a prescan of s for a walk of its root, which ends
// with ctx. When the root cannot be opened (which the walk then
// reports), it reads nothing.
func StartPrescan(ctx context.Context, s *Search) *Prescan {
	ps := &Prescan{ctx: ctx, s: s}
	root, err := rooted.Open(s.Root)
	if err != nil {
		ps.stop.Store(true)
		return ps
	}
	ps.root, ps.work = root, make(chan offered, prescanQueue)
	ps.need, ps.perFile = scanNeeds(s)
	for range runtime.GOMAXPROCS(0) {
		ps.wg.Go(ps.run)
	}
	return ps
}

// Offer is given each file the walk lists, in order, and hands it to the
// workers unless they are done, or behind and wait is false. A file
// handed over may still go unread (the prescan stops, or ctx ends, before
// a worker takes it): its hit is then nil.
func (ps *Prescan) Offer(ref File, wait bool) {
	if ps.root == nil {
		return
	}
	ps.mu.Lock()
	i := len(ps.hits)
	ps.hits = append(ps.hits, nil)
	ps.mu.Unlock()
	if ps.stop.Load() {
		return
	}
	if wait {
		// The workers drain the queue even once stopped, so this
		// never waits for longer than a file's read.
		ps.work <- offered{i, ref}
		return
	}
	select {
	case ps.work <- offered{i, ref}:
	default:
	}
}

// Stopped reports whether the prescan reads no more files (one that
// could not open the root never read any): a walk lists files with
// their status from then on.
func (ps *Prescan) Stopped() bool {
	return ps.stop.Load()
}

// Finish stops the workers and waits for them. When the walk listed
// every file (complete), files being those the walk offered, in the order
// offered, it returns them ready for Scan: each with its hit, and with the
// status of those listed without it, as stateFiles gives them; a file
// found gone drops out. Otherwise it returns files as they are.
func (ps *Prescan) Finish(files []File, complete bool) ([]File, error) {
	hits := ps.finish(complete)
	if !complete {
		return files, nil
	}
	return stateFiles(ps.ctx, ps.s, files, hits)
}

// finish stops the workers, waits for them and returns the hits of the
// files offered, in the order offered (nil: not read). With drain (the
// walk listed every file), the files still queued are read first, unless
// the prescan has stopped: Scan would read them anyway, and they would
// have to be stat'd first.
func (ps *Prescan) finish(drain bool) []*fileHit {
	if ps.root == nil {
		return nil
	}
	if !drain {
		ps.stop.Store(true)
	}
	close(ps.work)
	ps.wg.Wait()
	ps.root.Close()
	return ps.hits
}

func (ps *Prescan) run() {
	for o := range ps.work {
		if ps.stop.Load() {
			continue // drain: finish closes the queue
		}
		fs := scanners.take(ps.ctx, int(ps.taken.Add(1)-1)) // ranked as Scan's workers are
		if fs == nil {
			continue // ctx ended: Scan finds it ended too
		}
		fs.root = ps.root
		h := fs.scan(ps.ctx, ps.s, o.ref, ps.perFile)
		scanners.put(fs)
		if h.interrupted {
			continue
		}
		ps.mu.Lock()
		ps.hits[o.i] = &h
		ps.found += h.results(ps.s.Mode)
		if ps.perFile >= 0 && ps.found >= ps.need {
			ps.stop.Store(true)
		}
		ps.mu.Unlock()
	}
}
