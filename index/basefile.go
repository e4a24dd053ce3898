package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// The base postings live in a file beside the DB, <db>.base-<gen> (gen
// 16 hex digits), written once, synced, never changed, and named by the
// DB's meta "base" record (gen, size, CRC-32C) in the same transaction as
// the delta it goes with: a crash leaves the DB naming the old base or
// the new, and a base file the DB does not name is removed on open. It
// is mmap'd read-only: queries read it in place, so the page cache, not
// the heap, holds it, and no bbolt value is large. (Kept in bbolt, its
// pages would be remapped by writers, and a reader would then wait for
// the writer's remap, or a long read transaction would block the writer.)

// baseRecordSize is the size of meta "base": gen ‖ size ‖ CRC.
const baseRecordSize = 8 + 8 + 4

// newBase is a base just written: its postings and where they are (gen
// 0: in memory, for an index without a DB).
type newBase struct {
	p    postings
	gen  uint64
	size int64
	crc  uint32
}

// basePath names the base file of generation gen of the DB at dbPath.
func basePath(dbPath string, gen uint64) string {
	return fmt.Sprintf("%s.base-%016x", dbPath, gen)
}

// putBaseRecord names nb in meta.
func putBaseRecord(tx *bolt.Tx, nb newBase) error {
	rec := binary.BigEndian.AppendUint64(nil, nb.gen)
	rec = binary.BigEndian.AppendUint64(rec, uint64(nb.size))
	rec = binary.BigEndian.AppendUint32(rec, nb.crc)
	return tx.Bucket(bMeta).Put(kBase, rec)
}

// writeNewBase writes a new base with fill: to a new base file beside
// the DB at dbPath, or to memory when dbPath is "".
func writeNewBase(dbPath string, fill func(*postingWriter)) (newBase, error) {
	if dbPath == "" {
		pw := newPostingWriter(nil)
		fill(pw)
		p, err := parsePostings(pw.finishBytes())
		return newBase{p: p}, err
	}
	return writeBaseFile(dbPath, func(w io.Writer) (int64, uint32, error) {
		pw := newPostingWriter(w)
		fill(pw)
		return pw.finish()
	})
}

// writeBaseFile creates a new base file for the DB at dbPath, fills it
// with write (which returns the size and CRC-32C written), syncs it and
// its directory, and maps it. A failure removes the file.
func writeBaseFile(dbPath string, write func(io.Writer) (int64, uint32, error)) (nb newBase, err error) {
	var f *os.File
	for {
		nb.gen = uint64(time.Now().UnixNano())
		f, err = openNoFollow(basePath(dbPath, nb.gen), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nb, err
	}
	name := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(name)
		}
	}()
	if nb.size, nb.crc, err = write(f); err != nil {
		return nb, err
	}
	if err = f.Sync(); err != nil {
		return nb, err
	}
	if err = f.Close(); err != nil {
		return nb, err
	}
	if err = syncDir(filepath.Dir(name)); err != nil {
		return nb, err
	}
	nb.p, err = mapFile(name, nb.size)
	return nb, err
}

// mapBase maps the base file at path, checking its size against the DB's
// record and its structure (footer, table bounds): a file that fails is
// ErrCorrupt, as is one missing. Its CRC-32C is checkCRC's, which must
// pass before the base is trusted.
func mapBase(path string, size int64) (postings, error) {
	p, err := mapFile(path, size)
	if err != nil {
		if errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist) {
			return postings{}, fmt.Errorf("%w: base file: %w", ErrCorrupt, err)
		}
		return postings{}, err
	}
	return p, nil
}

// checkCRC checks the CRC-32C of the mapped base file against crc. A
// fault reading the map (the file shrank under it) is ErrCorrupt too:
// it may run on a goroutine of its own, which a fault would otherwise
// crash.
func (p postings) checkCRC(crc uint32) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: base file: fault reading it: %v", ErrCorrupt, r)
		}
	}()
	if crc32.Checksum(p.data, castagnoli()) != crc {
		return fmt.Errorf("%w: base checksum", ErrCorrupt)
	}
	return nil
}

// mapFile maps the base file at path, which must be size bytes long.
func mapFile(path string, size int64) (postings, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return postings{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return postings{}, err
	}
	if fi.Size() != size || size < footerSize || int64(int(size)) != size {
		return postings{}, fmt.Errorf("%w: base file is %d bytes, not %d", ErrCorrupt, fi.Size(), size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return postings{}, fmt.Errorf("mapping %s: %w", path, err)
	}
	p, err := parsePostings(data)
	if err != nil {
		unix.Munmap(data)
		return postings{}, err
	}
	p.unmap = func() error { return unix.Munmap(data) }
	return p, nil
}

// removeBases removes the base files of the DB at dbPath but generation
// keep (0: all). Best effort: a leftover costs disk space only.
func removeBases(dbPath string, keep uint64) {
	old, _ := filepath.Glob(globQuote(dbPath) + ".base-*")
	for _, p := range old {
		if p != basePath(dbPath, keep) || keep == 0 {
			os.Remove(p)
		}
	}
}
