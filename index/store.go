package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the on-disk format version this package writes
// (format.go).
const SchemaVersion = 11

// Errors of Open. Each means the DB cannot be trusted and must be
// rebuilt; compare with errors.Is.
var (
	// ErrSchema: the DB was written in another format (an older version).
	ErrSchema = errors.New("index: database has another schema version")
	// ErrCorrupt: the DB fails a check made on open (see
	// format.go), or the database library panicked reading it.
	ErrCorrupt = errors.New("index: database fails its consistency check")
	// ErrRoot: the DB describes another workspace root.
	ErrRoot = errors.New("index: database describes another root")
)

var (
	bMeta    = []byte("meta")
	bFiles   = []byte("files")
	bDelta   = []byte("delta")
	bStale   = []byte("stale")
	bIgnored = []byte("ignored")
	allBkts  = [][]byte{bMeta, bFiles, bDelta, bStale, bIgnored}

	kSchema  = []byte("schema")
	kRoot    = []byte("root")
	kSlots   = []byte("slots")
	kWritten = []byte("written")
	kBase    = []byte("base")
	kSums    = []byte("sums")
	kMetaSum = []byte("metasum")
)

// castagnoli returns the CRC-32C table of the DB's and the base file's
// sums, made on first use: making it (8 KiB of tables for the hardware
// path) took 0.17 ms of every engine start, a query answered with
// --direct included, which never reads a DB.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// The buckets with record sums, in the order of meta "sums".
const (
	sumFiles = iota
	sumDelta
	sumStale
	sumIgnored
	nSums
)

var summed = [nSums][]byte{bFiles, bDelta, bStale, bIgnored}

// recordHash is a record's term in its bucket's sum (see
// format.go).
func recordHash(k, v []byte) uint64 {
	var lb [binary.MaxVarintLen64]byte
	tab := castagnoli()
	c := crc32.Checksum(lb[:binary.PutUvarint(lb[:], uint64(len(k)))], tab)
	c = crc32.Update(crc32.Update(c, tab, k), tab, v)
	x := uint64(c)<<32 | uint64(uint32(len(v)))
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// metaSum is the CRC-32C of meta's records but "metasum" (format.go).
func metaSum(meta *bolt.Bucket) uint32 {
	var c uint32
	var lb [binary.MaxVarintLen64]byte
	tab := castagnoli()
	meta.ForEach(func(k, v []byte) error {
		if !bytes.Equal(k, kMetaSum) {
			c = crc32.Update(c, tab, lb[:binary.PutUvarint(lb[:], uint64(len(k)))])
			c = crc32.Update(c, tab, k)
			c = crc32.Update(c, tab, lb[:binary.PutUvarint(lb[:], uint64(len(v)))])
			c = crc32.Update(c, tab, v)
		}
		return nil
	})
	return c
}

// dbTx is one write transaction that keeps the record sums current.
type dbTx struct {
	tx    *bolt.Tx
	sums  [nSums]uint64
	fresh bool // the summed buckets started empty and nothing is written twice: no lookups
}

// beginTx starts keeping the sums of tx from those stored in meta.
func beginTx(tx *bolt.Tx) (*dbTx, error) {
	w := &dbTx{tx: tx}
	v := tx.Bucket(bMeta).Get(kSums)
	if len(v) != 8*nSums {
		return nil, fmt.Errorf("%w: meta sums", ErrCorrupt)
	}
	for i := range w.sums {
		w.sums[i] = binary.BigEndian.Uint64(v[8*i:])
	}
	return w, nil
}

// lookup returns the value of k in b, if it has one.
func lookup(b *bolt.Bucket, k []byte) ([]byte, bool) {
	kk, v := b.Cursor().Seek(k)
	return v, kk != nil && bytes.Equal(kk, k)
}

// put writes one record of summed bucket i.
func (w *dbTx) put(i int, k, v []byte) error {
	b := w.tx.Bucket(summed[i])
	if !w.fresh {
		if old, ok := lookup(b, k); ok {
			w.sums[i] -= recordHash(k, old)
		}
	}
	w.sums[i] += recordHash(k, v)
	return b.Put(k, v)
}

// del deletes one record of summed bucket i, if it is there.
func (w *dbTx) del(i int, k []byte) error {
	b := w.tx.Bucket(summed[i])
	old, ok := lookup(b, k)
	if !ok {
		return nil
	}
	w.sums[i] -= recordHash(k, old)
	return b.Delete(k)
}

// reset empties summed bucket i.
func (w *dbTx) reset(i int) error {
	if err := w.tx.DeleteBucket(summed[i]); err != nil {
		return err
	}
	_, err := w.tx.CreateBucket(summed[i])
	w.sums[i] = 0
	return err
}

// finish stores the sums, the write time (now, Unix ns) and the meta
// checksum; it returns the write time.
func (w *dbTx) finish(now time.Time) (int64, error) {
	meta := w.tx.Bucket(bMeta)
	sums := make([]byte, 0, 8*nSums)
	for _, s := range w.sums {
		sums = binary.BigEndian.AppendUint64(sums, s)
	}
	written := now.UnixNano()
	if err := meta.Put(kSums, sums); err != nil {
		return 0, err
	}
	if err := meta.Put(kWritten, binary.BigEndian.AppendUint64(nil, uint64(written))); err != nil {
		return 0, err
	}
	return written, meta.Put(kMetaSum, be32(metaSum(meta)))
}

// update writes the pending changes (see pendingWrites) and runs fn in
// one write transaction of the index's DB. Caller holds wmu (not mu:
// readers go on meanwhile); ix.db is set.
func (ix *Index) update(fn func(w *dbTx) error) error {
	recs, taken := ix.takePending()
	ix.dbmu.Lock()
	defer ix.dbmu.Unlock()
	err := ix.transact(recs, len(ix.files), fn)
	if err != nil {
		ix.pending.restore(taken)
	}
	return err
}

// transact writes recs, then runs fn, in one write transaction of the
// index's DB, and finishes it with slots (the table's length) and the
// write time, which it records. A bbolt panic (a DB damaged since it was
// opened) is returned as ErrCorrupt. Caller holds dbmu; ix.db is set.
func (ix *Index) transact(recs []record, slots int, fn func(w *dbTx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	var written int64
	err = ix.db.Update(func(tx *bolt.Tx) error {
		w, err := beginTx(tx)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.del {
				err = w.del(r.b, r.key)
			} else {
				err = w.put(r.b, r.key, r.val)
			}
			if err != nil {
				return err
			}
		}
		if fn != nil {
			if err := fn(w); err != nil {
				return err
			}
		}
		if ix.hookInTx != nil {
			if err := ix.hookInTx(); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bMeta).Put(kSlots, be32(slots)); err != nil {
			return err
		}
		written, err = w.finish(ix.k.now())
		return err
	})
	if err == nil {
		ix.mu.Lock()
		ix.written = written
		ix.mu.Unlock()
	}
	return err
}

// recoverCorrupt turns a panic of the database library into ErrCorrupt.
// Deferred, with SetPanicOnFault on, by whatever reads the DB's pages.
func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: the database library panicked: %v", ErrCorrupt, r)
	}
}

