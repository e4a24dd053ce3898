package index

import "unsafe"

// Stats is an index's size and merge state, for status reports.
type Stats struct {
	// Files is the number of files in the table.
	Files int
	// BaseBytes is the size of the base postings: a file beside the DB,
	// mapped (page cache, not heap), once saved.
	BaseBytes int64
	// HeapBytes estimates the heap the index holds: the path table and
	// its maps, the delta, the ignored list, and the base while it is not
	// yet in its file.
	HeapBytes int64
	// DeltaFiles is how many files changed since the base was built
	// (stale ids): what the next compaction folds in.
	DeltaFiles int
	// DeltaBytes is what the changed files' trigram sets and signatures
	// hold in the heap until a compaction (part of HeapBytes).
	DeltaBytes int64
	// Compacting: a compaction is building or swapping in a new base.
	Compacting bool
}

// Stats returns the index's figures, in constant time but for the
// ignored list (a status poll must not hold the index for a pass over a
// million files).
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := Stats{
		Files:      len(ix.order),
		BaseBytes:  int64(len(ix.base.data)),
		DeltaFiles: len(ix.stale),
		DeltaBytes: ix.deltaBytes,
		Compacting: ix.compacting.Load(),
	}
	h := int64(cap(ix.files))*int64(unsafe.Sizeof(File{})) + int64(cap(ix.order)+cap(ix.free))*4 + int64(cap(ix.mtimes))*8 + int64(cap(ix.nexts))*8
	h += ix.paths
	const mapEntry = 48 // a map entry with its share of buckets, roughly
	h += int64(len(ix.stale)+len(ix.unknown)) * mapEntry
	// The delta: per file a set and a slot (their map entries, the set's
	// header, and what they hold: deltaBytes).
	h += int64(len(ix.delta))*(2*mapEntry+24) + ix.deltaBytes
	for _, s := range ix.ignored {
		h += int64(unsafe.Sizeof(s)) + int64(len(s.Path))
	}
	if ix.base.unmap == nil {
		h += int64(len(ix.base.data))
	}
	s.HeapBytes = h
	return s
}
