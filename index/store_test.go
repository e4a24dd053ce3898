package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/indexd/indexd/internal/testtree"
)

// savedFixture builds and saves an index whose DB has records in every
// bucket (updates after the save fill "delta" and "stale"), closes it and
// returns the root and the DB's path.
func savedFixture(t *testing.T) (root, db string) {
	t.Helper()
	root = writeTree(t, map[string]string{
		"a.txt":           "alpha needle\n",
		"b/c.txt":         "gamma needle\n",
		"b/d.go":          "package d // needle\n",
		"tiny.txt":        "ab",
		"bin.dat":         "needle\x00",
		".ignore":         "skip/\n*.log\n",
		"skip/s.txt":      "needle\n",
		"x.log":           "needle\n",
		"node_modules/m":  "needle\n",
		"e/f/g/h.txt":     "deep needle\n",
		"e/f/g/other.txt": "other\n",
	})
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	ix := mustBuild(t, root)
	db = filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "a.txt", "alpha needle, changed\n")
	writeFile(t, root, "new.txt", "new needle\n")
	os.Remove(filepath.Join(root, "e/f/g/other.txt"))
	if err := ix.Apply(context.Background(), []string{"a.txt", "new.txt", "e"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return root, db
}

// mutateDB changes the DB at path behind the index's back: as a damaged
// disk or a stray write would, without its checksums.
func mutateDB(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyDB copies the DB at from, with its base file, to to.
func copyDB(t *testing.T, from, to string) {
	t.Helper()
	copyFile(t, from, to)
	bases, _ := filepath.Glob(from + ".base-*")
	if len(bases) != 1 {
		t.Fatalf("base files of %s: %q", from, bases)
	}
	copyFile(t, bases[0], to+strings.TrimPrefix(bases[0], from))
}

// stateNames lists dir, checking that it holds exactly one base file
// (of ix.db), which it leaves out.
func stateNames(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	bases := 0
	for _, n := range testtree.Names(t, dir) {
		if strings.HasPrefix(n, "ix.db.base-") {
			bases++
			continue
		}
		out = append(out, n)
	}
	if bases != 1 {
		t.Fatalf("%d base files in %q", bases, testtree.Names(t, dir))
	}
	return out
}

// withBase calls fn with the path of the base file of the DB at db.
func withBase(t *testing.T, db string, fn func(path string) error) {
	t.Helper()
	bases, _ := filepath.Glob(db + ".base-*")
	if len(bases) != 1 {
		t.Fatalf("base files: %q", bases)
	}
	if err := fn(bases[0]); err != nil {
		t.Fatal(err)
	}
}

// damageBase flips one byte of the base file of the DB at db.
func damageBase(t *testing.T, db string, at int) {
	t.Helper()
	bases, _ := filepath.Glob(db + ".base-*")
	if len(bases) != 1 {
		t.Fatalf("base files: %q", bases)
	}
	b, err := os.ReadFile(bases[0])
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x80
	if err := os.WriteFile(bases[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// flipDelta returns a change of the first "delta" record: its byte back
// from the end XORed with bits (back 1: the last posting's mask, 2: the
// last byte of its trigram).
func flipDelta(back int, bits byte) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b := tx.Bucket(bDelta)
		k, v := b.Cursor().First()
		v = bytes.Clone(v)
		v[len(v)-back] ^= bits
		return b.Put(bytes.Clone(k), v)
	}
}

// firstKey returns the first key of bucket b.
func firstKey(tx *bolt.Tx, b []byte) []byte {
	k, _ := tx.Bucket(b).Cursor().First()
	return bytes.Clone(k)
}

// One changed, lost or added record in any bucket, or a changed meta
// record, makes Open fail with ErrCorrupt (ErrSchema for the schema);
// OpenOrBuild moves the file aside, says so, and rebuilds. Before format
// 2 only the base was checked: a "files" record whose flags byte said
// binary silently dropped the file from every Grep.
// baseDamage damages the base file of a DB, by TestEveryRecordIsChecked's
// case name. A full disk or a crash can leave the file short: read through
// the map, the missing pages would fault.
var baseDamage = map[string]func(t *testing.T, db string){
	"base file: one byte changed": func(t *testing.T, db string) { damageBase(t, db, 0) },
	"base file: a line mask changed": func(t *testing.T, db string) {
		// The first list is in blocks form with one-byte gaps (the
		// fixture's ids are small): its masks follow its k gaps.
		var k int
		withBase(t, db, func(b string) error {
			data, err := os.ReadFile(b)
			if err == nil && (data[0]&1 != 0 || data[0] >= 0x80) {
				err = fmt.Errorf("first list: header %#x, not a short blocks list", data[0])
			}
			k = int(data[0] >> 1)
			return err
		})
		damageBase(t, db, 1+k) // flips the mask's bit 7: eighth 7
	},
	"base file: truncated to half": func(t *testing.T, db string) {
		withBase(t, db, func(b string) error {
			st, err := os.Stat(b)
			if err != nil {
				return err
			}
			return os.Truncate(b, st.Size()/2)
		})
	},
	"base file: empty":   func(t *testing.T, db string) { withBase(t, db, func(b string) error { return os.Truncate(b, 0) }) },
	"base file: missing": func(t *testing.T, db string) { withBase(t, db, os.Remove) },
}

func TestEveryRecordIsChecked(t *testing.T) {
	t.Parallel()
	root, pristine := savedFixture(t)
	fresh := mustBuild(t, root)
	for _, c := range []struct {
		name   string
		want   error
		mutate func(tx *bolt.Tx) error // nil: baseDamage[name] damages the base file
	}{
		{"files: flags byte set to binary", ErrCorrupt, func(tx *bolt.Tx) error {
			b := tx.Bucket(bFiles)
			id, f, ok := decodeFile("b/c.txt", b.Get([]byte("b/c.txt")))
			if !ok {
				return errors.New("b/c.txt: no record")
			}
			f.Flags = Binary
			return b.Put([]byte("b/c.txt"), encodeFile(id, &f))
		}},
		{"files: flags byte set to next masks", ErrCorrupt, func(tx *bolt.Tx) error {
			// Read as next masks, the file's eighths would rule it out
			// of phrases it holds.
			b := tx.Bucket(bFiles)
			id, f, ok := decodeFile("b/c.txt", b.Get([]byte("b/c.txt")))
			if !ok || f.Flags&(NextMasks|Binary|Unknown) != 0 {
				return fmt.Errorf("b/c.txt: record %v, flags %#x", ok, f.Flags)
			}
			f.Flags |= NextMasks
			return b.Put([]byte("b/c.txt"), encodeFile(id, &f))
		}},
		{"files: record removed", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bFiles).Delete([]byte("b/d.go")) }},
		{"files: record added", ErrCorrupt, func(tx *bolt.Tx) error {
			f := File{Path: "zz.txt", Size: 3}
			return tx.Bucket(bFiles).Put([]byte("zz.txt"), encodeFile(1000, &f))
		}},
		{"files: mtime changed", ErrCorrupt, func(tx *bolt.Tx) error {
			b := tx.Bucket(bFiles)
			id, f, _ := decodeFile("b/d.go", b.Get([]byte("b/d.go")))
			f.ModTime++
			return b.Put([]byte("b/d.go"), encodeFile(id, &f))
		}},
		{"delta: one trigram changed", ErrCorrupt, flipDelta(2, 1)},
		{"delta: a mask's eighth 0 flipped", ErrCorrupt, flipDelta(1, 1)},
		{"delta: a mask's eighth 7 flipped", ErrCorrupt, flipDelta(1, 0x80)},
		{"stale: record removed", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bStale).Delete(firstKey(tx, bStale)) }},
		{"stale: record added", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bStale).Put(be32(0), nil) }},
		{"ignored: directory made a file", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bIgnored).Put([]byte("skip"), []byte{0}) }},
		{"ignored: record removed", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bIgnored).Delete([]byte("x.log")) }},
		{"base record: size changed", ErrCorrupt, func(tx *bolt.Tx) error {
			b := tx.Bucket(bMeta)
			v := bytes.Clone(b.Get(kBase))
			v[15]++
			return b.Put(kBase, v)
		}},
		{"base file: one byte changed", ErrCorrupt, nil},
		{"base file: a line mask changed", ErrCorrupt, nil},
		{"base file: truncated to half", ErrCorrupt, nil},
		{"base file: empty", ErrCorrupt, nil},
		{"base file: missing", ErrCorrupt, nil},
		{"meta: write time changed", ErrCorrupt, func(tx *bolt.Tx) error {
			return tx.Bucket(bMeta).Put(kWritten, make([]byte, 8))
		}},
		{"meta: a sum changed", ErrCorrupt, func(tx *bolt.Tx) error {
			b := tx.Bucket(bMeta)
			v := bytes.Clone(b.Get(kSums))
			v[3] ^= 1
			return b.Put(kSums, v)
		}},
		{"meta: record added", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put([]byte("extra"), []byte("x")) }},
		{"meta: root changed", ErrCorrupt, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kRoot, []byte("/elsewhere")) }},
		{"meta: schema 7, the previous format", ErrSchema, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kSchema, be32(7)) }},
		{"meta: schema 4", ErrSchema, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kSchema, be32(4)) }},
		{"meta: schema 3", ErrSchema, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kSchema, be32(3)) }},
		{"meta: schema 1", ErrSchema, func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kSchema, be32(1)) }},
		{"bucket missing", ErrCorrupt, func(tx *bolt.Tx) error { return tx.DeleteBucket(bStale) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "ix.db")
			copyDB(t, pristine, db)
			if c.mutate != nil {
				mutateDB(t, db, c.mutate)
			} else {
				baseDamage[c.name](t, db)
			}
			if _, err := Open(db, root); !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			var discarded []error
			var moved []string
			ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, &OpenOptions{Discarded: func(err error, to string) {
				discarded, moved = append(discarded, err), append(moved, to)
			}})
			if err != nil || !rebuilt {
				t.Fatalf("OpenOrBuild: rebuilt=%v err=%v", rebuilt, err)
			}
			defer ix.Close()
			kind := ".old-"
			if c.want == ErrCorrupt {
				kind = ".corrupt-"
			}
			if len(discarded) != 1 || !errors.Is(discarded[0], c.want) || filepath.Dir(moved[0]) != dir || !strings.HasPrefix(filepath.Base(moved[0]), "ix.db"+kind) {
				t.Fatalf("Discarded calls: %v, moved to %q", discarded, moved)
			}
			if names := stateNames(t, dir); !slices.Equal(names, []string{"ix.db", filepath.Base(moved[0])}) {
				t.Fatalf("state directory: %q", names)
			}
			checkIndex(t, ix)
			if !slices.Equal(paths(ix), paths(fresh)) {
				t.Fatalf("paths %q, want %q", paths(ix), paths(fresh))
			}
			for _, q := range []string{"needle", "gamma", "package", "(?i)NEEDLE, CHANGED"} {
				if g, w := candidates(t, ix, q), candidates(t, fresh, q); !slices.Equal(g, w) {
					t.Fatalf("candidates for %q: %q, want %q", q, g, w)
				}
			}
		})
	}
}