// openNew creates the bbolt file at path (empty or absent) for a save.
func openNew(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, FreelistType: bolt.FreelistMapType, OpenFile: openNoFollow})
	if err != nil {
		return nil, err
	}
	db.AllocSize = 1 << 20 // grow the file by 1 MiB, not bbolt's 16 MiB: the file is the index's size on disk
	return db, nil
}

// tmpInfix names Save's temporary files: <name>.tmp-<random>.
const tmpInfix = ".tmp-"

// Save writes the whole index to a new DB file beside path, syncs it and
// renames it over path (then syncs the directory), and keeps the DB open
// for incremental writes. A save that fails removes the file it was
// writing and leaves path as it was, unless the failure was syncing the
// directory after the rename: then path is the new, complete DB (which
// the index keeps) and only its durability is in doubt.
func (ix *Index) Save(path string) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	// A build that spilled beside path wrote its base as path's next base
	// file (synced, named by no DB yet): the save names it rather than
	// copying it, unless a compaction has replaced it since.
	nb, reuse := ix.built, ix.builtFor == path && ix.db == nil && sameBase(ix.built.p, ix.base)
	if !reuse {
		var err error
		nb, err = writeBaseFile(path, func(w io.Writer) (int64, uint32, error) {
			_, err := w.Write(ix.base.data)
			return int64(len(ix.base.data)), crc32.Checksum(ix.base.data, castagnoli()), err
		})
		if err != nil {
			return fmt.Errorf("index: save %s: %w", path, err)
		}
	}
	db, written, err := ix.saveLocked(path, nb)
	if db == nil {
		if !reuse {
			nb.p.close()
			os.Remove(basePath(path, nb.gen))
		}
	} else {
		ix.dbmu.Lock() // a Flush's transaction on the old DB ends first
		if ix.db != nil {
			ix.db.Close()
		}
		ix.mu.Lock()
		old := ix.base
		ix.db, ix.path, ix.written, ix.base, ix.gen = db, path, written, nb.p, nb.gen
		ix.pending.clear() // the new DB holds all of memory
		ix.built, ix.builtFor = newBase{}, ""
		ix.mu.Unlock()
		ix.dbmu.Unlock()
		if !reuse {
			old.close()
		}
		removeBases(path, nb.gen)
	}
	if err != nil {
		return fmt.Errorf("index: save %s: %w", path, err)
	}
	return nil
}

// sameBase reports whether a and b are the same mapping.
func sameBase(a, b postings) bool {
	return len(a.data) > 0 && len(a.data) == len(b.data) && &a.data[0] == &b.data[0]
}

