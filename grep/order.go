package grep

import "slices"

// newer reports whether a comes before b in Grep's order: mtime
// descending, then path.
func newer(a, b *File) bool {
	if a.ModTime != b.ModTime {
		return a.ModTime > b.ModTime
	}
	return a.Rel < b.Rel
}

// ordering puts files in Grep's order a prefix at a time, for a scan that
// may stop after a few of many candidates (a limit reached): a heap over
// the files not yet placed, built in O(n) and popped once per file
// placed, instead of a sort of them all (once enough are placed, see
// sortPast, the rest is sorted at once). files[:placed] is in order and
// never moves again; the heap holds files[placed:], its root at the last
// index (heap index h is at files[len−1−h]), so that a pop leaves the
// smallest at files[placed]. Not safe for concurrent use; a reader may
// read files[:placed] while another goroutine (holding the owner's lock)
// places more.
type ordering struct {
	files  []File
	placed int
}

func newOrdering(files []File) *ordering {
	o := &ordering{files: files}
	for h := len(files)/2 - 1; h >= 0; h-- {
		o.down(h)
	}
	return o
}

// at returns the file at heap index h.
func (o *ordering) at(h int) *File { return &o.files[len(o.files)-1-h] }

// down sifts heap index h down to its place: the file there is held
// aside while the newer children move up into the hole, and written
// once where it belongs.
func (o *ordering) down(h int) {
	n := len(o.files) - o.placed
	x := *o.at(h)
	for {
		c := 2*h + 1
		if c >= n {
			break
		}
		if c+1 < n && newer(o.at(c+1), o.at(c)) {
			c++
		}
		if !newer(o.at(c), &x) {
			break
		}
		*o.at(h) = *o.at(c)
		h = c
	}
	*o.at(h) = x
}

// next places the next file (at files[placed-1]); false when all are.
func (o *ordering) next() bool {
	n := len(o.files) - o.placed
	if n == 0 {
		return false
	}
	last := o.at(n - 1) // files[placed]
	*o.at(0), *last = *last, *o.at(0)
	o.placed++
	o.down(0)
	return true
}

// sortPast is how many files the heap places at least before the rest
// may be sorted at once. A pop costs about 2·log₂ n comparisons and a
// sort of the r files left r·log₂ r, so the sort pays once half of them
// are to be placed; the rest is sorted when as many have been placed as
// half of what is left (a scan that gets that far is likely to read them
// all: a rare pattern, --all, the walk). A scan that reads a tenth of
// many candidates (func \w+Handler\( on a 1M-file tree reads 23,105 of
// 213,724) pops them all and sorts none: BenchmarkOrdering, a tenth of
// 200,000 placed in 7.7 ms instead of 29; all of them in 35 instead of 29.
const sortPast = 1024

// upTo places files until placed ≥ n (or all are).
func (o *ordering) upTo(n int) {
	for o.placed < n && o.next() {
	}
	if o.placed >= sortPast && o.placed < len(o.files) && 2*o.placed >= len(o.files)-o.placed {
		// The heap's files, in any order, sorted: they follow the placed.
		rest := o.files[o.placed:]
		slices.SortFunc(rest, func(a, b File) int {
			switch {
			case newer(&a, &b):
				return -1
			case newer(&b, &a):
				return 1
			}
			return 0
		})
		o.placed = len(o.files)
	}
}
