package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Benchmarks on $(go env GOROOT)/src, or on INDEXD_BENCH_TREE when set
// (e.g. the tree bench/gentree makes). They report the index's figures
// (docs/design.md, "Figures"); compare runs with benchstat, never assert
// them.

func benchRoot(b *testing.B) string {
	if r := os.Getenv("INDEXD_BENCH_TREE"); r != "" {
		return r
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip(err)
	}
	r, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)) + "/src")
	if err != nil {
		b.Skip(err)
	}
	return r
}

func BenchmarkBuild(b *testing.B) {
	root := benchRoot(b)
	var ix *Index
	for b.Loop() {
		var err error
		if ix, err = Build(context.Background(), root, nil); err != nil {
			b.Fatal(err)
		}
	}
	db := filepath.Join(b.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		b.Fatal(err)
	}
	postingsMB := float64(len(ix.base.data)) / (1 << 20)
	ix.Close()
	fi, _ := os.Stat(db)
	size := fi.Size() + int64(postingsMB*(1<<20)) // the DB and its base file
	var corpus int64
	ix.Candidates(CandidateOptions{}, func(f *File) bool { corpus += f.Size; return true })
	b.ReportMetric(float64(size)/(1<<20), "db-MB")
	b.ReportMetric(100*float64(size)/float64(corpus), "db-%corpus")
	b.ReportMetric(postingsMB, "postings-MB")
}

func BenchmarkReopenReconcile(b *testing.B) {
	root := benchRoot(b)
	db := filepath.Join(b.TempDir(), "ix.db")
	ix, err := Build(context.Background(), root, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Save(db); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	for b.Loop() {
		ix, rebuilt, err := OpenOrBuild(context.Background(), db, root, nil)
		if err != nil || rebuilt {
			b.Fatalf("rebuilt=%v err=%v", rebuilt, err)
		}
		ix.Close()
	}
}

func BenchmarkUpdateOneFile(b *testing.B) {
	root := benchRoot(b)
	tmp := b.TempDir()
	// A copy of one file's directory would change the corpus; update a
	// scratch file added to an index of the corpus instead.
	ix, err := Build(context.Background(), root, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Save(filepath.Join(tmp, "ix.db")); err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var some string
	ix.Candidates(CandidateOptions{}, func(f *File) bool {
		if f.Size > 4096 && f.Size < 16384 {
			some = f.Path
			return false
		}
		return true
	})
	b.ResetTimer()
	for b.Loop() {
		// Pretend the file changed: Update re-reads and rewrites it.
		ix.mu.Lock()
		ix.files[ix.idOf(some)].ModTime = time.Now().UnixNano()
		ix.mu.Unlock()
		if err := ix.Update(some); err != nil {
			b.Fatal(err)
		}
	}
}

// rareCorpus writes n files of words whose trigrams are common (so most
// lists are long) to a temporary tree, three of them holding the rare
// literal QuokkaNeedleZeta, and returns the tree's root.
func rareCorpus(b *testing.B, n int) string {
	root := b.TempDir()
	words := []string{"quokka", "needle", "zeta", "beta", "handle", "kayak", "lane", "quota", "okra", "meet",
		"func", "return", "error", "string", "value", "index", "query", "buffer", "lezard", "tezeta"}
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for i := range n {
		buf = buf[:0]
		for range 200 {
			buf = append(buf, words[r.IntN(len(words))]...)
			buf = append(buf, ' ')
		}
		if i%(n/3) == 7 {
			buf = append(buf, "QuokkaNeedleZeta"...)
		}
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i%50))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkRareLiteral measures the candidate query of a rare literal
// whose trigrams each have long lists, on a saved and reopened index:
// its cost (and allocations) should follow the answer, not the lists.
func BenchmarkRareLiteral(b *testing.B) {
	root := rareCorpus(b, 6000)
	ix, err := Build(context.Background(), root, nil)
	if err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(b.TempDir(), "ix.db")
	if err := ix.Save(db); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	if ix, err = Open(db, root); err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	q := trigramQuery(b, "QuokkaNeedleZeta")
	count := func() int {
		n := 0
		ix.Candidates(CandidateOptions{Content: q}, func(*File) bool { n++; return true })
		return n
	}
	if got := count(); got != 3 {
		b.Fatalf("%d candidates, want 3", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		count()
	}
}

// BenchmarkOpenOrBuild measures what the daemon does for a root it has no
// DB for: build with runs spilled beside the DB, then save.
func BenchmarkOpenOrBuild(b *testing.B) {
	root := benchRoot(b)
	for b.Loop() {
		db := filepath.Join(b.TempDir(), "ix.db")
		ix, _, err := OpenOrBuild(context.Background(), db, root, nil)
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
