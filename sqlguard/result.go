package sqlguard

import (
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
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
	TotalKnown bool          `json:"total_known"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Truncated reports whether rows were left out.
func (r *Result) Truncated() bool { return !r.TotalKnown || r.Total > len(r.Rows) }

// Cell widths and number precision of the text for a model.
const (
	maxCellRunes   = 100
	significantDig = 6
)

// Text renders the result for a model: column names, up to shown rows
// separated by " | ", then "(N rows)" or "(N of M rows)".
func (r *Result) Text(shown int) string {
	var b strings.Builder
	if len(r.Columns) == 0 {
		return "The statement returned no columns."
	}
	for i, c := range r.Columns {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(cleanCell(c.Name))
	}
	b.WriteByte('\n')
	n := min(shown, len(r.Rows))
	for _, row := range r.Rows[:n] {
		for i, v := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(Cell(v))
		}
		b.WriteByte('\n')
	}
	switch {
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

// Cell formats one value for a model: NULL, numbers to six significant
// digits, long text cut with "...", line breaks and separators escaped.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.999999999Z07:00")
	case []byte:
		return cleanCell(`\x` + hex.EncodeToString(x))
	case string:
		if f, ok := decimalString(x); ok {
			return formatFloat(f)
		}
		return cleanCell(x)
	default:
		return cleanCell(fmt.Sprint(x))
	}
}

func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', significantDig, 64)
}

// decimalString reports whether s is a plain decimal number with a
// fraction (as PostgreSQL numeric values arrive), to be shortened.
func decimalString(s string) (float64, bool) {
	if !strings.Contains(s, ".") || len(s) > 80 {
		return 0, false
	}
	for i, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || i == 0 && c == '-') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// cleanCell keeps a cell on one line and within maxCellRunes runes, so rows
// read back from the database cannot forge extra rows or flood a context.
func cleanCell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "|", `\|`).Replace(s)
	if utf8.RuneCountInString(s) > maxCellRunes {
		r := []rune(s)
		s = string(r[:maxCellRunes-3]) + "..."
	}
	return s
}

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
		return float64(x)
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

// rowBytes estimates the memory a row holds.
func rowBytes(row []any) int {
	n := 0
	for _, v := range row {
		switch x := v.(type) {
		case string:
			n += len(x) + 16
		case []byte:
			n += len(x) + 24
		default:
			n += 16
		}
	}
	return n
}
