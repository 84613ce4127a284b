package duckdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/okf-tools/okf/sqlguard"
)

// The fixture: heroes with a hidden column, as the other engines' suites
// have, notes, and a view that shows the hidden column. 1,500 heroes make
// a three-way cross join of 3.4·10⁹ rows.
const fixtureDDL = `CREATE TABLE hero (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, secret_identity VARCHAR, power DECIMAL(8,3));
CREATE TABLE notes (body VARCHAR);
INSERT INTO notes VALUES ('first'), ('second'), ('third');
INSERT INTO hero SELECT i, 'Hero ' || i, 'Person ' || i, i * 1.125 FROM range(1, 1501) t(i);
CREATE VIEW hero_view AS SELECT id, name, secret_identity FROM hero;
`

var fixtureOptions = sqlguard.Options{DeniedColumns: []string{"hero.secret_identity", "hero_view.secret_identity"}}

// writeFixture writes a DuckDB file through the duckdb-go driver, with
// extra statements after the fixture's.
func writeFixture(t testing.TB, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(fixtureDDL+extra, ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			db.Close()
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// folderState is every file of path's folder with a digest of its bytes:
// the guard must neither change the database nor leave a file beside it.
func folderState(t testing.TB, path string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
		sum := sha256.Sum256(data)
		b.WriteString(e.Name() + ":" + hex.EncodeToString(sum[:8]) + " ")
	}
	return b.String()
}

func openFixture(t testing.TB, path string, opts sqlguard.Options) *sqlguard.DB {
	t.Helper()
	db, err := sqlguard.Open(context.Background(), "fixture", "duckdb:"+path, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestQuery(t *testing.T) {
	path := writeFixture(t, "")
	before := folderState(t, path)
	db := openFixture(t, path, fixtureOptions)
	ctx := context.Background()
	res, err := db.Query(ctx, "test", "SELECT id, name, power FROM hero WHERE id <= $1 ORDER BY id", int64(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(20); got != "id | name | power\n1 | Hero 1 | 1.125\n2 | Hero 2 | 2.250\n(2 rows)" {
		t.Errorf("got\n%s", got)
	}
	if got := []string{res.Columns[0].Type, res.Columns[1].Type, res.Columns[2].Type}; strings.Join(got, ",") != "integer,varchar,decimal(8,3)" {
		t.Errorf("column types %v", got)
	}
	for _, q := range []string{"SELECT secret_identity FROM hero", "SELECT * FROM hero_view", "SELECT #3 FROM hero"} {
		_, err := db.Query(ctx, "test", q)
		if ge, ok := sqlguard.AsError(err); !ok || !ge.Refused {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Queries side by side, more than the connections allowed.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			res, err := db.Query(ctx, "test", "SELECT count(*) FROM hero WHERE id > $1", int64(i))
			if err == nil && res.Rows[0][0] != int64(1500-i) {
				err = fmt.Errorf("query %d counted %v", i, res.Rows[0][0])
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	db.Close()
	if after := folderState(t, path); after != before {
		t.Errorf("the folder changed:\n%s\n%s", before, after)
	}
}

// TestValues reads a value of every type: exact numbers, dates and
// times, and nested values in DuckDB's notation, never rounded.
func TestValues(t *testing.T) {
	path := writeFixture(t, "CREATE TYPE mood AS ENUM ('sad', 'happy');\n")
	d, err := Open(path, sqlguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	date := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		expr, typ string
		want      any
	}{
		{"true", "boolean", true},
		{"(-128)::TINYINT", "tinyint", int64(-128)},
		{"4294967295::UINTEGER", "uinteger", int64(4294967295)},
		{"9223372036854775807::BIGINT", "bigint", int64(9223372036854775807)},
		{"18446744073709551615::UBIGINT", "ubigint", "18446744073709551615"},
		{"(-170141183460469231731687303715884105727)::HUGEINT", "hugeint", "-170141183460469231731687303715884105727"},
		{"340282366920938463463374607431768211455::UHUGEINT", "uhugeint", "340282366920938463463374607431768211455"},
		{"0.1::FLOAT", "float", 0.1},
		{"0.1::DOUBLE + 0.2::DOUBLE", "double", 0.30000000000000004},
		{"-0.5::DECIMAL(4,3)", "decimal(4,3)", "-0.500"},
		{"12::DECIMAL(38,10)", "decimal(38,10)", "12.0000000000"},
		{"12345678901234567.8::DECIMAL(18,1)", "decimal(18,1)", "12345678901234567.8"},
		{"0.000001::DECIMAL(9,6)", "decimal(9,6)", "0.000001"},
		{"'héllo'", "varchar", "héllo"},
		{"'ab'::BLOB", "blob", []byte("ab")},
		{"DATE '2024-02-29'", "date", date("2024-02-29 00:00:00")},
		{"DATE '-0044-03-15'", "date", "0045-03-15 (BC)"},
		{"'infinity'::DATE", "date", "infinity"},
		{"TIMESTAMP '2024-01-02 03:04:05.678'", "timestamp", date("2024-01-02 03:04:05.678")},
		{"TIMESTAMP_NS '2024-01-02 03:04:05.123456789'", "timestamp_ns", date("2024-01-02 03:04:05.123456789")},
		{"TIMESTAMPTZ '2024-01-02 03:04:05+02'", "timestamp with time zone", date("2024-01-02 01:04:05")},
		{"TIME '10:00:00.5'", "time", "10:00:00.5"},
		{"TIMETZ '10:00:00+05:30'", "time with time zone", "10:00:00+05:30"},
		{"INTERVAL '-1 year -2 days 03:00:00'", "interval", "-1 year -2 days 03:00:00"},
		{"INTERVAL '36 hours'", "interval", "36:00:00"},
		{"INTERVAL '14 months 1 microsecond'", "interval", "1 year 2 months 00:00:00.000001"},
		{"INTERVAL '0 seconds'", "interval", "00:00:00"},
		{"uuid '6f1b8a2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b'", "uuid", "6f1b8a2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b"},
		{"'happy'::mood", "enum", "happy"},
		{"'0101101'::BIT", "bit", "0101101"},
		{"-'123456789012345678901234567890'::BIGNUM", "bignum", "-123456789012345678901234567890"},
		{"[[1, 2], NULL, []]", "integer[][]", "[[1, 2], NULL, []]"},
		{"['it''s', 'x, y', '']", "varchar[]", `['it\'s', 'x, y', '']`},
		{"{'a': {'b': [1.50]}, 'c d': NULL}", "struct(a struct(b decimal(3,2)[]), c d integer)", "{'a': {'b': [1.50]}, 'c d': NULL}"},
		{"MAP {'k': [1], 'j': NULL}", "map(varchar, integer[])", "{'k'=[1], 'j'=NULL}"},
		{"[1, 2, 3]::INTEGER[3]", "integer[3]", "[1, 2, 3]"},
		{"union_value(num := 2)", "union(num integer)", "2"},
		{"[DATE '2024-01-02', NULL]", "date[]", "[2024-01-02, NULL]"},
		{"NULL", "integer", nil},
	} {
		res, err := d.Run(context.Background(), "SELECT "+tt.expr+" AS v", nil, sqlguard.Limits{Timeout: time.Minute, MaxRows: 10, CountLimit: 10})
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		got := res.Rows[0][0]
		if !reflect.DeepEqual(got, tt.want) || res.Columns[0].Type != tt.typ {
			t.Errorf("%s: got %#v (%s), want %#v (%s)", tt.expr, got, res.Columns[0].Type, tt.want, tt.typ)
		}
	}
}

// TestLimits: the row cap stops a streaming result, long values are cut
// to the sink's budget, the timeout interrupts a runaway, and a file that
// does not exist is never created.
func TestLimits(t *testing.T) {
	path := writeFixture(t, "")
	d, err := Open(path, sqlguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	res, err := d.Run(ctx, "SELECT i FROM range(1000000000000) t(i)", nil, sqlguard.Limits{Timeout: time.Minute, MaxRows: 5, CountLimit: 3000})
	if err != nil || len(res.Rows) != 5 || res.Total != 3000 || res.TotalKnown || res.Rows[4][0] != int64(4) {
		t.Errorf("row cap: %v, %d rows, total %d (known %v)", err, len(res.Rows), res.Total, res.TotalKnown)
	}
	res, err = d.Run(ctx, "SELECT repeat('x', 300000) AS a, [repeat('y', 300000)] AS b", nil, sqlguard.Limits{Timeout: time.Minute, MaxRows: 5, CountLimit: 5})
	if err != nil {
		t.Fatalf("cut values: %v", err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 2 {
		t.Fatalf("cut values: %d rows, want one of two values", len(res.Rows))
	}
	a, aok := res.Rows[0][0].(string)
	b, bok := res.Rows[0][1].(string)
	if res.CutValues != 2 || !aok || len(a) > sqlguard.MaxCellBytes || !bok || !strings.HasSuffix(b, "…") {
		t.Errorf("cut values: %d cut, a %T of %d bytes, b %T ending %q", res.CutValues, res.Rows[0][0], len(a), res.Rows[0][1], b[max(0, len(b)-8):])
	}
	_, err = d.Run(ctx, "SELECT repeat('0123456789abcdef', 1100000)", nil, sqlguard.Limits{Timeout: time.Minute, MaxRows: 5, CountLimit: 5})
	if ge, ok := sqlguard.AsError(err); !ok || ge.Layer != sqlguard.LayerLimits || ge.Code != "row_too_big" {
		t.Errorf("a 17.6 MB value: %v", err)
	}
	_, err = d.Run(ctx, "SELECT sum(a.id * b.id + c.id) FROM hero a, hero b, hero c", nil, sqlguard.Limits{Timeout: 100 * time.Millisecond, MaxRows: 5, CountLimit: 5})
	if ge, ok := sqlguard.AsError(err); !ok || ge.Layer != sqlguard.LayerInterrupt || !ge.Refused {
		t.Errorf("a runaway: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = d.Run(cancelled, "SELECT sum(a.id * b.id + c.id) FROM hero a, hero b, hero c", nil, sqlguard.Limits{Timeout: time.Minute, MaxRows: 5, CountLimit: 5})
	if ge, ok := sqlguard.AsError(err); !ok || ge.Layer != sqlguard.LayerDeadline || ge.Code != "cancelled" {
		t.Errorf("a cancelled query: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing.duckdb")
	if _, err := Open(missing, sqlguard.Options{}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(missing)); len(entries) != 0 {
		t.Errorf("opening a missing file left %d files", len(entries))
	}
	if _, err := Open(path, sqlguard.Options{Tables: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `allowed table "nope" does not exist`) {
		t.Errorf("an allowlist naming no table: %v", err)
	}
}
