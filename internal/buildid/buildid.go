// Package buildid tells which build of the program is running: the Go
// build ID the linker writes into the executable (the ".note.go.buildid"
// ELF note, what `go tool buildid` prints). Two builds of different
// sources or flags have different IDs, a developer build included, where
// a version string would not change. The client and the daemon compare
// them so that a client is always answered by a daemon of its own build.
package buildid

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"sync"
)

// Self returns the running executable's build ID, or "" if it cannot be
// read (not an ELF file, no note). It reads /proc/self/exe once, which
// works even when the file was deleted after the start (go run).
var Self = sync.OnceValue(func() string { return Of("/proc/self/exe") })

// Of returns the build ID of the executable at path, or "".
func Of(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	return parseNote(data)
}

// parseNote reads a Go build ID note: namesz, descsz, type (4 bytes each,
// little-endian here), the name "Go\x00\x00", then the ID.
func parseNote(b []byte) string {
	if len(b) < 16 {
		return ""
	}
	namesz := binary.LittleEndian.Uint32(b)
	descsz := binary.LittleEndian.Uint32(b[4:])
	name := b[12:]
	if namesz != 4 || !bytes.HasPrefix(name, []byte("Go\x00\x00")) || uint64(16)+uint64(descsz) > uint64(len(b)) {
		return ""
	}
	return string(b[16 : 16+descsz])
}