func (ix *Index) saveLocked(path string, nb newBase) (db *bolt.DB, written int64, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, base+tmpInfix+"*")
	if err != nil {
		return nil, 0, err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err == nil || renamed {
			return
		}
		if db != nil {
			db.Close() // its error adds nothing: the file goes
			db = nil
		}
		if rerr := os.Remove(tmp); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	if err := f.Close(); err != nil {
		return nil, 0, err
	}
	if db, err = openNew(tmp); err != nil {
		return nil, 0, err
	}
	if written, err = ix.writeAll(db, nb); err != nil {
		return db, 0, err
	}
	if err := db.Sync(); err != nil {
		return db, 0, fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return db, 0, err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return db, written, fmt.Errorf("syncing the directory after renaming the new DB into place: %w", err)
	}
	return db, written, nil
}

// syncDir makes the directory's entries (a rename into it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// saveBatch is how many records one transaction of writeAll writes.
const saveBatch = 1 << 15

// writeAll writes every bucket's contents, and meta last, into the new,
// empty DB db, in key order and in transactions of saveBatch records, so
// that bbolt holds one batch's pages in memory rather than the whole DB,
// and fills its pages (keys come in ascending order: each page is
// written once, full). The DB is not synced between them: the file is
// not the index until Save renames it into place, after syncing it. It
// returns the write time. Caller holds wmu.
func (ix *Index) writeAll(db *bolt.DB, nb newBase) (written int64, err error) {
	nosync := db.NoSync
	db.NoSync = true
	defer func() { db.NoSync = nosync }()
	w := &dbTx{fresh: true}
	n := 0
	var tx *bolt.Tx
	begin := func() error {
		var err error
		if tx, err = db.Begin(true); err != nil {
			return err
		}
		w.tx = tx
		for _, b := range summed {
			tx.Bucket(b).FillPercent = 1
		}
		return nil
	}
	// put writes one record, committing the transaction and starting the
	// next every saveBatch records.
	put := func(i int, k, v []byte) error {
		if n%4096 == 0 {
			pacer.check() // bbolt's nodes and pages of committed batches are garbage (pacer.go)
		}
		if n++; n%saveBatch == 0 {
			if err := tx.Commit(); err != nil {
				return err
			}
			if err := begin(); err != nil {
				return err
			}
		}
		return w.put(i, k, v)
	}
	defer func() {
		if err != nil && tx != nil && tx.DB() != nil {
			tx.Rollback()
		}
	}()
	if err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBkts {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if err = begin(); err != nil {
		return 0, err
	}
	for _, id := range ix.order {
		if f := &ix.files[id]; f.Path != "" {
			if err = put(sumFiles, []byte(f.Path), encodeFile(id, f)); err != nil {
				return 0, err
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ix.delta)) {
		if err = put(sumDelta, be32(id), packTrigrams(ix.delta[id])); err != nil {
			return 0, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ix.stale)) {
		if err = put(sumStale, be32(id), nil); err != nil {
			return 0, err
		}
	}
	for _, s := range ix.ignored {
		if err = put(sumIgnored, []byte(s.Path), ignoredValue(s)); err != nil {
			return 0, err
		}
	}
	meta := tx.Bucket(bMeta)
	if err = meta.Put(kSchema, be32(SchemaVersion)); err != nil {
		return 0, err
	}
	if err = meta.Put(kRoot, []byte(ix.root)); err != nil {
		return 0, err
	}
	if err = meta.Put(kSlots, be32(len(ix.files))); err != nil {
		return 0, err
	}
	if err = putBaseRecord(tx, nb); err != nil {
		return 0, err
	}
	if written, err = w.finish(ix.k.now()); err != nil {
		return 0, err
	}
	if err = tx.Commit(); err != nil {
		return 0, err
	}
	return written, nil
}

// Bits of an "ignored" record's value.
const (
	ignoredDir     = 1
	ignoredHidden  = 2
	ignoredDefault = 4
	ignoredDenied  = 8
)

// putIgnored writes one "ignored" record (see format.go).
func (w *dbTx) putIgnored(s Skipped) error {
	return w.put(sumIgnored, []byte(s.Path), ignoredValue(s))
}

// ignoredValue is the "ignored" record value of s.
func ignoredValue(s Skipped) []byte {
	v := byte(0)
	if s.IsDir {
		v |= ignoredDir
	}
	if s.Hidden {
		v |= ignoredHidden
	}
	if s.Default {
		v |= ignoredDefault
	}
	if s.Denied {
		v |= ignoredDenied
	}
	return []byte{v}
}

// Close closes the index's database, if any.
func (ix *Index) Close() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ferr := ix.flushLocked()
	ix.dbmu.Lock()
	ix.mu.Lock()
	db, base := ix.db, ix.base
	ix.db = nil
	if base.unmap != nil {
		ix.base = emptyPostings()
	}
	ix.mu.Unlock()
	ix.dbmu.Unlock()
	err := errors.Join(ferr, base.close())
	if db == nil {
		return err
	}
	return errors.Join(err, db.Close())
}

// Open loads the index of root saved at path, checks it (see
// format.go) and returns it with the DB kept open. It does not look at the
// tree: call Reconcile to bring it up to date. An error wrapping ErrSchema,
// ErrCorrupt or ErrRoot means the file must be discarded and rebuilt; a
// damaged file never makes Open panic. Other errors (the file is missing,
// unreadable, or locked by another process) say nothing about its
// contents.
func Open(path, root string) (*Index, error) {
	return open(path, root, defaultKnobs())
}

// open is Open, the index made with k.
func open(path, root string, k knobs) (ix *Index, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	if err := checkBoltFile(path); err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	var file *os.File // what bbolt opened, to close if it panics in Open
	var db *bolt.DB
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				db.Close()
			} else if file != nil {
				file.Close()
			}
			ix, err = nil, fmt.Errorf("index: open %s: %w: the database library panicked: %v", path, ErrCorrupt, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      2 * time.Second,
		FreelistType: bolt.FreelistMapType,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := openNoFollow(name, flag&^os.O_CREATE, perm) // never create: it was there
			file = f
			return f, err
		},
	})
	if err != nil {
		// The file passed checkBoltFile, so this is not expected; short of
		// the lock held elsewhere or the file itself unavailable, what
		// bbolt refuses is taken as damage.
		var pathErr *fs.PathError
		if !errors.Is(err, berrors.ErrTimeout) && !errors.As(err, &pathErr) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	db.AllocSize = 1 << 20
	ix = newIndex(root, k)
	err = func() error {
		defer pauseCollector()() // the table is all live; resumed if bbolt panics too
		return db.View(func(tx *bolt.Tx) error { return ix.load(tx, path) })
	}()
	if err != nil {
		ix.base.close()
		db.Close()
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	ix.db, ix.path = db, path
	// What a save, build or compaction cut short left (the DB is locked:
	// no other process is writing them).
	removeBases(path, ix.gen)
	removeTemps(path)
	return ix, nil
}

// load reads and checks every bucket (see format.go).
func (ix *Index) load(tx *bolt.Tx, path string) error {
	for _, b := range allBkts {
		if tx.Bucket(b) == nil {
			return fmt.Errorf("%w: bucket %q missing", ErrCorrupt, b)
		}
	}
	meta := tx.Bucket(bMeta)
	if v := meta.Get(kSchema); len(v) != 4 || binary.BigEndian.Uint32(v) != SchemaVersion {
		return ErrSchema
	}
	if v := meta.Get(kMetaSum); len(v) != 4 || binary.BigEndian.Uint32(v) != metaSum(meta) {
		return fmt.Errorf("%w: meta checksum", ErrCorrupt)
	}
	if string(meta.Get(kRoot)) != ix.root {
		return ErrRoot
	}
	written, sums, slots := meta.Get(kWritten), meta.Get(kSums), meta.Get(kSlots)
	if len(written) != 8 || len(sums) != 8*nSums || len(slots) != 4 {
		return fmt.Errorf("%w: meta records", ErrCorrupt)
	}
	ix.written = int64(binary.BigEndian.Uint64(written))
	rec := meta.Get(kBase)
	if len(rec) != baseRecordSize {
		return fmt.Errorf("%w: meta base record", ErrCorrupt)
	}
	gen := binary.BigEndian.Uint64(rec)
	base, err := mapBase(basePath(path, gen), int64(binary.BigEndian.Uint64(rec[8:])))
	if err != nil {
		return err
	}
	// The base's CRC (over a GiB on a 1M-file root) is computed on another
	// core while the records load, not before; both must pass.
	crcErr := make(chan error, 1)
	go func() { crcErr <- base.checkCRC(binary.BigEndian.Uint32(rec[16:])) }()
	err = ix.loadRecords(tx, sums, slots)
	if cerr := <-crcErr; cerr != nil {
		err = cerr // the base's damage first: it may explain the rest
	}
	if err != nil {
		base.close()
		return err
	}
	ix.base, ix.gen = base, gen
	return ix.checkLocked(false) // ix.order came in key order
}

// loadRecords reads and checks the records of "files", "delta", "stale"
// and "ignored" (see load). Each bucket is read once: every record is
// hashed for its bucket's sum as it is decoded, and the sum must match
// before load returns (nothing decoded is used before: a damaged record
// is refused whatever it decodes to). The decode cannot run away on
// damage: the table is sized by "slots", which "metasum" covers, and
// every id is checked against it. The "files" keys come in byte order,
// which is ix.order's, so the order is built as they come rather than
// sorted afterwards.
func (ix *Index) loadRecords(tx *bolt.Tx, sums, slots []byte) error {
	bound := binary.BigEndian.Uint32(slots)
	if bound > 1<<31 {
		return fmt.Errorf("%w: %d slots", ErrCorrupt, bound)
	}
	ix.files = make([]File, bound)
	ix.mtimes = make([]int64, bound)
	ix.order = make([]uint32, 0, bound)
	if err := sumEach(tx, sumFiles, sums, ix.loadFile(bound)); err != nil {
		return err
	}
	for id := range ix.files {
		if ix.files[id].Path == "" {
			ix.free = append(ix.free, uint32(id))
		}
	}
	err := sumEach(tx, sumDelta, sums, func(k, v []byte) error {
		if len(k) != 4 || len(v)%4 != 0 {
			return fmt.Errorf("%w: delta record", ErrCorrupt)
		}
		id := binary.BigEndian.Uint32(k)
		if id >= bound {
			return fmt.Errorf("%w: delta id %d beyond %d", ErrCorrupt, id, bound)
		}
		ix.setDelta(id, unpackTrigrams(v))
		return nil
	})
	if err != nil {
		return err
	}
	err = sumEach(tx, sumStale, sums, func(k, v []byte) error {
		if len(k) != 4 || len(v) != 0 {
			return fmt.Errorf("%w: stale record", ErrCorrupt)
		}
		id := binary.BigEndian.Uint32(k)
		if id >= bound {
			return fmt.Errorf("%w: stale id %d beyond %d", ErrCorrupt, id, bound)
		}
		ix.stale[id] = true
		return nil
	})
	if err != nil {
		return err
	}
	defer func() { ix.setIgnored(ix.ignored) }()
	return sumEach(tx, sumIgnored, sums, func(k, v []byte) error {
		if len(k) == 0 || len(v) != 1 || v[0] != 0 && v[0] != ignoredDir && v[0] != ignoredDir|ignoredHidden && v[0] != ignoredDir|ignoredDefault &&
			v[0] != ignoredDir|ignoredDenied && v[0] != ignoredDir|ignoredHidden|ignoredDenied {
			return fmt.Errorf("%w: ignored record %q", ErrCorrupt, k)
		}
		ix.ignored = append(ix.ignored, Skipped{Path: string(k), IsDir: v[0]&ignoredDir != 0, Hidden: v[0]&ignoredHidden != 0,
			Default: v[0]&ignoredDefault != 0, Denied: v[0]&ignoredDenied != 0})
		return nil
	})
}

// loadFile returns the function that loads one "files" record: into
// ix.files, ix.order and (a hidden name) ix.hidden, as reorder would
// make them.
func (ix *Index) loadFile(bound uint32) func(k, v []byte) error {
	var paths pathArena
	return func(k, v []byte) error {
		id, f, ok := decodeFile(paths.string(k), v)
		if !ok || id >= bound {
			return fmt.Errorf("%w: file record %q", ErrCorrupt, k)
		}
		if ix.files[id].Path != "" {
			return fmt.Errorf("%w: id %d used twice", ErrCorrupt, id)
		}
		ix.files[id] = f
		ix.mtimes[id] = f.ModTime
		ix.nexts.set(id, f.Flags&NextMasks != 0)
		ix.paths += int64(len(f.Path))
		ix.order = append(ix.order, id)
		if f.HiddenName() {
			ix.hidden = append(ix.hidden, id) // in path order too
		}
		if f.Flags&Unknown != 0 {
			ix.unknown[id] = true
		}
		return nil
	}
}

// pathArena makes the strings of the paths a load decodes: their bytes
// end to end in chunks of pathChunk, each string over its own bytes,
// which are never written again. One allocation per chunk instead of one
// per path: at a million files, 944,742 objects fewer for the collector
// to mark on every cycle and for the load to allocate. A path kept keeps
// its chunk: a table that later drops most of its loaded paths holds at
// most the chunks it loaded.
type pathArena struct{ buf []byte }

const pathChunk = 1 << 20

// string returns b's bytes as a string held by the arena.
func (a *pathArena) string(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > pathChunk/16:
		return string(b) // a path that long gets its own allocation
	case len(b) > cap(a.buf)-len(a.buf):
		a.buf = make([]byte, 0, pathChunk)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...) // within cap: the chunk is never moved
	return unsafe.String(&a.buf[n], len(b))
}

