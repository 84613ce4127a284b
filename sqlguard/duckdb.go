package sqlguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/internal/pgast"
)

// DuckDB's dialect: what the validator refuses beyond PostgreSQL's rules,
// and the plan check, which reads the plan DuckDB made of a query. Both are
// pure Go; the engine that runs queries is package sqlguard/duckdb, which
// registers itself with RegisterEngine so that only programs that import it
// link DuckDB.

// duckdbParseError is a DuckDB query PostgreSQL's parser cannot read.
func duckdbParseError(err error) error {
	e := &Error{Layer: LayerValidator, Refused: true, Code: "unsupported_syntax", Message: err.Error(),
		Hint: "The guard reads DuckDB SQL in its PostgreSQL form: SELECT … FROM …, no FROM-first queries, " +
			"* EXCLUDE/REPLACE, COLUMNS(…), QUALIFY, GROUP BY ALL, list or struct literals, PIVOT or SUMMARIZE."}
	var pe *parser.Error
	if errors.As(err, &pe) {
		e.Message, e.Position = pe.Message, pe.Cursorpos
	}
	return e
}

// duckdbFuncCall refuses f(*) for any f but count: DuckDB expands the star
// into every column of the FROM clause (struct_pack(*), hash(*),
// COLUMNS(*)), so the call reads hidden columns without naming them.
func (w *walker) duckdbFuncCall(f *pgast.FuncCall) {
	if !f.AggStar {
		return
	}
	names := stringsOf(f.Funcname)
	if len(names) == 1 && strings.EqualFold(names[0], "count") {
		return
	}
	w.fail("star_argument", int(f.Location), fmt.Sprintf("%s(*) reads every column in DuckDB", strings.Join(names, ".")),
		"Pass the columns you need by name; only count(*) takes a star.")
}

// duckdbOperator refuses #: DuckDB reads #n as the n-th column of the FROM
// clause, which names no column the validator could check.
func (w *walker) duckdbOperator(x *pgast.A_Expr) {
	for _, n := range stringsOf(x.Name) {
		if n == "#" {
			w.fail("positional_column", int(x.Location), "#n reads a column by its position in DuckDB",
				"Name the column; use xor(a, b) for a bitwise exclusive or.")
			return
		}
	}
}

// duckdbTableFunctions refuses a FROM item calling a table function off
// DuckDB's table-function allowlist: the scalar allowlist does not cover
// table functions (repeat is both; so was glob).
func (w *walker) duckdbTableFunctions(fnames []string, loc int) {
	for _, f := range fnames {
		if f == "" || duckdbTableFunctions.Has(f) || w.v.allow.extra[f] {
			continue
		}
		w.fail("function", loc, fmt.Sprintf("table function %s is not allowed: %s", f, functionRefusal(f)),
			"Read the database's tables; range, generate_series and unnest generate rows.")
		return
	}
}

// planNode is one operator of the physical plan EXPLAIN (FORMAT JSON)
// prints.
type planNode struct {
	Name      string                     `json:"name"`
	Children  []planNode                 `json:"children"`
	ExtraInfo map[string]json.RawMessage `json:"extra_info"`
}

// planOperators are the physical operators a read-only query's plan is
// made of, besides the scans of tables and table functions, which are
// checked against the options. An operator not listed (an insert, a copy,
// a new kind in another DuckDB version) fails the check.
var planOperators = lazy.Set{Names: []string{
	"PROJECTION", "FILTER", "ORDER_BY", "TOP_N", "LIMIT", "STREAMING_LIMIT", "LIMIT_PERCENT", "UNION",
	"HASH_JOIN", "NESTED_LOOP_JOIN", "PIECEWISE_MERGE_JOIN", "BLOCKWISE_NL_JOIN", "IE_JOIN", "ASOF_JOIN",
	"CROSS_PRODUCT", "POSITIONAL_JOIN", "LEFT_DELIM_JOIN", "RIGHT_DELIM_JOIN", "DELIM_JOIN",
	"HASH_GROUP_BY", "PERFECT_HASH_GROUP_BY", "PARTITIONED_AGGREGATE", "UNGROUPED_AGGREGATE",
	"WINDOW", "STREAMING_WINDOW", "STREAMING_SAMPLE", "RESERVOIR_SAMPLE", "UNNEST",
	"CTE", "CTE_SCAN", "REC_CTE", "REC_CTE_SCAN", "RECURSIVE_CTE", "RECURSIVE_CTE_SCAN", "RECURSIVE_KEY_CTE",
	"COLUMN_DATA_SCAN", "CHUNK_SCAN", "DELIM_SCAN", "DUMMY_SCAN", "EMPTY_RESULT", "EXPRESSION_SCAN",
	"RESULT_COLLECTOR",
}}

// CheckDuckDBPlan checks the physical plan DuckDB made of a query (the JSON
// of EXPLAIN (FORMAT JSON)), a layer apart from the validator that reads
// what the database will do rather than the text: every table scanned is
// readable, no scan reads or filters on a hidden column (views, query(),
// SUMMARIZE, #n and COLUMNS all come down to scans), every table function
// is allowed, and every other operator only computes. catalog names the
// database as DuckDB qualifies its tables ("hubs" for hubs.main.hero).
// DuckDB must plan with the statistics_propagation optimizer off: it
// answers some filters from a column's statistics without a scan.
func (v *Validator) CheckDuckDBPlan(plan, catalog string) error {
	var nodes []planNode
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
		return planRefusal("unreadable_plan", "the query's plan cannot be read: "+err.Error())
	}
	if len(nodes) == 0 {
		return planRefusal("unreadable_plan", "the query has an empty plan")
	}
	for i := range nodes {
		if err := v.checkPlanNode(&nodes[i], strings.ToLower(catalog)); err != nil {
			return err
		}
	}
	return nil
}

