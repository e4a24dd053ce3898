package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/testtree"
)

// waitFor waits for ch with a deadline (a hang is a failure, not a sleep).
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// savedIndex builds and saves an index of files.
func savedIndex(t *testing.T, files map[string]string) (ix *Index, root, db string) {
	t.Helper()
	root = writeTree(t, files)
	ix = mustBuild(t, root)
	db = filepath.Join(t.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, root, db
}

// A query is answered while the writer is held inside its DB transaction
// (before its commit and fsync), and sees the change being written.
func TestQueryNotBlockedByWriteTransaction(t *testing.T) {
	t.Parallel()
	ix, root, _ := savedIndex(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	entered, release := make(chan struct{}), make(chan struct{})
	ix.hookInTx = func() error {
		close(entered)
		<-release
		return nil
	}
	writeFile(t, root, "c.txt", "QuokkaNeedle\n")
	applied := make(chan error, 1)
	go func() { applied <- ix.Apply(context.Background(), []string{"c.txt"}) }()
	waitFor(t, entered, "the writer to enter its transaction")

	answered := make(chan struct{})
	var got, files []string
	go func() {
		defer close(answered)
		got = candidates(t, ix, "QuokkaNeedle")
		files = paths(ix)
	}()
	waitFor(t, answered, "a query while the writer is inside its transaction")
	if want := []string{"c.txt"}; !slices.Equal(got, want) {
		t.Errorf("candidates during the transaction = %q, want %q", got, want)
	}
	if want := []string{"a.txt", "b.txt", "c.txt"}; !slices.Equal(files, want) {
		t.Errorf("files during the transaction = %q, want %q", files, want)
	}
	close(release)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	ix.hookInTx = nil
	checkIndex(t, ix)
}

// Queries and updates go on while a compaction is built and while its
// transaction runs; what was updated meanwhile stays right after the swap,
// and the result equals a fresh build, also once reopened.
func TestQueryAndUpdateDuringCompaction(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha one\n", "b.txt": "beta two\n", "d/c.txt": "gamma three\n"})
	writeFile(t, root, "a.txt", "alpha changed\n")
	if err := ix.Apply(context.Background(), []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	built, releaseBuilt := make(chan struct{}), make(chan struct{})
	ix.hookCompactBuilt = func() {
		close(built)
		<-releaseBuilt
	}
	compacted := make(chan error, 1)
	go func() { compacted <- ix.Compact() }()
	waitFor(t, built, "the compaction to build its base")
	if st := ix.Stats(); !st.Compacting || st.DeltaFiles != 1 || st.Files != 3 {
		t.Errorf("Stats while compacting: %+v, want compacting, 1 changed file, 3 files", st)
	}

	// Built aside, not yet swapped: queries and an update do not wait.
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeFile(t, root, "b.txt", "beta rewritten\n")
		writeFile(t, root, "e.txt", "epsilon new\n")
		if err := ix.Apply(context.Background(), []string{"b.txt", "e.txt", "d"}); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, done, "an update during the compaction")
	if got, want := candidates(t, ix, "rewritten"), []string{"b.txt"}; !slices.Equal(got, want) {
		t.Errorf("during compaction: candidates = %q, want %q", got, want)
	}

	// Held inside the compaction's transaction: queries still answer.
	entered, releaseTx := make(chan struct{}), make(chan struct{})
	ix.hookInTx = func() error {
		close(entered)
		<-releaseTx
		return nil
	}
	close(releaseBuilt)
	waitFor(t, entered, "the compaction's transaction")
	answered := make(chan []string, 1)
	go func() { answered <- candidates(t, ix, "epsilon") }()
	select {
	case got := <-answered:
		if want := []string{"e.txt"}; !slices.Equal(got, want) {
			t.Errorf("inside the compaction's transaction: candidates = %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a query waited for the compaction's transaction")
	}
	close(releaseTx)
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	ix.hookInTx, ix.hookCompactBuilt = nil, nil
	checkIndex(t, ix)
	// b.txt, e.txt and d/c.txt (racy: written within RacyWindow, so
	// re-read) were read during the compaction: still in the delta.
	if st := ix.Stats(); st.Compacting || st.DeltaFiles != 3 || st.Files != 4 || st.BaseBytes != int64(len(ix.base.data)) || st.HeapBytes <= 0 {
		t.Errorf("Stats after the compaction: %+v", st)
	}
	sameAsFresh := func(stage string, got *Index) {
		t.Helper()
		fresh := mustBuild(t, root)
		if !slices.Equal(paths(got), paths(fresh)) {
			t.Fatalf("%s: paths %q, want %q", stage, paths(got), paths(fresh))
		}
		for _, q := range []string{"alpha", "one", "changed", "beta", "two", "rewritten", "gamma", "epsilon"} {
			if g, w := candidates(t, got, q), candidates(t, fresh, q); !slices.Equal(g, w) {
				t.Errorf("%s: candidates for %q = %q, want %q", stage, q, g, w)
			}
		}
	}
	sameAsFresh("after the compaction", ix)
	ix2 := reopen(t, ix, db, root)
	sameAsFresh("reopened after the compaction", ix2)
}

// The worked example of format.go, byte for byte.
func TestWorkedExampleBase(t *testing.T) {
	t.Parallel()
	ix := mustBuild(t, writeTree(t, map[string]string{"a.go": "Abc\n", "b.txt": "ab"}))
	want := []byte{
		0x02, 0x01, 0x01,
		0x02, 0x01, 0x01,
		0x61, 0x62, 0x63, 0, 0, 0, 0, 0x00,
		0x62, 0x63, 0x0a, 0, 0, 0, 0, 0x03,
		0, 0, 0, 0, 0, 0, 0, 0x06, 0, 0, 0, 0x02, 'I', 'X', 'B', '8',
	}
	if !bytes.Equal(ix.base.data, want) {
		t.Fatalf("base\n% x\nwant\n% x", ix.base.data, want)
	}
	// "a.go" read again: its delta value.
	if err := ix.Update("a.go"); err != nil {
		t.Fatal(err)
	}
	if got, want := packTrigrams(ix.delta[0]), []byte{0x61, 0x62, 0x63, 0x01, 0x62, 0x63, 0x0a, 0x01}; !bytes.Equal(got, want) {
		t.Fatalf("delta value\n% x\nwant\n% x", got, want)
	}
}

// The "files" value of the worked example of format.go, byte for byte,
// and back.
func TestWorkedExampleFileRecord(t *testing.T) {
	f := File{Path: "a.go", Size: 4, ModTime: 1e9, Ctime: 2e9, Ino: 12, Dev: 2049}
	want := []byte{
		0x00,
		0x08,
		0x80, 0xa8, 0xd6, 0xb9, 0x07,
		0x80, 0xd0, 0xac, 0xf3, 0x0e,
		0x0c,
		0x81, 0x10,
		0x00, 0x00, 0x00,
	}
	got := encodeFile(0, &f)
	if !bytes.Equal(got, want) {
		t.Fatalf("files value\n% x\nwant\n% x", got, want)
	}
	id, back, ok := decodeFile("a.go", got)
	if !ok || id != 0 || back != f {
		t.Fatalf("decoded id %d, %+v, %v; want 0, %+v", id, back, ok, f)
	}
}

// Lists long enough for several blocks: seeking by the skip entries finds
// exactly the ids a plain decode finds, and check accepts the encoding.
func TestBlockListsSeek(t *testing.T) {
	t.Parallel()
	var a, b []uint32
	for id := uint32(0); id < 5000; id++ {
		if id%3 == 0 {
			a = append(a, id)
		}
		if id%7 == 0 || id == 4999 {
			b = append(b, id)
		}
	}
	maskOf := func(id uint32) byte { return byte(id*37) | 0x10 } // a line bit, as extraction makes
	masksOf := func(ids []uint32) (m []byte) {
		for _, id := range ids {
			m = append(m, maskOf(id))
		}
		return m
	}
	pw := newPostingWriter(nil)
	pw.add(1, a, masksOf(a))
	pw.add(2, b, masksOf(b))
	p, err := parsePostings(pw.finishBytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.check(5000, func(uint32) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for c := listCursor(p.lookup(2)); !c.done; c.seek(c.cur + 100) {
		if c.mask != maskOf(c.cur) {
			t.Fatalf("id %d: next mask %#x, want %#x", c.cur, c.mask, maskOf(c.cur))
		}
	}
	if got := appendIDs(nil, p.lookup(1)); !slices.Equal(got, a) {
		t.Fatalf("decoded %d ids, want %d", len(got), len(a))
	}
	var want []uint32
	for _, id := range a {
		if _, ok := slices.BinarySearch(b, id); ok {
			want = append(want, id)
		}
	}
	got := intersectCursors([]cursor{listCursor(p.lookup(1)), listCursor(p.lookup(2)), sliceCursor([]uint32{0, 21, 42, 2100, 4200, 4999})})
	if w := []uint32{0, 21, 42, 2100, 4200}; !slices.Equal(got, w) {
		t.Fatalf("three-way intersection %v, want %v", got, w)
	}
	if got := intersectCursors([]cursor{listCursor(p.lookup(1)), listCursor(p.lookup(2))}); !slices.Equal(got, want) {
		t.Fatalf("intersection has %d ids, want %d", len(got), len(want))
	}
	if err := p.check(4000, func(uint32) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("check with a lower id bound: %v", err)
	}
}

// A build whose budget forces several spilled runs makes the same base,
// byte for byte, as one built in memory, leaves nothing in its spill
// directory but that base, and answers, saved, updated and compacted, as a fresh build.
func TestSpilledBuildEqualsInMemory(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d alpha beta %d gamma%d\n", i, i*i, i%13)
	}
	root := writeTree(t, files)
	mem := mustBuild(t, root)
	small := knobsWith(func(k *knobs) { k.buildBudget = 2 << 10 })
	dir := t.TempDir()
	ix, err := build(context.Background(), root, nil, filepath.Join(dir, "ix.db"), small)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.runs < 3 || ix.base.unmap == nil {
		t.Fatalf("%d runs, mapped %v: the budget did not force several runs", ix.runs, ix.base.unmap != nil)
	}
	// Only the final base is left, as the DB's next base file, for Save
	// to name (a base file no DB names is removed on open).
	if names := testtree.Names(t, dir); len(names) != 1 || names[0] != filepath.Base(basePath(filepath.Join(dir, "ix.db"), ix.built.gen)) {
		t.Fatalf("spill directory after the build: %q", names)
	}
	checkIndex(t, ix)
	if !bytes.Equal(ix.base.data, mem.base.data) {
		t.Fatalf("spilled base (%d bytes) differs from the in-memory one (%d bytes)", len(ix.base.data), len(mem.base.data))
	}
	if err := ix.Save(filepath.Join(t.TempDir(), "ix.db")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "d1/f001.txt", "rewritten gamma99\n")
	if err := ix.Apply(context.Background(), []string{"d1/f001.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	fresh := mustBuild(t, root)
	for _, q := range []string{"alpha", "file 12", "gamma1", "gamma99", "rewritten", "(?i)BETA 4"} {
		if g, w := candidates(t, ix, q), candidates(t, fresh, q); !slices.Equal(g, w) {
			t.Errorf("candidates for %q = %q, want %q", q, g, w)
		}
	}
}

// An index closed while a compaction builds its base: the compaction
// fails, and the base it wrote, named by no DB, is removed.
func TestCloseDuringCompaction(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha\n"})
	writeFile(t, root, "a.txt", "alpha changed\n")
	if err := ix.Apply(context.Background(), []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	built, release := make(chan struct{}), make(chan struct{})
	ix.hookCompactBuilt = func() {
		close(built)
		<-release
	}
	compacted := make(chan error, 1)
	go func() { compacted <- ix.Compact() }()
	waitFor(t, built, "the compaction to build its base")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-compacted; err == nil {
		t.Fatal("Compact of a closed index succeeded")
	}
	if names := stateNames(t, filepath.Dir(db)); !slices.Equal(names, []string{"ix.db"}) {
		t.Fatalf("directory after the failed compaction: %q", names)
	}
}

// A spilled build's save names the base file the build wrote beside the
// DB instead of copying it, unless a compaction replaced that base
// meanwhile; either way the DB reopens, checked, with the same answers.
func TestSpilledBuildSaveNamesItsBase(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d alpha beta %d gamma%d\n", i, i*i, i%13)
	}
	root := writeTree(t, files)
	small := knobsWith(func(k *knobs) { k.buildBudget = 2 << 10 })
	for _, compact := range []bool{false, true} {
		dir := t.TempDir()
		db := filepath.Join(dir, "ix.db")
		ix, err := build(context.Background(), root, nil, db, small)
		if err != nil {
			t.Fatal(err)
		}
		gen := ix.built.gen
		if gen == 0 || ix.runs < 3 {
			t.Fatalf("gen %d, %d runs: the build wrote no base file beside the DB", gen, ix.runs)
		}
		if compact {
			writeFile(t, root, "d1/f001.txt", "rewritten gamma99\n")
			if err := ix.Apply(context.Background(), []string{"d1/f001.txt"}); err != nil {
				t.Fatal(err)
			}
			if err := ix.Compact(); err != nil {
				t.Fatal(err)
			}
		}
		if err := ix.Save(db); err != nil {
			t.Fatal(err)
		}
		if (ix.gen == gen) == compact {
			t.Fatalf("compact %v: saved base generation %d, built %d", compact, ix.gen, gen)
		}
		if names := testtree.Names(t, dir); !slices.Equal(names, []string{"ix.db", filepath.Base(basePath(db, ix.gen))}) {
			t.Fatalf("directory after the save: %q", names)
		}
		ix.Close()
		re, err := Open(db, root)
		if err != nil {
			t.Fatal(err)
		}
		if err := re.Check(); err != nil {
			t.Fatal(err)
		}
		fresh := mustBuild(t, root)
		for _, q := range []string{"alpha", "file 12", "gamma1", "gamma99", "rewritten"} {
			if g, w := candidates(t, re, q), candidates(t, fresh, q); !slices.Equal(g, w) {
				t.Errorf("compact %v: candidates for %q = %q, want %q", compact, q, g, w)
			}
		}
		re.Close()
		writeFile(t, root, "d1/f001.txt", files["d1/f001.txt"])
	}
}

// Both list forms, forced, over lists of every density: a cursor's next
// and seek give exactly the ids and masks a sorted slice gives (seek
// targets below, at, between and past the ids), appendList picks the
// smaller form, and check accepts each encoding but refuses its
// corruptions.
func TestListFormsSeekAndCheck(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const bound = 5000
	for _, every := range []int{1, 2, 3, 7, 9, 40, 300, 5000} {
		var ids []uint32
		var masks []byte
		for id := uint32(rng.IntN(every)); id < bound; id += uint32(1 + rng.IntN(2*every)) {
			ids = append(ids, id)
			masks = append(masks, byte(rng.Uint32())|0x10)
		}
		if len(ids) == 0 {
			ids, masks = []uint32{bound - 1}, []byte{7}
		}
		blocks := appendBlocks(nil, ids, masks)
		bitmap := appendBitmap(nil, ids, masks, int(ids[len(ids)-1]/64+1))
		if got := appendList(nil, ids, masks); !bytes.Equal(got, blocks) && !bytes.Equal(got, bitmap) || len(got) > min(len(blocks), len(bitmap)) {
			t.Errorf("every %d: appendList chose %d bytes of %d (blocks) and %d (bitmap)", every, len(got), len(blocks), len(bitmap))
		}
		for form, enc := range map[string][]byte{"blocks": blocks, "bitmap": bitmap} {
			name := fmt.Sprintf("every %d, %s", every, form)
			var got []uint32
			if err := checkList(enc, bound, func(id uint32) error { got = append(got, id); return nil }); err != nil || !slices.Equal(got, ids) {
				t.Fatalf("%s: check: %v, %d ids of %d", name, err, len(got), len(ids))
			}
			c := listCursor(enc)
			for i := range ids {
				if c.done || c.cur != ids[i] || c.mask != masks[i] {
					t.Fatalf("%s: next #%d: (%d, %#x, done %v), want (%d, %#x)", name, i, c.cur, c.mask, c.done, ids[i], masks[i])
				}
				c.next()
			}
			if !c.done {
				t.Fatalf("%s: more than %d ids", name, len(ids))
			}
			c = listCursor(enc)
			for target := uint32(0); target <= bound+64; target += uint32(1 + rng.IntN(3*every)) {
				c.seek(target)
				i, _ := slices.BinarySearch(ids, target)
				if i == len(ids) {
					if !c.done {
						t.Fatalf("%s: seek %d: at %d, want done", name, target, c.cur)
					}
					break
				}
				if c.done || c.cur != ids[i] || c.mask != masks[i] {
					t.Fatalf("%s: seek %d: (%d, %#x, done %v), want (%d, %#x)", name, target, c.cur, c.mask, c.done, ids[i], masks[i])
				}
			}
			if err := checkList(enc, uint64(ids[len(ids)-1]), func(uint32) error { return nil }); err == nil {
				t.Errorf("%s: check with the bound at the last id passes", name)
			}
			for _, cut := range []int{1, len(enc) / 2, len(enc) - 1} {
				if err := checkList(enc[:cut], bound, func(uint32) error { return nil }); err == nil {
					t.Errorf("%s: check passes the list cut to %d bytes", name, cut)
				}
				cut := listCursor(enc[:cut])
				cut.seek(bound) // never panics
			}
		}
		// A mask of zero would rule its file out of every
		// query: check refuses it (the last byte is a mask in both forms).
		for form, enc := range map[string][]byte{"blocks": blocks, "bitmap": bitmap} {
			b := bytes.Clone(enc)
			b[len(b)-1] = 0
			if err := checkList(b, bound, func(uint32) error { return nil }); err == nil {
				t.Errorf("every %d, %s: check passes a mask of zero", every, form)
			}
		}
		// A bitmap's words, ranks and length are each checked.
		w := int(ids[len(ids)-1]/64 + 1)
		words := uvarintLen(uint64(len(ids))<<1|1) + uvarintLen(uint64(w))
		ranks := words + 8*w
		for what, corrupt := range map[string]func(b []byte) []byte{
			"an id removed":      func(b []byte) []byte { b[words+int(ids[0]/8)] &^= 1 << (ids[0] % 8); return b },
			"a rank":             func(b []byte) []byte { b[ranks] ^= 1; return b },
			"a byte more":        func(b []byte) []byte { return append(b, 0) },
			"an empty last word": func([]byte) []byte { return appendBitmap(nil, ids, masks, w+1) },
		} {
			if err := checkList(corrupt(bytes.Clone(bitmap)), 1<<20, func(uint32) error { return nil }); err == nil {
				t.Errorf("every %d: check passes a bitmap with %s", every, what)
			}
		}
		for id := uint32(0); id < ids[len(ids)-1]; id++ {
			if _, listed := slices.BinarySearch(ids, id); !listed {
				b := bytes.Clone(bitmap)
				b[words+int(id/8)] |= 1 << (id % 8)
				if err := checkList(b, 1<<20, func(uint32) error { return nil }); err == nil {
					t.Errorf("every %d: check passes a bitmap with id %d added", every, id)
				}
				for c := listCursor(b); !c.done; c.next() { // more ids than masks: never a panic
				}
				break
			}
		}
	}
}

// A compaction that inverts the delta a range of trigrams at a time (the
// budget forced down to one posting: a range per first byte) writes the
// very base one that inverts it at once writes.
func TestCompactRangesSameBase(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%5, i)] = fmt.Sprintf("Alpha beta %d gamma\nzeta ETA %d θ\n", i, i*7)
	}
	root := writeTree(t, files)
	ix := mustBuild(t, root)
	defer ix.Close()
	var changed []string
	for i := 0; i < 60; i += 3 {
		p := fmt.Sprintf("d%d/f%03d.txt", i%5, i)
		writeFile(t, root, p, fmt.Sprintf("rewritten %d: ~!@#$%%^&*() {}[] <tab>\t%d\n", i, i))
		changed = append(changed, p)
	}
	writeFile(t, root, "new/n.txt", "\x7f\x80 high bytes \xff\xfe and Alpha\n")
	if err := ix.Apply(context.Background(), append(changed, "new")); err != nil {
		t.Fatal(err)
	}
	if len(ix.delta) < 20 {
		t.Fatalf("%d files in the delta, want 21", len(ix.delta))
	}
	write := func(budget int) []byte {
		pw := newPostingWriter(nil)
		compactBase(&ix.base, ix.delta, ix.stale, pw, budget)
		return pw.finishBytes()
	}
	whole, ranged := write(1<<30), write(1)
	if !bytes.Equal(whole, ranged) {
		t.Fatalf("ranged compaction: %d bytes, at once: %d bytes, not the same", len(ranged), len(whole))
	}
	if _, err := parsePostings(whole); err != nil {
		t.Fatal(err)
	}
}

// Deferred writes: each change is in memory, and answers queries, at
// once; no transaction runs until flush, then one; a transaction that
// fails leaves the writes pending for the next; and the DB reopened holds
// what memory held, though within the one deferral a path was added then
// removed, another removed then added back, and an ignored record added
// then dropped (the order the DB must not lose).
func TestDeferredWrites(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "skip/x.txt": "x\n"})
	ctx := context.Background()
	apply := func(ps ...string) {
		t.Helper()
		if err := ix.Apply(ctx, ps); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(p string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	txs := 0
	ix.hookInTx = func() error { txs++; return nil }
	flush := ix.DeferWrites()
	if err := ix.Flush(); err != nil || txs != 0 {
		t.Fatalf("Flush with nothing held back: %v, %d transactions, want none", err, txs)
	}

	writeFile(t, root, "c.txt", "QuokkaNeedle\n")
	apply("c.txt")
	remove("a.txt")
	apply("a.txt")
	writeFile(t, root, "e.txt", "epsilon\n")
	apply("e.txt")
	remove("e.txt")
	apply("e.txt")
	writeFile(t, root, "a.txt", "alpha again\n")
	apply("a.txt")
	writeFile(t, root, ".ignore", "skip/\n*.log\n")
	writeFile(t, root, "z.log", "log\n")
	apply(".ignore", "skip", "z.log")
	writeFile(t, root, ".ignore", "*.log\n")
	apply(".ignore", "skip")

	if txs != 0 {
		t.Errorf("%d transactions while writes were deferred, want 0", txs)
	}
	if got, want := candidates(t, ix, "QuokkaNeedle"), []string{"c.txt"}; !slices.Equal(got, want) {
		t.Errorf("candidates before the flush = %q, want %q", got, want)
	}
	if got, want := paths(ix), []string{".ignore", "a.txt", "b.txt", "c.txt", "skip/x.txt"}; !slices.Equal(got, want) {
		t.Errorf("paths before the flush = %q, want %q", got, want)
	}

	ix.hookInTx = func() error { return syscall.ENOSPC }
	if err := ix.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush with a failing transaction: %v, want ENOSPC", err)
	}
	ix.hookInTx = func() error { txs++; return nil }
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	if txs != 1 {
		t.Errorf("%d transactions for the deferred writes, want 1", txs)
	}
	if err := flush(); err != nil || txs != 1 {
		t.Errorf("ending the deferral with nothing held back: %v, %d transactions, want 1", err, txs)
	}
	if err := ix.Apply(ctx, nil); err != nil || txs != 1 {
		t.Errorf("an empty Apply after the flush: %v, %d transactions, want none", err, txs)
	}

	// Past deferMax records held back, a change is written as it is made.
	ix.k.deferMax = 2
	flush = ix.DeferWrites()
	writeFile(t, root, "f.txt", "phi\n")
	writeFile(t, root, "g.txt", "gamma\n")
	writeFile(t, root, "h.txt", "eta\n")
	apply("f.txt", "g.txt", "h.txt")
	if txs != 2 {
		t.Errorf("%d transactions after a change over deferMax, want 2", txs)
	}
	if err := flush(); err != nil || txs != 2 {
		t.Errorf("ending the deferral with nothing held back: %v, %d transactions, want 2", err, txs)
	}
	ix.hookInTx = nil
	checkIndex(t, ix)

	files, skipped := tableRecords(ix)
	files2, skipped2 := tableRecords(reopen(t, ix, db, root))
	if !slices.Equal(files2, files) {
		t.Errorf("reopened table:\n got %+v\nwant %+v", files2, files)
	}
	if want := []Skipped{{Path: "z.log"}}; !slices.Equal(skipped2, want) || !slices.Equal(skipped, want) {
		t.Errorf("ignored records: reopened %+v, in memory %+v, want %+v", skipped2, skipped, want)
	}
}

// Close writes what deferred writes still hold back.
func TestCloseWritesDeferred(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha\n"})
	ix.DeferWrites() // never flushed: Close must write
	writeFile(t, root, "b.txt", "beta\n")
	if err := ix.Apply(context.Background(), []string{"b.txt"}); err != nil {
		t.Fatal(err)
	}
	files, _ := tableRecords(ix)
	if got, _ := tableRecords(reopen(t, ix, db, root)); !slices.Equal(got, files) {
		t.Errorf("reopened table:\n got %+v\nwant %+v", got, files)
	}
}

// reopen closes ix, opens its DB again (which checks every record) and
// checks the result, closed when the test ends.
func reopen(t *testing.T, ix *Index, db, root string) *Index {
	t.Helper()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix2, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix2.Close() })
	checkIndex(t, ix2)
	return ix2
}

