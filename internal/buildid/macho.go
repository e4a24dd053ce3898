package buildid

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
)

// Mach-O, the format of macOS executables: what Of and HasDWARF need of
// a 64-bit little-endian file (every Go target on macOS), from
// <mach-o/loader.h>. The Go linker writes the build ID at the start of
// the __text section, as `\xff Go build ID: "ID"\n \xff`, and DWARF in
// sections __debug_info (and the like) of a __DWARF segment, which
// -ldflags=-w and go run leave out.
const (
	machoMagic64    = 0xfeedfacf // MH_MAGIC_64
	machoHeaderLen  = 32         // struct mach_header_64
	lcSegment64     = 0x19       // LC_SEGMENT_64
	machoSegmentLen = 72         // struct segment_command_64, its sections follow
	machoSectionLen = 80         // struct section_64
	// maxLoadCommands bounds the load commands read (a Go executable's
	// are a few kilobytes).
	maxLoadCommands = 1 << 20
	// maxTextRead bounds what is read of __text to find the build ID, as
	// the go command's own reader does.
	maxTextRead = 32 << 10
)

var (
	goBuildPrefix = []byte("\xff Go build ID: \"")
	goBuildEnd    = []byte("\"\n \xff")
)

// machoSection is one section of a Mach-O file: its segment, name, and
// where it lies in the file.
type machoSection struct {
	seg, name string
	offset    uint32
	size      uint64
}

// machoFile is what the package reads of a Mach-O file: its sections.
type machoFile struct {
	sections []machoSection
}

// readMacho reads the sections of f, a 64-bit little-endian Mach-O
// file; ok is false if f is none, or its load commands are malformed.
func readMacho(f *os.File) (m machoFile, ok bool) {
	var h [machoHeaderLen]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return m, false
	}
	bo := binary.LittleEndian
	if bo.Uint32(h[:]) != machoMagic64 {
		return m, false
	}
	ncmds, sizeofcmds := bo.Uint32(h[16:]), bo.Uint32(h[20:])
	if sizeofcmds > maxLoadCommands {
		return m, false
	}
	cmds := make([]byte, sizeofcmds)
	if _, err := f.ReadAt(cmds, machoHeaderLen); err != nil {
		return m, false
	}
	for range ncmds {
		if len(cmds) < 8 {
			return m, false
		}
		cmd, size := bo.Uint32(cmds), bo.Uint32(cmds[4:])
		if size < 8 || uint64(size) > uint64(len(cmds)) {
			return m, false
		}
		if cmd == lcSegment64 {
			if size < machoSegmentLen {
				return m, false
			}
			nsects := uint64(bo.Uint32(cmds[64:]))
			if machoSegmentLen+nsects*machoSectionLen > uint64(size) {
				return m, false
			}
			for j := range nsects {
				s := cmds[machoSegmentLen+j*machoSectionLen:]
				m.sections = append(m.sections, machoSection{
					name: cString(s[:16]), seg: cString(s[16:32]),
					size: bo.Uint64(s[40:]), offset: bo.Uint32(s[48:]),
				})
			}
		}
		cmds = cmds[size:]
	}
	return m, true
}

// section returns the section named name, or nil.
func (m *machoFile) section(name string) *machoSection {
	for i := range m.sections {
		if m.sections[i].name == name {
			return &m.sections[i]
		}
	}
	return nil
}

// buildID returns the build ID at the start of the __text section of
// f, whose sections m holds, or "".
func (m *machoFile) buildID(f *os.File) string {
	s := m.section("__text")
	if s == nil || s.seg != "__TEXT" {
		return ""
	}
	buf := make([]byte, min(s.size, maxTextRead))
	n, _ := f.ReadAt(buf, int64(s.offset))
	buf = buf[:n]
	i := bytes.Index(buf, goBuildPrefix)
	if i < 0 {
		return ""
	}
	j := bytes.Index(buf[i+len(goBuildPrefix):], goBuildEnd)
	if j < 0 {
		return ""
	}
	quoted := buf[i+len(goBuildPrefix)-1 : i+len(goBuildPrefix)+j+1]
	id, err := strconv.Unquote(string(quoted))
	if err != nil {
		return ""
	}
	return id
}

// cString returns the NUL-padded name b holds.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