// Only one file set aside is kept per DB.
func TestOneDiscardedDBKept(t *testing.T) {
	t.Parallel()
	root, pristine := savedFixture(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ix.db")
	var moved []string
	for range 3 {
		copyDB(t, pristine, db)
		mutateDB(t, db, func(tx *bolt.Tx) error { return tx.Bucket(bFiles).Delete([]byte("a.txt")) })
		ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, &OpenOptions{Discarded: func(_ error, to string) { moved = append(moved, to) }})
		if err != nil || !rebuilt {
			t.Fatalf("OpenOrBuild: rebuilt=%v err=%v", rebuilt, err)
		}
		ix.Close()
	}
	if names := stateNames(t, dir); len(moved) != 3 || !slices.Equal(names, []string{"ix.db", filepath.Base(moved[2])}) {
		t.Fatalf("moved to %q; directory %q", moved, names)
	}
	if err := RemoveDB(db); err != nil {
		t.Fatal(err)
	}
	if names := testtree.Names(t, dir); len(names) != 0 {
		t.Fatalf("after RemoveDB: %q", names)
	}
}

// A format 1 DB (its freelist not synced) is refused before bbolt walks
// its pages, as another schema, and set aside as old, not corrupt.
func TestFormat1DBIsRebuilt(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.txt": "needle\n"})
	dir := t.TempDir()
	db := filepath.Join(dir, "ix.db")
	old, err := bolt.Open(db, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = old.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bMeta)
		if err != nil {
			return err
		}
		return b.Put(kSchema, be32(1))
	})
	if err != nil || old.Close() != nil {
		t.Fatal(err)
	}
	if _, err := Open(db, root); !errors.Is(err, ErrSchema) {
		t.Fatalf("Open: %v, want ErrSchema", err)
	}
	var moved string
	ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, &OpenOptions{Discarded: func(_ error, to string) { moved = to }})
	if err != nil || !rebuilt || !strings.HasPrefix(filepath.Base(moved), "ix.db.old-") {
		t.Fatalf("OpenOrBuild: rebuilt=%v err=%v moved to %q", rebuilt, err, moved)
	}
	defer ix.Close()
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("candidates: %q", got)
	}
}

