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
const magic = "OKFSNAP2\n"

type header struct {
	Tenant  string        `json:"tenant"`
	Bundles []BundleRange `json:"bundles"`
}

// Encode returns the snapshot's bytes: the magic line, a length-prefixed
// JSON header (tenant and bundles), the number of concepts and each
// concept's JSON, length-prefixed, then the manifest and the concept text,
// each length-prefixed. Concepts are encoded one at a time so that hashing
// a large snapshot never holds its whole encoding. Equal snapshots encode
// to equal bytes.
func (s *Snapshot) Encode() []byte {
	// Count the bytes first so the result is allocated once, at its size:
	// a large snapshot is tens of megabytes.
	var n countingWriter
	s.encodeTo(&n)
	buf := bytes.NewBuffer(make([]byte, 0, int(n)))
	s.encodeTo(buf)
	return buf.Bytes()
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// encodeTo writes the encoding to w, which must not fail (a buffer or a
// hash).
func (s *Snapshot) encodeTo(w io.Writer) {
	io.WriteString(w, magic)
	writeJSON(w, header{Tenant: s.Tenant, Bundles: s.Bundles})
	writeLen(w, len(s.Concepts))
	for i := range s.Concepts {
		writeJSON(w, &s.Concepts[i])
	}
	writeLen(w, len(s.Manifest))
	w.Write(s.Manifest)
	writeLen(w, s.textSize)
	for i := range s.Concepts {
		w.Write(s.Concepts[i].text)
	}
}

// writeJSON writes a value's JSON, length-prefixed.
func writeJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("readmodel: encoding a snapshot: " + err.Error()) // plain structs cannot fail
	}
	writeLen(w, len(b))
	w.Write(b)
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

// Decode reads a snapshot written by Encode. Its digest is computed from
// the bytes given.
func Decode(b []byte) (*Snapshot, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("readmodel: not a snapshot of this version (bad magic)")
	}
	r := &reader{rest: b[len(magic):]}
	var h header
	if err := json.Unmarshal(r.part(), &h); err != nil || r.err != nil {
		return nil, fmt.Errorf("readmodel: snapshot header: %w", errors.Join(r.err, err))
	}
	n := r.length()
	if r.err != nil || n > uint64(len(r.rest)) {
		return nil, errors.New("readmodel: truncated snapshot")
	}
	s := &Snapshot{Tenant: h.Tenant, Bundles: h.Bundles, Concepts: make([]Concept, n)}
	for i := range s.Concepts {
		if err := json.Unmarshal(r.part(), &s.Concepts[i]); err != nil || r.err != nil {
			return nil, fmt.Errorf("readmodel: snapshot concept %d: %w", i, errors.Join(r.err, err))
		}
	}
	s.Manifest = r.part()
	text := r.part()
	if r.err != nil {
		return nil, r.err
	}
	if len(r.rest) != 0 {
		return nil, errors.New("readmodel: trailing bytes after snapshot")
	}
	s.textSize = len(text)
	for i := range s.Concepts {
		c := &s.Concepts[i]
		if c.Row[0] < 0 || c.Row[1] > len(s.Manifest) || c.Row[0] > c.Row[1] ||
			c.Body[0] < 0 || c.Body[1] > len(text) || c.Body[0] > c.Body[1] {
			return nil, fmt.Errorf("readmodel: concept %s/%s has ranges outside the snapshot", c.Bundle, c.ID)
		}
		c.text = text[c.Body[0]:c.Body[1]]
	}
	s.index()
	s.Digest = digest(b)
	return s, nil
}

// reader takes length-prefixed parts off a snapshot's bytes.
type reader struct {
	rest []byte
	err  error
}

func (r *reader) length() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.rest) < 8 {
		r.err = errors.New("readmodel: truncated snapshot")
		return 0
	}
	n := binary.BigEndian.Uint64(r.rest[:8])
	r.rest = r.rest[8:]
	return n
}

func (r *reader) part() []byte {
	n := r.length()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.rest)) {
		r.err = errors.New("readmodel: truncated snapshot")
		return nil
	}
	p := r.rest[:n]
	r.rest = r.rest[n:]
	return p
}
