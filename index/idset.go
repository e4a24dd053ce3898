package index

import "math/bits"

// idSet is a set of file ids, a bit each: bit id%64 of word id/64. It
// grows as ids are added; the words past the last one set may be zero.
type idSet []uint64

// has reports whether id is in the set.
func (s idSet) has(id uint32) bool {
	w := int(id / 64)
	return w < len(s) && s[w]&(1<<(id%64)) != 0
}

// set puts id in the set (on) or takes it out.
func (s *idSet) set(id uint32, on bool) {
	w := int(id / 64)
	if w >= len(*s) {
		if !on {
			return
		}
		*s = append(*s, make([]uint64, w+1-len(*s))...)
	}
	if on {
		(*s)[w] |= 1 << (id % 64)
	} else {
		(*s)[w] &^= 1 << (id % 64)
	}
}

// last returns the largest id in the set, -1 when it is empty.
func (s idSet) last() int {
	for w := len(s) - 1; w >= 0; w-- {
		if s[w] != 0 {
			return w*64 + 63 - bits.LeadingZeros64(s[w])
		}
	}
	return -1
}
