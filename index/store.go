package index

// On-disk format (schema version 1). One bbolt file per workspace root.
// Every change is one bbolt transaction, so a crash at any point leaves
// the state of the last committed transaction: the old index or the new,
// never a mix. Integers are big-endian unless noted as uvarint/varint.
//
//	bucket "meta"
//	    "schema"   uint32: SchemaVersion; any other value → rebuild
//	    "root"     the workspace root (absolute path) the DB describes
//	    "basesum"  uint32: CRC-32C of base "tris" ‖ "offs" ‖ "data"
//	bucket "files"   one key per table entry
//	    key   path (root-relative, slash separated)
//	    value uvarint id ‖ varint size ‖ varint mtime (Unix ns) ‖
//	          byte type (0 file, 1 symlink) ‖ byte flags ‖ uvarint hidden
//	bucket "base"    the immutable postings, as three blobs
//	    "tris" n×4 bytes: sorted trigrams (uint32, low 24 bits used)
//	    "offs" (n+1)×4 bytes: offsets of each trigram's list in "data"
//	    "data" lists: ids ascending, uvarint (id+1) then uvarint gaps
//	bucket "delta"   files read since the base was built
//	    key   uint32 id
//	    value m×3 bytes: the file's sorted trigrams
//	bucket "stale"   ids whose base postings are out of date
//	    key   uint32 id, value empty
//	bucket "ignored" entries the ignore rules pruned
//	    key   path, value byte 1 for a directory, 0 for a file
//
// Worked example: a root holding only "a.go" = "Abc\n" and "b.txt" = "ab"
// has files {"a.go": id 0, size 4, type 0, flags 0; "b.txt": id 1, size 2}
// and base tris [0x616263 "abc", 0x62630a "bc\n"], offs [0, 1, 2], data
// [0x01, 0x01]: both lists hold id 0 (stored as 0+1). "b.txt" is too short
// for a trigram: it is in no list, and no query that needs a trigram will
// name it, which is right since it cannot hold a three-byte match.
//
// Invariants checked on open (Check): schema and root match; the CRC of
// the base matches; tris strictly increase; offs start at 0, never
// decrease and end at len(data); every list decodes to strictly increasing
// ids; every id in "files", "delta" and "stale" is below the id bound
// (number of files + free slots). A DB failing any of them is discarded and
// the index rebuilt: it is never trusted.
//
// Version log:
//	1  first format.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the on-disk format version this package writes.
const SchemaVersion = 1

// Errors of Open. Each means the DB cannot be trusted and must be rebuilt.
var (
	ErrSchema  = errors.New("index: database has another schema version")
	ErrCorrupt = errors.New("index: database fails its consistency check")
	ErrRoot    = errors.New("index: database describes another root")
)

var (
	bMeta    = []byte("meta")
	bFiles   = []byte("files")
	bBase    = []byte("base")
	bDelta   = []byte("delta")
	bStale   = []byte("stale")
	bIgnored = []byte("ignored")
	allBkts  = [][]byte{bMeta, bFiles, bBase, bDelta, bStale, bIgnored}

	crcTable = crc32.MakeTable(crc32.Castagnoli)
)

// openDB opens (creating) the bbolt file at path.
func openDB(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType, OpenFile: openNoFollow})
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	db.AllocSize = 1 << 20 // grow the file by 1 MiB, not bbolt's 16 MiB: the file is the index's size on disk
	return db, nil
}

// Save writes the whole index to path in one transaction (replacing what
// was there) and keeps the DB open for incremental writes.
func (ix *Index) Save(path string) error {
	db, err := openDB(path)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBkts {
			if tx.Bucket(b) != nil {
				if err := tx.DeleteBucket(b); err != nil {
					return err
				}
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return ix.writeAll(tx)
	}); err != nil {
		db.Close()
		return fmt.Errorf("index: save %s: %w", path, err)
	}
	if ix.db != nil && ix.db != db {
		ix.db.Close()
	}
	ix.db = db
	return nil
}

