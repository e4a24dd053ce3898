package index

import (
	"slices"

	csindex "github.com/google/codesearch/index"
)

// Trigrams are three bytes of ASCII-lowercased content packed into the low
// 24 bits of a uint32 (first byte highest). Lowercasing on both sides makes
// a case-insensitive query one lookup per trigram; the live regexp then
// decides. Since lowercasing maps a substring of the content to a substring
// of the lowercased content, every trigram a match needs is still present:
// the index only narrows, never loses a match.

// Limits of what is indexed. A file beyond them is "unknown": a candidate
// for every Grep (SPEC §9).
const (
	// MaxFileSize is the largest file whose trigrams are indexed.
	MaxFileSize = 64 << 20
	// MaxFileTrigrams is the most distinct trigrams one file may have.
	MaxFileTrigrams = 1 << 17
)

// The limits in force: MaxFileSize and MaxFileTrigrams, lowered by tests
// so that small files exceed them.
var (
	maxFileSize     = MaxFileSize
	maxFileTrigrams = MaxFileTrigrams
)

var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return
}()

// trigramSet collects one file's distinct trigrams; reused across files.
type trigramSet struct {
	seen []uint64 // 1<<24 bits
	out  []uint32
}

// extract returns the distinct lowercase trigrams of data (in no
// particular order), or ok=false when there are more than
// MaxFileTrigrams. The result is valid until the next call.
func (s *trigramSet) extract(data []byte) ([]uint32, bool) {
	if s.seen == nil {
		s.seen = make([]uint64, 1<<24/64)
	}
	out := s.out[:0]
	ok := true
	if len(data) >= 3 {
		t := uint32(lower[data[0]])<<8 | uint32(lower[data[1]])
		for _, c := range data[2:] {
			t = (t<<8 | uint32(lower[c])) & 0xFFFFFF
			w, b := t>>6, uint64(1)<<(t&63)
			if s.seen[w]&b == 0 {
				s.seen[w] |= b
				out = append(out, t)
				if len(out) > maxFileTrigrams {
					ok = false
					break
				}
			}
		}
	}
	for _, t := range out {
		s.seen[t>>6] = 0
	}
	s.out = out
	if !ok {
		return nil, false
	}
	return out, true
}

// queryTrigram converts a codesearch query trigram (a 3-byte string) to
// ours.
func queryTrigram(s string) uint32 {
	return uint32(lower[s[0]])<<16 | uint32(lower[s[1]])<<8 | uint32(lower[s[2]])
}

// matchSet reports whether a file with the sorted trigram set tris can
// satisfy q.
func matchSet(q *csindex.Query, tris []uint32) bool {
	has := func(s string) bool {
		_, ok := slices.BinarySearch(tris, queryTrigram(s))
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
			if !matchSet(s, tris) {
				return false
			}
		}
		return true
	default: // QOr
		for _, t := range q.Trigram {
			if has(t) {
				return true
			}
		}
		for _, s := range q.Sub {
			if matchSet(s, tris) {
				return true
			}
		}
		return false
	}
}
