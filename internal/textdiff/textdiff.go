// Package textdiff shows where two texts part, for the tests that compare
// a text with its golden copy.
package textdiff

import (
	"fmt"
	"strings"
)

// Lines shows where got departs from want: the first differing line's
// number, then the lines between the texts' common beginning and their
// common end, want's marked "- " and got's "+ ".
func Lines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	j := 0
	for j < len(w)-i && j < len(g)-i && w[len(w)-1-j] == g[len(g)-1-j] {
		j++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (- want, + got):\n", i+1)
	for _, l := range w[i : len(w)-j] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range g[i : len(g)-j] {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}