// sumEach calls fn for every record of summed bucket i, in key order,
// and checks the bucket's records against their sum (sums, meta "sums").
// An error of fn ends it and is returned; otherwise a sum that differs
// is ErrCorrupt.
func sumEach(tx *bolt.Tx, i int, sums []byte, fn func(k, v []byte) error) error {
	var got uint64
	err := tx.Bucket(summed[i]).ForEach(func(k, v []byte) error {
		got += recordHash(k, v)
		return fn(k, v)
	})
	if err != nil {
		return err
	}
	if got != binary.BigEndian.Uint64(sums[8*i:]) {
		return fmt.Errorf("%w: %q records differ from their checksum", ErrCorrupt, summed[i])
	}
	return nil
}

// check verifies the invariants of the postings (see format.go):
// with lists, every list decoded; without, the table alone (on open: the
// CRC has shown the lists are what was written, and a query reads them
// defensively, so a restart does not decode them).
func (ix *Index) check(lists bool) error {
	if !lists {
		return ix.base.checkTable()
	}
	return ix.base.check(uint64(len(ix.files)), func(id uint32) error {
		if ix.files[id].Path == "" && !ix.stale[id] {
			return fmt.Errorf("posting id %d names a free slot and is not stale", id)
		}
		return nil
	})
}

