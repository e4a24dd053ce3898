// Package buildid tells which build of the program is running: the Go
// build ID the linker writes into the executable (the ".note.go.buildid"
// ELF note on Linux and FreeBSD; on macOS the start of the Mach-O
// __text section), what `go tool buildid` prints. Two builds of different
// sources or flags have different IDs, a developer build included, where
// a version string would not change. A client compares its engine's
// (internal/client) with its daemon's, so that a client is always
// answered by a daemon of its own engine. HasDWARF tells whether a
// developer's build was made by go run or by go build, so that the client
// can make its engine's build the same way and check it. The ELF and
// Mach-O headers are read here, not with debug/elf and debug/macho, which
// the query client does not link (macho.go).
package buildid

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"sync"
)

// Self returns the running executable's build ID, or "" if it cannot be
// read (no ELF or Mach-O file, no ID). It reads Executable once.
var Self = sync.OnceValue(func() string { return Of(Executable()) })

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
	// maxSectionHeaders bounds the section headers and their names'
	// section that HasDWARF reads (a Go executable has a few dozen).
	maxSectionHeaders = 1 << 20
)

// header is what the package reads of an ELF file's header.
type header struct {
	bo        binary.ByteOrder
	class64   bool
	phoff     int64 // program headers: offset, size of one, count
	phentsize int
	phnum     int
	shoff     int64 // section headers: offset, size of one, count, index of the names' section
	shentsize int
	shnum     int
	shstrndx  int
}

// readHeader reads the ELF header of f; ok is false if f is no ELF file
// the package reads.
func readHeader(f *os.File) (h header, ok bool) {
	var ident [64]byte
	if _, err := io.ReadFull(f, ident[:]); err != nil || !bytes.HasPrefix(ident[:], []byte("\x7fELF")) {
		return h, false
	}
	switch ident[5] {
	case elfData2LSB:
		h.bo = binary.LittleEndian
	case elfData2MSB:
		h.bo = binary.BigEndian
	default:
		return h, false
	}
	bo := h.bo
	switch ident[4] {
	case elfClass64:
		h.class64 = true
		h.phoff, h.phentsize, h.phnum = int64(bo.Uint64(ident[32:])), int(bo.Uint16(ident[54:])), int(bo.Uint16(ident[56:]))
		h.shoff, h.shentsize, h.shnum, h.shstrndx = int64(bo.Uint64(ident[40:])), int(bo.Uint16(ident[58:])), int(bo.Uint16(ident[60:])), int(bo.Uint16(ident[62:]))
	case elfClass32:
		h.phoff, h.phentsize, h.phnum = int64(bo.Uint32(ident[28:])), int(bo.Uint16(ident[42:])), int(bo.Uint16(ident[44:]))
		h.shoff, h.shentsize, h.shnum, h.shstrndx = int64(bo.Uint32(ident[32:])), int(bo.Uint16(ident[46:])), int(bo.Uint16(ident[48:])), int(bo.Uint16(ident[50:]))
	default:
		return h, false
	}
	return h, true
}

// Of returns the build ID of the executable at path, or "". It reads the
// ELF header, the program headers and the note segments (the Go linker
// puts its ".note.go.buildid" note in one, near the file's start); or,
// in a Mach-O file, the start of its __text section (ofMacho).
func Of(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if m, ok := readMacho(f); ok {
		return m.buildID(f)
	}
	eh, ok := readHeader(f)
	if !ok || eh.phnum == 0 || eh.phentsize < 32 || eh.phnum*eh.phentsize > maxNoteSize {
		return ""
	}
	bo := eh.bo
	ph := make([]byte, eh.phnum*eh.phentsize)
	if _, err := f.ReadAt(ph, eh.phoff); err != nil {
		return ""
	}
	for i := 0; i < eh.phnum; i++ {
		h := ph[i*eh.phentsize:]
		if bo.Uint32(h) != ptNote {
			continue
		}
		var off, size int64
		if eh.class64 {
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

// HasDWARF reports whether the executable at path holds DWARF debug
// information: a section named ".debug_info" (or ".zdebug_info", as older
// linkers compressed it). The go command links what go run runs without
// it (and without a symbol table), and what go build and go install
// write with it, unless -ldflags strip it (-w, -s): so a developer's
// build tells which of the two made it. It reads the section headers and
// their names (a Mach-O file's: "__debug_info" or "__zdebug_info"); false
// if they cannot be read.
func HasDWARF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if m, ok := readMacho(f); ok {
		return m.section("__debug_info") != nil || m.section("__zdebug_info") != nil
	}
	eh, ok := readHeader(f)
	minEnt := 40 // an ELF32 section header; ELF64's is 64 bytes
	if eh.class64 {
		minEnt = 64
	}
	if !ok || eh.shnum == 0 || eh.shentsize < minEnt || eh.shstrndx >= eh.shnum || eh.shnum*eh.shentsize > maxSectionHeaders {
		return false
	}
	bo := eh.bo
	sh := make([]byte, eh.shnum*eh.shentsize)
	if _, err := f.ReadAt(sh, eh.shoff); err != nil {
		return false
	}
	// where returns the offset and size of section i.
	where := func(i int) (off, size int64) {
		h := sh[i*eh.shentsize:]
		if eh.class64 {
			return int64(bo.Uint64(h[24:])), int64(bo.Uint64(h[32:]))
		}
		return int64(bo.Uint32(h[16:])), int64(bo.Uint32(h[20:]))
	}
	off, size := where(eh.shstrndx)
	if size <= 0 || size > maxSectionHeaders || off < 0 {
		return false
	}
	names := make([]byte, size)
	if _, err := f.ReadAt(names, off); err != nil {
		return false
	}
	for i := 0; i < eh.shnum; i++ {
		n := int64(bo.Uint32(sh[i*eh.shentsize:]))
		if n >= size {
			continue
		}
		name := names[n:]
		if end := bytes.IndexByte(name, 0); end >= 0 {
			name = name[:end]
		}
		if string(name) == ".debug_info" || string(name) == ".zdebug_info" {
			return true
		}
	}
	return false
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
