//go:build !linux && !darwin

package testtree

// exchange is nil: the system has no atomic exchange of two names.
var exchange func(a, b string) error