// Check enforces the invariants of "stale": ids below the bound, delta ids
// stale, and no live readable file stale without a delta set (its base
// postings would be skipped with nothing in their place).
func TestCheckStaleInvariants(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.txt": "alpha needle\n", "b.txt": "beta needle\n", "c.dat": "x\x00"})
	// What such a state answers: a.txt lost.
	ix := mustBuild(t, root)
	ix.stale[ix.idOf("a.txt")] = true
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"b.txt"}) {
		t.Fatalf("candidates with a.txt stale and not in the delta: %q", got)
	}
	for _, c := range []struct {
		name   string
		damage func(ix *Index)
		want   string
	}{
		{"stale id beyond the bound", func(ix *Index) { ix.stale[99] = true }, "stale id 99 beyond 3"},
		{"readable file stale without a delta set", func(ix *Index) { ix.stale[ix.idOf("a.txt")] = true }, "a.txt is stale and not in the delta"},
		{"delta id not stale", func(ix *Index) { ix.delta[ix.idOf("b.txt")] = []uint32{0x616263} }, "b.txt in the delta"},
		{"delta set out of order", func(ix *Index) {
			id := ix.idOf("a.txt")
			ix.stale[id], ix.delta[id] = true, []uint32{0x61626320, 0x61626301}
		}, "delta set of a.txt out of order"},
		{"binary file in the delta", func(ix *Index) {
			id := ix.idOf("c.dat")
			ix.stale[id], ix.delta[id] = true, []uint32{1}
		}, "c.dat in the delta"},
		{"free slot in the postings, not stale", func(ix *Index) {
			id := ix.idOf("a.txt")
			ix.files[id] = File{}
			ix.free = append(ix.free, id)
			ix.reorder()
		}, "names a free slot and is not stale"},
		{"a live file left out of the order", func(ix *Index) { ix.order = ix.order[1:] }, "the path order does not find id"},
		{"a put never placed in the order", func(ix *Index) { ix.adding["d.txt"] = 3 }, "1 put and not ordered"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := mustBuild(t, root)
			c.damage(ix)
			err := ix.Check()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v, want ErrCorrupt saying %q", err, c.want)
			}
		})
	}
}

