// Package pgast is PostgreSQL's parse tree as the SQL guard reads it:
// libpg_query (through pg_query_go's cgo parser package) parses, scans and
// summarises SQL into protobuf bytes, and this package decodes them into
// plain Go types, named and shaped as pg_query_go's own.
//
// pg_query_go decodes with the protobuf runtime, whose reflection of the
// tree's 270 node types cost every process 0.5 MB and 0.8 ms at start and
// 2 ms at its first parse (issue 17). The types here are generated from
// pg_query_go's (tree.go, by gen), decode without reflection, and walk
// without it: every node is a Message whose children PgChildren yields in
// field order (protobuf's Range visited the same nodes, in an order it
// shuffles a little per build). pgast_test.go holds the trees and the
// walks equal to pg_query_go's on the corpora's SQL and by fuzzing.
package pgast

//go:generate go run ./gen tree.go

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/pganalyze/pg_query_go/v6/parser"
)

// Message is a node of the tree.
type Message interface {
	// PgName is the node's protobuf message name, e.g. "SelectStmt".
	PgName() string
	// PgLocation is the node's location field, a byte offset into the SQL,
	// or -1 when it has none.
	PgLocation() int
	// PgChildren calls yield with each node the message holds, in field
	// order, list elements in order; it stops, returning false, as soon
	// as yield does.
	PgChildren(yield func(Message) bool) bool
}

// Parse parses sql into its statements. A syntax error is a
// *parser.Error, with the position.
func Parse(sql string) (*ParseResult, error) { return decode[ParseResult](parser.ParseToProtobuf(sql)) }

// Scan splits sql into PostgreSQL's tokens.
func Scan(sql string) (*ScanResult, error) { return decode[ScanResult](parser.ScanToProtobuf(sql)) }

// Summary lists the tables, functions and statement kinds of sql;
// truncateLimit -1 leaves the query untruncated.
func Summary(sql string, truncateLimit int) (*SummaryResult, error) {
	return decode[SummaryResult](parser.SummaryToProtobuf(sql, truncateLimit))
}

// decode reads what libpg_query returned into a new T.
func decode[T any, P interface {
	*T
	unmarshal([]byte, int) error
}](b []byte, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	r := P(new(T))
	if err := r.unmarshal(b, 0); err != nil {
		return nil, err
	}
	return r, nil
}

// maxDepth is protobuf's default recursion limit, which pg_query_go's
// decoding had.
const maxDepth = 10000

var (
	errWire  = errors.New("pgast: malformed protobuf from libpg_query")
	errDepth = errors.New("pgast: parse tree nested deeper than 10000")
	errUTF8  = errors.New("string field contains invalid UTF-8") // protobuf's words
)

// The protobuf wire types the tree uses.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// consumeVarint reads a varint; n is -1 when b holds none.
func consumeVarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, -1
			}
			return v, i + 1
		}
	}
	return 0, -1
}

// consumeTag reads a field's number and wire type.
func consumeTag(b []byte) (num int, typ int, n int) {
	v, n := consumeVarint(b)
	if n < 0 || v>>3 == 0 || v>>3 > 1<<29-1 {
		return 0, 0, -1
	}
	return int(v >> 3), int(v & 7), n
}

func consumeFixed64(b []byte) (uint64, int) {
	if fixed(b, 8) < 0 {
		return 0, -1
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, 8
}

// consumeBytes reads a length-delimited value.
func consumeBytes(b []byte) ([]byte, int) {
	l, n := consumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(l)], n + int(l)
}

// skipValue skips the value of a field the tree does not know, or knows
// with another wire type, as protobuf does.
func skipValue(typ int, b []byte) int {
	switch typ {
	case wireVarint:
		_, n := consumeVarint(b)
		return n
	case wireBytes:
		_, n := consumeBytes(b)
		return n
	case wireFixed64:
		return fixed(b, 8)
	case wireFixed32:
		return fixed(b, 4)
	}
	return -1 // groups (3, 4) and 6, 7 are not in the tree
}

// fixed is the length of a fixed-size value of n bytes, or -1.
func fixed(b []byte, n int) int {
	if len(b) < n {
		return -1
	}
	return n
}

func text(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", errUTF8
	}
	return string(b), nil
}

// mapEntry reads a map<string, string> entry.
func mapEntry(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return "", "", errWire
		}
		b = b[n:]
		if typ != wireBytes || num != 1 && num != 2 {
			n = skipValue(typ, b)
			if n < 0 {
				return "", "", errWire
			}
			b = b[n:]
			continue
		}
		v, n := consumeBytes(b)
		if n < 0 {
			return "", "", errWire
		}
		b = b[n:]
		s, err := text(v)
		if err != nil {
			return "", "", err
		}
		if num == 1 {
			key = s
		} else {
			value = s
		}
	}
	return key, value, nil
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
