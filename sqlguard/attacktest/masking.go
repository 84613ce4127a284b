package attacktest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The masking suite every engine runs (sqlguard's TestMasking on SQLite
// and PostgreSQL, sqlguard/duckdb's on DuckDB): customers whose names and
// e-mail addresses are masked, and their orders.

// MaskingDDL creates the masking fixture, in SQL the three engines read.
const MaskingDDL = `CREATE TABLE customers (id integer PRIMARY KEY, custname text, email text, region text);
CREATE TABLE orders (id integer PRIMARY KEY, custref integer, note text);
INSERT INTO customers VALUES (1, 'Ana Lima', 'ana@gmail.com', 'north'), (2, 'Bo Chen', 'bo@yahoo.com', 'south'),
  (3, 'Cy Diaz', 'cy@gmail.com', 'north'), (4, 'Di Evans', NULL, 'east');
INSERT INTO orders VALUES (10, 1, 'gift wrap'), (11, 3, 'leave at door'), (12, 2, 'call first');`

// MaskedColumns are the fixture's masked columns.
var MaskedColumns = []string{"customers.email", "customers.custname"}

// MaskedSecrets are the masked values, none of which may come back in
// any form.
var MaskedSecrets = []string{"ana@gmail.com", "bo@yahoo.com", "cy@gmail.com", "Ana Lima", "Bo Chen", "Cy Diaz", "Di Evans"}

// MaskingSpelling is one way a query could show a masked value, in each
// engine's SQL ("" for SQLite's), with the names of the result columns
// that must come back masked (nil for all).
type MaskingSpelling struct {
	Name, SQLite, Postgres string
	Masked                 []string
}

// SQL is the spelling in an engine's dialect: PostgreSQL's where it has
// one, and DuckDB, whose SQL is PostgreSQL's shape, reads it too.
func (s MaskingSpelling) SQL(engine string) string {
	if engine != "SQLite" && s.Postgres != "" {
		return s.Postgres
	}
	return s.SQLite
}

// MaskingSpellings are the spellings, each masked or refused on every
// engine.
var MaskingSpellings = []MaskingSpelling{
	{"the column", "SELECT email FROM customers", "", nil},
	{"star", "SELECT * FROM customers", "", []string{"custname", "email"}},
	{"qualified star", "SELECT c.* FROM customers c", "", []string{"custname", "email"}},
	{"whole row", "SELECT c FROM customers c", "", nil},
	{"row to JSON", "SELECT json_object('e', email) FROM customers", "SELECT row_to_json(c) FROM customers c", nil},
	{"upper", "SELECT upper(email) FROM customers", "", nil},
	{"substring", "SELECT substr(email, 1, 5) FROM customers", "", nil},
	{"concatenation", "SELECT email || '' FROM customers", "", nil},
	{"cast", "SELECT CAST(email AS TEXT) FROM customers", "SELECT email::varchar FROM customers", nil},
	{"hex", "SELECT hex(email) FROM customers", "SELECT encode(convert_to(email, 'UTF8'), 'hex') FROM customers", nil},
	{"cast to blob", "SELECT CAST(email AS BLOB) FROM customers", "SELECT convert_to(email, 'UTF8') FROM customers", nil},
	{"min", "SELECT min(email) FROM customers", "", nil},
	{"max", "SELECT max(custname) FROM customers", "", nil},
	{"group_concat", "SELECT group_concat(email) FROM customers", "SELECT string_agg(email, ',') FROM customers", nil},
	{"array_agg", "SELECT json_group_array(email) FROM customers", "SELECT array_agg(email) FROM customers", nil},
	{"scalar subquery", "SELECT (SELECT email FROM customers LIMIT 1)", "", nil},
	{"correlated subquery", "SELECT (SELECT max(c2.email) FROM customers c2 WHERE c2.id = c1.id) FROM customers c1", "", nil},
	{"derived table", "SELECT x FROM (SELECT email AS x FROM customers) s", "", nil},
	{"alias column list", "SELECT e FROM (SELECT email FROM customers) AS t(e)", "", nil},
	{"CTE", "WITH c AS (SELECT email FROM customers) SELECT * FROM c", "", nil},
	{"recursive CTE", "WITH RECURSIVE r(e, n) AS (SELECT email, 1 FROM customers UNION ALL SELECT e, n + 1 FROM r WHERE n < 2) SELECT e FROM r", "", []string{"e"}},
	{"union, right side", "SELECT note FROM orders UNION SELECT email FROM customers", "", nil},
	{"union all, left side", "SELECT email FROM customers UNION ALL SELECT note FROM orders", "", nil},
	{"window lag", "SELECT lag(email) OVER (ORDER BY id) FROM customers", "", nil},
	{"window first_value", "SELECT first_value(custname) OVER (ORDER BY id) FROM customers", "", nil},
	{"case", "SELECT CASE WHEN id > 0 THEN email END FROM customers", "", nil},
	{"coalesce", "SELECT coalesce(email, 'none') FROM customers", "", nil},
	{"JSON array", "SELECT json_array(email) FROM customers", "SELECT json_build_array(email) FROM customers", nil},
	{"replace", "SELECT replace(email, '@', ' at ') FROM customers", "", nil},
	{"renamed to another column's name", "SELECT email AS id FROM customers", "", nil},
	{"joined", "SELECT o.note, c.email FROM orders o JOIN customers c ON c.id = o.custref", "", []string{"email"}},
	{"joined star", "SELECT * FROM orders o JOIN customers c ON c.id = o.custref", "", []string{"custname", "email"}},
	{"USING's merged column", "SELECT * FROM customers a JOIN customers b USING (email)", "", []string{"email", "custname"}},
	{"distinct", "SELECT DISTINCT email FROM customers", "", nil},
	{"group key", "SELECT email FROM customers GROUP BY email", "", nil},
	{"VALUES", "VALUES ((SELECT email FROM customers LIMIT 1))", "", nil},
	{"trim and lower", "SELECT lower(trim(custname)) FROM customers", "", nil},
	{"in a boolean", "SELECT email LIKE 'a%' FROM customers", "", nil},
	{"a cast that fails on the value", "SELECT CAST(custname AS INTEGER) FROM customers", "", nil},
	{"a failing cast in a filter", "SELECT CAST(custname AS INTEGER) FROM customers WHERE CAST(email AS INTEGER) >= 0", "", nil},
}

// MaskingAllowed are the queries a masked column still answers, with the
// rows they must return as JSON.
var MaskingAllowed = []struct{ Name, SQL, Want string }{
	{"count of a filter", "SELECT count(*) AS n FROM customers WHERE email LIKE '%@gmail.com'", "[[2]]"},
	{"count of the column", "SELECT count(email) AS n, count(DISTINCT email) AS d FROM customers", "[[3,3]]"},
	{"count by group", "SELECT region, count(*) AS n FROM customers GROUP BY region ORDER BY region", `[["east",1],["north",2],["south",1]]`},
	{"grouped on, key masked", "SELECT email, count(*) AS n FROM customers WHERE email IS NOT NULL GROUP BY email ORDER BY email", `[["****",1],["****",1],["****",1]]`},
	{"equality filter", "SELECT id FROM customers WHERE email = 'bo@yahoo.com'", "[[2]]"},
	{"ordered by", "SELECT id FROM customers WHERE email IS NOT NULL ORDER BY email DESC", "[[3],[2],[1]]"},
	{"joined on", "SELECT count(*) AS n FROM customers a JOIN customers b ON a.email = b.email", "[[3]]"},
	{"a count in a subquery", "SELECT (SELECT count(*) FROM customers WHERE custname LIKE 'B%') AS n", "[[1]]"},
	{"unmasked columns", "SELECT id, region FROM customers WHERE id = 1", `[[1,"north"]]`},
}

// MaskingResult is what one spelling returned, in the terms the judge
// reads: the rows and text of a result, or the error.
type MaskingResult struct {
	Columns     []string
	Rows        [][]any
	Text        string
	MaskedCells int
	Err         error
	// Refused and Code when a defence refused it; Layer names the layer
	// of another error.
	Refused     bool
	Code, Layer string
}

// MaskingOutcome says how a spelling ended on engine ("masked", "refused
// (code)", "error (layer)"), failing the test on a leak: a masked value,
// or one of its forms, in any cell or error, or a column that should be
// masked that is not. mask is the text a masked cell shows.
func MaskingOutcome(t *testing.T, engine string, s MaskingSpelling, sql string, r MaskingResult, mask string) string {
	t.Helper()
	if r.Err != nil {
		// A database's message may quote the value it failed on.
		for _, secret := range MaskedSecrets {
			if strings.Contains(strings.ToLower(r.Err.Error()), strings.ToLower(secret)) {
				t.Errorf("%s: %s (%s): the error quotes %q: %v", engine, s.Name, sql, secret, r.Err)
				return "LEAK"
			}
		}
		switch {
		case r.Refused:
			return "refused (" + r.Code + ")"
		case r.Layer != "":
			return "error (" + r.Layer + ")"
		}
		return "error"
	}
	raw, _ := json.Marshal(r.Rows)
	text := strings.ToLower(string(raw) + r.Text)
	for _, secret := range MaskedSecrets {
		for _, form := range []string{secret, hex.EncodeToString([]byte(secret)), strings.ReplaceAll(secret, "@", " at "), secret[:5]} {
			if strings.Contains(text, strings.ToLower(form)) {
				t.Errorf("%s: %s (%s) leaks %q: %s", engine, s.Name, sql, form, raw)
				return "LEAK"
			}
		}
	}
	for i, c := range r.Columns {
		if s.Masked != nil && !slices.Contains(s.Masked, c) {
			continue
		}
		for _, row := range r.Rows {
			if row[i] != nil && row[i] != mask {
				t.Errorf("%s: %s (%s): column %s shows %v", engine, s.Name, sql, c, row[i])
				return "LEAK"
			}
		}
	}
	if r.MaskedCells == 0 {
		t.Errorf("%s: %s (%s): nothing masked: %s", engine, s.Name, sql, raw)
	}
	return "masked"
}

// MaskingTable renders the outcomes, a spelling a row and an engine a
// column, as the golden tables under sqlguard/testdata/attacks.
func MaskingTable(engines []string, outcomes map[string][]string, mask string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| spelling | %s |\n| --- |%s\n", strings.Join(engines, " | "), strings.Repeat(" --- |", len(engines)))
	for _, s := range MaskingSpellings {
		fmt.Fprintf(&b, "| %s | %s |\n", s.Name, strings.Join(outcomes[s.Name], " | "))
	}
	fmt.Fprintf(&b, "\n%d spellings; masked: every cell that derives from a masked column shows %s; refused: the validator's code; error: the database's.\n", len(MaskingSpellings), mask)
	return b.String()
}