// Check verifies the index's invariants (see format.go); nil
// means consistent. The error wraps ErrCorrupt.
func (ix *Index) Check() error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if err := ix.checkLocked(true); err != nil {
		return err
	}
	// The delta's signatures (derived as the sets are set): a slot per
	// set, its column exactly its trigrams' rows; free slots empty.
	if err := ix.dsl.check(ix.delta); err != nil {
		return err
	}
	var deltaBytes int64
	for _, tris := range ix.delta {
		deltaBytes += deltaSize(tris)
	}
	// Their size, kept as they change (what NeedsCompact bounds).
	if deltaBytes != ix.deltaBytes {
		return fmt.Errorf("%w: the delta holds %d bytes, counted %d", ErrCorrupt, deltaBytes, ix.deltaBytes)
	}
	// The memory's own derived list (not checked on open, which derives
	// it): exactly the ids of the order whose own name is hidden.
	h := 0
	for _, id := range ix.order {
		if ix.files[id].HiddenName() {
			if h == len(ix.hidden) || ix.hidden[h] != id {
				return fmt.Errorf("%w: hidden-name list lacks %s", ErrCorrupt, ix.files[id].Path)
			}
			h++
		}
	}
	if h != len(ix.hidden) {
		return fmt.Errorf("%w: hidden-name list holds %d files, not %d", ErrCorrupt, len(ix.hidden), h)
	}
	return nil
}

