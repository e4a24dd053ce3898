//go:build !amd64

package pairindex

// Fast reports whether Index compares many places at once here.
var Fast = false

func indexVector(p *byte, n, d int, a, ao, b, bo byte) int {
	panic("pairindex: no vector search on this architecture")
}
