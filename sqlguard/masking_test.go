package sqlguard

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/internal/pgtest"
)

// The masking fixture: customers whose names and e-mail addresses are
// masked, and their orders.
const maskingDDL = `CREATE TABLE customers (id integer PRIMARY KEY, custname text, email text, region text);
CREATE TABLE orders (id integer PRIMARY KEY, custref integer, note text);
INSERT INTO customers VALUES (1, 'Ana Lima', 'ana@gmail.com', 'north'), (2, 'Bo Chen', 'bo@yahoo.com', 'south'),
  (3, 'Cy Diaz', 'cy@gmail.com', 'north'), (4, 'Di Evans', NULL, 'east');
INSERT INTO orders VALUES (10, 1, 'gift wrap'), (11, 3, 'leave at door'), (12, 2, 'call first');`

var maskingOptions = Options{MaskedColumns: []string{"customers.email", "customers.custname"}}

// maskedSecrets are the masked values, none of which may come back in any
// form.
var maskedSecrets = []string{"ana@gmail.com", "bo@yahoo.com", "cy@gmail.com", "Ana Lima", "Bo Chen", "Cy Diaz", "Di Evans"}

// maskingSpelling is one way a query could show a masked value: the names
// of the result columns that must come back masked ("" for all).
type maskingSpelling struct {
	name, sqlite, postgres string
	masked                 []string
}

var maskingSpellings = []maskingSpelling{
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

// maskingAllowed are the queries a masked column still answers, with what
// they must return.
var maskingAllowed = []struct{ name, sql, want string }{
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

// TestMasking: every spelling that would show a masked value shows Mask
// or is refused, on SQLite and PostgreSQL, and the masked columns still
// filter, join, group and count; the outcomes are the golden table
// testdata/attacks/masking.md.
func TestMasking(t *testing.T) {
	sqlitePath := filepath.Join(t.TempDir(), "masking.db")
	conn, err := sqlite3.Open(sqlitePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(maskingDDL); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	type engine struct{ name, dsn string }
	engines := []engine{{"SQLite", "sqlite:" + sqlitePath}}
	names := []string{"SQLite"}
	if dsn, ok := maskingPostgres(t); ok {
		engines = append(engines, engine{"PostgreSQL", dsn})
		names = append(names, "PostgreSQL")
	}
	outcomes := map[string][]string{}
	for _, e := range engines {
		db, err := Open(context.Background(), "masking", e.dsn, maskingOptions, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range maskingSpellings {
			sql := s.sqlite
			if e.name == "PostgreSQL" && s.postgres != "" {
				sql = s.postgres
			}
			res, err := db.Query(context.Background(), "test", sql)
			outcomes[s.name] = append(outcomes[s.name], maskingOutcome(t, e.name, s, sql, res, err))
		}
		for _, a := range maskingAllowed {
			res, err := db.Query(context.Background(), "test", a.sql)
			if err != nil {
				t.Errorf("%s: %s: %v", e.name, a.name, err)
				continue
			}
			if got, _ := json.Marshal(res.Rows); string(got) != a.want {
				t.Errorf("%s: %s: rows %s, want %s", e.name, a.name, got, a.want)
			}
		}
		db.Close()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| spelling | %s |\n| --- |%s\n", strings.Join(names, " | "), strings.Repeat(" --- |", len(engines)))
	for _, s := range maskingSpellings {
		fmt.Fprintf(&b, "| %s | %s |\n", s.name, strings.Join(outcomes[s.name], " | "))
	}
	fmt.Fprintf(&b, "\n%d spellings; masked: every cell that derives from a masked column shows %s; refused: the validator's code; error: the database's.\n", len(maskingSpellings), Mask)
	if len(engines) < 2 {
		t.Log("PostgreSQL not installed: the table is not compared\n" + b.String())
		return
	}
	golden.CheckFile(t, filepath.Join("testdata", "attacks", "masking.md"), []byte(b.String()))
}

// maskingOutcome says how a spelling ended, failing the test on a leak: a
// masked value, or one of its forms, in any cell, or a column that should
// be masked that is not.
func maskingOutcome(t *testing.T, engine string, s maskingSpelling, sql string, res *Result, err error) string {
	t.Helper()
	if err != nil {
		// A database's message may quote the value it failed on.
		for _, secret := range maskedSecrets {
			if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(secret)) {
				t.Errorf("%s: %s (%s): the error quotes %q: %v", engine, s.name, sql, secret, err)
				return "LEAK"
			}
		}
		ge, ok := AsError(err)
		switch {
		case ok && ge.Refused:
			return "refused (" + ge.Code + ")"
		case ok:
			return "error (" + string(ge.Layer) + ")"
		}
		return "error"
	}
	raw, _ := json.Marshal(res.Rows)
	text := strings.ToLower(string(raw) + res.Text(100))
	for _, secret := range maskedSecrets {
		for _, form := range []string{secret, hex.EncodeToString([]byte(secret)), strings.ReplaceAll(secret, "@", " at "), secret[:5]} {
			if strings.Contains(text, strings.ToLower(form)) {
				t.Errorf("%s: %s (%s) leaks %q: %s", engine, s.name, sql, form, raw)
				return "LEAK"
			}
		}
	}
	for i, c := range res.Columns {
		if s.masked != nil && !slices.Contains(s.masked, c.Name) {
			continue
		}
		for _, row := range res.Rows {
			if row[i] != nil && row[i] != Mask {
				t.Errorf("%s: %s (%s): column %s shows %v", engine, s.name, sql, c.Name, row[i])
				return "LEAK"
			}
		}
	}
	if res.MaskedCells == 0 {
		t.Errorf("%s: %s (%s): nothing masked: %s", engine, s.name, sql, raw)
	}
	return "masked"
}

// maskingPostgres creates the fixture on the shared test cluster and
// returns its agent DSN; false when PostgreSQL is not installed.
func maskingPostgres(t *testing.T) (string, bool) {
	if _, err := pgtest.FindBinaries(); err != nil && os.Getenv("OKF_REQUIRE_POSTGRES") != "1" {
		return "", false
	}
	ctx := context.Background()
	admin := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, maskingDDL); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_mask_%d_%d", os.Getpid(), roleSeq.Add(1))
	agent := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	if _, err := PreparePostgres(ctx, admin, agent, maskingOptions); err != nil {
		t.Fatal(err)
	}
	return agent, true
}
