// Package journal owns the change journal of one workspace root and its
// clock tokens: the answer to "what changed since I last looked".
//
// The watcher (package watch), the index's only writer, appends one Change
// per path the index gained, lost or saw change (and per ignored file an
// event named in a watched directory), batch by batch; every Change gets
// the next position, a uint64 that only grows. A clock token (Clock) names
// a position of one journal of one daemon instance: the changes since a
// token are the entries at or after its position.
//
// # Bounds
//
// Entries are kept in memory only, encoded compactly in blocks of about
// BlockBytes (per entry: a flags byte, the path front-coded against the
// previous path of its block, the hidden-component mask and the mtime as
// varints: about 18 bytes per change of a typical source path, blocks
// included, so 1M changes take about 18 MB; see TestMemoryPerMillion). The blocks'
// memory is bounded by the journal's maxBytes (DefaultMaxBytes, 32 MiB,
// some 1.9M such changes): past it the oldest blocks are dropped and the
// journal's start moves forward. A root with no change yet holds nothing. A token before the start, from another journal (another
// root, the same root served afresh, another daemon instance: the journal
// is not persisted, so every token from before a daemon restart is one),
// or from before a Truncate (events lost: an inotify overflow, a failed
// update) cannot be answered relative to itself: Since reports it, and the
// caller answers with the whole current file list and fresh_instance (as
// watchman does), never with a silently short list.
//
// Not persisting is the on-disk bound: nothing of the journal is written,
// so a restart costs an agent one full list, and a journal never outlives
// the index it describes.
package journal

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
)

// Kind is what happened to a path.
type Kind uint8

// The kinds of change. A rename is a Deleted of the old path and a
// Created of the new one (a directory's, of every file under it).
const (
	Created Kind = iota + 1
	Modified
	Deleted
)

// String returns the kind's name as the Changes tool prints it.
func (k Kind) String() string {
	switch k {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	return "unknown"
}

// Change is one journal entry.
type Change struct {
	// Path is root-relative and slash separated.
	Path string
	Kind Kind
	// Mtime is the file's modification time in Unix nanoseconds after the
	// change; for Deleted, the last one known before it (0 if unknown).
	Mtime int64
	// Hidden is the path's hidden-component mask (index.File.Hidden).
	Hidden uint64
	// Ignored: the path was ignored by the rules in force when it changed
	// (such files are journaled only as events name them; see package
	// watch).
	Ignored bool
	// Link: the path is a symbolic link after the change (for Deleted,
	// was one before it). Whether it points to a file Glob lists is
	// looked at when the journal is read, as Glob looks.
	Link bool
}

// MaxNet is the most entries a caller should take since one position
// (Net decodes them all: some 100 bytes each while it runs). Past it the
// daemon answers with the full file list instead (fresh_instance), which
// is then no longer than the list of changes.
const MaxNet = 200_000

// DefaultMaxBytes is the default bound on a journal's memory.
const DefaultMaxBytes = 32 << 20

// BlockBytes is the size at which a block is sealed and a new one begun:
// the unit in which the oldest entries are dropped.
const BlockBytes = 64 << 10

// blockCap is a block's allocation: BlockBytes and room for one more
// entry of a path up to PATH_MAX, so that a block is never reallocated
// (and its memory is what Bytes counts).
const blockCap = BlockBytes + 4096 + 32

// Journal is one root's change journal. It is safe for concurrent use:
// one writer (the watcher's processor) and any number of readers.
type Journal struct {
	id       uint64 // distinguishes journals of one daemon instance
	maxBytes int

	mu     sync.RWMutex
	blocks []*block
	start  uint64 // position of the first entry kept
	end    uint64 // position the next entry gets
	bytes  int    // the blocks' allocations, all blocks
}

// block is a run of consecutive entries, encoded. Paths are front-coded
// against the previous entry of the same block, so a block decodes from
// its start.
type block struct {
	first uint64 // position of its first entry
	n     int    // entries
	data  []byte
	last  string // the last path appended (for front coding)
	mtime int64  // the last mtime appended (for delta coding)
}

var journals atomic.Uint64

// New returns an empty journal bounded to maxBytes of blocks
// (DefaultMaxBytes if maxBytes <= 0). Its positions start at 1, so a
// token's position 0 is never valid.
func New(maxBytes int) *Journal {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Journal{id: journals.Add(1), maxBytes: maxBytes, start: 1, end: 1}
}

// ID identifies the journal among those of this process.
func (j *Journal) ID() uint64 { return j.id }

// Positions returns the position of the first entry kept and the position
// the next entry will get: the entries held are [start, end).
func (j *Journal) Positions() (start, end uint64) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.start, j.end
}