// checkLocked verifies every invariant (Check) with full; without (on
// open), not the lists (see check) nor the lookup of each file by its
// path: the order is checked strictly increasing, of live ids only, as
// long as the live table, so it finds each live id by its path (full
// looks each up all the same).
func (ix *Index) checkLocked(full bool) error {
	if err := ix.check(full); err != nil {
		return err
	}
	bound := uint32(len(ix.files))
	free := 0
	var paths int64
	for id := range ix.files {
		f := &ix.files[id]
		paths += int64(len(f.Path))
		if id >= len(ix.mtimes) || ix.mtimes[id] != f.ModTime {
			return fmt.Errorf("%w: id %d's packed mtime disagrees with its record", ErrCorrupt, id)
		}
		if ix.nexts.has(uint32(id)) != (f.Flags&NextMasks != 0) {
			return fmt.Errorf("%w: id %d's packed next-mask flag disagrees with its record", ErrCorrupt, id)
		}
		if f.Path == "" {
			free++
			if ix.unknown[uint32(id)] {
				return fmt.Errorf("%w: free id %d flagged unknown", ErrCorrupt, id)
			}
			continue
		}
		if full {
			if got, ok := ix.lookup(f.Path); !ok || got != uint32(id) {
				return fmt.Errorf("%w: the path order does not find id %d by its path", ErrCorrupt, id)
			}
		}
		switch {
		case f.Flags&^knownFlags != 0 || f.Flags&Binary != 0 && f.Flags&Unknown != 0 || f.Flags&Denied != 0 && f.Flags&Unknown == 0 ||
			f.Flags&NextMasks != 0 && f.Flags&(Binary|Unknown) != 0:
			return fmt.Errorf("%w: %s: flags %#x", ErrCorrupt, f.Path, f.Flags)
		case f.Mode != 0 && f.Mode != fs.ModeSymlink:
			return fmt.Errorf("%w: %s: mode %v", ErrCorrupt, f.Path, f.Mode)
		case f.Mode == fs.ModeSymlink && f.Flags != 0:
			return fmt.Errorf("%w: %s: a symlink with flags %#x", ErrCorrupt, f.Path, f.Flags)
		case ix.unknown[uint32(id)] != (f.Flags&Unknown != 0):
			return fmt.Errorf("%w: %s: unknown set disagrees with flags", ErrCorrupt, f.Path)
		}
		_, inDelta := ix.delta[uint32(id)]
		if ix.stale[uint32(id)] && f.Mode.IsRegular() && f.Flags&(Binary|Unknown) == 0 && !inDelta {
			return fmt.Errorf("%w: %s is stale and not in the delta: its matches would be lost", ErrCorrupt, f.Path)
		}
	}
	if len(ix.free) != free {
		return fmt.Errorf("%w: %d free slots, %d listed free", ErrCorrupt, free, len(ix.free))
	}
	if len(ix.mtimes) != len(ix.files) {
		return fmt.Errorf("%w: %d packed mtimes for %d ids", ErrCorrupt, len(ix.mtimes), len(ix.files))
	}
	if ix.nexts.last() >= len(ix.files) {
		return fmt.Errorf("%w: a packed next-mask flag for id %d beyond %d ids", ErrCorrupt, ix.nexts.last(), len(ix.files))
	}
	if paths != ix.paths {
		return fmt.Errorf("%w: the paths hold %d bytes, counted %d", ErrCorrupt, paths, ix.paths)
	}
	for id := range ix.unknown {
		if id >= bound {
			return fmt.Errorf("%w: unknown id %d beyond %d", ErrCorrupt, id, bound)
		}
	}
	for _, id := range ix.free {
		if id >= bound || ix.files[id].Path != "" {
			return fmt.Errorf("%w: free id %d is in use", ErrCorrupt, id)
		}
	}
	for id, tris := range ix.delta {
		if id >= bound || ix.files[id].Path == "" {
			return fmt.Errorf("%w: delta id %d has no file", ErrCorrupt, id)
		}
		if f := &ix.files[id]; !f.Mode.IsRegular() || f.Flags&(Binary|Unknown) != 0 || !ix.stale[id] {
			return fmt.Errorf("%w: %s in the delta: flags %#x, stale %v", ErrCorrupt, f.Path, f.Flags, ix.stale[id])
		}
		for i, v := range tris {
			if i > 0 && packedTri(v) <= packedTri(tris[i-1]) {
				return fmt.Errorf("%w: delta set of %s out of order", ErrCorrupt, ix.files[id].Path)
			}
			if uint8(v) == 0 {
				return fmt.Errorf("%w: delta set of %s: a mask of zero", ErrCorrupt, ix.files[id].Path)
			}
		}
	}
	for id := range ix.stale {
		if id >= bound {
			return fmt.Errorf("%w: stale id %d beyond %d", ErrCorrupt, id, bound)
		}
	}
	for i, id := range ix.order {
		if ix.files[id].Path == "" || i > 0 && ix.files[ix.order[i-1]].Path >= ix.files[id].Path {
			return fmt.Errorf("%w: path order broken at id %d", ErrCorrupt, id)
		}
	}
	if len(ix.order) != len(ix.files)-free || len(ix.adding) != 0 {
		return fmt.Errorf("%w: %d ordered, %d live, %d put and not ordered", ErrCorrupt, len(ix.order), len(ix.files)-free, len(ix.adding))
	}
	if len(ix.plain) != len(ix.ignored) {
		return fmt.Errorf("%w: %d ignored records, %d told plain or not", ErrCorrupt, len(ix.ignored), len(ix.plain))
	}
	for i := range ix.ignored {
		if ix.ignored[i].Path == "" || i > 0 && ix.ignored[i-1].Path >= ix.ignored[i].Path {
			return fmt.Errorf("%w: ignored records out of order", ErrCorrupt)
		}
		if ix.plain[i] == HiddenPath(ix.ignored[i].Path) {
			return fmt.Errorf("%w: ignored record %q told plain %v", ErrCorrupt, ix.ignored[i].Path, ix.plain[i])
		}
	}
	return nil
}

