package grep

import (
	"container/heap"
	"context"
	"sync"
)

// scanPool is the daemon's admission control for Grep scans: a fixed set
// of file scanners shared by every query in the process. A Scan worker
// takes one per file and gives it back after, so however many queries
// run, at most that many files are being scanned at once; the rest wait,
// their time budget running (a waiter whose ctx ends leaves the queue).
//
// Waiters are served fewest files taken first, then in arrival order: a
// query's first file comes before another query's hundredth. So a query
// with a handful of candidates (a rare literal through the index) is not
// queued behind full scans: it gets the next free scanner, and costs what
// its own files cost plus at most one file's scan per scanner in use
// (zoekt's scheduler has the same aim: interactive queries are not held
// up by batch ones).
type scanPool struct {
	mu      sync.Mutex // guards the fields below
	free    []*fileScanner
	waiters waitHeap
	seq     uint64 // arrival order
}

type scanWaiter struct {
	taken int    // files its query had taken when it asked
	seq   uint64 // arrival
	index int    // in the heap; -1 once served or gone
	ch    chan *fileScanner
}

func newScanPool(n int) *scanPool {
	p := &scanPool{free: make([]*fileScanner, n)}
	for i := range p.free {
		p.free[i] = new(fileScanner)
	}
	return p
}

// take waits for a free scanner for a query that has taken taken files;
// nil once ctx has ended.
func (p *scanPool) take(ctx context.Context, taken int) *fileScanner {
	if ctx.Err() != nil {
		return nil
	}
	p.mu.Lock()
	if n := len(p.free); n > 0 && len(p.waiters) == 0 {
		fs := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return fs
	}
	w := &scanWaiter{taken: taken, seq: p.seq, ch: make(chan *fileScanner, 1)}
	p.seq++
	heap.Push(&p.waiters, w)
	p.mu.Unlock()
	select {
	case fs := <-w.ch:
		return fs
	case <-ctx.Done():
		p.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&p.waiters, w.index)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		p.put(<-w.ch) // served meanwhile: pass it on
		return nil
	}
}

// put gives back a scanner taken with take: to the first waiter, if any.
func (p *scanPool) put(fs *fileScanner) {
	fs.release()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiters) > 0 {
		w := heap.Pop(&p.waiters).(*scanWaiter)
		w.ch <- fs
		return
	}
	p.free = append(p.free, fs)
}

// queueLen returns the number of waiters.
func (p *scanPool) queueLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters)
}

// waitHeap orders waiters by files taken, then arrival.
type waitHeap []*scanWaiter

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if h[i].taken != h[j].taken {
		return h[i].taken < h[j].taken
	}
	return h[i].seq < h[j].seq
}
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap) Push(x any) {
	w := x.(*scanWaiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.index = -1
	return w
}