// Bytes returns the memory the entries take: the blocks' allocations
// (the bounded quantity).
func (j *Journal) Bytes() int {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.bytes
}

// Append adds chs, in order, at the next positions, and drops the oldest
// blocks while more than the bound is held.
func (j *Journal) Append(chs []Change) {
	if len(chs) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range chs {
		b := j.tail()
		before := cap(b.data)
		b.append(&chs[i])
		b.n++
		j.bytes += cap(b.data) - before
		j.end++
	}
	for j.bytes > j.maxBytes && len(j.blocks) > 1 {
		old := j.blocks[0]
		j.blocks[0] = nil
		j.blocks = j.blocks[1:]
		j.bytes -= cap(old.data)
		j.start = j.blocks[0].first
	}
}

// tail returns the block to append to, starting a new one when the last
// is full.
func (j *Journal) tail() *block {
	if n := len(j.blocks); n > 0 && len(j.blocks[n-1].data) < BlockBytes {
		return j.blocks[n-1]
	}
	b := &block{first: j.end, data: make([]byte, 0, blockCap)}
	j.blocks = append(j.blocks, b)
	j.bytes += blockCap
	return b
}

// Truncate drops every entry and skips a position: the journal's start
// becomes one past its end, so every token issued so far (the current
// position included) is before the start. The watcher calls it when it
// may have missed changes (an event overflow, a failed update).
func (j *Journal) Truncate() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.blocks, j.bytes = nil, 0
	j.end++
	j.start = j.end
}

// Since calls fn for each entry at or after pos, in position order, until
// fn returns false. It reports false, calling fn for nothing, when pos is
// before the journal's start or after its end: the entries since pos are
// not all known.
func (j *Journal) Since(pos uint64, fn func(pos uint64, c Change) bool) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if pos < j.start || pos > j.end {
		return false
	}
	for _, b := range j.blocks {
		if b.first+uint64(b.n) <= pos {
			continue
		}
		if !b.each(func(p uint64, c Change) bool { return p < pos || fn(p, c) }) {
			return true
		}
	}
	return true
}

// Net returns the net change of each path changed at or after pos, the
// most recently changed first: Created if the path did not exist at pos
// and does now, Deleted if it did and does not, Modified if it did and
// does (and changed in between); a path created and deleted since pos is
// left out. Mtime, Hidden, Ignored and Link are the last entry's. ok is false
// when the entries since pos are not all known (see Since).
func (j *Journal) Net(pos uint64) (changes []Change, ok bool) {
	var all []Change // in position order
	ok = j.Since(pos, func(_ uint64, c Change) bool {
		all = append(all, c)
		return true
	})
	if !ok {
		return nil, false
	}
	type span struct{ first, last int } // indexes in all of a path's first and last entries
	spans := make(map[string]span, len(all))
	for i, c := range all {
		s, seen := spans[c.Path]
		if !seen {
			s.first = i
		}
		s.last = i
		spans[c.Path] = s
	}
	changes = make([]Change, 0, len(spans))
	for i := len(all) - 1; i >= 0; i-- { // most recent last entry first
		c := all[i]
		s := spans[c.Path]
		if s.last != i {
			continue
		}
		before, now := all[s.first].Kind != Created, c.Kind != Deleted
		switch {
		case !before && !now:
			continue
		case !before:
			c.Kind = Created
		case !now:
			c.Kind = Deleted
		default:
			c.Kind = Modified
		}
		changes = append(changes, c)
	}
	return changes, true
}

// Entry encoding, per entry: a flags byte (kind in bits 0-1, ignored in
// bit 2, link in bit 3), uvarint bytes shared with the previous path of
// the block, uvarint length of the rest, the rest, uvarint hidden mask,
// varint mtime minus the previous mtime of the block.
const (
	flagIgnored = 1 << 2
	flagLink    = 1 << 3
)

