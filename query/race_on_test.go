//go:build race

package query

// raceEnabled trims the heaviest differential tests under the race
// detector, which slows the engines tenfold; the full sets run without it.
const raceEnabled = true