// writeAll writes every bucket's contents. Caller holds mu.
func (ix *Index) writeAll(tx *bolt.Tx) error {
	meta := tx.Bucket(bMeta)
	if err := meta.Put([]byte("schema"), be32(SchemaVersion)); err != nil {
		return err
	}
	if err := meta.Put([]byte("root"), []byte(ix.root)); err != nil {
		return err
	}
	if err := ix.writeBase(tx); err != nil {
		return err
	}
	files := tx.Bucket(bFiles)
	for id := range ix.files {
		if f := &ix.files[id]; f.Path != "" {
			if err := files.Put([]byte(f.Path), encodeFile(uint32(id), f)); err != nil {
				return err
			}
		}
	}
	for id, tris := range ix.delta {
		if err := tx.Bucket(bDelta).Put(be32(id), packTrigrams(tris)); err != nil {
			return err
		}
	}
	for id := range ix.stale {
		if err := tx.Bucket(bStale).Put(be32(id), nil); err != nil {
			return err
		}
	}
	ign := tx.Bucket(bIgnored)
	for _, s := range ix.ignored {
		if err := putIgnored(ign, s); err != nil {
			return err
		}
	}
	return nil
}

// putIgnored writes one "ignored" record (see the format comment).
func putIgnored(b *bolt.Bucket, s Skipped) error {
	v := byte(0)
	if s.IsDir {
		v = 1
	}
	return b.Put([]byte(s.Path), []byte{v})
}

func (ix *Index) writeBase(tx *bolt.Tx) error {
	tris := make([]byte, 4*len(ix.base.tris))
	for i, t := range ix.base.tris {
		binary.BigEndian.PutUint32(tris[4*i:], t)
	}
	offs := make([]byte, 4*len(ix.base.offs))
	for i, o := range ix.base.offs {
		binary.BigEndian.PutUint32(offs[4*i:], o)
	}
	b := tx.Bucket(bBase)
	for _, kv := range []struct {
		k string
		v []byte
	}{{"tris", tris}, {"offs", offs}, {"data", ix.base.data}} {
		if err := b.Put([]byte(kv.k), kv.v); err != nil {
			return err
		}
	}
	sum := crc32.Update(crc32.Update(crc32.Checksum(tris, crcTable), crcTable, offs), crcTable, ix.base.data)
	return tx.Bucket(bMeta).Put([]byte("basesum"), be32(sum))
}

// Close closes the index's database, if any.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return nil
	}
	err := ix.db.Close()
	ix.db = nil
	return err
}

