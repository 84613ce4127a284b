package duckdb

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"

	"github.com/okf-tools/okf/sqlguard"
)

// A result's values are read straight from DuckDB's vectors, chunk by
// chunk as the streaming result hands them out. Each value becomes one of
// sqlguard.Result's types: integers that fit as int64, floating point as
// float64, booleans, text, bytes, dates and timestamps as time.Time; every
// number that does not fit (DECIMAL, HUGEINT, a large UBIGINT) as its exact
// decimal text; intervals, times, UUIDs, enums, bit strings and every
// nested value (lists, arrays, structs, maps, unions) as text in DuckDB's
// own notation ([1, 2], {'a': 1}, {k=v}). Nothing is rounded.

// column decodes the values of one column's type.
type column struct {
	typ  bindings.Type
	name string // the type as DuckDB writes it, lower case
	// DECIMAL: its scale and the integer type that holds it; ENUM: the
	// integer type of its codes.
	scale    int
	internal bindings.Type
	dict     []string  // ENUM labels
	children []*column // LIST, ARRAY and MAP: one; STRUCT and UNION: each member (UNION's tag first)
	fields   []string  // STRUCT and UNION member names
	size     uint64    // ARRAY length
}

// newColumn reads a logical type into a decoder; the caller destroys lt.
func newColumn(lt bindings.LogicalType) (*column, error) {
	c := &column{typ: bindings.GetTypeId(lt)}
	child := func(t bindings.LogicalType) error {
		defer bindings.DestroyLogicalType(&t)
		cc, err := newColumn(t)
		if err == nil {
			c.children = append(c.children, cc)
		}
		return err
	}
	switch c.typ {
	case bindings.TypeDecimal:
		c.scale, c.internal = int(bindings.DecimalScale(lt)), bindings.DecimalInternalType(lt)
		c.name = fmt.Sprintf("decimal(%d,%d)", bindings.DecimalWidth(lt), c.scale)
	case bindings.TypeEnum:
		c.internal, c.name = bindings.EnumInternalType(lt), "enum"
		for i := range uint64(bindings.EnumDictionarySize(lt)) {
			c.dict = append(c.dict, bindings.EnumDictionaryValue(lt, bindings.IdxT(i)))
		}
	case bindings.TypeList:
		if err := child(bindings.ListTypeChildType(lt)); err != nil {
			return nil, err
		}
		c.name = c.children[0].name + "[]"
	case bindings.TypeArray:
		if err := child(bindings.ArrayTypeChildType(lt)); err != nil {
			return nil, err
		}
		c.size = uint64(bindings.ArrayTypeArraySize(lt))
		c.name = fmt.Sprintf("%s[%d]", c.children[0].name, c.size)
	case bindings.TypeMap:
		// A map is a list of {key, value} structs.
		key, value := bindings.MapTypeKeyType(lt), bindings.MapTypeValueType(lt)
		k, err := newColumn(key)
		bindings.DestroyLogicalType(&key)
		if err != nil {
			bindings.DestroyLogicalType(&value)
			return nil, err
		}
		v, err := newColumn(value)
		bindings.DestroyLogicalType(&value)
		if err != nil {
			return nil, err
		}
		entry := &column{typ: bindings.TypeStruct, children: []*column{k, v}, fields: []string{"key", "value"}}
		c.children = []*column{entry}
		c.name = fmt.Sprintf("map(%s, %s)", k.name, v.name)
	case bindings.TypeStruct, bindings.TypeUnion:
		count, member, kind := bindings.StructTypeChildCount, bindings.StructTypeChildName, "struct"
		memberType := bindings.StructTypeChildType
		if c.typ == bindings.TypeUnion {
			count, member, kind = bindings.UnionTypeMemberCount, bindings.UnionTypeMemberName, "union"
			memberType = bindings.UnionTypeMemberType
			// The vector is a struct whose first child is the tag.
			c.children = append(c.children, &column{typ: bindings.TypeUTinyInt, name: "utinyint"})
		}
		var parts []string
		for i := range uint64(count(lt)) {
			name := member(lt, bindings.IdxT(i))
			if err := child(memberType(lt, bindings.IdxT(i))); err != nil {
				return nil, err
			}
			c.fields = append(c.fields, name)
			parts = append(parts, name+" "+c.children[len(c.children)-1].name)
		}
		c.name = kind + "(" + strings.Join(parts, ", ") + ")"
	default:
		name, ok := typeName(c.typ)
		if !ok {
			return nil, fmt.Errorf("DuckDB type %d", c.typ)
		}
		c.name = name
	}
	if alias := bindings.LogicalTypeGetAlias(lt); alias != "" {
		c.name = strings.ToLower(alias)
	}
	return c, nil
}

