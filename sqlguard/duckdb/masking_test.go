package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/sqlguard/attacktest"
)

// TestMasking: on DuckDB, as on the other engines (sqlguard's TestMasking),
// every form that would show a masked value shows the mask or is refused,
// counts and filters answer, and a row filter keeps other callers' rows
// out.
func TestMasking(t *testing.T) {
	path := writeFixture(t, "")
	opts := sqlguard.Options{DeniedColumns: fixtureOptions.DeniedColumns, MaskedColumns: []string{"hero.name"},
		RowFilters: map[string]string{"notes": "body <> :caller.hide"}}
	db, err := sqlguard.Open(context.Background(), "masking", "duckdb:"+path, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := sqlguard.WithCaller(context.Background(), map[string]string{"hide": "second"})
	for _, sql := range []string{
		"SELECT name FROM hero",
		"SELECT id, name FROM hero",
		"SELECT upper(name) FROM hero",
		"SELECT name || '' FROM hero",
		"SELECT CAST(name AS BLOB) FROM hero",
		"SELECT min(name) FROM hero",
		"SELECT string_agg(name, ',') FROM hero",
		"SELECT list(name) FROM hero",
		"SELECT (SELECT name FROM hero LIMIT 1)",
		"WITH c AS (SELECT name FROM hero) SELECT * FROM c",
		"SELECT body FROM notes UNION ALL SELECT name FROM hero",
		"SELECT lag(name) OVER (ORDER BY id) FROM hero",
		"SELECT json_object('n', name) FROM hero",
		"SELECT DISTINCT name FROM hero",
		"SELECT * FROM hero",
		"SELECT h FROM hero h",
		"SELECT COLUMNS('na.*') FROM hero",
		"SELECT * EXCLUDE (id) FROM hero",
	} {
		res, err := db.Query(ctx, "test", sql)
		if err != nil {
			if ge, ok := sqlguard.AsError(err); ok && ge.Refused {
				continue
			}
			t.Errorf("%s: %v", sql, err)
			continue
		}
		raw, _ := json.Marshal(res.Rows)
		if strings.Contains(string(raw), "Hero ") || res.MaskedCells == 0 {
			t.Errorf("%s leaks or masks nothing: %.200s", sql, raw)
		}
	}
	for sql, want := range map[string]string{
		"SELECT count(*) FROM hero WHERE name LIKE 'Hero 1%'": "[[612]]",
		"SELECT count(DISTINCT name) FROM hero":               "[[1500]]",
		"SELECT id FROM hero WHERE name = 'Hero 7'":           "[[7]]",
		"SELECT body FROM notes ORDER BY body":                `[["first"],["third"]]`,
	} {
		res, err := db.Query(ctx, "test", sql)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		if got, _ := json.Marshal(res.Rows); string(got) != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
}

// TestMaskingSpellings: the masking suite's spellings (sqlguard's
// TestMasking runs them on SQLite and PostgreSQL) on DuckDB: each is
// masked or refused, and the masked columns still filter, join, group and
// count; the outcomes are the golden table
// sqlguard/testdata/attacks/masking-duckdb.md.
func TestMaskingSpellings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "masking.duckdb")
	raw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(attacktest.MaskingDDL, ";\n") {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlguard.Open(context.Background(), "masking", "duckdb:"+path, sqlguard.Options{MaskedColumns: attacktest.MaskedColumns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	outcomes := map[string][]string{}
	for _, s := range attacktest.MaskingSpellings {
		query := s.SQL("DuckDB")
		res, err := db.Query(context.Background(), "test", query)
		r := attacktest.MaskingResult{Err: err}
		if ge, ok := sqlguard.AsError(err); ok {
			r.Refused, r.Code, r.Layer = ge.Refused, ge.Code, string(ge.Layer)
		} else if err == nil {
			r.Rows, r.Text, r.MaskedCells = res.Rows, res.Text(100), res.MaskedCells
			for _, c := range res.Columns {
				r.Columns = append(r.Columns, c.Name)
			}
		}
		outcomes[s.Name] = append(outcomes[s.Name], attacktest.MaskingOutcome(t, "DuckDB", s, query, r, sqlguard.Mask))
	}
	for _, a := range attacktest.MaskingAllowed {
		res, err := db.Query(context.Background(), "test", a.SQL)
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if got, _ := json.Marshal(res.Rows); string(got) != a.Want {
			t.Errorf("%s: rows %s, want %s", a.Name, got, a.Want)
		}
	}
	golden.CheckFile(t, filepath.Join("..", "testdata", "attacks", "masking-duckdb.md"), []byte(attacktest.MaskingTable([]string{"DuckDB"}, outcomes, sqlguard.Mask)))
}