// Open loads the index of root saved at path, checks it (see the format
// comment) and returns it with the DB kept open. It does not look at the
// tree: call Reconcile to bring it up to date. An error wrapping ErrSchema,
// ErrCorrupt or ErrRoot means the file must be discarded and rebuilt.
func Open(path, root string) (*Index, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	db, err := openDB(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	ix := newIndex(root)
	err = db.View(func(tx *bolt.Tx) error { return ix.load(tx) })
	if err != nil {
		db.Close()
		return nil, err
	}
	ix.db = db
	return ix, nil
}

func (ix *Index) load(tx *bolt.Tx) error {
	for _, b := range allBkts {
		if tx.Bucket(b) == nil {
			return fmt.Errorf("%w: bucket %q missing", ErrCorrupt, b)
		}
	}
	meta := tx.Bucket(bMeta)
	if v := meta.Get([]byte("schema")); len(v) != 4 || binary.BigEndian.Uint32(v) != SchemaVersion {
		return ErrSchema
	}
	if string(meta.Get([]byte("root"))) != ix.root {
		return ErrRoot
	}
	base := tx.Bucket(bBase)
	tris, offs, data := base.Get([]byte("tris")), base.Get([]byte("offs")), base.Get([]byte("data"))
	sum := meta.Get([]byte("basesum"))
	if len(sum) != 4 || crc32.Update(crc32.Update(crc32.Checksum(tris, crcTable), crcTable, offs), crcTable, data) != binary.BigEndian.Uint32(sum) {
		return fmt.Errorf("%w: base checksum", ErrCorrupt)
	}
	if len(tris)%4 != 0 || len(offs) != len(tris)+4 {
		return fmt.Errorf("%w: base sizes", ErrCorrupt)
	}
	p := postings{tris: make([]uint32, len(tris)/4), offs: make([]uint32, len(offs)/4), data: bytes.Clone(data)}
	for i := range p.tris {
		p.tris[i] = binary.BigEndian.Uint32(tris[4*i:])
	}
	for i := range p.offs {
		p.offs[i] = binary.BigEndian.Uint32(offs[4*i:])
	}
	ix.base = p

	maxID := -1
	err := tx.Bucket(bFiles).ForEach(func(k, v []byte) error {
		id, f, ok := decodeFile(string(k), v)
		if !ok {
			return fmt.Errorf("%w: file record %q", ErrCorrupt, k)
		}
		for int(id) >= len(ix.files) {
			ix.files = append(ix.files, File{})
		}
		if ix.files[id].Path != "" {
			return fmt.Errorf("%w: id %d used twice", ErrCorrupt, id)
		}
		ix.files[id] = f
		ix.byPath[f.Path] = id
		if f.Flags&Unknown != 0 {
			ix.unknown[id] = true
		}
		maxID = max(maxID, int(id))
		return nil
	})
	if err != nil {
		return err
	}
	for id := range ix.files {
		if ix.files[id].Path == "" {
			ix.free = append(ix.free, uint32(id))
		}
	}
	bound := uint32(len(ix.files))
	err = tx.Bucket(bDelta).ForEach(func(k, v []byte) error {
		if len(k) != 4 || len(v)%3 != 0 {
			return fmt.Errorf("%w: delta record", ErrCorrupt)
		}
		id := binary.BigEndian.Uint32(k)
		if id >= bound || ix.files[id].Path == "" {
			return fmt.Errorf("%w: delta id %d", ErrCorrupt, id)
		}
		ix.delta[id] = unpackTrigrams(v)
		return nil
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bStale).ForEach(func(k, _ []byte) error {
		if len(k) != 4 {
			return fmt.Errorf("%w: stale record", ErrCorrupt)
		}
		ix.stale[binary.BigEndian.Uint32(k)] = true
		return nil
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bIgnored).ForEach(func(k, v []byte) error {
		ix.ignored = append(ix.ignored, Skipped{Path: string(k), IsDir: len(v) == 1 && v[0] == 1})
		return nil
	})
	if err != nil {
		return err
	}
	ix.reorder()
	if err := ix.check(); err != nil {
		return err
	}
	return nil
}

// check verifies the in-memory invariants of the postings (see the format
// comment). It is also what Check runs for users and tests.
func (ix *Index) check() error {
	p := &ix.base
	if len(p.offs) != len(p.tris)+1 || p.offs[0] != 0 || int(p.offs[len(p.offs)-1]) != len(p.data) {
		return fmt.Errorf("%w: offsets", ErrCorrupt)
	}
	bound := uint64(len(ix.files))
	for i := range p.tris {
		if i > 0 && p.tris[i] <= p.tris[i-1] || p.tris[i] > 0xFFFFFF {
			return fmt.Errorf("%w: trigrams out of order", ErrCorrupt)
		}
		if p.offs[i+1] < p.offs[i] {
			return fmt.Errorf("%w: offsets decrease", ErrCorrupt)
		}
		b := p.data[p.offs[i]:p.offs[i+1]]
		acc := uint64(0)
		for len(b) > 0 {
			d, n := binary.Uvarint(b)
			if n <= 0 || d == 0 {
				return fmt.Errorf("%w: posting list of %06x", ErrCorrupt, p.tris[i])
			}
			acc += d
			if acc > bound {
				return fmt.Errorf("%w: posting id %d beyond %d", ErrCorrupt, acc-1, bound)
			}
			b = b[n:]
		}
	}
	return nil
}

// Check verifies the index's invariants; nil means consistent.
func (ix *Index) Check() error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if err := ix.check(); err != nil {
		return err
	}
	for id := range ix.delta {
		if int(id) >= len(ix.files) || ix.files[id].Path == "" {
			return fmt.Errorf("%w: delta id %d has no file", ErrCorrupt, id)
		}
	}
	for _, id := range ix.order {
		if ix.byPath[ix.files[id].Path] != id {
			return fmt.Errorf("%w: path map disagrees for id %d", ErrCorrupt, id)
		}
	}
	if len(ix.order) != len(ix.byPath) {
		return fmt.Errorf("%w: %d ordered, %d mapped", ErrCorrupt, len(ix.order), len(ix.byPath))
	}
	return nil
}

// OpenOrBuild opens the index saved at path and reconciles it with the
// tree; if there is none, or it cannot be trusted, it builds the index
// afresh and saves it. rebuilt says which happened.
func OpenOrBuild(ctx context.Context, path, root string, progress func(Progress)) (ix *Index, rebuilt bool, err error) {
	ix, err = Open(path, root)
	if err == nil {
		if _, err = ix.Reconcile(ctx); err == nil {
			return ix, false, nil
		}
		ix.Close()
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err() // cancelled, not untrusted: keep the DB
	}
	if !errors.Is(err, fs.ErrNotExist) {
		os.Remove(path) // untrusted: discard
	}
	ix, err = Build(ctx, root, progress)
	if err != nil {
		return nil, true, err
	}
	if err := ix.Save(path); err != nil {
		return nil, true, err
	}
	return ix, true, nil
}

// encodeFile and decodeFile convert a "files" value.
func encodeFile(id uint32, f *File) []byte {
	b := binary.AppendUvarint(nil, uint64(id))
	b = binary.AppendVarint(b, f.Size)
	b = binary.AppendVarint(b, f.ModTime)
	typ := byte(0)
	if f.Mode&fs.ModeSymlink != 0 {
		typ = 1
	}
	b = append(b, typ, byte(f.Flags))
	return binary.AppendUvarint(b, f.Hidden)
}

func decodeFile(path string, b []byte) (uint32, File, bool) {
	f := File{Path: path}
	id, n := binary.Uvarint(b)
	if n <= 0 || id > 1<<31 || path == "" || strings.HasPrefix(path, "/") {
		return 0, f, false
	}
	b = b[n:]
	if f.Size, n = binary.Varint(b); n <= 0 {
		return 0, f, false
	}
	b = b[n:]
	if f.ModTime, n = binary.Varint(b); n <= 0 {
		return 0, f, false
	}
	b = b[n:]
	if len(b) < 2 || b[0] > 1 {
		return 0, f, false
	}
	if b[0] == 1 {
		f.Mode = fs.ModeSymlink
	}
	f.Flags = Flags(b[1])
	if f.Hidden, n = binary.Uvarint(b[2:]); n <= 0 {
		return 0, f, false
	}
	return uint32(id), f, true
}

func packTrigrams(tris []uint32) []byte {
	b := make([]byte, 0, 3*len(tris))
	for _, t := range tris {
		b = append(b, byte(t>>16), byte(t>>8), byte(t))
	}
	return b
}

func unpackTrigrams(b []byte) []uint32 {
	out := make([]uint32, len(b)/3)
	for i := range out {
		out[i] = uint32(b[3*i])<<16 | uint32(b[3*i+1])<<8 | uint32(b[3*i+2])
	}
	slices.Sort(out)
	return out
}

func be32[T ~uint32 | ~int](v T) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