// typeName names the types read without parameters.
func typeName(t bindings.Type) (string, bool) {
	switch t {
	case bindings.TypeBoolean:
		return "boolean", true
	case bindings.TypeTinyInt:
		return "tinyint", true
	case bindings.TypeSmallInt:
		return "smallint", true
	case bindings.TypeInteger:
		return "integer", true
	case bindings.TypeBigInt:
		return "bigint", true
	case bindings.TypeUTinyInt:
		return "utinyint", true
	case bindings.TypeUSmallInt:
		return "usmallint", true
	case bindings.TypeUInteger:
		return "uinteger", true
	case bindings.TypeUBigInt:
		return "ubigint", true
	case bindings.TypeFloat:
		return "float", true
	case bindings.TypeDouble:
		return "double", true
	case bindings.TypeTimestamp:
		return "timestamp", true
	case bindings.TypeDate:
		return "date", true
	case bindings.TypeTime:
		return "time", true
	case bindings.TypeInterval:
		return "interval", true
	case bindings.TypeHugeInt:
		return "hugeint", true
	case bindings.TypeUHugeInt:
		return "uhugeint", true
	case bindings.TypeVarchar:
		return "varchar", true
	case bindings.TypeBlob:
		return "blob", true
	case bindings.TypeTimestampS:
		return "timestamp_s", true
	case bindings.TypeTimestampMS:
		return "timestamp_ms", true
	case bindings.TypeTimestampNS:
		return "timestamp_ns", true
	case bindings.TypeUUID:
		return "uuid", true
	case bindings.TypeBit:
		return "bit", true
	case bindings.TypeTimeTZ:
		return "time with time zone", true
	case bindings.TypeTimestampTZ:
		return "timestamp with time zone", true
	case bindings.TypeBigNum:
		return "bignum", true
	case bindings.TypeSQLNull:
		return "null", true
	case bindings.TypeTimeNS:
		return "time_ns", true
	}
	return "", false
}

// vector is one column of a chunk, its children read once per chunk.
type vector struct {
	data, validity unsafe.Pointer
	children       []vector
}

func newVector(c *column, v bindings.Vector) vector {
	out := vector{data: bindings.VectorGetData(v), validity: bindings.VectorGetValidity(v)}
	switch c.typ {
	case bindings.TypeList, bindings.TypeMap:
		out.children = []vector{newVector(c.children[0], bindings.ListVectorGetChild(v))}
	case bindings.TypeArray:
		out.children = []vector{newVector(c.children[0], bindings.ArrayVectorGetChild(v))}
	case bindings.TypeStruct, bindings.TypeUnion:
		for i, cc := range c.children {
			out.children = append(out.children, newVector(cc, bindings.StructVectorGetChild(v, bindings.IdxT(i))))
		}
	}
	return out
}

func (v *vector) null(row uint64) bool {
	if v.validity == nil {
		return false
	}
	mask := *(*uint64)(unsafe.Add(v.validity, row/64*8))
	return mask&(1<<(row%64)) == 0
}

func at[T any](v *vector, row uint64) T {
	var zero T
	return *(*T)(unsafe.Add(v.data, uintptr(row)*unsafe.Sizeof(zero)))
}

// stringAt reads a duckdb_string_t: its length, then up to 12 bytes inline
// or a prefix and a pointer. The bytes stay DuckDB's: callers copy them.
func stringAt(v *vector, row uint64) []byte {
	p := unsafe.Add(v.data, uintptr(row)*16)
	n := *(*uint32)(p)
	if n <= 12 {
		return unsafe.Slice((*byte)(unsafe.Add(p, 4)), n)
	}
	return unsafe.Slice(*(**byte)(unsafe.Add(p, 8)), n)
}

