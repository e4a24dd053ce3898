package query

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/testtree"
	"github.com/indexd/indexd/tool"
)

// probeFile makes one file of random lines: a BOM, CRLF, lines longer
// than the probe reads past its eighths at first (256 B) and than it
// reads at all (4 KiB), invalid UTF-8, case folds, no final newline.
func probeFile(r *rand.Rand, i int) string {
	words := []string{"needle", "Needle", "NEEDLE", "nee", "dle", "foo", "bar", "foo bar", "k", "K", "\u212a", "s", "S", "\u017f",
		"é", "É", "\xff", "\r", " ", "  ", "x", "ab", "abc", "kfoo", "ſbar", "\u212afoo", "spin_lock(", "kfree(", "\t", "z"}
	var b strings.Builder
	if i%6 == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	lines := 5 + r.IntN(120)
	for range lines {
		n := r.IntN(10)
		switch r.IntN(30) {
		case 0:
			n = 300 + r.IntN(200) // > probeLine
		case 1:
			n = 1500 + r.IntN(1500) // > probeTail in bytes
		}
		for range n {
			b.WriteString(words[r.IntN(len(words))])
		}
		if i%5 == 1 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	s := b.String()
	if r.IntN(3) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// The index's answer, with every candidate probed in its eighths
// (grep/probe.go), is the walk's, for adversarial files and patterns, in
// every output mode, with context, through the delta and a compaction;
// at the default sizes too; and with tiny scan sizes (long lines held by
// the probe but streamed by the whole read) it is what the same sizes
// give without probes.
func TestProbeEqualsWalk(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(77, 3))
	files := fsTree{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%4, i)] = probeFile(r, i)
	}
	root := newRoot(t, files)
	walk, idx := buildTools(t, root)
	ix := idx.Searcher.(Indexed).Index.(*index.Index)
	tiny := &grep.Sizes{Window: 64, Chunk: 1024, Multiline: 1 << 20, CheckEvery: 16, ProbeMin: 0}
	noProbe := *tiny
	noProbe.ProbeMin = 1 << 40
	idxTiny := &Tools{WS: idx.WS, Searcher: idx.Searcher, GrepSizes: tiny}
	idxPlain := &Tools{WS: idx.WS, Searcher: idx.Searcher, GrepSizes: &noProbe}
	idxDefault := &Tools{WS: idx.WS, Searcher: idx.Searcher} // ProbeMin 4 KiB, LinesFrom 4 KiB
	fixed := []string{"needle", "^needle", "needle$", `\bneedle\b`, `\Aneedle`, `needle\z`, "(?i)kfoo", "(?i)sbar", "(?i)\u212afoo",
		`spin_lock\(.*kfree\(`, "needle|foo bar", "(needle|kfoo)bar", "foo.*needle", "é.*NEEDLE", `\x{FFFD}needle`, "needle\r$",
		"(?i)éfoo", "(?i)ÉNEEDLE", "abcabc", "x+needle", "^\ufeff", "^$", "needle.{300,}", "dle(foo|bar)", "[^a]bc", "(?i)needle\\s+foo"}
	var all []string // in path order, so that the seed alone picks the pieces
	for _, p := range slices.Sorted(maps.Keys(files)) {
		all = append(all, files[p])
	}
	pieces := func() string {
		for {
			c := all[r.IntN(len(all))]
			if len(c) < 8 {
				continue
			}
			j := r.IntN(len(c) - 4)
			p := c[j:min(len(c), j+3+r.IntN(6))]
			if !strings.ContainsAny(p, "\n") && utf8.ValidString(p) {
				return regexp.QuoteMeta(p)
			}
		}
	}
	stage := func(name string, n int) {
		for i := range n {
			pat := ""
			if i < len(fixed) {
				pat = fixed[i]
			} else {
				switch r.IntN(4) {
				case 0:
					pat = pieces()
				case 1:
					pat = "(?i)" + pieces()
				case 2:
					pat = pieces() + ".*" + pieces()
				default:
					pat = "(" + pieces() + "|" + pieces() + ")"
				}
			}
			for _, cs := range []bool{true, false} {
				for _, mode := range []string{[]string{"content", "count", "files_with_matches"}[r.IntN(3)]} {
					args := jsonArgs("pattern", pat, "case_sensitive", cs, "output_mode", mode, "limit", 1000)
					if mode == "content" && r.IntN(2) == 0 {
						args = jsonArgs("pattern", pat, "case_sensitive", cs, "output_mode", mode, "limit", 1000,
							"context_before", r.IntN(3), "context_after", r.IntN(3))
					}
					diffEngines(t, walk, idx, tool.Grep, args)
					diffEngines(t, walk, idxDefault, tool.Grep, args)
					a := comparableEnvelope(t, idxTiny, tool.Grep, args)
					b := comparableEnvelope(t, idxPlain, tool.Grep, args)
					if fmt.Sprint(a) != fmt.Sprint(b) {
						t.Errorf("%s: tiny sizes, %s: probed differs from unprobed\nprobed:   %v\nunprobed: %v", name, args, a, b)
					}
				}
			}
		}
	}
	n := 1
	if testtree.RaceEnabled {
		n = 6 // under -race a sixth of the patterns: all of them take a minute
	}
	stage("base", 36/n)
	var changed []string
	for i := 0; i < 60; i += 3 {
		p := fmt.Sprintf("d%d/f%02d.txt", i%4, i)
		files[p] = probeFile(r, i+1)
		changed = append(changed, p)
	}
	rewrite(t, ix, root, files, changed)
	stage("delta", 12/n)
	if err := ix.Compact(); err != nil {
		t.Fatal(err)
	}
	stage("compacted", 8/n)
}

// The same through grepNewest's prefixes (newestFrom = 1) with small
// limits: probed files' hits carried from one prefix to the next (Known).
func TestProbeNewestFirst(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(78, 4))
	files := fsTree{}
	for i := range 300 {
		c := strings.Repeat("filler line of text\n", 20+r.IntN(40))
		if r.IntN(3) == 0 {
			// needle and haystack on different lines: probes prove clean
			c = "needle\n" + c + "haystack\n"
		}
		if r.IntN(4) == 0 {
			c = c + "needle haystack\n" + c
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%5, i)] = c
	}
	root := newRoot(t, files)
	for i := range 300 {
		setMtime(t, root, fmt.Sprintf("d%d/f%03d.txt", i%5, i), time.Unix(int64(1_600_000_000+r.IntN(50)*3600), 0))
	}
	walk, idx := buildTools(t, root)
	s := idx.Searcher.(Indexed)
	s.newestFrom = 1
	idx.Searcher = s
	for _, pat := range []string{"needle.*haystack", "haystack", "needle", `^needle haystack$`, "(?i)NEEDLE HAY"} {
		for _, limit := range []int{1, 2, 3, 5, 8, 20, 1000} {
			for _, mode := range []string{"content", "count", "files_with_matches"} {
				diffEngines(t, walk, idx, tool.Grep, jsonArgs("pattern", pat, "output_mode", mode, "limit", limit, "case_sensitive", true))
			}
		}
	}
}
