package readmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/okf-tools/okf"
)

// magic starts every encoded snapshot; the digit is the format version.
const magic = "OKFSNAP3\n"

type header struct {
	Tenant  string        `json:"tenant"`
	Bundles []BundleRange `json:"bundles"`
}

// Encode returns the snapshot's bytes: the magic line, a length-prefixed
// JSON header (tenant and bundles), the number of concepts and each
// concept's JSON and facts, each length-prefixed, then the manifest and the
// concept text, each length-prefixed. Concepts are encoded one at a time so
// that hashing a large snapshot never holds its whole encoding. Equal
// snapshots encode to equal bytes.
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
		c := &s.Concepts[i]
		writeJSON(w, c)
		writeLen(w, len(c.facts))
		io.WriteString(w, c.facts)
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
		c := &s.Concepts[i]
		if err := decodeConcept(r.part(), c); err != nil || r.err != nil {
			return nil, fmt.Errorf("readmodel: snapshot concept %d: %w", i, errors.Join(r.err, err))
		}
		// The facts point into b, as the bodies do, rather than copy it: b
		// is the snapshot's for as long as the snapshot lives.
		part := r.part()
		c.facts = unsafe.String(unsafe.SliceData(part), len(part))
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
		if !within(c.Row, len(s.Manifest)) || !within(c.Body, len(text)) {
			return nil, fmt.Errorf("readmodel: concept %s/%s has ranges outside the snapshot", c.Bundle, c.ID)
		}
		// The facts are read on demand, so they are read once here, to
		// refuse a snapshot they do not fit rather than fail a reader.
		t, _, err := decodeFacts(c.facts)
		if err != nil {
			return nil, fmt.Errorf("readmodel: concept %s/%s facts: %w", c.Bundle, c.ID, err)
		}
		if !factsWithin(t, c.Body[1]-c.Body[0]) {
			return nil, fmt.Errorf("readmodel: concept %s/%s has ranges outside the snapshot", c.Bundle, c.ID)
		}
		c.text = text[c.Body[0]:c.Body[1]]
	}
	s.index()
	s.Digest = digest(b)
	return s, nil
}

// within reports whether a range lies inside n bytes.
func within(r [2]int, n int) bool { return 0 <= r[0] && r[0] <= r[1] && r[1] <= n }

// factsWithin reports whether the spans of a table's facts lie inside a
// body of n bytes; no facts lie inside any body.
func factsWithin(t *okf.TableFacts, n int) bool {
	if t == nil {
		return true
	}
	for _, col := range t.Columns {
		if !within(spanInts(col.Type), n) || !within(spanInts(col.Meaning), n) {
			return false
		}
	}
	return true
}

func spanInts(sp okf.Span) [2]int { return [2]int{int(sp[0]), int(sp[1])} }

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

// A concept's facts are encoded in binary rather than in its JSON: a
// table's columns are most of a snapshot's objects, and as JSON they grew
// a snapshot of 20,000 tables by 17 MB rather than 5 MB and made it twice as
// slow to decode. The part is empty for a concept without facts, else a tag
// and the fields in order: counts and offsets as uvarints, strings
// length-prefixed.
const (
	tableTag = 't'
	ruleTag  = 'r'
)

