package sqlguard

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// Row filters (Options.RowFilters) keep the rows of a table a caller may
// not read out of every query: each reference to a filtered table, in any
// FROM of the query (subqueries, CTEs and joins included), is rewritten on
// the validated tree into a subquery of the table's readable columns with
// the filter as its WHERE, the caller's values bound as parameters. The
// rewrite works on every engine; a query it cannot cover is refused. On
// PostgreSQL, row-level security is a second layer (rowsecurity.go).

// callerKey is the context key of the caller's values.
type callerKey struct{}

// WithCaller gives the statements run with ctx the caller's values, which
// row filters read as :caller.NAME.
func WithCaller(ctx context.Context, values map[string]string) context.Context {
	return context.WithValue(ctx, callerKey{}, values)
}

func callerValues(ctx context.Context) map[string]string {
	v, _ := ctx.Value(callerKey{}).(map[string]string)
	return v
}

// callerRef is a caller's value in a row filter.
var callerRef = lazy.Regexp{Expr: `:caller\.([A-Za-z_][A-Za-z0-9_]*)`}

// rowFilter is one table's filter, checked when the database is opened.
type rowFilter struct {
	cond string // the condition as written
}

// edit replaces sql[start:end] with text.
type edit struct {
	start, end int
	table      string // the filtered table, lower case
	name       string // how the query names it, for the subquery's alias; "" when it has an alias
}

// filterTable records that the reference to a filtered table at loc
// must be rewritten: name is the table as the query writes it there.
func (w *walker) filterTable(loc int, table string, aliased bool) {
	if _, ok := w.v.rowFilters[table]; !ok || loc < 0 || loc >= len(w.sql) {
		return
	}
	end, ok := nameEnd(w.sql, loc)
	if !ok {
		w.fail("row_filter", loc, "okf cannot find where the name of "+table+" ends, so it cannot filter its rows", "Name the table plainly.")
		return
	}
	e := edit{start: loc, end: end, table: table}
	if !aliased {
		e.name = table
	}
	w.edits = append(w.edits, e)
}

// nameEnd returns where the possibly qualified, possibly quoted name that
// starts at i ends.
func nameEnd(sql string, i int) (int, bool) {
	for {
		switch {
		case i < len(sql) && (sql[i] == '"' || sql[i] == '`'):
			q := sql[i]
			j := i + 1
			for ; j < len(sql); j++ {
				if sql[j] == q {
					if j+1 < len(sql) && sql[j+1] == q {
						j++
						continue
					}
					break
				}
			}
			if j >= len(sql) {
				return 0, false
			}
			i = j + 1
		default:
			j := i
			for j < len(sql) && (sql[j] == '_' || sql[j] == '$' || sql[j] >= '0' && sql[j] <= '9' || sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' || sql[j] >= 0x80) {
				j++
			}
			if j == i {
				return 0, false
			}
			i = j
		}
		if i < len(sql) && sql[i] == '.' {
			i++
			continue
		}
		return i, true
	}
}

// rewrite applies a query's row filters: the SQL to run and its
// parameters' values, the caller's values bound after the query's own.
func (v *Validator) rewrite(sql string, edits []edit, args []any, caller map[string]string) (string, []any, error) {
	if len(edits) == 0 {
		return sql, args, nil
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	bound := map[string]int{} // caller value → its parameter number
	for _, e := range edits {
		if e.start < at {
			return "", nil, refuse("row_filter", charPos(sql, e.start), "overlapping references to a filtered table", "")
		}
		b.WriteString(sql[at:e.start])
		var err error
		cond := callerRef.Get().ReplaceAllStringFunc(v.rowFilters[e.table].cond, func(ref string) string {
			name := ref[len(":caller."):]
			n, ok := bound[name]
			if !ok {
				val, has := caller[name]
				if has && strings.IndexByte(val, 0) >= 0 {
					has = false
				}
				if !has {
					err = refuse("row_filter", 0, fmt.Sprintf("the rows of %s you may read depend on your %s, which your sign-in does not give", e.table, name), "")
					return ref
				}
				args = append(args, val)
				n = len(args)
				bound[name] = n
			}
			if v.dialect == DialectSQLite {
				// SQLite numbers a later bare ? after the largest ?N
				// before it: the value goes in as a literal instead.
				args = args[:len(args)-1]
				delete(bound, name)
				return "'" + strings.ReplaceAll(caller[name], "'", "''") + "'"
			}
			return "$" + strconv.Itoa(n)
		})
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(&b, "(SELECT %s FROM %s WHERE %s)", v.readable(e.table), sql[e.start:e.end], cond)
		if e.name != "" {
			b.WriteString(" AS " + quoteName(e.name))
		}
		at = e.end
	}
	b.WriteString(sql[at:])
	return b.String(), args, nil
}

// readable lists the columns of a table a query may read, quoted: the
// filtered subquery reads no hidden column.
func (v *Validator) readable(table string) string {
	var cols []string
	for _, s := range v.schemas {
		names, ok := v.catalog.table(s, table)
		if !ok {
			continue
		}
		for _, c := range names {
			if !v.hidden(table, c) {
				cols = append(cols, quoteName(c))
			}
		}
		break
	}
	if len(cols) == 0 {
		return "*"
	}
	return strings.Join(cols, ", ")
}

func quoteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// filterConditions are the row filters by table, lower case.
func (v *Validator) filterConditions() map[string]string {
	out := make(map[string]string, len(v.rowFilters))
	for t, f := range v.rowFilters {
		out[t] = f.cond
	}
	return out
}

// newRowFilters checks the options' row filters: each one condition on its
// table that the validator accepts, with any caller values.
func (v *Validator) newRowFilters(filters map[string]string) error {
	v.rowFilters = map[string]rowFilter{}
	for table, cond := range filters {
		t := strings.ToLower(strings.TrimSpace(table))
		if t == "" || strings.ContainsAny(t, " .\"`;") {
			return fmt.Errorf("row filter of %q: want a table name", table)
		}
		probe := "SELECT 1 FROM " + quoteName(t) + " WHERE " + callerRef.Get().ReplaceAllString(cond, "'x'")
		if strings.Contains(cond, ";") || strings.Contains(cond, "--") || strings.Contains(cond, "/*") {
			return fmt.Errorf("row filter of %s: one condition, without ';' or comments", t)
		}
		if _, err := v.check(probe); err != nil {
			return fmt.Errorf("row filter of %s (%s): %w", t, cond, err)
		}
		v.rowFilters[t] = rowFilter{cond: cond}
	}
	return nil
}
