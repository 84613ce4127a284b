package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/sqlguard"
)

// The bounds of reading values. Each read is deterministic (the same
// database gives the same values); the time bounds are a safety net, and a
// column they stop is reported, not listed.
const (
	// ValueThreshold is the most distinct values a column may hold to have
	// them all listed. The columns questions filter on by name (genders,
	// publishers, colours, order states) hold fewer, and 64 short values
	// read in a few hundred tokens; a column of more holds names or
	// measures, of which a few frequent examples say enough.
	ValueThreshold = 64
	// LookupRows is the most rows of a lookup table: a table that small
	// names its rows (superpowers, countries, product codes), each a value
	// a question may filter on, however many and however unique; its
	// columns list all their values when they fit the table's bytes.
	LookupRows = 256
	// ValueExamples is how many of its most frequent values a larger
	// column lists.
	ValueExamples = 5
	// MaxValueRunes is the longest value listed: a longer one is prose,
	// not a label.
	MaxValueRunes = 80
	// TableValueBytes bounds the values a table concept lists, as written.
	TableValueBytes = 4 << 10
	// ValueProbeRows is the most rows read to tell a table's size, so that
	// the smallest tables (the lookups) are read first.
	ValueProbeRows = 1000
	// ValueScanRows is the most rows of a table one column's query reads:
	// the first ones, in primary key order. The values of a larger table
	// are those of its first rows, listed as its most frequent.
	ValueScanRows = 100_000
	// ValueRowsBudget is how many rows a database's queries read before
	// no other column is read.
	ValueRowsBudget = 1_000_000
	// ValueTimeout bounds one query, ValueBudget all of a database's.
	ValueTimeout = 5 * time.Second
	ValueBudget  = 20 * time.Second
)

// ValueOptions steer ReadValues.
type ValueOptions struct {
	// Guard are the SQL guard's options for the database (okf.yaml's): a
	// column they deny, or of a table outside their allowlist, is never
	// read. ReadValues sets the timeout and row bounds itself.
	Guard sqlguard.Options
	// Skip lists the columns whose values are not read, as "table.column".
	Skip []string
	// Audit, when not nil, gets a line per statement, as for any query.
	Audit *sqlguard.AuditLog
}

// ValueStats say what ReadValues did.
type ValueStats struct {
	// Columns counts the columns given values.
	Columns int
	// Queries counts the statements sent to the guard.
	Queries int
	// Rows counts the rows those statements read (at most).
	Rows int
	// Unread lists, as "table.column: why", the text columns a bound, a
	// refusal or an error left unread.
	Unread []string
}

