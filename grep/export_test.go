package grep

// Seams for the external tests (package grep_test), which answer through
// the query layer's tools and so cannot live in package grep.

// ScanPrefetchAfter is how many files a scan takes before it reads ahead
// of its workers.
const ScanPrefetchAfter = scanPrefetchAfter

// TinySizes: see tinySizes.
var TinySizes = tinySizes

// Helpers of this package's tests the external ones share.
var (
	WriteRepeated  = writeRepeated
	WaitGoroutines = waitGoroutines
)

// SlowPattern and Generous: see slowPattern and generous.
const (
	SlowPattern = slowPattern
	Generous    = generous
)
