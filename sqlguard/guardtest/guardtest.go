// Package guardtest is the conformance suite of the SQL guard's engines:
// what a query through sqlguard returns (rows, exact values, the text a
// model reads, caps, parameters, refusals, masks, row filters, timeouts)
// must not depend on the engine. Each engine's tests call Run with a
// Harness that loads the portable fixture into a fresh database of that
// engine, as store/storetest does for stores; a new engine is a package
// and one call of Run.
package guardtest

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/sqlguard"
)

// Fixture is the portable DDL and rows every engine loads, as its owner,
// one statement at a time: types and literals that PostgreSQL, SQLite and
// DuckDB read alike.
var Fixture = []string{
	"CREATE TABLE hub (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, region VARCHAR(10) NOT NULL, capacity DECIMAL(12,3), rank BIGINT, email VARCHAR(80), secret VARCHAR(40))",
	"INSERT INTO hub VALUES (1, 'Leeds', 'north', 1234567.125, 9007199254740993, 'ops@leeds.example', 's1')",
	"INSERT INTO hub VALUES (2, 'Bristol | Bath', 'south', 0.5, -1, 'team@bristol.example', 's2')",
	"INSERT INTO hub VALUES (3, 'Ōsaka', 'east', NULL, NULL, NULL, 's3')",
	"INSERT INTO hub VALUES (4, 'York', 'north', 12, 0, 'york@leeds.example', 's4')",
	"CREATE TABLE route (hub_id INTEGER, dest VARCHAR(40), region VARCHAR(10))",
	"INSERT INTO route VALUES (1, 'York', 'north'), (1, 'Hull', 'north'), (2, 'Bath', 'south'), (4, 'Leeds', 'north')",
}

// Options are the guard options the suite opens the fixture with.
var Options = sqlguard.Options{
	DeniedColumns: []string{"hub.secret"},
	MaskedColumns: []string{"hub.email"},
	RowFilters:    map[string]string{"route": "region = :caller.region"},
	MaxRows:       3,
	ShownRows:     2,
	Timeout:       500 * time.Millisecond,
}

// Harness is one engine under test.
type Harness struct {
	// Open creates a fresh database holding stmts and opens it through
	// the guard with opts.
	Open func(t *testing.T, stmts []string, opts sqlguard.Options) *sqlguard.DB
	// Param spells the n-th (1-based) parameter of a statement.
	Param func(n int) string
	// ExactDecimals: DECIMAL columns come back as exact text (false
	// for SQLite, which stores them as REAL).
	ExactDecimals bool
}

