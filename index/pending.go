package index

import (
	"maps"
	"slices"
)

// Write-behind. Memory is the index; the DB is its durable copy and may
// lag it by the pending writes: the paths whose table and ignored records
// may differ from memory, and the ids whose delta and stale records may
// (touched). Each transaction writes what is pending when it begins,
// encoded from memory as it is then, so a path changed twice in the lag
// is written once, as it ends.
//
// A commit writes its change at once, unless writes are deferred
// (DeferWrites, which the watcher holds for its lifetime): then it leaves
// them pending, up to defaultDeferMax records, and Flush writes them.
// Flush holds wmu only to take the pending writes; the transaction and
// its fsync run under dbmu alone, so the next change is applied to memory
// (and the watcher releases its sync barriers) while the last one is
// written. A
// transaction that fails gives its writes back to pending, to be written
// by the next; a crash loses them from the DB only, and the next open's
// revalidation reads those files again, as after any crash between a
// change and its commit.

// pendingWrites are the changes in memory that the DB does not hold yet.
// Guarded by wmu.
type pendingWrites struct {
	files, ignored map[string]struct{}
	touched        []uint32
}

// defaultDeferMax bounds the records deferred writes hold back: a change
// that would hold more is written (and synced) as it is made.
const defaultDeferMax = 1 << 14

// record is one write of the pending changes: val put under key in summed
// bucket b, or key deleted (del).
type record struct {
	b        int
	key, val []byte
	del      bool
}

func (p *pendingWrites) file(path string) {
	if p.files == nil {
		p.files = make(map[string]struct{})
	}
	p.files[path] = struct{}{}
}

func (p *pendingWrites) ignoredPath(path string) {
	if p.ignored == nil {
		p.ignored = make(map[string]struct{})
	}
	p.ignored[path] = struct{}{}
}

func (p *pendingWrites) len() int { return len(p.files) + len(p.ignored) + len(p.touched) }

// clear forgets the pending writes (written, or made moot by a save).
func (p *pendingWrites) clear() {
	p.files, p.ignored, p.touched = nil, nil, nil
}

// restore gives back the writes a failed transaction took. Whatever
// happened since, writing them again is right: they are encoded from
// memory when they are written.
func (p *pendingWrites) restore(taken pendingWrites) {
	for k := range taken.files {
		p.file(k)
	}
	for k := range taken.ignored {
		p.ignoredPath(k)
	}
	p.touched = append(p.touched, taken.touched...)
}

// takePending encodes the pending writes from memory, in key order, and
// forgets them, returning what it took (for restore). Caller holds wmu.
func (ix *Index) takePending() (recs []record, taken pendingWrites) {
	taken, ix.pending = ix.pending, pendingWrites{}
	for _, p := range slices.Sorted(maps.Keys(taken.files)) {
		if id, ok := ix.lookup(p); ok {
			recs = append(recs, record{b: sumFiles, key: []byte(p), val: encodeFile(id, &ix.files[id])})
		} else {
			recs = append(recs, record{b: sumFiles, key: []byte(p), del: true})
		}
	}
	for _, id := range taken.touched {
		key := be32(id)
		if tris, ok := ix.delta[id]; ok {
			recs = append(recs, record{b: sumDelta, key: key, val: packTrigrams(tris)})
		} else {
			recs = append(recs, record{b: sumDelta, key: key, del: true})
		}
		recs = append(recs, record{b: sumStale, key: key, del: !ix.stale[id]}) // not stale once compacted
	}
	for _, p := range slices.Sorted(maps.Keys(taken.ignored)) {
		if i, ok := slices.BinarySearchFunc(ix.ignored, p, cmpSkipped); ok {
			recs = append(recs, record{b: sumIgnored, key: []byte(p), val: ignoredValue(ix.ignored[i])})
		} else {
			recs = append(recs, record{b: sumIgnored, key: []byte(p), del: true})
		}
	}
	return recs, taken
}

// DeferWrites makes commits leave their DB writes pending, for Flush to
// write (see Write-behind above): memory, and so every query, sees each
// change as it is made, and its transaction and fsync follow. A change
// that would hold back more than defaultDeferMax records is written at
// once.
// stop ends the deferral and writes what is pending; Close writes it too.
// One caller defers at a time.
func (ix *Index) DeferWrites() (stop func() error) {
	ix.wmu.Lock()
	ix.deferWrites = true
	ix.wmu.Unlock()
	return func() error {
		ix.wmu.Lock()
		defer ix.wmu.Unlock()
		ix.deferWrites = false
		return ix.flushLocked()
	}
}

// Flush writes the pending changes in one transaction, and returns once
// every change made before it was called is written (one taken by
// another Flush still running included) or has failed. It holds the
// writers' lock only to take them: changes go on being applied to memory
// while the transaction and its fsync run. A failed transaction leaves
// them pending.
func (ix *Index) Flush() error {
	ix.wmu.Lock()
	if ix.db == nil || ix.pending.len() == 0 {
		ix.dbmu.Lock() // a transaction in flight ends first
		ix.dbmu.Unlock()
		ix.wmu.Unlock()
		return nil
	}
	recs, taken := ix.takePending()
	slots := len(ix.files)
	ix.dbmu.Lock() // before wmu is let go: transactions commit in the order their writes were taken
	ix.wmu.Unlock()
	err := ix.transact(recs, slots, nil)
	ix.dbmu.Unlock()
	if err != nil {
		ix.wmu.Lock()
		ix.pending.restore(taken)
		ix.wmu.Unlock()
	}
	return err
}

// HasPending reports whether changes may wait for Flush. It never waits
// for a writer: while one holds the index, it says yes.
func (ix *Index) HasPending() bool {
	if !ix.wmu.TryLock() {
		return true
	}
	defer ix.wmu.Unlock()
	return ix.pending.len() > 0
}

// flushLocked writes the pending changes, if any. Caller holds wmu.
func (ix *Index) flushLocked() error {
	if ix.db == nil || ix.pending.len() == 0 {
		return nil
	}
	return ix.update(nil)
}

// SetWriteHook sets fn to run inside each of the index's DB write
// transactions before it commits (an error fails the transaction), or
// removes it (nil): a seam for the tests of what waits for the DB.
func (ix *Index) SetWriteHook(fn func() error) {
	ix.wmu.Lock()
	ix.dbmu.Lock()
	ix.hookInTx = fn
	ix.dbmu.Unlock()
	ix.wmu.Unlock()
}