// Phase is a step of OpenOrBuild.
type Phase int

// OpenOrBuild's phases, in the order they may come.
const (
	PhaseReopen Phase = iota // loading the saved index and (unless NoReconcile) checking the tree by stat
	PhaseBuild               // reading every file
	PhaseSave                // writing the new index to its DB
)

// OpenOptions are OpenOrBuild's callbacks; any may be nil.
type OpenOptions struct {
	// Progress reports a build's advance (see Build).
	Progress func(Progress)
	// Phase is called as each phase begins.
	Phase func(Phase)
	// Discarded is called when the saved DB cannot be trusted (err wraps
	// ErrCorrupt, ErrSchema or ErrRoot), after it was moved aside to
	// movedTo, for the caller to log.
	Discarded func(err error, movedTo string)
	// NoReconcile leaves a reopened index as saved, for the caller to
	// Reconcile before it trusts it (the daemon's watcher reconciles
	// anyway, its walk setting the watches: reconciling here too would
	// walk the whole tree twice per restart). The checks of Open
	// are made all the same; what that later Reconcile finds corrupt is
	// the caller's to handle.
	NoReconcile bool
	// Now, if set, is the index's clock instead of time.Now: what it
	// takes the moment of each stat to be, against which a file changed
	// within RacyWindow is Racy. Tests set it ahead, so that the files
	// they have just written are not.
	Now func() time.Time

	// knobs, if set, replace defaultKnobs for the index opened or built
	// (this package's tests).
	knobs *knobs
}