// The id bound is saved: a DB whose highest id was removed since its base
// was built (its postings and stale record name an id above every live
// one) reopens as it was. Format 1 derived the bound from the live ids
// and found such a DB corrupt.
func TestReopenAfterRemovingTheHighestID(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.txt": "alpha needle\n", "z.txt": "zulu needle\n"})
	ix := mustBuild(t, root)
	db := filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "z.txt"))
	if err := ix.Apply(context.Background(), []string{"z.txt"}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, nil)
	if err != nil || rebuilt {
		t.Fatalf("reopen: rebuilt=%v err=%v", rebuilt, err)
	}
	defer ix.Close()
	checkIndex(t, ix)
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("candidates: %q", got)
	}
	writeFile(t, root, "n.txt", "new needle\n") // takes the free slot
	if err := ix.Update("n.txt"); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	if got := candidates(t, ix, "needle"); !slices.Equal(got, []string{"a.txt", "n.txt"}) {
		t.Fatalf("candidates: %q", got)
	}
}

// With NoReconcile, OpenOrBuild returns the index as saved, for the
// caller's own Reconcile to catch up.
func TestOpenOrBuildNoReconcile(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"a.go": "package alpha\n"})
	db := filepath.Join(t.TempDir(), "ix.db")
	ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, &OpenOptions{NoReconcile: true})
	if err != nil || !rebuilt {
		t.Fatalf("first open: rebuilt=%v err=%v", rebuilt, err)
	}
	ix.Close()
	writeFile(t, root, "b.go", "package bravo\n")
	ix, rebuilt, err = OpenOrBuild(context.Background(), db, root, &OpenOptions{NoReconcile: true})
	if err != nil || rebuilt {
		t.Fatalf("reopen: rebuilt=%v err=%v", rebuilt, err)
	}
	defer ix.Close()
	checkIndex(t, ix)
	if got := paths(ix); !slices.Equal(got, []string{"a.go"}) {
		t.Fatalf("before Reconcile: %q", got)
	}
	if n, err := ix.Reconcile(context.Background()); err != nil || n < 1 { // b.go, and a.go if racy
		t.Fatalf("Reconcile: %d, %v", n, err)
	}
	if got := candidates(t, ix, "bravo"); !slices.Equal(got, []string{"b.go"}) {
		t.Fatalf("after Reconcile: %q", got)
	}
}
