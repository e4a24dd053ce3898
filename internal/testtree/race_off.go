//go:build !race

package testtree

// RaceEnabled: see race_on.go.
const RaceEnabled = false