// OpenOrBuild opens the index saved at path and reconciles it with the
// tree (unless opts.NoReconcile); if there is none, or it cannot be trusted (an error wrapping
// ErrCorrupt, ErrSchema or ErrRoot from Open, or ErrCorrupt from
// Reconcile), it moves the file aside, to <path>.corrupt-<unixnano> if it
// is corrupt, else <path>.old-<unixnano> (one such file is kept per DB:
// older ones are removed), and builds the index afresh and saves it.
// rebuilt says which happened. opts may be nil.
//
// A reopen cut short by ctx keeps the DB, as does any other failure to
// open it (the file unreadable or locked: nothing is known about its
// contents), which is returned. A reconcile that fails for another reason
// than corruption (a write to the DB failing) leaves the DB for the
// rebuild's save to replace.
func OpenOrBuild(ctx context.Context, path, root string, opts *OpenOptions) (ix *Index, rebuilt bool, err error) {
	var o OpenOptions
	if opts != nil {
		o = *opts
	}
	phase := func(p Phase) {
		if o.Phase != nil {
			o.Phase(p)
		}
	}
	k := defaultKnobs()
	if o.knobs != nil {
		k = *o.knobs
	}
	if o.Now != nil {
		k.now = o.Now
	}
	phase(PhaseReopen)
	ix, err = open(path, root, k)
	opened := err == nil
	if opened {
		if o.NoReconcile {
			return ix, false, nil
		}
		if _, err = ix.Reconcile(ctx); err == nil {
			return ix, false, nil
		}
		ix.Close()
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err() // cancelled, not untrusted: keep the DB
	}
	switch {
	case untrusted(err):
		moved, derr := discardDB(path, err)
		if derr != nil {
			return nil, false, fmt.Errorf("index: discarding %s (%v): %w", path, err, derr)
		}
		if o.Discarded != nil {
			o.Discarded(err, moved)
		}
	case !opened && !errors.Is(err, fs.ErrNotExist):
		return nil, false, err
	}
	removeTemps(path)
	removeBases(path, 0)
	phase(PhaseBuild)
	ix, err = build(ctx, root, o.Progress, path, k)
	if err != nil {
		return nil, true, err
	}
	phase(PhaseSave)
	if err := ix.Save(path); err != nil {
		ix.Close()
		return nil, true, err
	}
	return ix, true, nil
}

// untrusted reports whether err says a DB's contents cannot be trusted.
func untrusted(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrSchema) || errors.Is(err, ErrRoot)
}

// discardDB moves the DB at path aside because of why (an error from Open
// or Reconcile): to <path>.corrupt-<unixnano> if it wraps ErrCorrupt (kept
// for a post-mortem), else (another format or root) <path>.old-<unixnano>.
// At most one file set aside is kept per DB: older ones are removed. It
// returns the new name.
func discardDB(path string, why error) (string, error) {
	kind := ".old-"
	if errors.Is(why, ErrCorrupt) {
		kind = ".corrupt-"
	}
	if err := removeAside(path); err != nil {
		return "", err
	}
	dst := fmt.Sprintf("%s%s%d", path, kind, time.Now().UnixNano())
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// RemoveDB removes the DB at path with the files set aside for it and any
// temporary file a save left (a process killed while saving). A DB that
// is not there is not an error.
func RemoveDB(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	removeTemps(path)
	removeBases(path, 0)
	return errors.Join(err, removeAside(path))
}

// removeAside removes the files discardDB set aside for path.
func removeAside(path string) error {
	var errs []error
	for _, kind := range []string{".corrupt-", ".old-"} {
		old, _ := filepath.Glob(globQuote(path) + kind + "*")
		for _, p := range old {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeTemps removes what saves of path left behind when their process
// was killed. Best effort: a leftover costs disk space, not correctness.
func removeTemps(path string) {
	for _, infix := range []string{tmpInfix, buildInfix} {
		old, _ := filepath.Glob(globQuote(path) + infix + "*")
		for _, p := range old {
			os.Remove(p)
		}
	}
}

// globQuote escapes the pattern characters of filepath.Match in p.
func globQuote(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// encodeFile and decodeFile convert a "files" value.
func encodeFile(id uint32, f *File) []byte {
	b := binary.AppendUvarint(nil, uint64(id))
	b = binary.AppendVarint(b, f.Size)
	b = binary.AppendVarint(b, f.ModTime)
	b = binary.AppendVarint(b, f.Ctime)
	b = binary.AppendUvarint(b, f.Ino)
	b = binary.AppendUvarint(b, f.Dev)
	typ := byte(0)
	if f.Mode&fs.ModeSymlink != 0 {
		typ = 1
	}
	b = append(b, typ, byte(f.Flags))
	return binary.AppendUvarint(b, f.Hidden)
}

func decodeFile(path string, b []byte) (uint32, File, bool) {
	f := File{Path: path}
	r := varints{b: b, ok: true}
	id := r.uvarint()
	f.Size = r.varint()
	f.ModTime = r.varint()
	f.Ctime = r.varint()
	f.Ino = r.uvarint()
	f.Dev = r.uvarint()
	b = r.b
	if !r.ok || id > 1<<31 || path == "" || strings.HasPrefix(path, "/") || f.Size < 0 || len(b) < 2 || b[0] > 1 {
		return 0, f, false
	}
	if b[0] == 1 {
		f.Mode = fs.ModeSymlink
	}
	f.Flags = Flags(b[1])
	r.b = b[2:]
	f.Hidden = r.uvarint()
	if !r.ok || len(r.b) != 0 {
		return 0, f, false
	}
	return uint32(id), f, true
}

// varints reads a record's varints in order; ok turns false at the first
// that does not decode, and stays false.
type varints struct {
	b  []byte
	ok bool
}

func (r *varints) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *varints) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return x
}

func packTrigrams(tris []uint32) []byte {
	b := make([]byte, 0, 4*len(tris))
	for _, v := range tris {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// unpackTrigrams decodes a delta set, in stored order (Check verifies it
// increases).
func unpackTrigrams(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return out
}

func be32[T ~uint32 | ~int](v T) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