// isFileScan reports whether a plan's table function scans files
// (read_csv, read_parquet, parquet_scan, ...): only a view's plan can hold
// one, since the validator refuses them in the query's text.
func isFileScan(f string) bool {
	return strings.HasPrefix(f, "read_") || strings.HasPrefix(f, "parquet_")
}

func planRefusal(code, msg string) *Error {
	return &Error{Layer: LayerPlan, Refused: true, Code: code, Message: msg}
}

func (v *Validator) checkPlanNode(n *planNode, catalog string) error {
	table, hasTable := planText(n.ExtraInfo, "Table")
	function, hasFunction := planText(n.ExtraInfo, "Function")
	switch {
	case hasTable:
		if err := v.checkPlanScan(n, table, catalog); err != nil {
			return err
		}
	case hasFunction:
		f := strings.ToLower(function)
		if !duckdbTableFunctions.Has(f) && !v.allow.extra[f] && !(v.viewFiles && isFileScan(f)) {
			return planRefusal("function", fmt.Sprintf("the plan calls table function %s: %s", f, functionRefusal(f)))
		}
	case !planOperators.Has(n.Name):
		return planRefusal("operator", fmt.Sprintf("the plan holds a %s, which is not known to only read", n.Name))
	}
	for i := range n.Children {
		if err := v.checkPlanNode(&n.Children[i], catalog); err != nil {
			return err
		}
	}
	return nil
}

// checkPlanScan checks a scan of table ("catalog.schema.table") against
// the allowlist and the hidden columns.
func (v *Validator) checkPlanScan(n *planNode, table, catalog string) error {
	// The plan quotes a name that is a keyword ("returns").
	qualified := strings.ToLower(unquoteParts(table))
	var schema, name string
	for _, s := range v.schemas {
		if rest, ok := strings.CutPrefix(qualified, catalog+"."+s+"."); ok {
			schema, name = s, rest
			break
		}
	}
	if name == "" {
		return planRefusal("table", fmt.Sprintf("the plan reads %s, outside the readable schemas", table))
	}
	if len(v.tables) > 0 && !v.tables[name] && !v.tables[schema+"."+name] {
		return planRefusal("table", fmt.Sprintf("the plan reads table %s, which is not one you may read (a view reads its tables)", name))
	}
	cols, ok := v.catalog.table(schema, name)
	if !ok {
		return planRefusal("table", fmt.Sprintf("the plan reads table %s, which the guard does not know", name))
	}
	var hidden []string
	for _, c := range cols {
		if v.hidden(name, c) {
			hidden = append(hidden, c)
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	for _, key := range []string{"Projections", "Filters"} {
		for _, text := range planTexts(n.ExtraInfo, key) {
			if c, ok := mentions(text, hidden); ok {
				return planRefusal("denied_column", fmt.Sprintf("the plan reads hidden column %s.%s", name, c))
			}
		}
	}
	return nil
}

// planText is a string field of an operator's extra_info.
func planText(info map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := info[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw), true
	}
	return s, true
}

// planTexts is a field that is a string or a list of strings.
func planTexts(info map[string]json.RawMessage, key string) []string {
	raw, ok := info[key]
	if !ok {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	// Anything else is read as text: a name in it still counts.
	return []string{string(raw)}
}

// mentions reports whether text names one of the columns, outside single
// quoted literals, as a whole word, ignoring case. It errs towards yes: a
// function of the same name counts too.
func mentions(text string, columns []string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == '\'' {
			i = skipQuoted(text, i, '\'', '\'') - 1
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(text[i])
	}
	plain := strings.ToLower(b.String())
	for _, c := range columns {
		c = strings.ToLower(c)
		for from := 0; ; {
			i := strings.Index(plain[from:], c)
			if i < 0 {
				break
			}
			i += from
			end := i + len(c)
			if (i == 0 || !isWordByte(plain[i-1])) && (end == len(plain) || !isWordByte(plain[end])) {
				return c, true
			}
			from = i + 1
		}
	}
	return "", false
}

// unquoteParts reads a dotted name whose parts may be double-quoted, as
// the plan writes them, into its parts' plain names joined by dots.
func unquoteParts(name string) string {
	var parts []string
	for name != "" {
		var part string
		if name[0] == '"' {
			i := 1
			for ; i < len(name); i++ {
				if name[i] == '"' {
					if i+1 < len(name) && name[i+1] == '"' {
						part += `"`
						i++
						continue
					}
					break
				}
				part += string(name[i])
			}
			name = name[min(i+1, len(name)):]
		} else {
			part, name, _ = strings.Cut(name, ".")
			parts = append(parts, part)
			continue
		}
		parts = append(parts, part)
		name = strings.TrimPrefix(name, ".")
	}
	return strings.Join(parts, ".")
}
