package query

// Prescan: reading files while the walk lists them.
//
// A Grep that walks must know every file's mtime before Scan can take the
// files newest first, so walking and then scanning leaves a core idle in
// each phase (on GOROOT/src, by a CPU profile, the walk is 31 of a rare
// literal's 118 ms of CPU, and no file was read until it ended). A
// prescan reads the files the walk hands over, in walk order, while the
// walk goes on; Scan then takes the hit of each prescanned file
// (GrepQuery.pre) instead of reading it again. A file's
// hit depends only on its bytes, so the answer is the one Scan alone
// gives (a file changed meanwhile may give either version, as it may to
// Scan).
//
// The prescan never slows the walk: a file offered while its workers are
// busy and its queue full is left to Scan. It stops reading once the
// files it read hold need results (the lines, or files, that settle the
// answer's truncation): a query with that many matches is settled by its
// newest files, which Scan reads, and more prescanned results would be
// reads and memory spent on files the answer may never reach.
//
// Goroutines: startPrescan starts the workers; finish stops them and
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

type prescan struct {
	ctx           context.Context
	q             *GrepQuery
	root          *rooted.Root
	need, perFile int
	work          chan FileRef
	stop          atomic.Bool // finish was called, or enough results are held
	taken         atomic.Int64
	wg            sync.WaitGroup

	mu    sync.Mutex
	hits  map[string]*fileHit // what the workers found, by path
	found int                 // results held (lines, or files)
}

// startPrescan starts a prescan for q's walk; nil (whose offer and finish
// do nothing) when the root cannot be opened, which the walk then reports.
func startPrescan(ctx context.Context, q *GrepQuery) *prescan {
	root, err := rooted.Open(q.WS.Root)
	if err != nil {
		return nil
	}
	ps := &prescan{ctx: ctx, q: q, root: root, work: make(chan FileRef, prescanQueue), hits: make(map[string]*fileHit)}
	ps.need, ps.perFile = scanNeeds(q.Params)
	for range runtime.GOMAXPROCS(0) {
		ps.wg.Go(ps.run)
	}
	return ps
}

// offer hands a file the walk listed to the workers, unless they are
// behind or done, and reports whether they took it.
func (ps *prescan) offer(ref FileRef) bool {
	if ps == nil || ps.stop.Load() {
		return false
	}
	select {
	case ps.work <- ref:
		return true
	default:
		return false
	}
}

// finish stops the workers, waits for them and returns the hits of the
// files they read, by path.
func (ps *prescan) finish() map[string]*fileHit {
	if ps == nil {
		return nil
	}
	ps.stop.Store(true)
	close(ps.work)
	ps.wg.Wait()
	ps.root.Close()
	return ps.hits
}

func (ps *prescan) run() {
	for ref := range ps.work {
		if ps.stop.Load() {
			continue // drain: finish closes the queue
		}
		fs := scanners.take(ps.ctx, int(ps.taken.Add(1)-1)) // ranked as Scan's workers are
		if fs == nil {
			continue // ctx ended: Scan finds it ended too
		}
		fs.root = ps.root
		h := fs.scan(ps.ctx, ps.q, ref, ps.perFile)
		scanners.put(fs)
		if h.interrupted {
			continue
		}
		ps.mu.Lock()
		ps.hits[ref.Rel] = &h
		ps.found += h.results(ps.q.Params.OutputMode)
		if ps.perFile >= 0 && ps.found >= ps.need {
			ps.stop.Store(true)
		}
		ps.mu.Unlock()
	}
}
