package grep

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	csindex "github.com/google/codesearch/index"
)

// The measurement that chose the index's next masks (schemas 5 to 10;
// schema 11 keeps them, eight bins, for files over 1 MiB only, and line
// eighths for the others: index/format.go): for a
// tree, per bench query, the files holding every trigram of its trigram
// query (candidates without masks), those left by each mask variant
// (computed here from the contents, not read from an index), and the
// files the regexp matches; and the postings and gap bytes of the base,
// to price a byte per posting. Variants: loc8 = bit (position mod 8) per
// occurrence, adjacency by rotl(loc(t_i), 1) & loc(t_i+1); next8 = bit
// nextBin(next byte), what the index kept; both16 = the two; l4n4 = loc
// and next mod 4 (one byte); next4 = next mod 4 (half a byte).
//
//	INDEXD_PHRASE_TREE=$(go env GOROOT)/src go test ./grep -run TestPhraseFigures -v
//
// TestPhraseBins prints the bin table balanced over byteFreq (the
// index's nextBin).

// balancedBins assigns bytes, most frequent first (ASCII case folded),
// each to the least loaded of n bins.
func balancedBins(n int) [256]byte {
	var f [256]uint64
	for b := range 256 {
		f[lowerTable[b]] += uint64(byteFreq[b])
	}
	idx := make([]int, 256)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return f[idx[a]] > f[idx[b]] })
	load := make([]uint64, n)
	var h [256]byte
	for _, b := range idx {
		best := 0
		for i := range n {
			if load[i] < load[best] {
				best = i
			}
		}
		h[b] = byte(best)
		load[best] += f[b]
	}
	for b := range 256 {
		h[b] = h[lowerTable[b]]
	}
	return h
}

type triMask struct{ loc8, next8, loc4, next4 uint8 }

func TestPhraseFigures(t *testing.T) {
	t.Parallel()
	root := os.Getenv("INDEXD_PHRASE_TREE")
	if root == "" {
		t.Skip()
	}
	h8, h4 := balancedBins(8), balancedBins(4)
	type qd struct {
		name string
		m    *Matcher
		tq   *csindex.Query
		lits [][]byte
		cnt  [8]int // today, loc8, next8, both8, both4(1byte), match
	}
	var qs []*qd
	for _, p := range []string{`func main`, `func \w+Handler\(`, `ErrShortWrite`, `QuokkaNeedleZeta`} {
		for _, cs := range []bool{true, false} {
			m, e := CompileMatcher(p, MatchOptions{CaseSensitive: cs})
			if e != nil {
				t.Fatal(e)
			}
			q := &qd{name: p, m: m, tq: csindex.RegexpQuery(m.Syntax())}
			if !cs {
				q.name = "-i " + p
			}
			for _, f := range m.lits.finders {
				q.lits = append(q.lits, []byte(lowerASCII(string(f.lit))))
			}
			qs = append(qs, q)
		}
	}
	last := make([]uint32, 1<<24)
	var postings, gapBytes, files, lists int64
	masks := map[uint32]*triMask{}
	var id uint32
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || slices.Contains(data[:min(len(data), 8192)], 0) {
			return nil
		}
		id++
		files++
		clear(masks)
		low := []byte(lowerASCII(string(data)))
		for i := 0; i+3 <= len(low); i++ {
			tr := uint32(low[i])<<16 | uint32(low[i+1])<<8 | uint32(low[i+2])
			m := masks[tr]
			if m == nil {
				m = &triMask{}
				masks[tr] = m
			}
			m.loc8 |= 1 << (i % 8)
			m.loc4 |= 1 << (i % 4)
			if i+3 < len(low) {
				m.next8 |= 1 << h8[low[i+3]]
				m.next4 |= 1 << h4[low[i+3]]
			}
		}
		var tris []uint32
		for tr := range masks {
			tris = append(tris, tr)
			postings++
			if last[tr] == 0 {
				lists++
			}
			gapBytes += int64(len(binary.AppendUvarint(nil, uint64(id-last[tr]))))
			last[tr] = id
		}
		slices.Sort(tris)
		for _, q := range qs {
			if !matchSetT(q.tq, tris) {
				continue
			}
			q.cnt[0]++
			for v := 1; v <= 5; v++ {
				if phraseOK(q.lits, masks, v, h8, h4) {
					q.cnt[v]++
				}
			}
			if q.m.re.Match(data) {
				q.cnt[6]++
			}
		}
		return nil
	})
	fmt.Printf("tree %s: files %d postings %d lists %d gapbytes %d (+1B: %.0f%%, +2B: %.0f%%)\n", root, files, postings, lists, gapBytes,
		100*float64(postings)/float64(gapBytes), 200*float64(postings)/float64(gapBytes))
	fmt.Printf("%-28s %8s %8s %8s %8s %8s %8s %8s\n", "query", "today", "loc8", "next8", "both16", "l4n4", "next4", "match")
	for _, q := range qs {
		fmt.Printf("%-28s %8d %8d %8d %8d %8d %8d %8d   lits=%q\n", q.name, q.cnt[0], q.cnt[1], q.cnt[2], q.cnt[3], q.cnt[4], q.cnt[5], q.cnt[6], q.lits)
	}
}

