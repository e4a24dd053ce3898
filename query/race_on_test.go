//go:build race

package query

// raceEnabled trims the heaviest differential tests under the race
// detector, which slows the engines tenfold and finds no more races in a
// larger sample; CI runs the full sets without it (.ci/run).
const raceEnabled = true