func (b *block) append(c *Change) {
	f := byte(c.Kind)
	if c.Ignored {
		f |= flagIgnored
	}
	if c.Link {
		f |= flagLink
	}
	shared := 0
	for shared < len(b.last) && shared < len(c.Path) && b.last[shared] == c.Path[shared] {
		shared++
	}
	d := append(b.data, f)
	d = binary.AppendUvarint(d, uint64(shared))
	d = binary.AppendUvarint(d, uint64(len(c.Path)-shared))
	d = append(d, c.Path[shared:]...)
	d = binary.AppendUvarint(d, c.Hidden)
	d = binary.AppendVarint(d, c.Mtime-b.mtime)
	b.data, b.last, b.mtime = d, c.Path, c.Mtime
}

// each decodes the block's entries in order, until fn returns false
// (then it returns false).
func (b *block) each(fn func(pos uint64, c Change) bool) bool {
	d := b.data
	var path []byte
	var mtime int64
	for i := 0; i < b.n; i++ {
		f := d[0]
		d = d[1:]
		shared, k := binary.Uvarint(d)
		d = d[k:]
		rest, k := binary.Uvarint(d)
		d = d[k:]
		path = append(path[:shared], d[:rest]...)
		d = d[rest:]
		hidden, k := binary.Uvarint(d)
		d = d[k:]
		delta, k := binary.Varint(d)
		d = d[k:]
		mtime += delta
		c := Change{Path: string(path), Kind: Kind(f & 3), Mtime: mtime, Hidden: hidden, Ignored: f&flagIgnored != 0, Link: f&flagLink != 0}
		if !fn(b.first+uint64(i), c) {
			return false
		}
	}
	return true
}

// Clock is what a clock token names: a position of one journal of one
// daemon instance, for one root.
type Clock struct {
	// Instance identifies the daemon instance (NewInstance).
	Instance uint64
	// Root identifies the root (RootID).
	Root uint64
	// Journal is the journal's ID.
	Journal uint64
	// Pos is the position: the changes since the token are the entries at
	// or after it.
	Pos uint64
}

// ErrBadToken: a string that is not a clock token.
var ErrBadToken = errors.New("journal: not a clock token")

// tokenVersion begins every token's bytes, for a later format to tell
// itself apart.
const tokenVersion = 1

// String returns the token: "c" and the base64url (unpadded) of a
// version byte and the four fields as uvarints. Agents must treat it as
// opaque.
func (c Clock) String() string {
	b := []byte{tokenVersion}
	for _, v := range []uint64{c.Instance, c.Root, c.Journal, c.Pos} {
		b = binary.AppendUvarint(b, v)
	}
	return "c" + base64.RawURLEncoding.EncodeToString(b)
}

// ParseClock decodes a token made by Clock.String; anything else is
// ErrBadToken.
func ParseClock(s string) (Clock, error) {
	if len(s) < 2 || s[0] != 'c' || len(s) > 64 {
		return Clock{}, ErrBadToken
	}
	b, err := base64.RawURLEncoding.DecodeString(s[1:])
	if err != nil || len(b) == 0 || b[0] != tokenVersion {
		return Clock{}, ErrBadToken
	}
	b = b[1:]
	var v [4]uint64
	for i := range v {
		x, k := binary.Uvarint(b)
		if k <= 0 {
			return Clock{}, ErrBadToken
		}
		v[i], b = x, b[k:]
	}
	if len(b) != 0 {
		return Clock{}, ErrBadToken
	}
	return Clock{Instance: v[0], Root: v[1], Journal: v[2], Pos: v[3]}, nil
}

// NewInstance returns a random daemon instance identifier (never 0).
func NewInstance() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if v := binary.LittleEndian.Uint64(b[:]); v != 0 {
			return v
		}
	}
}

// RootID returns the identifier of a root path in tokens: its 64-bit
// FNV-1a hash.
func RootID(root string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(root); i++ {
		h ^= uint64(root[i])
		h *= 1099511628211
	}
	return h
}