type listEntry struct{ offset, length uint64 }

type interval struct {
	months, days int32
	micros       int64
}

type hugeint struct {
	lower uint64
	upper int64
}

type uhugeint struct{ lower, upper uint64 }

// tooBig is a value larger than sqlguard.MaxValueBytes.
func tooBig() error {
	return &sqlguard.Error{Layer: sqlguard.LayerLimits, Refused: true, Code: "row_too_big",
		Message: fmt.Sprintf("a value of the result is larger than %d MiB", sqlguard.MaxValueBytes>>20),
		Hint:    "Select fewer or shorter columns (substring, length) instead of whole large values."}
}

// value reads row of v as a Result value, text and bytes within sink's
// budget.
func (c *column) value(v *vector, row uint64, sink *sqlguard.RowSink) (any, error) {
	if v.null(row) || c.typ == bindings.TypeSQLNull {
		return nil, nil
	}
	switch c.typ {
	case bindings.TypeBoolean:
		return at[bool](v, row), nil
	case bindings.TypeTinyInt:
		return int64(at[int8](v, row)), nil
	case bindings.TypeSmallInt:
		return int64(at[int16](v, row)), nil
	case bindings.TypeInteger:
		return int64(at[int32](v, row)), nil
	case bindings.TypeBigInt:
		return at[int64](v, row), nil
	case bindings.TypeUTinyInt:
		return int64(at[uint8](v, row)), nil
	case bindings.TypeUSmallInt:
		return int64(at[uint16](v, row)), nil
	case bindings.TypeUInteger:
		return int64(at[uint32](v, row)), nil
	case bindings.TypeUBigInt:
		if u := at[uint64](v, row); u <= math.MaxInt64 {
			return int64(u), nil
		}
	case bindings.TypeFloat:
		// The float64 nearest the float32's shortest decimal: 0.1, not
		// 0.10000000149011612.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(at[float32](v, row)), 'g', -1, 32), 64)
		return f, nil
	case bindings.TypeDouble:
		return at[float64](v, row), nil
	case bindings.TypeVarchar:
		b := stringAt(v, row)
		if len(b) > sqlguard.MaxValueBytes {
			return nil, tooBig()
		}
		return sink.Text(b), nil
	case bindings.TypeBlob:
		b := stringAt(v, row)
		if len(b) > sqlguard.MaxValueBytes {
			return nil, tooBig()
		}
		return sink.Blob(b), nil
	case bindings.TypeDate:
		if t, ok := dateTime(at[int32](v, row)); ok {
			return t, nil
		}
	case bindings.TypeTimestamp, bindings.TypeTimestampTZ, bindings.TypeTimestampS, bindings.TypeTimestampMS, bindings.TypeTimestampNS:
		if t, ok := c.timestamp(at[int64](v, row)); ok {
			return t, nil
		}
	}
	// Everything else is text, built no longer than the budget lets the
	// sink keep (it cuts the text and counts the cut).
	w := &textWriter{limit: sink.Budget() + 4}
	c.write(w, v, row, false)
	return sink.Text(w.b), nil
}

// textWriter collects text up to a limit; beyond it, writes are dropped.
type textWriter struct {
	b     []byte
	limit int
	over  bool
}

func (w *textWriter) WriteString(s string) {
	if len(w.b)+len(s) > w.limit {
		s = s[:max(w.limit-len(w.b), 0)]
		w.over = true
	}
	w.b = append(w.b, s...)
}

func (w *textWriter) full() bool { return len(w.b) >= w.limit }

