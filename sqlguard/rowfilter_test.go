package sqlguard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/sqlguard/attacktest"
)

// TestRowFilters: a caller reads only the rows its values allow, however
// the query reaches the filtered table (FROM, alias, join, subquery, CTE,
// set operation), on SQLite and PostgreSQL, with the query's own
// parameters bound beside the caller's; a caller without the value a
// filter needs is refused, and a value cannot widen the filter.
func TestRowFilters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "filtered.db")
	conn, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(attacktest.MaskingDDL); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	opts := Options{MaskedColumns: []string{"customers.email"}, RowFilters: map[string]string{"customers": "region = :caller.region"}}
	dsns := map[string]string{"SQLite": "sqlite:" + path}
	if pg, ok := maskingPostgres(t); ok {
		dsns["PostgreSQL"] = pg
	}
	north := WithCaller(context.Background(), map[string]string{"region": "north"})
	for engine, dsn := range dsns {
		db, err := Open(context.Background(), "filtered", dsn, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		param := "?"
		if engine == "PostgreSQL" {
			param = "$1"
		}
		for _, c := range []struct {
			sql  string
			args []any
			want string
		}{
			{"SELECT count(*) FROM customers", nil, "[[2]]"},
			{"SELECT id FROM customers c ORDER BY id", nil, "[[1],[3]]"},
			{"SELECT id, email FROM main.customers ORDER BY id", nil, `[[1,"****"],[3,"****"]]`},
			{"SELECT o.id FROM orders o JOIN customers ON customers.id = o.custref ORDER BY o.id", nil, "[[10],[11]]"},
			{"SELECT count(*) FROM orders WHERE custref IN (SELECT id FROM customers)", nil, "[[2]]"},
			{"WITH c AS (SELECT * FROM customers) SELECT count(*) FROM c", nil, "[[2]]"},
			{"SELECT id FROM customers UNION SELECT id FROM customers ORDER BY 1", nil, "[[1],[3]]"},
			{"SELECT id FROM customers WHERE id > " + param + " ORDER BY id", []any{int64(1)}, "[[3]]"},
		} {
			sql := c.sql
			if engine == "PostgreSQL" {
				sql = strings.ReplaceAll(sql, "main.", "public.")
			}
			res, err := db.Query(north, "test", sql, c.args...)
			if err != nil {
				t.Errorf("%s: %s: %v", engine, sql, err)
				continue
			}
			if got, _ := json.Marshal(res.Rows); string(got) != c.want {
				t.Errorf("%s: %s: rows %s, want %s", engine, sql, got, c.want)
			}
		}
		if _, err := db.Query(context.Background(), "test", "SELECT count(*) FROM customers"); err == nil || !strings.Contains(err.Error(), "depend on your region") {
			t.Errorf("%s: a caller without a region: %v", engine, err)
		}
		sly := WithCaller(context.Background(), map[string]string{"region": "x' OR '1'='1"})
		if res, err := db.Query(sly, "test", "SELECT count(*) FROM customers"); err != nil || res.Rows[0][0] != int64(0) {
			t.Errorf("%s: a value that tries to widen the filter: %v, %v", engine, res, err)
		}
		db.Close()
	}
	for name, filters := range map[string]map[string]string{
		"two statements": {"customers": "true; DROP TABLE customers"},
		"a comment":      {"customers": "true -- and more"},
		"a function":     {"customers": "pg_sleep(1) IS NULL"},
		"no such table":  {"customers x": "true"},
	} {
		if _, err := Open(context.Background(), "filtered", "sqlite:"+path, Options{RowFilters: filters}, nil); err == nil {
			t.Errorf("%s: a bad row filter accepted", name)
		}
	}
}
