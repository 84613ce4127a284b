package sqlguard

import (
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Column describes one result column.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"` // the database's type name, lower case; "" when unknown
}

// Result is what a query returned. Rows hold typed values: nil, int64,
// float64, string (also decimals and anything without a closer Go type),
// bool, time.Time or []byte.
type Result struct {
	Columns []Column `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// Total is the number of rows the query produced, when known.
	Total int `json:"total"`
	// TotalKnown is false when counting stopped at the count limit; Total
	// is then a lower bound.
	TotalKnown bool `json:"total_known"`
	// CutValues counts the values cut to fit the result's byte bounds
	// (each ends with "…").
	CutValues int `json:"cut_values,omitempty"`
	// MaskedColumns name the result's columns whose values derive from a
	// masked column, and MaskedCells counts the values they show as
	// Mask.
	MaskedColumns []string `json:"masked_columns,omitempty"`
	MaskedCells   int      `json:"masked_cells,omitempty"`
	// Elapsed is how long the query took; the audit log has it too. It
	// stays out of the JSON, which is the same bytes for the same rows.
	Elapsed time.Duration `json:"-"`
}

// Truncated reports whether rows were left out.
func (r *Result) Truncated() bool { return !r.TotalKnown || r.Total > len(r.Rows) }

// maxCellRunes is the widest cell of the text for a model.
const maxCellRunes = 100

// Text renders the result for a model: column names, up to shown rows
// separated by " | ", then "(N rows)" or "(N of M rows)". The whole text
// stays within MaxTextBytes, however many columns and rows there are.
func (r *Result) Text(shown int) string {
	if len(r.Columns) == 0 {
		return "The statement returned no columns."
	}
	var b strings.Builder
	names := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		names[i] = cleanCell(c.Name)
	}
	header := strings.Join(names, " | ")
	if len(header) > MaxTextBytes/2 {
		header = cutString(header, MaxTextBytes/2)
	}
	b.WriteString(header + "\n")
	n, cut := 0, false
	for _, row := range r.Rows[:min(shown, len(r.Rows))] {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = Cell(v)
		}
		line := strings.Join(cells, " | ") + "\n"
		if b.Len()+len(line) > MaxTextBytes {
			cut = true
			break
		}
		b.WriteString(line)
		n++
	}
	switch {
	case cut && r.TotalKnown:
		fmt.Fprintf(&b, "(%d of %d rows; the text stops at %d KiB)", n, r.Total, MaxTextBytes>>10)
	case cut:
		fmt.Fprintf(&b, "(%d of more than %d rows; the text stops at %d KiB)", n, r.Total, MaxTextBytes>>10)
	case !r.TotalKnown:
		fmt.Fprintf(&b, "(%d of more than %d rows)", n, r.Total)
	case r.Total > n:
		fmt.Fprintf(&b, "(%d of %d rows)", n, r.Total)
	case r.Total == 1:
		b.WriteString("(1 row)")
	default:
		fmt.Fprintf(&b, "(%d rows)", r.Total)
	}
	return b.String()
}

// Cell formats one value for a model: NULL, numbers exactly (integers and
// decimals as the database returned them, floats in their shortest exact
// form), long text cut with "...", line breaks and separators escaped.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return FormatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.999999999Z07:00")
	case []byte:
		return cleanCell(`\x` + hex.EncodeToString(x[:min(len(x), maxCellRunes)]))
	case string:
		if isDecimal(x) {
			return x
		}
		return cleanCell(x)
	default:
		return cleanCell(fmt.Sprint(x))
	}
}

// FormatFloat writes f in the shortest form that reads back as f, in
// positional notation where JSON would use it.
func FormatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsInf(f, 0) || math.IsNaN(f) {
		// 1e-07 as 1e-7, the way JSON writes it.
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if i := strings.Index(s, "e-0"); i >= 0 {
			s = s[:i+2] + s[i+3:]
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// isDecimal reports whether s is a plain decimal number (as PostgreSQL
// numeric values arrive), which is shown whole.
func isDecimal(s string) bool {
	if s == "" || len(s) > 1000 {
		return false
	}
	digits, dot := 0, false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		case c == '-' && i == 0:
		default:
			return false
		}
	}
	return digits > 0
}

// cleanCell keeps a cell on one line and within maxCellRunes runes, so rows
// read back from the database cannot forge extra rows or flood a context.
func cleanCell(s string) string {
	if len(s) > 4*maxCellRunes {
		s = s[:4*maxCellRunes]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "|", `\|`).Replace(s)
	if utf8.RuneCountInString(s) > maxCellRunes {
		r := []rune(s)
		s = string(r[:maxCellRunes-3]) + "..."
	}
	return s
}

// cutString cuts s to at most n bytes at a character boundary and ends it
// with "…".
func cutString(s string, n int) string {
	n = max(n-len("…"), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// rowSink counts a query's rows and keeps those within the bounds: at most
// lim.MaxRows rows and MaxResultBytes of values, each value at most
// MaxCellBytes.
type rowSink struct {
	res  *Result
	lim  Limits
	kept int
}

func newRowSink(lim Limits) *rowSink {
	return &rowSink{res: &Result{TotalKnown: true}, lim: lim}
}

// admit counts one more row. more is false once the count limit is
// reached (the query should stop); keep says whether to keep the row.
func (s *rowSink) admit() (keep, more bool) {
	if s.res.Total == s.lim.CountLimit {
		s.res.TotalKnown = false
		return false, false
	}
	s.res.Total++
	return len(s.res.Rows) < s.lim.MaxRows && s.kept < MaxResultBytes, true
}

// budget is how many bytes the next value may keep.
func (s *rowSink) budget() int { return max(min(MaxCellBytes, MaxResultBytes-s.kept), 0) }

// text keeps b as a string within the budget.
func (s *rowSink) text(b []byte) string {
	if n := s.budget(); len(b) > n {
		s.res.CutValues++
		out := cutString(string(b[:min(len(b), n+4)]), n)
		s.kept += len(out)
		return out
	}
	s.kept += len(b)
	return string(b)
}

// blob keeps b as bytes within the budget.
func (s *rowSink) blob(b []byte) []byte {
	if n := s.budget(); len(b) > n {
		s.res.CutValues++
		b = b[:n]
	}
	s.kept += len(b)
	return slices.Clone(b)
}

// add keeps a row whose values were read through text and blob.
func (s *rowSink) add(row []any) {
	s.kept += 16 * len(row)
	s.res.Rows = append(s.res.Rows, row)
}

// RowSink is a query's row counter and byte budget for an engine outside
// this package (sqlguard/duckdb): the same bounds as the built-in engines'.
type RowSink struct{ s *rowSink }

// NewRowSink starts counting a query's rows within lim.
func NewRowSink(lim Limits) *RowSink { return &RowSink{newRowSink(lim)} }

// Admit counts one more row. more is false once the count limit is
// reached (the query should stop); keep says whether to keep the row.
func (r *RowSink) Admit() (keep, more bool) { return r.s.admit() }

// Budget is how many bytes the next value may keep.
func (r *RowSink) Budget() int { return r.s.budget() }

// Text keeps b as a string within the budget, cut with "…" beyond it.
func (r *RowSink) Text(b []byte) string { return r.s.text(b) }

// Blob keeps b as bytes within the budget.
func (r *RowSink) Blob(b []byte) []byte { return r.s.blob(b) }

// Add keeps a row whose text and bytes went through Text and Blob.
func (r *RowSink) Add(row []any) { r.s.add(row) }

// Result is the result so far; the engine sets its Columns.
func (r *RowSink) Result() *Result { return r.s.res }

// normalise turns a driver value into one of the Result types.
func normalise(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, bool, time.Time, []byte:
		return x
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		// The float64 nearest the float32's shortest decimal: 0.1, not
		// 0.10000000149011612.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f
	case *big.Int:
		return x.String()
	case [16]byte: // uuid
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case driver.Valuer:
		// pgtype values (numeric, interval, uuid, ...) render their
		// text form, which keeps decimals exact.
		inner, err := x.Value()
		if err != nil {
			return fmt.Sprint(x)
		}
		if _, again := inner.(driver.Valuer); again {
			return fmt.Sprint(inner)
		}
		return normalise(inner)
	case fmt.Stringer:
		return x.String()
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}
