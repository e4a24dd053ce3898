package grep

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Benchmarks of the scan kernel: Matcher.Scan over one buffer, reported
// in MB/s (b.SetBytes). The corpus is a fixed sample of Go source from
// $(go env GOROOT)/src (see kernelCorpus). Compare two builds with
// go test -c, runs taken alternately, and benchstat; never assert times.
//
//	go test -run XXX -bench Kernel -count 10 ./query

// kernelCorpusMax bounds the benchmark corpus.
const kernelCorpusMax = 32 << 20

var kernelCorpusOnce struct {
	sync.Once
	buf []byte
	err error
}

// kernelCorpus returns the benchmark corpus: every third .go file under
// GOROOT/src in sorted path order (so the sample spans the tree), each
// followed by a newline, concatenated up to kernelCorpusMax bytes.
func kernelCorpus(b *testing.B) []byte {
	b.Helper()
	c := &kernelCorpusOnce
	c.Do(func() {
		src := goroot(b) + "/src"
		var paths []string
		c.err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
				paths = append(paths, p)
			}
			return nil
		})
		if c.err != nil {
			return
		}
		slices.Sort(paths)
		for i := 0; i < len(paths) && len(c.buf) < kernelCorpusMax; i += 3 {
			data, err := os.ReadFile(paths[i])
			if err != nil {
				c.err = err
				return
			}
			c.buf = append(c.buf, data...)
			c.buf = append(c.buf, '\n')
		}
		c.buf = c.buf[:min(len(c.buf), kernelCorpusMax)]
	})
	if c.err != nil || len(c.buf) == 0 {
		b.Skipf("no GOROOT corpus: %v", c.err)
	}
	return c.buf
}

// goroot returns $(go env GOROOT), skipping the test without it.
func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("go env GOROOT:", err)
	}
	return strings.TrimSpace(string(out))
}

func benchKernel(b *testing.B, pattern string, o MatchOptions) {
	benchScan(b, compileBench(b, pattern, o))
}

func compileBench(b *testing.B, pattern string, o MatchOptions) *Matcher {
	m, err := CompileMatcher(pattern, o)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchScan(b *testing.B, m *Matcher) {
	buf := kernelCorpus(b)
	var sc Scanner
	lines := 0
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		lines = 0
		m.Scan(&sc, buf, func(int, int) bool { lines++; return true })
	}
	b.ReportMetric(float64(lines), "lines")
}

func BenchmarkKernelRareLiteral(b *testing.B) {
	benchKernel(b, "xyzzy", MatchOptions{CaseSensitive: true})
}

func BenchmarkKernelRareLiteralFold(b *testing.B) {
	benchKernel(b, "xyzzy", MatchOptions{})
}

func BenchmarkKernelCommonFirstByte(b *testing.B) {
	benchKernel(b, "ErrShortWrite", MatchOptions{CaseSensitive: true})
}

func BenchmarkKernelCommonFirstByteFold(b *testing.B) {
	benchKernel(b, "ErrShortWrite", MatchOptions{})
}

func BenchmarkKernelRegexpLiteral(b *testing.B) {
	benchKernel(b, `func \w+Handler\(`, MatchOptions{CaseSensitive: true})
}

func BenchmarkKernelRegexpLiteralFold(b *testing.B) {
	benchKernel(b, `func \w+Handler\(`, MatchOptions{})
}

// A literal all of whose bytes are common ('m', its rarest, is 1% of
// source code): one anchor has a candidate every hundred bytes.
func BenchmarkKernelDenseLiteral(b *testing.B) {
	benchKernel(b, "func main", MatchOptions{CaseSensitive: true})
}

func BenchmarkKernelDenseLiteralFold(b *testing.B) {
	benchKernel(b, "func main", MatchOptions{})
}

// A pattern with no literal but a run of four digits (classrun.go).
func BenchmarkKernelClassRun(b *testing.B) {
	benchKernel(b, `\w+\d{4}\w*`, MatchOptions{CaseSensitive: true})
}

// The same without its class run: the regexp over every line.
func BenchmarkKernelClassRunOff(b *testing.B) {
	m := compileBench(b, `\w+\d{4}\w*`, MatchOptions{CaseSensitive: true})
	if m.run == nil {
		b.Fatal("no class run")
	}
	m.run = nil
	benchScan(b, m)
}
