// Package buildid tells which build of the program is running: the Go
// build ID the linker writes into the executable (the ".note.go.buildid"
// ELF note, what `go tool buildid` prints). Two builds of different
// sources or flags have different IDs, a developer build included, where
// a version string would not change. A client compares its engine's
// (internal/client) with its daemon's, so that a client is always
// answered by a daemon of its own engine. The ELF headers are read here,
// not with debug/elf, which the query client does not link.
package buildid

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"sync"
)

// Self returns the running executable's build ID, or "" if it cannot be
// read (not an ELF file, no note). It reads /proc/self/exe once, which
// works even when the file was deleted after the start (go run).
var Self = sync.OnceValue(func() string { return Of("/proc/self/exe") })

// ELF constants (see elf(5)); the package reads the few fields it needs
// itself rather than link debug/elf into the query client.
const (
	elfClass32    = 1
	elfClass64    = 2
	elfData2LSB   = 1
	elfData2MSB   = 2
	ptNote        = 4 // program header type of a note segment
	noteGoBuildID = 4 // note type of the Go build ID, in notes named "Go"
	maxNoteSize   = 1 << 16
)

// Of returns the build ID of the executable at path, or "". It reads the
// ELF header, the program headers and the note segments (the Go linker
// puts its ".note.go.buildid" note in one, near the file's start).
func Of(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var ident [64]byte
	if _, err := io.ReadFull(f, ident[:]); err != nil || !bytes.HasPrefix(ident[:], []byte("\x7fELF")) {
		return ""
	}
	var bo binary.ByteOrder
	switch ident[5] {
	case elfData2LSB:
		bo = binary.LittleEndian
	case elfData2MSB:
		bo = binary.BigEndian
	default:
		return ""
	}
	var phoff int64
	var phentsize, phnum int
	switch ident[4] {
	case elfClass64:
		phoff, phentsize, phnum = int64(bo.Uint64(ident[32:])), int(bo.Uint16(ident[54:])), int(bo.Uint16(ident[56:]))
	case elfClass32:
		phoff, phentsize, phnum = int64(bo.Uint32(ident[28:])), int(bo.Uint16(ident[42:])), int(bo.Uint16(ident[44:]))
	default:
		return ""
	}
	if phnum == 0 || phentsize < 32 || phnum*phentsize > maxNoteSize {
		return ""
	}
	ph := make([]byte, phnum*phentsize)
	if _, err := f.ReadAt(ph, phoff); err != nil {
		return ""
	}
	for i := 0; i < phnum; i++ {
		h := ph[i*phentsize:]
		if bo.Uint32(h) != ptNote {
			continue
		}
		var off, size int64
		if ident[4] == elfClass64 {
			off, size = int64(bo.Uint64(h[8:])), int64(bo.Uint64(h[32:]))
		} else {
			off, size = int64(bo.Uint32(h[4:])), int64(bo.Uint32(h[16:]))
		}
		if size <= 0 || size > maxNoteSize || off < 0 {
			continue
		}
		notes := make([]byte, size)
		if _, err := f.ReadAt(notes, off); err != nil {
			continue
		}
		if id := findNote(notes, bo); id != "" {
			return id
		}
	}
	return ""
}

// findNote returns the Go build ID among the notes of one segment: each
// namesz, descsz, type (4 bytes each), then the name and the description,
// each padded to 4 bytes.
func findNote(b []byte, bo binary.ByteOrder) string {
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		nameEnd := 12 + (namesz+3)&^3
		end := nameEnd + (descsz+3)&^3
		if nameEnd > uint64(len(b)) || nameEnd+descsz > uint64(len(b)) {
			return ""
		}
		if typ == noteGoBuildID && namesz == 4 && string(b[12:16]) == "Go\x00\x00" {
			return string(b[nameEnd : nameEnd+descsz])
		}
		if end > uint64(len(b)) {
			return ""
		}
		b = b[end:]
	}
	return ""
}