func appendFacts(b []byte, t *okf.TableFacts, r *okf.RuleFacts) []byte {
	switch {
	case t != nil:
		b = append(b, tableTag)
		b = binary.AppendUvarint(b, uint64(len(t.Columns)))
		for _, col := range t.Columns {
			b = appendString(b, col.Name)
			b = binary.AppendUvarint(b, uint64(col.Type[0]))
			b = binary.AppendUvarint(b, uint64(col.Type[1]))
			b = binary.AppendUvarint(b, uint64(col.Meaning[0]))
			b = binary.AppendUvarint(b, uint64(col.Meaning[1]))
			notNull := byte(0)
			if col.NotNull {
				notNull = 1
			}
			b = append(b, notNull)
		}
		b = appendStrings(b, t.PrimaryKey)
		b = binary.AppendUvarint(b, uint64(len(t.ForeignKeys)))
		for _, fk := range t.ForeignKeys {
			b = appendStrings(b, fk.Columns)
			b = appendString(b, fk.Table)
			b = appendString(b, fk.Concept)
			b = appendStrings(b, fk.RefColumns)
		}
		// Only tables that list values, JSON fields or personal data carry
		// them: the others encode, and hash, as they did before tables had
		// them.
		if len(t.Values) > 0 || len(t.Fields) > 0 || len(t.PersonalData) > 0 {
			b = binary.AppendUvarint(b, uint64(len(t.Values)))
			for _, v := range t.Values {
				b = appendString(b, v.Column)
				some := byte(0)
				if v.Some {
					some = 1
				}
				b = append(b, some)
				b = binary.AppendUvarint(b, uint64(len(v.Values)))
				for _, sp := range v.Values {
					b = binary.AppendUvarint(b, uint64(sp[0]))
					b = binary.AppendUvarint(b, uint64(sp[1]))
				}
			}
		}
		if len(t.Fields) > 0 || len(t.PersonalData) > 0 {
			b = binary.AppendUvarint(b, uint64(len(t.Fields)))
			for _, f := range t.Fields {
				b = appendString(b, f.Path)
				b = binary.AppendUvarint(b, uint64(f.Meaning[0]))
				b = binary.AppendUvarint(b, uint64(f.Meaning[1]))
			}
		}
		if len(t.PersonalData) > 0 {
			b = appendStrings(b, t.PersonalData)
		}
	case r != nil:
		b = append(b, ruleTag)
		b = binary.AppendUvarint(b, uint64(len(r.Uses)))
		for _, u := range r.Uses {
			b = appendString(b, u.Concept)
			b = appendStrings(b, u.Columns)
			b = appendStrings(b, u.Through)
		}
		b = appendStrings(b, r.DependsOn)
		// Likewise only rules that name JSON paths carry them.
		if slices.ContainsFunc(r.Uses, func(u okf.ColumnUse) bool { return len(u.Paths) > 0 }) {
			for _, u := range r.Uses {
				b = appendStrings(b, u.Paths)
			}
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

var (
	errTrailing   = errors.New("trailing bytes")
	errShortParam = errors.New("a query parameter with missing fields")
)

// decodeFacts decodes a facts part: table facts, rule facts or neither.
// Its strings share part.
func decodeFacts(part string) (*okf.TableFacts, *okf.RuleFacts, error) {
	if part == "" {
		return nil, nil, nil
	}
	var (
		t  *okf.TableFacts
		rf *okf.RuleFacts
	)
	r := &factsReader{rest: part[1:]}
	switch part[0] {
	case tableTag:
		t = &okf.TableFacts{}
		t.Columns = items(r, func(col *okf.Column) {
			col.Name = r.string()
			col.Type = okf.Span{r.offset(), r.offset()}
			col.Meaning = okf.Span{r.offset(), r.offset()}
			col.NotNull = r.byte() == 1
		})
		t.PrimaryKey = r.strings()
		t.ForeignKeys = items(r, func(fk *okf.ForeignKey) {
			fk.Columns, fk.Table, fk.Concept, fk.RefColumns = r.strings(), r.string(), r.string(), r.strings()
		})
		if r.rest != "" {
			t.Values = items(r, func(v *okf.ColumnValues) {
				v.Column = r.string()
				v.Some = r.byte() == 1
				v.Values = items(r, func(sp *okf.Span) { *sp = okf.Span{r.offset(), r.offset()} })
			})
		}
		if r.rest != "" {
			t.Fields = items(r, func(f *okf.Field) {
				f.Path = r.string()
				f.Meaning = okf.Span{r.offset(), r.offset()}
			})
		}
		if r.rest != "" {
			t.PersonalData = r.strings()
		}
	case queryTag:
		_, err := decodeQuery(part)
		return nil, nil, err
	case ruleTag:
		rf = &okf.RuleFacts{}
		rf.Uses = items(r, func(u *okf.ColumnUse) {
			u.Concept, u.Columns, u.Through = r.string(), r.strings(), r.strings()
		})
		rf.DependsOn = r.strings()
		if r.rest != "" {
			for i := range rf.Uses {
				rf.Uses[i].Paths = r.strings()
			}
		}
	default:
		return nil, nil, fmt.Errorf("unknown facts tag %q", part[0])
	}
	if r.err == nil && r.rest != "" {
		r.err = errTrailing
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return t, rf, nil
}

// factsReader takes the fields of a facts part off its front; the first
// problem sticks, and every later read returns zero.
type factsReader struct {
	rest string
	err  error
}

var errTruncatedFacts = errors.New("truncated")

func (r *factsReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < len(r.rest) && i < binary.MaxVarintLen64; i++ {
		c := r.rest[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.rest = r.rest[i+1:]
			return v
		}
	}
	r.err = errTruncatedFacts
	return 0
}

// count reads a number of items, each of which takes at least a byte.
func (r *factsReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.rest)) {
		r.err = errTruncatedFacts
		return 0
	}
	return int(n)
}

// offset reads an offset into a body; Decode checks it against the body.
func (r *factsReader) offset() uint32 {
	v := r.uvarint()
	if v > math.MaxUint32 {
		r.err = errors.New("offset out of range")
		return 0
	}
	return uint32(v)
}

func (r *factsReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.rest == "" {
		r.err = errTruncatedFacts
		return 0
	}
	c := r.rest[0]
	r.rest = r.rest[1:]
	return c
}

func (r *factsReader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := r.rest[:n]
	r.rest = r.rest[n:]
	return s
}

func (r *factsReader) strings() []string {
	return items(r, func(s *string) { *s = r.string() })
}

// items reads a count, then that many items with read; none is nil, as a
// build leaves it.
func items[T any](r *factsReader, read func(*T)) []T {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		read(&out[i])
	}
	return out
}
