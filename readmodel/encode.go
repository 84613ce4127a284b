package readmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// magic starts every encoded snapshot; the digit is the format version.
const magic = "OKFSNAP1\n"

type header struct {
	Tenant   string        `json:"tenant"`
	Bundles  []BundleRange `json:"bundles"`
	Concepts []Concept     `json:"concepts"`
}

// Encode returns the snapshot's bytes: the magic line, then three
// length-prefixed parts (a JSON header of bundles and concepts, the
// manifest, the concept text). Equal snapshots encode to equal bytes.
func (s *Snapshot) Encode() []byte {
	var buf bytes.Buffer
	buf.Grow(len(magic) + 24 + 256*len(s.Concepts) + len(s.Manifest) + s.textSize)
	s.encodeTo(&buf)
	return buf.Bytes()
}

// encodeTo writes the encoding to w, which must not fail (a buffer or a
// hash).
func (s *Snapshot) encodeTo(w io.Writer) {
	h, err := json.Marshal(header{Tenant: s.Tenant, Bundles: s.Bundles, Concepts: s.Concepts})
	if err != nil {
		panic("readmodel: encoding a snapshot header: " + err.Error()) // plain structs cannot fail
	}
	io.WriteString(w, magic)
	for _, part := range [][]byte{h, s.Manifest} {
		writeLen(w, len(part))
		w.Write(part)
	}
	writeLen(w, s.textSize)
	for i := range s.Concepts {
		w.Write(s.Concepts[i].text)
	}
}

func writeLen(w io.Writer, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	w.Write(b[:])
}

// computeDigest names the snapshot by the sha256 of its encoding, without
// holding the encoding in memory.
func (s *Snapshot) computeDigest() string {
	h := sha256.New()
	s.encodeTo(h)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Decode reads a snapshot written by Encode and checks it against its
// digest.
func Decode(b []byte) (*Snapshot, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("readmodel: not a snapshot (bad magic)")
	}
	rest := b[len(magic):]
	var parts [3][]byte
	for i := range parts {
		if len(rest) < 8 {
			return nil, errors.New("readmodel: truncated snapshot")
		}
		n := binary.BigEndian.Uint64(rest[:8])
		rest = rest[8:]
		if n > uint64(len(rest)) {
			return nil, errors.New("readmodel: truncated snapshot")
		}
		parts[i], rest = rest[:n], rest[n:]
	}
	if len(rest) != 0 {
		return nil, errors.New("readmodel: trailing bytes after snapshot")
	}
	var h header
	if err := json.Unmarshal(parts[0], &h); err != nil {
		return nil, fmt.Errorf("readmodel: snapshot header: %w", err)
	}
	s := &Snapshot{Tenant: h.Tenant, Bundles: h.Bundles, Concepts: h.Concepts, Manifest: parts[1], textSize: len(parts[2])}
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if c.Row[0] < 0 || c.Row[1] > len(s.Manifest) || c.Row[0] > c.Row[1] ||
			c.Body[0] < 0 || c.Body[1] > len(parts[2]) || c.Body[0] > c.Body[1] {
			return nil, fmt.Errorf("readmodel: concept %s/%s has ranges outside the snapshot", c.Bundle, c.ID)
		}
		c.text = parts[2][c.Body[0]:c.Body[1]]
	}
	s.index()
	s.Digest = digest(b)
	return s, nil
}
