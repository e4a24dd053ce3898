//go:build race

package grep

// raceEnabled trims the heaviest randomized comparisons under the race
// detector, which slows the kernel tenfold and finds no more races in a
// larger sample; CI runs the full sets without it (.ci/run).
const raceEnabled = true
