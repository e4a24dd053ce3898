package ignore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Figures, measured not asserted (the repository's work tree top in
// INDEXD_BENCH_REPO, default this module's own checkout; for GOROOT/src
// in a repository of its own, see the README of bench/):
//
//	INDEXD_BENCH_REPO=/tmp/gosrc go test -run '^$' -bench TrackedDirs -benchtime 20x ./ignore/
//
// BenchmarkTrackedDirsParse reads the repository's index whole into the
// set of tracked directories of the default list (what a change of the
// index costs, once); BenchmarkTrackedDirsCached is what every walk that
// meets the repository pays while the index is unchanged (open, fstat,
// the trailing hash read, a cache lookup). Both report the index's
// entries and the directories found.
func BenchmarkTrackedDirsParse(b *testing.B) { benchTracked(b, false) }

// BenchmarkTrackedDirsCached: see BenchmarkTrackedDirsParse.
func BenchmarkTrackedDirsCached(b *testing.B) { benchTracked(b, true) }

func benchTracked(b *testing.B, cached bool) {
	top := os.Getenv("INDEXD_BENCH_REPO")
	if top == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			b.Skip("no repository: set INDEXD_BENCH_REPO")
		}
		top = strings.TrimSpace(string(out))
	}
	top, err := filepath.EvalSymlinks(top)
	if err != nil {
		b.Skip(err)
	}
	g, ok := repoAbove(top)
	if !ok {
		b.Skipf("%s holds no repository", top)
	}
	hashLen := g.config().hashLen()
	f, st, err := g.open(false, "index")
	if err != nil {
		b.Skip(err)
	}
	entries := 0
	if _, _, err := readGitIndex(f, st.Size, hashLen, func([]byte, bool) { entries++ }); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var set map[string]struct{}
	for b.Loop() {
		if !cached {
			trackedCache.mu.Lock()
			trackedCache.m = nil
			trackedCache.mu.Unlock()
		}
		set = g.trackedDirs(hashLen)
	}
	b.ReportMetric(float64(entries), "entries")
	b.ReportMetric(float64(len(set)), "tracked-dirs")
	b.ReportMetric(float64(st.Size), "index-bytes")
}