func rotl(x uint8, n int, w int) uint8 {
	mask := uint8(1<<w - 1)
	return (x<<n | x>>(w-n)) & mask
}

// phraseOK: variant 1 loc8, 2 next8, 3 both, 4 loc4+next4.
func phraseOK(lits [][]byte, masks map[uint32]*triMask, v int, h8, h4 [256]byte) bool {
	for _, s := range lits {
		ok := true
		for i := 0; i+4 <= len(s) && ok; i++ {
			a := masks[uint32(s[i])<<16|uint32(s[i+1])<<8|uint32(s[i+2])]
			b := masks[uint32(s[i+1])<<16|uint32(s[i+2])<<8|uint32(s[i+3])]
			if a == nil || b == nil {
				ok = false
				break
			}
			switch v {
			case 1:
				ok = rotl(a.loc8, 1, 8)&b.loc8 != 0
			case 2:
				ok = a.next8&(1<<h8[s[i+3]]) != 0
			case 3:
				ok = rotl(a.loc8, 1, 8)&b.loc8 != 0 && a.next8&(1<<h8[s[i+3]]) != 0
			case 4:
				ok = rotl(a.loc4, 1, 4)&b.loc4 != 0 && a.next4&(1<<h4[s[i+3]]) != 0
			case 5:
				ok = a.next4&(1<<h4[s[i+3]]) != 0
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// matchSetT evaluates the trigram query q over the sorted trigrams tris
// (ASCII-lowercased, packed), as the index evaluates it over a file's.
func matchSetT(q *csindex.Query, tris []uint32) bool {
	has := func(t string) bool {
		tr := uint32(lowerTable[t[0]])<<16 | uint32(lowerTable[t[1]])<<8 | uint32(lowerTable[t[2]])
		_, ok := slices.BinarySearch(tris, tr)
		return ok
	}
	switch q.Op {
	case csindex.QAll:
		return true
	case csindex.QNone:
		return false
	case csindex.QAnd:
		for _, t := range q.Trigram {
			if !has(t) {
				return false
			}
		}
		for _, s := range q.Sub {
			if !matchSetT(s, tris) {
				return false
			}
		}
		return true
	}
	for _, t := range q.Trigram { // QOr
		if has(t) {
			return true
		}
	}
	for _, s := range q.Sub {
		if matchSetT(s, tris) {
			return true
		}
	}
	return false
}

func TestPhraseBins(t *testing.T) {
	t.Parallel()
	if os.Getenv("INDEXD_PHRASE_TREE") == "" {
		t.Skip()
	}
	h := balancedBins(8)
	var f [8]uint64
	for b := range 256 {
		f[h[b]] += uint64(byteFreq[b])
	}
	fmt.Println("loads", f)
	for i := 0; i < 256; i += 16 {
		fmt.Print("\t")
		for j := i; j < i+16; j++ {
			fmt.Printf("%d, ", h[j])
		}
		fmt.Printf("// %#02x\n", i)
	}
}
