package buildid

// Executable returns the path the running executable is read by:
// /proc/self/exe, which works even when the file was deleted after the
// start (go run).
func Executable() string { return "/proc/self/exe" }