// tableRecords returns the index's table, without the Racy flag (set
// anew when a file is looked at), and its ignored records.
func tableRecords(ix *Index) (files []File, skipped []Skipped) {
	ix.Candidates(CandidateOptions{}, func(f *File) bool {
		g := *f
		g.Flags &^= Racy
		files = append(files, g)
		return true
	})
	ix.Visibility().Skipped("", func(s Skipped, _ bool) { skipped = append(skipped, s) })
	return files, skipped
}

// Flush holds the writers' lock only to take the pending writes: a change
// is applied, and answers, while Flush is held inside its transaction;
// the next Flush writes it; and a compaction (its swap waits for the
// transaction) and a failed Flush around it leave the DB as memory is.
func TestChangesGoOnDuringFlush(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	ctx := context.Background()
	stop := ix.DeferWrites()
	writeFile(t, root, "a.txt", "alpha changed\n")
	if err := ix.Apply(ctx, []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	first.Store(true)
	ix.SetWriteHook(func() error {
		if !first.CompareAndSwap(true, false) {
			return nil
		}
		close(entered)
		<-release
		return syscall.ENOSPC // the disk is full: a.txt's writes go back to pending
	})
	flushed := make(chan error, 1)
	go func() { flushed <- ix.Flush() }()
	waitFor(t, entered, "Flush's transaction")

	applied := make(chan error, 1)
	go func() {
		writeFile(t, root, "c.txt", "QuokkaNeedle\n")
		applied <- ix.Apply(ctx, []string{"c.txt"})
	}()
	select {
	case err := <-applied:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("a change waited for Flush's transaction")
	}
	if got, want := candidates(t, ix, "QuokkaNeedle"), []string{"c.txt"}; !slices.Equal(got, want) {
		t.Errorf("candidates during Flush = %q, want %q", got, want)
	}
	// A compaction folds a.txt's change into its base meanwhile; its swap
	// holds wmu and waits for the transaction. The failed Flush gives a.txt
	// back to pending after it: written from memory, a.txt is not stale.
	built := make(chan struct{})
	ix.hookCompactBuilt = func() { close(built) }
	compacted := make(chan error, 1)
	go func() { compacted <- ix.Compact() }()
	waitFor(t, built, "the compaction's base")
	for end := time.Now().Add(30 * time.Second); ix.wmu.TryLock(); runtime.Gosched() {
		ix.wmu.Unlock()
		if time.Now().After(end) {
			t.Fatal("the compaction never took the writers' lock for its swap")
		}
	}
	close(release)
	if err := <-flushed; !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush = %v, want ENOSPC", err)
	}
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	ix.SetWriteHook(nil)
	ix.hookCompactBuilt = nil
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	files, _ := tableRecords(ix)
	want := []string{"a.txt", "b.txt", "c.txt"}
	ix2 := reopen(t, ix, db, root)
	if got, _ := tableRecords(ix2); !slices.Equal(got, files) {
		t.Errorf("reopened table:\n got %+v\nwant %+v", got, files)
	}
	if got := paths(ix2); !slices.Equal(got, want) {
		t.Errorf("reopened paths = %q, want %q", got, want)
	}
	for q, want := range map[string][]string{"changed": {"a.txt"}, "QuokkaNeedle": {"c.txt"}, "beta": {"b.txt"}} {
		if got := candidates(t, ix2, q); !slices.Equal(got, want) {
			t.Errorf("reopened: candidates for %q = %q, want %q", q, got, want)
		}
	}
}

