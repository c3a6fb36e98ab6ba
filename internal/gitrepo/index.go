package gitrepo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// The index is written by the agent as much as by the harness. Two of its
// entry flags make git stop looking at a file: "assume unchanged" and
// "skip worktree". An agent that deletes a test and sets either flag on it
// would pass the check on a work tree whose change never shows in the diff
// nor in the commit. scanIndex reads the flags (and the .gitattributes files
// the index lists) without starting a process.

// maxIndexPath bounds a path in a version 4 index (git's own paths are far
// shorter); it keeps a hostile index from costing quadratic time.
const maxIndexPath = 1 << 16

var gitattributes = []byte("/.gitattributes")

// errSplitIndex says the index is split; its entries live in two files.
var errSplitIndex = errors.New("split index")

// indexScan is what the harness needs to know about an index.
type indexScan struct {
	entries      int
	assumeValid  []string // entries marked "assume unchanged"
	skipWorktree []string // entries marked "skip worktree"
	attributes   []string // paths of .gitattributes files in the index
	excluded     []string // entries under a prefix that is never committed
}

// scanIndex parses a git index (versions 2, 3 and 4). hashLen is 20 (SHA-1)
// or 32 (SHA-256). prefixes are path prefixes (with a trailing slash) whose
// entries are reported in excluded.
func scanIndex(b []byte, hashLen int, prefixes []string) (indexScan, error) {
	var s indexScan
	if len(b) < 12+hashLen {
		return s, errors.New("index too short")
	}
	if string(b[:4]) != "DIRC" {
		return s, errors.New("index signature is not DIRC")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return s, fmt.Errorf("index version %d is not supported", version)
	}
	n := binary.BigEndian.Uint32(b[8:12])
	end := len(b) - hashLen // trailing checksum
	off := 12
	var prev []byte
	for i := uint32(0); i < n; i++ {
		start := off
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return s, fmt.Errorf("index entry %d truncated", i)
		}
		flags := binary.BigEndian.Uint16(b[off+40+hashLen:])
		off += fixed
		var ext uint16
		if flags&0x4000 != 0 {
			if version < 3 {
				return s, fmt.Errorf("index entry %d has extended flags in a version 2 index", i)
			}
			if off+2 > end {
				return s, fmt.Errorf("index entry %d truncated", i)
			}
			ext = binary.BigEndian.Uint16(b[off:])
			off += 2
		}
		var name []byte
		if version == 4 {
			// The path is the previous one, minus strip bytes, plus a suffix.
			strip, w := decodeVarint(b[off:end])
			if w <= 0 {
				return s, fmt.Errorf("index entry %d: bad path prefix length", i)
			}
			off += w
			if strip > uint64(len(prev)) {
				return s, fmt.Errorf("index entry %d: path prefix length %d exceeds the previous path", i, strip)
			}
			nul := bytes.IndexByte(b[off:end], 0)
			if nul < 0 {
				return s, fmt.Errorf("index entry %d: path not terminated", i)
			}
			prev = append(prev[:len(prev)-int(strip)], b[off:off+nul]...)
			if len(prev) > maxIndexPath {
				return s, fmt.Errorf("index entry %d: path longer than %d bytes", i, maxIndexPath)
			}
			name = prev
			off += nul + 1
		} else {
			nul := bytes.IndexByte(b[off:end], 0)
			if nul < 0 {
				return s, fmt.Errorf("index entry %d: path not terminated", i)
			}
			name = b[off : off+nul]
			// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
			size := (off - start + nul + 8) &^ 7
			off = start + size
			if off > end {
				return s, fmt.Errorf("index entry %d truncated", i)
			}
		}
		s.entries++
		if flags&0x8000 != 0 {
			s.assumeValid = append(s.assumeValid, string(name))
		}
		if ext&0x4000 != 0 {
			s.skipWorktree = append(s.skipWorktree, string(name))
		}
		if bytes.Equal(name, gitattributes[1:]) || bytes.HasSuffix(name, gitattributes) {
			s.attributes = append(s.attributes, string(name))
		}
		for _, p := range prefixes {
			if bytes.HasPrefix(name, []byte(p)) {
				s.excluded = append(s.excluded, string(name))
				break
			}
		}
	}
	// Extensions: a four-byte signature and a four-byte size each.
	for off+8 <= end {
		sig := string(b[off : off+4])
		size := binary.BigEndian.Uint32(b[off+4:])
		if sig == "link" {
			return s, errSplitIndex
		}
		if uint64(off)+8+uint64(size) > uint64(end) {
			return s, fmt.Errorf("index extension %q truncated", sig)
		}
		off += 8 + int(size)
	}
	return s, nil
}

// decodeVarint decodes git's offset varint (varint.c); w is the number of
// bytes read, 0 when the input is truncated or overflows.
func decodeVarint(b []byte) (v uint64, w int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	w = 1
	v = uint64(c & 127)
	for c&128 != 0 {
		if w >= len(b) || v >= 1<<56 {
			return 0, 0
		}
		v++
		c = b[w]
		w++
		v = v<<7 + uint64(c&127)
	}
	return v, w
}

// parseLsFilesV reads `git ls-files -v -z` (used for split indexes): a tag,
// a space and the path per record; a lowercase tag means "assume
// unchanged", S means "skip worktree".
func parseLsFilesV(out []byte, prefixes []string) indexScan {
	var s indexScan
	for _, rec := range splitZ(out) {
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		tag, path := rec[0], rec[2:]
		s.entries++
		if tag >= 'a' && tag <= 'z' {
			s.assumeValid = append(s.assumeValid, path)
		}
		if tag == 'S' || tag == 's' {
			s.skipWorktree = append(s.skipWorktree, path)
		}
		if path == ".gitattributes" || strings.HasSuffix(path, "/.gitattributes") {
			s.attributes = append(s.attributes, path)
		}
		for _, p := range prefixes {
			if strings.HasPrefix(path, p) {
				s.excluded = append(s.excluded, path)
				break
			}
		}
	}
	return s
}
