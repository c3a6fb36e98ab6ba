package gitrepo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// What an agent with write access to .git can forge, written the way git
// stores it, without git's help (git would name the object by its content).

// gitObject is git's encoding of an object: "type size\0content".
func gitObject(typ string, content []byte) []byte {
	return append([]byte(typ+" "+strconv.Itoa(len(content))+"\x00"), content...)
}

func deflate(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// forgeLoose writes a loose object named oid whose content is content
// (which does not hash to oid) into the object directory objects.
func forgeLoose(t testing.TB, objects, oid, typ string, content []byte) {
	t.Helper()
	dir := filepath.Join(objects, oid[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, oid[2:])
	os.Remove(p)
	if err := os.WriteFile(p, deflate(t, gitObject(typ, content)), 0o444); err != nil {
		t.Fatal(err)
	}
}

// forgePack writes a pack with one object of content under the name oid,
// and its version 2 index, into objects/pack.
func forgePack(t testing.TB, objects, oid, typ string, content []byte) {
	t.Helper()
	types := map[string]byte{"commit": 1, "tree": 2, "blob": 3, "tag": 4}
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(1))
	start := pack.Len()
	// Object header: type and size, little-endian base-128.
	size := uint64(len(content))
	c := types[typ]<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		pack.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	pack.WriteByte(c)
	pack.Write(deflate(t, content))
	crc := crc32.ChecksumIEEE(pack.Bytes()[start:])
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])

	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c'})
	binary.Write(&idx, binary.BigEndian, uint32(2))
	name, err := hex.DecodeString(oid)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 256; i++ {
		n := uint32(0)
		if i >= int(name[0]) {
			n = 1
		}
		binary.Write(&idx, binary.BigEndian, n)
	}
	idx.Write(name)
	binary.Write(&idx, binary.BigEndian, crc)
	binary.Write(&idx, binary.BigEndian, uint32(start))
	idx.Write(sum[:])
	isum := sha1.Sum(idx.Bytes())
	idx.Write(isum[:])

	dir := filepath.Join(objects, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:]))
	if err := os.WriteFile(base+".pack", pack.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".idx", idx.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// patchIndexOID rewrites the object id of path's entry in a version 2 or 3
// index, keeping its stat data, and fixes the index checksum: what an agent
// does to make git believe a changed file is the baseline's.
func patchIndexOID(t testing.TB, indexPath, path, oid string) {
	t.Helper()
	b, err := os.ReadFile(indexPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:4]) != "DIRC" {
		t.Fatalf("%s is not an index", indexPath)
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		t.Fatalf("index version %d: the helper patches versions 2 and 3", version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	off := 12
	name, _ := hex.DecodeString(oid)
	for i := 0; i < n; i++ {
		start := off
		flags := binary.BigEndian.Uint16(b[off+60:])
		off += 62
		if flags&0x4000 != 0 {
			off += 2
		}
		nul := bytes.IndexByte(b[off:], 0)
		p := string(b[off : off+nul])
		off = start + ((off - start + nul + 8) &^ 7)
		if p == path {
			copy(b[start+40:start+60], name)
			sum := sha1.Sum(b[:len(b)-20])
			copy(b[len(b)-20:], sum[:])
			if err := os.WriteFile(indexPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s has no entry %s", indexPath, path)
}

// hideInIndex is the agent's whole attack on .git/index: the changed file's
// mtime is set back (so git does not find the entry racily clean), its stat
// data recorded, and the entry's object id put back to the baseline's.
func hideInIndex(t testing.TB, dir, path, baseOID string) {
	t.Helper()
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(path)), past, past); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "update-index", "--", path)
	patchIndexOID(t, filepath.Join(dir, ".git", "index"), path, baseOID)
}

// TestForgeHelpersAreReal: git itself reads what the helpers forge (so a
// probe that uses them proves something).
func TestForgeHelpersAreReal(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"loose", "pack"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := newWorkRepo(t, nil)
			real := runGit(t, dir, "rev-parse", "HEAD:README.md")
			objects := filepath.Join(dir, ".git", "objects")
			if how == "loose" {
				forgeLoose(t, objects, real, "blob", []byte("forged\n"))
			} else {
				forgePack(t, objects, real, "blob", []byte("forged\n"))
			}
			if got := runGit(t, dir, "cat-file", "blob", real); got != "forged" {
				t.Fatalf("git reads %q under %s, want the forged content", got, real)
			}
		})
	}
	dir := newWorkRepo(t, nil)
	base := runGit(t, dir, "rev-parse", "HEAD:src/app_test.go")
	writeFiles(t, dir, map[string]string{"src/app_test.go": "package app\n"})
	hideInIndex(t, dir, "src/app_test.go", base)
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git still sees the change after the index patch:\n%s", st)
	}
}
