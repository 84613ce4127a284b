package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/sqlguard"
)

// printJSON writes v as indented JSON, every --json output the same way:
// snake_case fields (the types say so) and <, > and & left as they are.
func printJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var sqlKeyword = lazy.Regexp{Expr: `(?i)\b(SELECT|FROM|WHERE|JOIN|LEFT|RIGHT|INNER|OUTER|ON|GROUP|ORDER|BY|HAVING|LIMIT|OFFSET|WITH|AS|AND|OR|NOT|IN|IS|NULL|CASE|WHEN|THEN|ELSE|END|DISTINCT|UNION|ALL|COUNT|SUM|AVG|MIN|MAX|COALESCE|DESC|ASC)\b`}

// highlightSQL makes SQL keywords bold cyan on a terminal; the SQL itself
// is made printable first, since a model wrote it.
func highlightSQL(sql string, color bool) string {
	sql = printable(sql)
	if !color {
		return sql
	}
	return sqlKeyword.Get().ReplaceAllString(sql, "\x1b[1;36m$1\x1b[0m")
}

// printable escapes what a terminal would act on rather than show: control
// characters but newline and tab (ESC starts a terminal command, BEL rings,
// NUL and CR hide what precedes them), the bidirectional overrides that
// reorder what is shown (U+202E), and invalid UTF-8. Rows and model text
// reach the terminal through it.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r), r == utf8.RuneError:
		return true
	case r == 0x061C, r == 0x200E, r == 0x200F, 0x202A <= r && r <= 0x202E, 0x2066 <= r && r <= 0x2069:
		return true
	}
	return false
}

// resultTable renders rows as an aligned table with at most shown rows,
// then the row count.
func resultTable(r *sqlguard.Result, shown int) string {
	if r == nil {
		return ""
	}
	rows := [][]string{make([]string, len(r.Columns))}
	for i, c := range r.Columns {
		rows[0][i] = printable(c.Name)
	}
	for i, row := range r.Rows {
		if i >= shown {
			break
		}
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = printable(foldLine(sqlguard.Cell(v), 40))
		}
		rows = append(rows, cells)
	}
	widths := make([]int, len(r.Columns))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		b.WriteString("\n")
	}
	line(rows[0])
	for i, w := range widths {
		if i > 0 {
			b.WriteString("-+-")
		}
		b.WriteString(strings.Repeat("-", w))
	}
	b.WriteString("\n")
	for _, row := range rows[1:] {
		line(row)
	}
	total := fmt.Sprint(r.Total)
	if !r.TotalKnown {
		total = "at least " + total
	}
	if len(rows)-1 < r.Total || !r.TotalKnown {
		fmt.Fprintf(&b, "(%d of %s rows)\n", len(rows)-1, total)
	} else if r.Total == 1 {
		b.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n", r.Total)
	}
	return b.String()
}
