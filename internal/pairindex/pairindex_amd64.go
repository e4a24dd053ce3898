package pairindex

import "golang.org/x/sys/cpu"

// Fast reports whether Index compares many places at once here.
var Fast = cpu.X86.HasAVX2

// indexVector is Index for n ≥ vectorMin places, with AVX2: it returns
// the least i < n with p[i]|ao == a and p[i+d]|bo == b, or -1. It reads
// p[0 : n+d] and nothing else.
//
//go:noescape
func indexVector(p *byte, n, d int, a, ao, b, bo byte) int