// A commit applies its batch to memory a chunk at a time: a query waiting
// for it comes in between two chunks (it does not wait for the whole
// batch), finds the index consistent and holding the chunks so far, and
// the whole batch gives a fresh build's answers, also once reopened.
func TestQueryBetweenCommitChunks(t *testing.T) {
	t.Parallel()
	ix, root, db := savedIndex(t, map[string]string{"a.txt": "alpha one\n", "d/b.txt": "beta two\n", "d/c.txt": "gamma\n"})
	ix.k.commitChunk = 3
	changed := []string{"a.txt", "d/b.txt"}
	for i := range 10 {
		n := fmt.Sprintf("n/%02d.txt", i)
		writeFile(t, root, n, fmt.Sprintf("QuokkaChunk %d\n", i))
		changed = append(changed, n)
	}
	writeFile(t, root, "a.txt", "alpha QuokkaChunk changed\n")
	if err := os.Remove(filepath.Join(root, "d/b.txt")); err != nil {
		t.Fatal(err)
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	boundaries := 0
	ix.hookCommitChunk = func() {
		if boundaries++; boundaries == 2 {
			close(paused)
			<-resume
		}
	}
	applied := make(chan error, 1)
	go func() { applied <- ix.Apply(context.Background(), changed) }()
	waitFor(t, paused, "the commit's second chunk")
	answered := make(chan struct{})
	var mid []string
	var midErr error
	go func() {
		defer close(answered)
		midErr = ix.Check()
		mid = candidates(t, ix, "QuokkaChunk")
	}()
	waitFor(t, answered, "a query between two chunks of a commit")
	close(resume)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	ix.hookCommitChunk = nil
	if midErr != nil {
		t.Errorf("between two chunks: %v", midErr)
	}
	want := []string{"a.txt", "n/00.txt", "n/01.txt", "n/02.txt", "n/03.txt", "n/04.txt", "n/05.txt", "n/06.txt", "n/07.txt", "n/08.txt", "n/09.txt"}
	if len(mid) == len(want) || !isSubset(mid, want) {
		t.Errorf("candidates between two chunks = %q, want some of %q", mid, want)
	}
	if boundaries != 3 {
		t.Errorf("%d chunk boundaries for 12 changes of 3, want 3", boundaries)
	}
	checkIndex(t, ix)
	for _, got := range []*Index{ix, nil} {
		if got == nil {
			ix.Close()
			var err error
			if got, err = Open(db, root); err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			checkIndex(t, got)
		}
		fresh := mustBuild(t, root)
		if !slices.Equal(paths(got), paths(fresh)) {
			t.Fatalf("paths %q, want %q", paths(got), paths(fresh))
		}
		for _, q := range []string{"QuokkaChunk", "alpha", "beta", "gamma", "changed"} {
			if g, w := candidates(t, got, q), candidates(t, fresh, q); !slices.Equal(g, w) {
				t.Errorf("candidates for %q = %q, want %q", q, g, w)
			}
		}
	}
}

func isSubset(sub, set []string) bool {
	for _, s := range sub {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}

// A build whose workers fail while the walk goes on (a run cannot be
// spilled) stops and says why; one cancelled once its workers report
// progress returns the cancellation. Neither leaves a base behind.
func TestBuildFails(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 3000 { // a dozen chunks: the walk still lists as the first are read
		files[fmt.Sprintf("d%02d/f%04d.txt", i%40, i)] = fmt.Sprintf("file %d alpha beta %d\n", i, i*i)
	}
	root := writeTree(t, files)
	small := knobsWith(func(k *knobs) { k.buildBudget = 2 << 10 })

	gone := filepath.Join(t.TempDir(), "gone", "ix.db") // its directory does not exist
	if ix, err := build(context.Background(), root, nil, gone, small); !errors.Is(err, fs.ErrNotExist) {
		if ix != nil {
			ix.Close()
		}
		t.Fatalf("build spilling into a missing directory: %v, want a spill error", err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reported := 0
	ix, err := build(ctx, root, func(Progress) { reported++; cancel() }, filepath.Join(dir, "ix.db"), small)
	if !errors.Is(err, context.Canceled) || ix != nil {
		t.Fatalf("build cancelled from its progress: %v, %v", ix, err)
	}
	if reported == 0 {
		t.Fatal("the build never reported progress")
	}
	if names := testtree.Names(t, dir); len(names) != 0 {
		t.Fatalf("a cancelled build left %q", names)
	}
}

// A build that spills far more runs than it may hold descriptors for
// (a child whose RLIMIT_NOFILE is 64 above what it has open) folds them
// and builds the same base as one that may hold them all.
func TestBuildFoldsRunsUnderDescriptorLimit(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 1500 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%30, i)] = fmt.Sprintf("file %d alpha beta %d gamma\n", i, i*i)
	}
	root := writeTree(t, files)
	small := knobsWith(func(k *knobs) { k.buildBudget = 2 << 10 }) // runs of 64 postings: some 700 of them
	ix, err := build(context.Background(), root, nil, filepath.Join(t.TempDir(), "ix.db"), small)
	if err != nil {
		t.Fatal(err)
	}
	want, runs := crc32.Checksum(ix.base.data, crc32.IEEETable), ix.runs
	ix.Close()
	if runs < 200 {
		t.Fatalf("%d runs: the budget did not force enough of them", runs)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INDEX_NOFILE_CHILD="+root, "INDEX_NOFILE_DB="+filepath.Join(t.TempDir(), "ix.db"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got uint32
	var childRuns int
	most := max(16, 2*runtime.GOMAXPROCS(0)) // a quarter of the ~70 descriptors, at least two a worker
	if _, err := fmt.Sscanf(string(out), "base %x runs %d", &got, &childRuns); err != nil || got != want || childRuns > most {
		t.Fatalf("child said %q, want base %08x and at most %d runs merged (%d without the limit)", out, want, most, runs)
	}
}

// nofileChild is TestBuildFoldsRunsUnderDescriptorLimit's child: it
// lowers RLIMIT_NOFILE to 64 above the descriptors it has open, builds
// INDEX_NOFILE_CHILD with a 2 KiB budget, spilling beside
// INDEX_NOFILE_DB, and prints the base's CRC-32 and how many runs the
// merge took, or the build's error.
func nofileChild() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	lim := uint64(len(ents) + 64)
	if err := testtree.SetNoFile(lim); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	small := knobsWith(func(k *knobs) { k.buildBudget = 2 << 10 })
	ix, err := build(context.Background(), os.Getenv("INDEX_NOFILE_CHILD"), nil, os.Getenv("INDEX_NOFILE_DB"), small)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	fmt.Printf("base %08x runs %d\n", crc32.Checksum(ix.base.data, crc32.IEEETable), ix.runs)
	os.Exit(0)
}

// A build reports its totals once the walk has listed every file, while
// files are still to be read, however fast its workers read them: a
// tree of one partial chunk, of a few, and of full chunks only. Its
// last report has every file read.
func TestBuildProgressBeforeTheEnd(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 600, 3 * buildChunk} {
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("d%02d/f%04d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
		}
		root := writeTree(t, files)
		var reports []Progress
		ix, err := build(context.Background(), root, func(p Progress) { reports = append(reports, p) }, "", defaultKnobs())
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		if len(reports) < 2 {
			t.Fatalf("%d files: %d reports (%+v), want one when listed and one at the end", n, len(reports), reports)
		}
		first, last := reports[0], reports[len(reports)-1]
		if first.TotalFiles != n || first.Files >= n || first.TotalBytes != last.Bytes {
			t.Fatalf("%d files: first report %+v, want the totals with files still to read", n, first)
		}
		if last.Files != n || last.TotalFiles != n || last.Bytes != last.TotalBytes {
			t.Fatalf("%d files: last report %+v, want all %d files read", n, last, n)
		}
	}
}

