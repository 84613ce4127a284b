package readmodel

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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
	h, err := json.Marshal(header{Tenant: s.Tenant, Bundles: s.Bundles, Concepts: s.Concepts})
	if err != nil {
		panic("readmodel: encoding a snapshot header: " + err.Error()) // plain structs cannot fail
	}
	var buf bytes.Buffer
	buf.Grow(len(magic) + 24 + len(h) + len(s.Manifest) + len(s.Text))
	buf.WriteString(magic)
	for _, part := range [][]byte{h, s.Manifest, s.Text} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		buf.Write(n[:])
		buf.Write(part)
	}
	return buf.Bytes()
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
	s := &Snapshot{Tenant: h.Tenant, Bundles: h.Bundles, Concepts: h.Concepts, Manifest: parts[1], Text: parts[2]}
	for _, c := range s.Concepts {
		if c.Row[0] < 0 || c.Row[1] > len(s.Manifest) || c.Row[0] > c.Row[1] ||
			c.Body[0] < 0 || c.Body[1] > len(s.Text) || c.Body[0] > c.Body[1] {
			return nil, fmt.Errorf("readmodel: concept %s/%s has ranges outside the snapshot", c.Bundle, c.ID)
		}
	}
	s.index()
	s.Digest = digest(b)
	return s, nil
}