// write writes row of v as DuckDB writes it when cast to VARCHAR; nested
// says the value is inside a list, struct or map, where text is quoted.
func (c *column) write(w *textWriter, v *vector, row uint64, nested bool) {
	if w.full() {
		w.over = true
		return
	}
	if v.null(row) || c.typ == bindings.TypeSQLNull {
		w.WriteString("NULL")
		return
	}
	switch c.typ {
	case bindings.TypeBoolean:
		w.WriteString(strconv.FormatBool(at[bool](v, row)))
	case bindings.TypeTinyInt:
		w.WriteString(strconv.FormatInt(int64(at[int8](v, row)), 10))
	case bindings.TypeSmallInt:
		w.WriteString(strconv.FormatInt(int64(at[int16](v, row)), 10))
	case bindings.TypeInteger:
		w.WriteString(strconv.FormatInt(int64(at[int32](v, row)), 10))
	case bindings.TypeBigInt:
		w.WriteString(strconv.FormatInt(at[int64](v, row), 10))
	case bindings.TypeUTinyInt:
		w.WriteString(strconv.FormatUint(uint64(at[uint8](v, row)), 10))
	case bindings.TypeUSmallInt:
		w.WriteString(strconv.FormatUint(uint64(at[uint16](v, row)), 10))
	case bindings.TypeUInteger:
		w.WriteString(strconv.FormatUint(uint64(at[uint32](v, row)), 10))
	case bindings.TypeUBigInt:
		w.WriteString(strconv.FormatUint(at[uint64](v, row), 10))
	case bindings.TypeHugeInt:
		w.WriteString(hugeintInt(at[hugeint](v, row)).String())
	case bindings.TypeUHugeInt:
		h := at[uhugeint](v, row)
		w.WriteString(new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(h.upper), 64), new(big.Int).SetUint64(h.lower)).String())
	case bindings.TypeFloat:
		w.WriteString(sqlguard.FormatFloat(float64(at[float32](v, row))))
	case bindings.TypeDouble:
		w.WriteString(sqlguard.FormatFloat(at[float64](v, row)))
	case bindings.TypeDecimal:
		w.WriteString(c.decimal(v, row))
	case bindings.TypeVarchar:
		s := stringAt(v, row)
		if nested {
			writeQuoted(w, s)
		} else {
			w.WriteString(unsafe.String(unsafe.SliceData(s), len(s)))
		}
	case bindings.TypeBlob:
		w.WriteString(blobText(stringAt(v, row)))
	case bindings.TypeBit:
		w.WriteString(bitText(stringAt(v, row)))
	case bindings.TypeBigNum:
		w.WriteString(bignumText(stringAt(v, row)))
	case bindings.TypeUUID:
		w.WriteString(uuidText(at[hugeint](v, row)))
	case bindings.TypeEnum:
		var code uint64
		switch c.internal {
		case bindings.TypeUTinyInt:
			code = uint64(at[uint8](v, row))
		case bindings.TypeUSmallInt:
			code = uint64(at[uint16](v, row))
		default:
			code = uint64(at[uint32](v, row))
		}
		if code < uint64(len(c.dict)) {
			if nested {
				writeQuoted(w, []byte(c.dict[code]))
			} else {
				w.WriteString(c.dict[code])
			}
		}
	case bindings.TypeDate:
		w.WriteString(dateText(at[int32](v, row)))
	case bindings.TypeTime:
		w.WriteString(clockText(at[int64](v, row)*1000, 6))
	case bindings.TypeTimeNS:
		w.WriteString(clockText(at[int64](v, row), 9))
	case bindings.TypeTimeTZ:
		w.WriteString(timeTZText(at[uint64](v, row)))
	case bindings.TypeTimestamp, bindings.TypeTimestampS, bindings.TypeTimestampMS, bindings.TypeTimestampNS, bindings.TypeTimestampTZ:
		w.WriteString(c.timestampText(at[int64](v, row)))
	case bindings.TypeInterval:
		w.WriteString(intervalText(at[interval](v, row)))
	case bindings.TypeList, bindings.TypeMap:
		e := at[listEntry](v, row)
		c.writeItems(w, &v.children[0], e.offset, e.length)
	case bindings.TypeArray:
		c.writeItems(w, &v.children[0], row*c.size, c.size)
	case bindings.TypeStruct:
		w.WriteString("{")
		for i, f := range c.fields {
			if i > 0 {
				w.WriteString(", ")
			}
			writeQuoted(w, []byte(f))
			w.WriteString(": ")
			c.children[i].write(w, &v.children[i], row, true)
		}
		w.WriteString("}")
	case bindings.TypeUnion:
		tag := uint64(at[uint8](&v.children[0], row))
		if int(tag)+1 < len(c.children) {
			c.children[tag+1].write(w, &v.children[tag+1], row, nested)
		}
	}
}