// Run runs every case against the harness's engine.
func Run(t *testing.T, h Harness) {
	db := h.Open(t, Fixture, Options)
	ctx := context.Background()
	query := func(t *testing.T, sql string, args ...any) *sqlguard.Result {
		t.Helper()
		res, err := db.Query(ctx, "guardtest", sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res
	}
	t.Run("exact values", func(t *testing.T) {
		res := query(t, "SELECT id, name, rank FROM hub WHERE id < 4 ORDER BY id")
		want := "id | name | rank\n" +
			"1 | Leeds | 9007199254740993\n" +
			"2 | Bristol \\| Bath | -1\n" +
			"3 | Ōsaka | NULL\n(3 rows)"
		if got := res.Text(10); got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
		rows, _ := json.Marshal(res.Rows)
		if got, want := string(rows), `[[1,"Leeds",9007199254740993],[2,"Bristol | Bath",-1],[3,"Ōsaka",null]]`; got != want {
			t.Errorf("rows %s, want %s", got, want)
		}
	})
	t.Run("decimals", func(t *testing.T) {
		// An engine with a decimal type returns its exact text; SQLite,
		// which stores REAL, a float. Either way the value is the one
		// stored, never rounded.
		res := query(t, "SELECT capacity, sum(capacity) OVER () AS total FROM hub WHERE id IN (1, 2) ORDER BY id")
		for i, want := range [][2]string{{"1234567.125", "1234567.625"}, {"0.5", "1234567.625"}} {
			for j := range want {
				v := res.Rows[i][j]
				got, ok := decimal(v)
				if !ok || got.Cmp(mustRat(want[j])) != 0 {
					t.Errorf("row %d column %d: %#v, want %s", i+1, j+1, v, want[j])
				}
				if _, isText := v.(string); isText != h.ExactDecimals {
					t.Errorf("row %d column %d: %#v; the engine has exact decimals: %v", i+1, j+1, v, h.ExactDecimals)
				}
			}
		}
	})
	t.Run("aggregates", func(t *testing.T) {
		res := query(t, "SELECT count(*) AS n, count(capacity) AS known, max(name) AS last FROM hub")
		if got, want := res.Text(10), "n | known | last\n4 | 3 | Ōsaka\n(1 row)"; got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("parameters", func(t *testing.T) {
		res := query(t, "SELECT name FROM hub WHERE region = "+h.Param(1)+" AND id > "+h.Param(2)+" ORDER BY id", "north", int64(1))
		if got, want := res.Text(10), "name\nYork\n(1 row)"; got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
		// A value is never SQL.
		res = query(t, "SELECT count(*) AS n FROM hub WHERE name = "+h.Param(1), "x' OR '1'='1")
		if got, want := res.Text(10), "n\n0\n(1 row)"; got != want {
			t.Errorf("an injected value: %s", got)
		}
	})
	t.Run("row cap", func(t *testing.T) {
		res := query(t, "SELECT id FROM hub ORDER BY id")
		if len(res.Rows) != 3 || res.Total != 4 || !res.TotalKnown || !res.Truncated() {
			t.Errorf("%d rows of %d (known %v), want 3 of 4", len(res.Rows), res.Total, res.TotalKnown)
		}
		if got, want := res.Text(2), "id\n1\n2\n(2 of 4 rows)"; got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("denied column", func(t *testing.T) {
		for _, sql := range []string{"SELECT secret FROM hub", "SELECT * FROM hub", "SELECT count(*) FROM hub WHERE secret = 's1'"} {
			refused(t, db, sql)
		}
	})
	t.Run("masked column", func(t *testing.T) {
		res := query(t, "SELECT name, email FROM hub WHERE id IN (1, 3) ORDER BY id")
		if got, want := res.Text(10), "name | email\nLeeds | ****\nŌsaka | NULL\n(2 rows)"; got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
		if res.MaskedCells != 1 || len(res.MaskedColumns) != 1 || res.MaskedColumns[0] != "email" {
			t.Errorf("masked %v, %d cells; want email, 1", res.MaskedColumns, res.MaskedCells)
		}
		res = query(t, "SELECT count(*) AS n FROM hub WHERE email LIKE '%@leeds.example'")
		if got, want := res.Text(10), "n\n2\n(1 row)"; got != want {
			t.Errorf("a count filtered on the masked column:\n%s", got)
		}
	})
	t.Run("row filter", func(t *testing.T) {
		for region, want := range map[string]string{
			"north": "dest\nHull\nLeeds\nYork\n(3 rows)",
			"south": "dest\nBath\n(1 row)",
			"east":  "dest\n(0 rows)",
		} {
			res, err := db.Query(sqlguard.WithCaller(ctx, map[string]string{"region": region}), "guardtest", "SELECT dest FROM route ORDER BY dest")
			if err != nil {
				t.Fatalf("%s: %v", region, err)
			}
			if got := res.Text(10); got != want {
				t.Errorf("%s:\n%s\nwant:\n%s", region, got, want)
			}
		}
		if _, err := db.Query(ctx, "guardtest", "SELECT dest FROM route"); err == nil {
			t.Errorf("a caller without the filter's value read the filtered table")
		}
	})
	t.Run("writes refused", func(t *testing.T) {
		for _, sql := range []string{"DELETE FROM hub", "UPDATE hub SET name = 'x'", "INSERT INTO route VALUES (9, 'x')", "DROP TABLE route", "CREATE TABLE x (a INTEGER)"} {
			refused(t, db, sql)
		}
		if got := query(t, "SELECT count(*) AS n FROM hub").Text(1); got != "n\n4\n(1 row)" {
			t.Errorf("after the writes: %s", got)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		_, err := db.Query(ctx, "guardtest", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r")
		var ge *sqlguard.Error
		if !errors.As(err, &ge) {
			t.Fatalf("an endless query: got %v, want a guard error", err)
		}
		if !strings.Contains(strings.ToLower(ge.Error()), "time") && !strings.Contains(strings.ToLower(ge.Error()), "interrupt") {
			t.Errorf("an endless query: %v, want a timeout", ge)
		}
	})
}

// decimal reads a result value as a number: exact text or a float.
func decimal(v any) (*big.Rat, bool) {
	switch v := v.(type) {
	case string:
		return new(big.Rat).SetString(v)
	case float64:
		return new(big.Rat).SetFloat64(v), true
	case int64:
		return new(big.Rat).SetInt64(v), true
	}
	return nil, false
}

func mustRat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("guardtest: not a number: " + s)
	}
	return r
}

// refused checks that the guard refuses sql outright.
func refused(t *testing.T, db *sqlguard.DB, sql string) {
	t.Helper()
	_, err := db.Query(context.Background(), "guardtest", sql)
	var ge *sqlguard.Error
	if !errors.As(err, &ge) || !ge.Refused {
		t.Errorf("%s: got %v, want a refusal", sql, err)
	}
}
