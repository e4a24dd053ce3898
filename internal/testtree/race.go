package testtree

import "os"

// QuickChildExit makes the processes a test starts exit at once: a
// program built with -race (the test binary itself, re-run as a child)
// otherwise sleeps a second at exit (the race runtime's
// atexit_sleep_ms), a second per child. It sets GORACE for the children
// unless the user set it; call it from TestMain, before m.Run.
func QuickChildExit() {
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}
