//go:build race

package testtree

// RaceEnabled reports whether the tests run under the race detector,
// which slows the engines tenfold and finds no more races in a larger
// sample: the heaviest tests run a smaller one then, or (comparisons
// over a whole real tree, which test answers, not concurrency) none, and
// CI runs them whole without it (.ci/run).
const RaceEnabled = true
