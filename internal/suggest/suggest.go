// Package suggest finds the word a mistyped one was meant to be: the
// "did you mean" of unknown commands, flags and file types.
package suggest

import "strings"

// Closest returns the candidate nearest to word by edit distance (case
// ignored), or "" when none is near enough to be a likely typo: at most
// a third of the longer word's length, and never more than 3 edits.
// A candidate that word is a prefix of, or that is a prefix of word,
// counts as near. A word of less than 3 letters is near nothing: too
// many names are an edit away. Of candidates as near, the first wins.
func Closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	if len(w) < 3 {
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(w, lc)
		if strings.HasPrefix(lc, w) || len(lc) >= 2 && strings.HasPrefix(w, lc) {
			d = min(d, 1)
		}
		limit := min(3, max(1, max(len(w), len(lc))/3))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Damerau-Levenshtein distance of a and b (optimal string
// alignment: a swap of two neighbours is one edit), by bytes.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
