package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The delta's heap is bounded in bytes as well as in files: a few large
// changed files ask for a compaction although far fewer than an eighth of
// the files changed, and the count of the delta's bytes follows every
// way it changes (set, set again, dropped, reloaded, compacted) — Check
// recounts it each time.
func TestDeltaBytesAskForACompaction(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("small file %d\n", i)
	}
	ix, root, db := savedIndex(t, files)
	ctx := context.Background()
	text := func(seed string) string {
		var b strings.Builder
		for i := range 400 {
			fmt.Fprintf(&b, "%s line %d holds %x and %o\n", seed, i, i*7919, i*104729)
		}
		return b.String()
	}
	writeFile(t, root, "f01.txt", text("QuokkaOne"))
	writeFile(t, root, "f02.txt", text("QuokkaTwo"))
	if err := ix.Apply(ctx, []string{"f01.txt", "f02.txt"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	st := ix.Stats()
	if st.DeltaFiles != 2 || st.DeltaBytes < 4<<10 {
		t.Fatalf("after two large changes: %d delta files, %d bytes; want 2 and over 4 KiB", st.DeltaFiles, st.DeltaBytes)
	}
	if ix.NeedsCompact() {
		t.Fatalf("a compaction asked for %d bytes of delta under the default bound", st.DeltaBytes)
	}
	ix.k.deltaMaxBytes = st.DeltaBytes - 1
	if !ix.NeedsCompact() {
		t.Fatalf("no compaction asked for %d bytes of delta over a bound of %d", st.DeltaBytes, ix.k.deltaMaxBytes)
	}

	// Set again, dropped: counted as they change.
	writeFile(t, root, "f01.txt", text("QuokkaOneAgain")[:3000])
	if err := os.Remove(filepath.Join(root, "f02.txt")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(ctx, []string{"f01.txt", "f02.txt"}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	before := ix.Stats().DeltaBytes
	if before <= 0 || before >= st.DeltaBytes {
		t.Errorf("delta bytes %d after one set shrank and one dropped, %d before", before, st.DeltaBytes)
	}

	// Reloaded from the DB: the same count.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(db, root)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIndex(t, ix)
	if got := ix.Stats().DeltaBytes; got != before {
		t.Errorf("delta bytes %d after reopening, %d before", got, before)
	}

	// Compacted: nothing left, nothing asked, the change still found.
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix)
	if st := ix.Stats(); st.DeltaBytes != 0 || st.DeltaFiles != 0 || ix.NeedsCompact() {
		t.Errorf("after the compaction: %d delta files, %d bytes, compaction asked %v", st.DeltaFiles, st.DeltaBytes, ix.NeedsCompact())
	}
	if got := candidates(t, ix, "QuokkaOneAgain"); !slices.Equal(got, []string{"f01.txt"}) {
		t.Errorf("candidates after the compaction = %q", got)
	}
}
