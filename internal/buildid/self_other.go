//go:build !linux

package buildid

import "os"

// Executable returns the path the running executable is read by: the one
// os.Executable gives (on macOS the path it was started by; on FreeBSD
// the kernel's, from sysctl), "" if there is none.
func Executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}