// writeItems writes a list's or map's items: [a, b] or {k=v, k2=v2}.
func (c *column) writeItems(w *textWriter, items *vector, offset, n uint64) {
	item := c.children[0]
	if c.typ == bindings.TypeMap {
		w.WriteString("{")
		for i := range n {
			if i > 0 {
				w.WriteString(", ")
			}
			if w.full() {
				w.over = true
				return
			}
			item.children[0].write(w, &items.children[0], offset+i, true)
			w.WriteString("=")
			item.children[1].write(w, &items.children[1], offset+i, true)
		}
		w.WriteString("}")
		return
	}
	w.WriteString("[")
	for i := range n {
		if i > 0 {
			w.WriteString(", ")
		}
		if w.full() {
			w.over = true
			return
		}
		item.write(w, items, offset+i, true)
	}
	w.WriteString("]")
}

// writeQuoted writes text inside a nested value as DuckDB does: in single
// quotes, with quotes and backslashes escaped by a backslash.
func writeQuoted(w *textWriter, s []byte) {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range string(s) {
		if r == '\'' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	w.WriteString(b.String())
}

func hugeintInt(h hugeint) *big.Int {
	n := new(big.Int).Lsh(big.NewInt(h.upper), 64)
	return n.Add(n, new(big.Int).SetUint64(h.lower))
}

// decimal writes a DECIMAL's exact value with all its scale's digits.
func (c *column) decimal(v *vector, row uint64) string {
	var n *big.Int
	switch c.internal {
	case bindings.TypeSmallInt:
		n = big.NewInt(int64(at[int16](v, row)))
	case bindings.TypeInteger:
		n = big.NewInt(int64(at[int32](v, row)))
	case bindings.TypeBigInt:
		n = big.NewInt(at[int64](v, row))
	default:
		n = hugeintInt(at[hugeint](v, row))
	}
	s := n.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if c.scale > 0 {
		if len(s) <= c.scale {
			s = strings.Repeat("0", c.scale-len(s)+1) + s
		}
		s = s[:len(s)-c.scale] + "." + s[len(s)-c.scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// DuckDB's infinite dates and timestamps.
const (
	dateInfinity      = math.MaxInt32
	dateNegInfinity   = -math.MaxInt32
	stampInfinity     = math.MaxInt64
	stampNegInfinity  = -math.MaxInt64
	microsPerDay      = 86400 * 1e6
	maxTimeYear       = 9999
	minTimeYear       = 1
	timeTZOffsetLimit = 16*60*60 - 1
)

// dateTime is a DATE as a time.Time, for years 1 to 9999; others are text.
func dateTime(days int32) (time.Time, bool) {
	if days == dateInfinity || days == dateNegInfinity {
		return time.Time{}, false
	}
	t := time.Unix(int64(days)*86400, 0).UTC()
	return t, t.Year() >= minTimeYear && t.Year() <= maxTimeYear
}

func dateText(days int32) string {
	switch days {
	case dateInfinity:
		return "infinity"
	case dateNegInfinity:
		return "-infinity"
	}
	return yearText(time.Unix(int64(days)*86400, 0).UTC(), "2006-01-02"[4:])
}

// yearText writes t's date as DuckDB does: a four-digit year, and years
// before 1 as "(BC)".
func yearText(t time.Time, rest string) string {
	y := t.Year()
	if y <= 0 {
		return fmt.Sprintf("%04d%s (BC)", 1-y, t.Format(rest))
	}
	return fmt.Sprintf("%04d%s", y, t.Format(rest))
}

// timestamp is a timestamp as a time.Time in UTC, for years 1 to 9999.
func (c *column) timestamp(n int64) (time.Time, bool) {
	if n == stampInfinity || n == stampNegInfinity {
		return time.Time{}, false
	}
	var t time.Time
	switch c.typ {
	case bindings.TypeTimestampS:
		t = time.Unix(n, 0)
	case bindings.TypeTimestampMS:
		t = time.UnixMilli(n)
	case bindings.TypeTimestampNS:
		t = time.Unix(0, n)
	default:
		t = time.UnixMicro(n)
	}
	t = t.UTC()
	return t, t.Year() >= minTimeYear && t.Year() <= maxTimeYear
}

func (c *column) timestampText(n int64) string {
	switch n {
	case stampInfinity:
		return "infinity"
	case stampNegInfinity:
		return "-infinity"
	}
	t, _ := c.timestamp(n)
	digits := 6
	if c.typ == bindings.TypeTimestampNS {
		digits = 9
	}
	day := t.Truncate(24 * time.Hour)
	s := yearText(t, "-01-02") + " " + clockText(t.Sub(day).Nanoseconds(), digits)
	if c.typ == bindings.TypeTimestampTZ {
		s += "+00"
	}
	return s
}

// clockText writes a time of day in nanoseconds as HH:MM:SS and its
// fraction, to digits places, without trailing zeros.
func clockText(nanos int64, digits int) string {
	neg := nanos < 0
	if neg {
		nanos = -nanos
	}
	h, m, s := nanos/3.6e12, nanos/6e10%60, nanos/1e9%60
	frac := nanos % 1e9
	out := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if digits == 6 {
		frac /= 1000
	}
	if frac != 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%0*d", digits, frac), "0")
	}
	if neg {
		out = "-" + out
	}
	return out
}

// timeTZText writes a TIME WITH TIME ZONE: 40 bits of microseconds, then
// 24 of the offset, stored as the limit minus the offset in seconds.
func timeTZText(bits uint64) string {
	micros := int64(bits >> 24)
	offset := timeTZOffsetLimit - int64(bits&0xFFFFFF)
	sign := "+"
	if offset < 0 {
		sign, offset = "-", -offset
	}
	s := clockText(micros*1000, 6) + sign + fmt.Sprintf("%02d", offset/3600)
	if rest := offset % 3600; rest != 0 {
		s += fmt.Sprintf(":%02d", rest/60)
		if rest%60 != 0 {
			s += fmt.Sprintf(":%02d", rest%60)
		}
	}
	return s
}

// intervalText writes an interval as DuckDB does: years, months and days
// by name, then the time of day.
func intervalText(iv interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n == 0 {
			return
		}
		if n != 1 && n != -1 {
			name += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	unit(int64(iv.months/12), "year")
	unit(int64(iv.months%12), "month")
	unit(int64(iv.days), "day")
	if iv.micros != 0 || len(parts) == 0 {
		parts = append(parts, clockText(iv.micros*1000, 6))
	}
	return strings.Join(parts, " ")
}

// uuidText writes a UUID, stored as a hugeint with its top bit flipped so
// that UUIDs sort as their text does.
func uuidText(h hugeint) string {
	upper := uint64(h.upper) ^ (1 << 63)
	var b [16]byte
	for i := range 8 {
		b[i] = byte(upper >> (56 - 8*i))
		b[8+i] = byte(h.lower >> (56 - 8*i))
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// blobText writes bytes as DuckDB does: printable ASCII as is, the rest as
// \xHH.
func blobText(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 32 && c <= 126 && c != '\\' && c != '\'' && c != '"' {
			s.WriteByte(c)
		} else {
			fmt.Fprintf(&s, `\x%02X`, c)
		}
	}
	return s.String()
}

// bitText writes a bit string: its first byte counts the padding bits of
// the second.
func bitText(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var s strings.Builder
	for i, c := range b[1:] {
		from := 7
		if i == 0 {
			from = 7 - int(b[0])
		}
		for bit := from; bit >= 0; bit-- {
			s.WriteByte('0' + c>>bit&1)
		}
	}
	return s.String()
}

// bignumText writes a BIGNUM: a three-byte header whose top bit is set
// for positive numbers, then the magnitude big-endian, every byte
// complemented for negative ones.
func bignumText(b []byte) string {
	if len(b) < 4 {
		return "0"
	}
	mag := append([]byte(nil), b[3:]...)
	if b[0]&0x80 == 0 {
		for i := range mag {
			mag[i] = ^mag[i]
		}
		return new(big.Int).Neg(new(big.Int).SetBytes(mag)).String()
	}
	return new(big.Int).SetBytes(mag).String()
}