// The chunker sends the walk's files in chunks of buildChunk, in order,
// and holds files back until the end, where they go after listed: at
// least one file whenever there is any.
func TestChunker(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, buildChunk - 1, buildChunk, buildChunk + 1, 3 * buildChunk, 3*buildChunk + 5} {
		var sent []walkedFile
		sizes := []int{}
		listedAt := -1
		c := chunker{send: func(fs []walkedFile) { sent = append(sent, fs...); sizes = append(sizes, len(fs)) }}
		for i := range n {
			c.add(walkedFile{path: fmt.Sprint(i)})
		}
		c.end(func() { listedAt = len(sent) })
		if len(sent) != n {
			t.Fatalf("%d files: sent %d", n, len(sent))
		}
		for i, f := range sent {
			if f.path != fmt.Sprint(i) {
				t.Fatalf("%d files: file %d sent as %q", n, i, f.path)
			}
		}
		for i, k := range sizes {
			if k != buildChunk && i != len(sizes)-1 {
				t.Fatalf("%d files: chunks of %v, want %d each but the last", n, sizes, buildChunk)
			}
		}
		if n > 0 && listedAt >= n || n == 0 && listedAt != 0 {
			t.Fatalf("%d files: listed ran with %d sent, want files still to send", n, listedAt)
		}
	}
}

// crc32Combine gives the CRC of a concatenation from its halves' CRCs,
// for both polynomials and any split, empty halves included.
func TestCRC32Combine(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, poly := range []uint32{crc32.IEEE, crc32.Castagnoli} {
		tab := crc32.MakeTable(poly)
		for _, cut := range []int{0, 1, 7, 8, 9, 255, 256, 1000, 4999, 5000} {
			for _, end := range []int{cut, cut + 1, 5000} {
				if end > len(data) {
					continue
				}
				a, b := data[:cut], data[cut:end]
				want := crc32.Checksum(data[:end], tab)
				if got := crc32Combine(poly, crc32.Checksum(a, tab), crc32.Checksum(b, tab), int64(len(b))); got != want {
					t.Errorf("poly %#x, %d+%d bytes: %#x, want %#x", poly, len(a), len(b), got, want)
				}
			}
		}
	}
}