// ReadValues reads the values of the text columns of db's tables from
// the database its catalog came from (db.Live), through the SQL guard,
// read-only and bounded: a column of at most ValueThreshold values gets
// them all, a larger one its ValueExamples most frequent, unless it is a
// key or its values are mostly unique. Enum and JSON columns, views,
// denied, masked and skipped columns, and those marked as personal data
// (whether okf.yaml masks them yet or not), are not read. When any column
// gets values, db.Sources gains the database as their source. Only
// opening the database is an error; a column that cannot be read is left
// in Unread.
func ReadValues(ctx context.Context, db *compile.Database, opt ValueOptions) (ValueStats, error) {
	var st ValueStats
	if db.Live == nil {
		return st, nil
	}
	d, err := dsn.Parse(db.Live.DSN)
	if err != nil {
		return st, err
	}
	g := opt.Guard
	g.Timeout, g.MaxRows, g.CountLimit, g.MaxConns = ValueTimeout, LookupRows+2, LookupRows+2, 1
	if db.Live.Schema != "" && len(g.Schemas) == 0 {
		g.Schemas = []string{db.Live.Schema}
	}
	ctx, cancel := context.WithTimeout(ctx, ValueBudget)
	defer cancel()
	guard, err := sqlguard.Open(ctx, db.Name, db.Live.DSN, g, opt.Audit)
	if err != nil {
		return st, err
	}
	defer guard.Close()
	r := &valueReader{guard: guard, sqlite: d.Engine == dsn.SQLite, duckdb: d.Engine == dsn.DuckDB, schema: db.Live.Schema, st: &st}
	skip := map[string]bool{}
	for _, s := range opt.Skip {
		skip[strings.ToLower(s)] = true
	}
	type work struct {
		t    *compile.Table
		cols []*compile.Column
		size int
	}
	var tables []work
	for _, t := range db.Tables {
		if t.View {
			continue // its query may cost anything
		}
		var cols []*compile.Column
		for _, c := range t.Columns {
			if r.textLike(c) && !c.PersonalData && !skip[strings.ToLower(t.Name+"."+c.Name)] && !guard.Hides(t.Name, c.Name) && !guard.Masks(t.Name, c.Name) {
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 {
			continue
		}
		if ctx.Err() != nil {
			r.unread(t, cols, errTimeBudget)
			continue
		}
		size, err := r.size(ctx, t)
		if err != nil {
			r.unread(t, cols, err)
			continue
		}
		tables = append(tables, work{t, cols, size})
	}
	// The smallest tables first: lookups are read whatever the budgets.
	slices.SortStableFunc(tables, func(a, b work) int { return cmp.Compare(a.size, b.size) })
	for _, w := range tables {
		left := TableValueBytes
		for i, c := range w.cols {
			if st.Rows >= ValueRowsBudget || ctx.Err() != nil {
				why := errTimeBudget
				if ctx.Err() == nil {
					why = errRowsBudget
				}
				r.unread(w.t, w.cols[i:], why)
				break
			}
			lookup := w.size <= LookupRows
			v, err := r.column(ctx, w.t, c, lookup)
			if err != nil {
				r.unread(w.t, []*compile.Column{c}, err)
				continue
			}
			if v == nil {
				continue
			}
			// All the values when they fit, else the most frequent.
			list := v.examples()
			if all := v.all(); (v.distinct <= ValueThreshold || lookup) && listBytes(all.Values) <= left {
				list = all
			}
			if n := listBytes(list.Values); n <= left {
				c.Values, left = list, left-n
				st.Columns++
			}
		}
	}
	if st.Columns > 0 {
		db.Sources = append(db.Sources, compile.Source{ID: "values", Resource: db.Live.Resource, Title: "values read from the database", Values: true})
	}
	return st, nil
}

var (
	errRowsBudget = errors.New("the database's rows budget is spent")
	errTimeBudget = errors.New("the database's time budget is spent")
)

type valueReader struct {
	guard  *sqlguard.DB
	sqlite bool
	duckdb bool
	schema string
	st     *ValueStats
}

// textLike reports whether a column holds text labels: a SQLite column of
// TEXT affinity or of no type (whose values must then all be text), a
// PostgreSQL text, varchar, char or citext column, a DuckDB VARCHAR
// column. Enum labels are listed already.
func (r *valueReader) textLike(c *compile.Column) bool {
	if len(c.Enum) > 0 || len(c.JSONFields) > 0 {
		return false
	}
	t := strings.ToLower(c.Type)
	if r.duckdb {
		return t == "varchar" || strings.HasPrefix(t, "varchar(")
	}
	if r.sqlite {
		// SQLite's affinity rules: INT wins over CHAR, CLOB and TEXT.
		return t == "" || !strings.Contains(t, "int") && (strings.Contains(t, "char") || strings.Contains(t, "clob") || strings.Contains(t, "text"))
	}
	return t == "text" || t == "character varying" || t == "character" || t == "user-defined" && c.EnumType == "citext"
}

func (r *valueReader) quote(name string) string {
	if r.sqlite {
		return sqliteQuote(name)
	}
	return quote(name)
}

func (r *valueReader) table(t *compile.Table) string {
	if r.sqlite {
		return sqliteQuote(t.Name)
	}
	return quote(r.schema) + "." + quote(t.Name)
}

func (r *valueReader) query(ctx context.Context, sql string) (*sqlguard.Result, error) {
	r.st.Queries++
	return r.guard.Query(ctx, "okf compile", sql)
}

func (r *valueReader) unread(t *compile.Table, cols []*compile.Column, why error) {
	for _, c := range cols {
		r.st.Unread = append(r.st.Unread, t.Name+"."+c.Name+": "+why.Error())
	}
}

// size counts a table's rows up to ValueProbeRows.
func (r *valueReader) size(ctx context.Context, t *compile.Table) (int, error) {
	res, err := r.query(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS probe", r.table(t), ValueProbeRows))
	if err != nil {
		return 0, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return 0, errors.New("counting the rows gave no count")
	}
	n := number(res.Rows[0][0])
	r.st.Rows += n
	return n, nil
}

// frequency is a value and how many rows hold it.
type frequency struct {
	value string
	rows  int
}

// columnValues are what one column's query found.
type columnValues struct {
	// listed are the values that can be listed, most frequent first.
	listed []string
	// distinct counts the values, in the first rows of a larger table,
	// whose count rows is then (else 0).
	distinct, rows int
}

// all lists every value that can be listed: in byte order when that is
// every value of the column, else as the most frequent.
func (v *columnValues) all() *compile.ValueList {
	if len(v.listed) == v.distinct && v.rows == 0 {
		return &compile.ValueList{Values: slices.Sorted(slices.Values(v.listed))}
	}
	return &compile.ValueList{Values: v.listed, Count: v.distinct, Rows: v.rows}
}

// examples lists the ValueExamples most frequent values.
func (v *columnValues) examples() *compile.ValueList {
	return &compile.ValueList{Values: v.listed[:min(len(v.listed), ValueExamples)], Count: v.distinct, Rows: v.rows}
}

// column reads the values of one column; nil when it has none to list.
// One query groups the column's first ValueScanRows rows by value (its
// first MaxValueRunes+1 characters, enough to tell a value too long to
// list), most frequent first, and counts the values, the rows holding one
// and the rows read. NULL and the empty string are no values. A lookup
// table's column is read whole, its keys and unique names included.
func (r *valueReader) column(ctx context.Context, t *compile.Table, c *compile.Column, lookup bool) (*columnValues, error) {
	col := r.quote(c.Name)
	key, collate := fmt.Sprintf("substr(%s, 1, %d)", col, MaxValueRunes+1), ` COLLATE "C"`
	switch {
	case r.sqlite:
		// Other values keep their type, which takes the column out.
		key, collate = fmt.Sprintf("CASE WHEN typeof(%s) = 'text' THEN %s ELSE %s END", col, key, col), ""
	case r.duckdb:
		collate = "" // DuckDB compares text by its bytes already
	}
	limit := ValueThreshold + 2
	if lookup {
		limit = LookupRows + 2
	}
	order := ""
	if len(t.PrimaryKey) > 0 {
		keys := make([]string, len(t.PrimaryKey))
		for i, k := range t.PrimaryKey {
			keys[i] = r.quote(k)
		}
		order = " ORDER BY " + strings.Join(keys, ", ")
	}
	sql := fmt.Sprintf("SELECT v, count(*) AS n, count(v) OVER () AS d, sum(count(v)) OVER () AS r, sum(count(*)) OVER () AS s"+
		" FROM (SELECT NULLIF(%s, '') AS v FROM %s%s LIMIT %d) AS sample GROUP BY v ORDER BY n DESC, v%s LIMIT %d",
		key, r.table(t), order, ValueScanRows, collate, limit)
	res, err := r.query(ctx, sql)
	if err != nil {
		return nil, err
	}
	var (
		seen                       []frequency
		distinct, nonEmpty, sample int
	)
	for _, row := range res.Rows {
		if len(row) != 5 {
			return nil, errors.New("the values query gave other columns")
		}
		distinct, nonEmpty, sample = number(row[2]), number(row[3]), number(row[4])
		switch v := row[0].(type) {
		case nil:
		case string:
			seen = append(seen, frequency{v, number(row[1])})
		default:
			return nil, nil // not text
		}
	}
	r.st.Rows += sample
	if distinct == 0 || !lookup && distinct > ValueThreshold && (t.IsKey(c.Name) || 2*distinct > nonEmpty) {
		return nil, nil // no values, or identifiers
	}
	slices.SortFunc(seen, func(a, b frequency) int {
		return cmp.Or(cmp.Compare(b.rows, a.rows), strings.Compare(a.value, b.value))
	})
	v := &columnValues{distinct: distinct}
	if sample >= ValueScanRows {
		v.rows = sample
	}
	for _, f := range seen {
		if listable(f.value) {
			v.listed = append(v.listed, f.value)
		}
	}
	if len(v.listed) == 0 {
		return nil, nil
	}
	return v, nil
}

// listable reports whether a value can be written in a list an agent
// reads: short, on one line, with no character markdown would read.
func listable(v string) bool {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxValueRunes {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) || r == '`' || r == '|' {
			return false
		}
	}
	return true
}

// listBytes is the length of values as a table concept writes them.
func listBytes(values []string) int {
	n := 0
	for _, v := range values {
		n += len(v) + strings.Count(v, "'") + 4 // quoted, and ", "
	}
	return n
}

// number reads a count as the guard returns it: an integer, or a decimal
// (PostgreSQL's sum of counts) as text.
func number(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}
