package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// indexFuzzFiles is FuzzIndexGrep's tree: text where a trigram query, its
// phrase masks and its case folding can go wrong — letters whose case
// folds across byte lengths (K/k/U+212A Kelvin, s/S/U+017F long s, ß/ẞ,
// Σ/σ/ς), invalid UTF-8, CRLF and bare CR, tabs, a NUL past the binary
// probe, long lines, one-character lines, repeats and near-misses of the
// same words, and a file with a NUL up front (binary: skipped by both).
var indexFuzzFiles = map[string]string{
	"a/kelvin.txt":   "Kelvin \u212a scale\nkelvin KELVIN\n\u212aelvin\n",
	"a/longs.txt":    "mi\u017f\u017fi\u017f\u017fippi\nMISSISSIPPI\nmississippi\n\u017ftra\u00dfe STRASSE Stra\u1e9ee\n",
	"a/sigma.txt":    "\u03a3\u03c3\u03c2 \u03c3\u03b9\u03b3\u03bc\u03b1 \u03a3\u0399\u0393\u039c\u0391\n",
	"a/invalid.txt":  "ab\xffcd\nab\xfe\xffcd abcd\n\xc3(\n",
	"b/crlf.txt":     "func main() {\r\n\treturn\r\n}\r\nfunc  main()\rfuncmain\n",
	"b/go.go":        "package b\n\nfunc main() {}\nfunc mainly() {}\nfunc (t T) main() {}\n// func main\n",
	"b/near.go":      "fun main\nfunc mai\nunc main\nfuncmain\nFUNC MAIN\n",
	"b/dense.txt":    strings.Repeat("abcabcabd abcab\n", 40) + "needle\n" + strings.Repeat("x", 3000) + "needle\n",
	"c/short.txt":    "a\nb\n\nab\nabc\n",
	"c/late-nul.txt": strings.Repeat("text line\n", 900) + "after\x00nul needle\n",
	"c/bin.dat":      "\x00\x01needle binary\n",
	"c/tabs.txt":     "\tneedle\t\n  Needle  \nNEEDLE\nneedles\nneedle\n",
	"d/words.txt":    "alpha beta gamma\nAlpha Beta Gamma\nalphabet\nbetamax\ngamma-ray\n",
	"d/repeat.txt":   strings.Repeat("zz", 500) + "\nzzz\nz z z\n",
}

// indexFuzzDelta are rewritten after the build, so the index answers
// them from its delta.
var indexFuzzDelta = map[string]string{
	"a/kelvin.txt": "now \u212a only\nand needle\n",
	"d/words.txt":  "gamma alpha\nBETA\n",
	"d/new.txt":    "func main() { needle }\n\u017f\u212a\n",
}

// FuzzIndexGrep: for any pattern, the index's Grep answers what the
// walk's does (whole envelopes, errors included), over a tree built to
// trip the trigram query, the phrase filter and case folding, with some
// files answered from the index's delta.
func FuzzIndexGrep(f *testing.F) {
	root := testtree.Write(f, indexFuzzFiles)
	walk, idx := buildTools(f, root)
	var changed []string
	for rel, body := range indexFuzzDelta {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
		changed = append(changed, rel)
	}
	if err := idx.Searcher.(Indexed).Index.(*index.Index).Apply(context.Background(), changed); err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		pat       string
		sensitive bool
	}{
		{"kelvin", false}, {"\u212a", false}, {"K", true}, {"mississippi", false}, {"\u017f", false},
		{"stra(ss|\u00df)e", false}, {"\u03c3", false}, {"ab.cd", true}, {`ab\xffcd`, true},
		{"func main", true}, {`func\s+main\(`, true}, {`main\(\)`, false}, {"needle$", true},
		{`(?m)^needle`, true}, {"needle|gamma", false}, {`\bbeta\b`, false}, {"z{3}", true},
		{"(?i)ALPHA|beta", true}, {"[Kk]elvin", true}, {"abc.*abd", true}, {"", true}, {"(", true},
	} {
		f.Add(s.pat, s.sensitive, false)
	}
	f.Add("func main\\(\\) \\{\\n", true, true)
	f.Fuzz(func(t *testing.T, pat string, sensitive, multiline bool) {
		if len(pat) > 200 {
			return // a long pattern only costs the fuzzer time
		}
		args := fmt.Sprintf(`{"pattern":%q,"case_sensitive":%v,"multiline":%v,"output_mode":"content","limit":1000,"timeout_ms":60000}`,
			pat, sensitive, multiline)
		diffEngines(t, walk, idx, tool.Grep, args)
	})
}

// indexFuzzPaths is FuzzIndexGlob's tree: hidden files and directories,
// default-ignored and gitignored ones, names with spaces, brackets,
// upper case, non-ASCII and invalid UTF-8, names that sort around "/"
// ("a.go" beside "a/", "a-b"), and depth.
var indexFuzzPaths = []string{
	".gitignore", ".env", ".github/workflows/ci.yml", ".config/x/.hidden.go",
	"a.go", "a-b.go", "a/b.go", "a/B.GO", "a/.dot.go", "a/b/c/d/e.go", "a/b/c/d/e.txt",
	"a b/c d.go", "x[1].go", "x{a,b}.go", "\u00e9t\u00e9/caf\u00e9.go", "bad\xff/n\xfe.go",
	"node_modules/p/index.js", "build/out.js", "ignored/keep.go", "logs/a.log", "src/main.go",
	"src/internal/x/y.go", "src/internal/testdata/z.json", "testdata/a/b.json", "zz/zz/zz.zz",
}

// FuzzIndexGlob: for any pattern, both sorts, hidden files shown or not,
// the index's Glob answers what the walk's does, over a tree of odd
// names with old and recent files, some answered from the index's
// delta.
func FuzzIndexGlob(f *testing.F) {
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	for _, p := range indexFuzzPaths {
		files[p] = p + "\n"
	}
	files[".gitignore"] = "*.log\nignored/\n"
	root := testtree.Write(f, files)
	old := time.Now().Add(-30 * 24 * time.Hour)
	for i, p := range indexFuzzPaths {
		if i%3 != 0 {
			setMtime(f, root, p, old.Add(time.Duration(i)*time.Minute))
		}
	}
	walk, idx := buildTools(f, root)
	changed := []string{"a/b/new.go", "src/main.go", "a.go"}
	for _, rel := range changed {
		if err := os.WriteFile(filepath.Join(root, rel), []byte("changed\n"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := idx.Searcher.(Indexed).Index.(*index.Index).Apply(context.Background(), changed); err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{"**/*.go", "**", "*", "a/**", "**/*.{go,js}", "src/**/x/*.go", ".github/**/*.yml",
		"**/.*", "**/[A-Z]*", "a?b.go", "x\\[1\\].go", "**/testdata/**/*.json", "\u00e9t\u00e9/*", "a/b/**/e.*",
		"**/zz*", "*/", "[!a]*", "{a,src}/**/*.go"} {
		f.Add(p, false, false)
	}
	f.Add("**/*.go", true, true)
	f.Fuzz(func(t *testing.T, pat string, recent, hidden bool) {
		if len(pat) > 200 {
			return
		}
		sort := "path"
		if recent {
			sort = "recent"
		}
		args := fmt.Sprintf(`{"pattern":%q,"sort":%q,"include_hidden":%v,"limit":200}`, pat, sort, hidden)
		diffEngines(t, walk, idx, tool.Glob, args)
	})
}
