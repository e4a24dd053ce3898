package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// plainBolt writes a bbolt file with one bucket of n keys (enough for
// branch pages), its freelist synced unless noFreelistSync, and returns
// its path and bytes.
func plainBolt(t *testing.T, n int, noFreelistSync bool) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plain.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: noFreelistSync})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put(fmt.Appendf(nil, "key %06d", i), []byte(strings.Repeat("v", 40))); err != nil {
				return err
			}
		}
		_, err = tx.CreateBucket([]byte("inline"))
		return err
	})
	if err != nil || db.Close() != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// branchPage returns the offset of a branch page with two elements or
// more in a bbolt file's bytes.
func branchPage(t *testing.T, data []byte) int {
	t.Helper()
	ps := os.Getpagesize()
	for off := 2 * ps; off+ps <= len(data); off += ps {
		if ne.Uint16(data[off+8:]) == bbBranch && ne.Uint16(data[off+10:]) >= 2 {
			return off
		}
	}
	t.Fatal("no branch page")
	return 0
}

// indexBolt saves an index whose "files" bucket spans branch pages and
// returns its root, path and bytes.
func indexBolt(t *testing.T) (root, path string, data []byte) {
	t.Helper()
	files := map[string]string{}
	for i := range 600 {
		files[fmt.Sprintf("dir%d/file%04d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
	}
	root = writeTree(t, files)
	ix := mustBuild(t, root)
	path = filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return root, path, data
}

// Damage bbolt would not survive gracefully is refused before it reads
// the file, and the index rebuilt: a branch pointing to itself (bbolt's
// cursor would descend forever, until the process runs out of memory),
// twice to one page or past the end, keys out of order, and a freelist
// listing a page in use (bbolt would overwrite it on the next write).
func TestBoltStructureChecked(t *testing.T) {
	t.Parallel()
	root, path, good := indexBolt(t)
	if err := checkBoltFile(path); err != nil {
		t.Fatalf("an undamaged file: %v", err)
	}
	if plain, _ := plainBolt(t, 2000, false); checkBoltFile(plain) != nil {
		t.Fatalf("an undamaged file with an inline bucket: %v", checkBoltFile(plain))
	}
	ps := os.Getpagesize()
	br := branchPage(t, good)
	id := uint64(br / ps)
	child0 := ne.Uint64(good[br+bbPageHeader+8:])
	for _, c := range []struct {
		name   string
		damage func(b []byte)
		want   string
	}{
		{"branch points to itself", func(b []byte) { ne.PutUint64(b[br+bbPageHeader+8:], id) }, fmt.Sprintf("page %d: reached twice", id)},
		{"branch points twice to one page", func(b []byte) { ne.PutUint64(b[br+bbPageHeader+bbElement+8:], child0) }, "reached twice"},
		{"branch points past the end", func(b []byte) { ne.PutUint64(b[br+bbPageHeader+8:], 1<<40) }, "outside"},
		{"branch keys out of order", func(b []byte) {
			// Element 1's key made smaller than element 0's.
			pos := int(ne.Uint32(b[br+bbPageHeader+bbElement:]))
			b[br+bbPageHeader+bbElement+pos] = 0
		}, "out of order"},
		{"freelist lists a page in use", func(b []byte) {
			var m boltMeta
			for i := range 2 { // bbolt uses the valid meta with the higher txid
				if mi, ok := parseMeta(b[i*ps:]); ok && mi.txid >= m.txid {
					m = mi
				}
			}
			fl := int(m.freelist) * ps
			ne.PutUint16(b[fl+10:], 1)
			ne.PutUint64(b[fl+bbPageHeader:], child0)
		}, "in use or listed twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "ix.db")
			damaged := append([]byte(nil), good...)
			c.damage(damaged)
			if err := os.WriteFile(p, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			err := checkBoltFile(p)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("checkBoltFile: %v, want ErrCorrupt saying %q", err, c.want)
			}
			if _, err := Open(p, root); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			ix, rebuilt, err := OpenOrBuild(context.Background(), p, root, nil)
			if err != nil || !rebuilt {
				t.Fatalf("OpenOrBuild: rebuilt=%v err=%v", rebuilt, err)
			}
			defer ix.Close()
			if got := candidates(t, ix, "file 599"); !slices.Equal(got, []string{"dir4/file0599.txt"}) {
				t.Fatalf("candidates after the rebuild: %q", got)
			}
		})
	}
}

// A file written with NoFreelistSync (format 1) is refused as old before
// bbolt opens it: bbolt would rebuild its freelist by walking every page
// and report what it found broken by a panic in a goroutine of its own,
// which no caller can recover. Here two branch elements name one page.
func TestUnsyncedFreelistRefused(t *testing.T) {
	t.Parallel()
	_, good := plainBolt(t, 2000, true)
	br := branchPage(t, good)
	ne.PutUint64(good[br+bbPageHeader+bbElement+8:], ne.Uint64(good[br+bbPageHeader+8:]))
	p := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(p, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p, "/"); !errors.Is(err, ErrSchema) {
		t.Fatalf("Open: %v, want ErrSchema", err)
	}
}
