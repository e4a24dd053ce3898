//go:build !linux

package client

// utimeNow asks utimensat for the current time: UTIME_NOW of macOS's and
// FreeBSD's <sys/stat.h>, which golang.org/x/sys/unix does not define
// there.
const utimeNow = -1
