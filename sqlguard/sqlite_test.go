package sqlguard

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSQLiteQuery(t *testing.T) {
	path := sqliteFixture(t)
	before := sqliteState(t, path)
	ctx := context.Background()
	opts := fixtureOptions
	opts.MaxRows, opts.CountLimit, opts.Timeout, opts.MaxConns = 5, 100, 200*time.Millisecond, 2
	eng, err := OpenSQLite(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewValidator(DialectSQLite, opts, fixtureCatalog(DialectSQLite))
	if err != nil {
		t.Fatal(err)
	}
	db := &DB{name: "fixture", engine: eng, validator: v, opts: opts.withDefaults()}
	lim := Limits{Timeout: opts.Timeout, MaxRows: opts.MaxRows, CountLimit: opts.CountLimit}

	res, err := db.Query(ctx, "test", "SELECT id, name, power FROM hero WHERE id IN (1, 2) ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text(20), "id | name | power\n1 | Hero 1 | 1.125\n2 | Hero 2 | 2.25\n(2 rows)"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if res.Rows[0][0] != int64(1) || res.Rows[0][2] != 1.125 || res.Columns[2].Type != "numeric(8,3)" {
		t.Errorf("typed row %#v, columns %v", res.Rows[0], res.Columns)
	}
	// CTEs and recursive CTEs read no table of the file.
	for sql, want := range map[string]int{
		"WITH t AS (SELECT 1 AS x) SELECT count(*) FROM t":                                            1,
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r": 3,
		"WITH t AS (SELECT name FROM hero WHERE id < 4) SELECT count(*) FROM t, t AS u":               1,
	} {
		if res, err := db.Query(ctx, "test", sql); err != nil || res.Total != want {
			t.Errorf("%s: %v, %v; want %d rows", sql, res, err, want)
		}
	}
	res, err = db.Query(ctx, "test", `SELECT j.value FROM json_each('[3, 4]') j`)
	if err != nil || res.Total != 2 {
		t.Errorf("json_each: %v, %v", res, err)
	}
	res, err = db.Query(ctx, "test", "SELECT a.id FROM hero a, hero b")
	if err != nil || len(res.Rows) != 5 || res.Total != 100 || res.TotalKnown {
		t.Errorf("row cap: %v, %v", res, err)
	}

	// The engine's own layers, reached without the validator.
	for _, tt := range []struct {
		sql   string
		layer Layer
		msg   string
	}{
		{"SELECT secret_identity FROM hero", LayerAuthorizer, "column hero.secret_identity is hidden"},
		{"SELECT * FROM sqlite_schema", LayerAuthorizer, "table main.sqlite_master is not readable"},
		{"DELETE FROM hero", LayerAuthorizer, "DELETE hero is not allowed"},
		{"SELECT 1; DELETE FROM hero", LayerOneStatement, "more than one statement"},
		{"SELECT count(*) FROM hero a, hero b, hero c", LayerInterrupt, "ran longer than 200ms"},
		{"SELECT nam FROM hero", LayerDatabase, "no such column: nam"},
		{"SELECT length(randomblob(300000000))", LayerLimits, "string or blob too big"},
		// Each value fits, the sort does not: SQLite runs out of its heap,
		// and the broken connection is dropped.
		{"SELECT randomblob(10000000) AS b FROM hero ORDER BY b", LayerLimits, "more memory than SQLite may use"},
		{"SELECT count(*) FROM hero", "", ""},
	} {
		if tt.layer == "" {
			if res, err := eng.Run(ctx, tt.sql, nil, lim); err != nil || res.Rows[0][0] != int64(fixtureHeroes) {
				t.Errorf("%s after the refusals: %v %v", tt.sql, res, err)
			}
			continue
		}
		_, err := eng.Run(ctx, tt.sql, nil, lim)
		ge, ok := AsError(err)
		if !ok || ge.Layer != tt.layer || !strings.Contains(ge.Message, tt.msg) {
			t.Errorf("%s: got %v, want the %s: %s", tt.sql, err, tt.layer, tt.msg)
		}
	}
	_, err = eng.Run(ctx, "SELECT nam FROM hero", nil, lim)
	if ge, _ := AsError(err); ge == nil || ge.Position != 8 {
		t.Errorf("position of a SQLite error: %v", err)
	}

	// Many callers, timeouts and cancellations: no more connections than
	// the pool allows, none left after Close, the file untouched.
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, time.Duration(i%4)*30*time.Millisecond+time.Millisecond)
			defer cancel()
			eng.Run(cctx, "SELECT count(*) FROM hero a, hero b", nil, lim)
		})
	}
	wg.Wait()
	if n := eng.OpenConns(); n > opts.MaxConns {
		t.Errorf("%d connections open, pool max %d", n, opts.MaxConns)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := eng.OpenConns(); n != 0 {
		t.Errorf("%d connections open after Close", n)
	}
	if after := sqliteState(t, path); after != before {
		t.Errorf("the file changed:\n%s\n%s", before, after)
	}
}

// TestOneQueryOneConnection: the connection that reads the schema at open
// runs the first query, so okf sql opens the file once, with every layer
// in place on it: the authorizer still refuses, query_only still holds.
func TestOneQueryOneConnection(t *testing.T) {
	eng, err := OpenSQLite(sqliteFixture(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if n := eng.OpenConns(); n != 1 {
		t.Errorf("after open: %d connections open, want the one that read the schema", n)
	}
	ctx := context.Background()
	lim := Limits{MaxRows: 10, Timeout: 5 * time.Second}
	if _, err := eng.Run(ctx, "SELECT name FROM hero", nil, lim); err != nil {
		t.Fatal(err)
	}
	if eng.dials != 1 || eng.OpenConns() != 1 {
		t.Errorf("open and one query: %d connections opened, %d open; want 1 and 1", eng.dials, eng.OpenConns())
	}
	for _, sql := range []string{"DELETE FROM hero", "PRAGMA query_only = 0", "SELECT * FROM sqlite_master"} {
		if _, err := eng.Run(ctx, sql, nil, lim); err == nil {
			t.Errorf("%s ran on the connection that read the schema", sql)
		}
	}
}

// TestRefusedOpenLeavesNoConnection: a file whose allowlist names a table
// it lacks is refused at open, and the connection that read its schema is
// closed, not parked where nothing will ever close it (okf serve opens
// databases for as long as it runs).
func TestRefusedOpenLeavesNoConnection(t *testing.T) {
	abs, _ := filepath.Abs(sqliteFixture(t))
	s := &SQLite{uri: "file:" + abs + "?mode=ro", opts: Options{}.withDefaults(), denied: map[string][]string{},
		slots: make(chan struct{}, 4), idle: make(chan *sqliteConn, 4)}
	if err := s.loadTables([]string{"heroes"}); err == nil {
		t.Fatal("an allowlist naming a missing table was taken")
	}
	if s.dials != 1 || s.OpenConns() != 0 || len(s.idle) != 0 || len(s.slots) != 0 {
		t.Errorf("after a refused open: %d opened, %d open, %d idle, %d slots taken; want 1, 0, 0, 0",
			s.dials, s.OpenConns(), len(s.idle), len(s.slots))
	}
}

func TestOpenSQLiteErrors(t *testing.T) {
	if _, err := OpenSQLite(t.TempDir()+"/absent.sqlite", Options{}); err == nil || !strings.Contains(err.Error(), "absent.sqlite") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := OpenSQLite(sqliteFixture(t), Options{Tables: []string{"heroes"}}); err == nil || !strings.Contains(err.Error(), `allowed table "heroes" does not exist`) {
		t.Errorf("unknown allowed table: %v", err)
	}
}

// BenchmarkGuardSQLite is one typical query through the whole guard on
// SQLite: validator, authorizer, program check, the run.
func BenchmarkGuardSQLite(b *testing.B) {
	db, err := Open(context.Background(), "fixture", "sqlite:"+sqliteFixture(b), fixtureOptions, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sql := "SELECT n.body, count(h.id) FROM notes n JOIN hero h ON h.id % 3 = length(n.body) % 3 WHERE h.id < 100 GROUP BY n.body"
	for b.Loop() {
		if _, err := db.Query(context.Background(), "bench", sql); err != nil {
			b.Fatal(err)
		}
	}
}

// allowed_directories means DuckDB's setting; another engine refuses it
// rather than ignore what the operator asked for.
func TestAllowedDirectoriesDuckDBOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	_, err := Open(context.Background(), "x", "sqlite:"+path, Options{AllowedDirectories: []string{t.TempDir()}}, nil)
	if err == nil || !strings.Contains(err.Error(), "allowed_directories is for DuckDB files only") {
		t.Errorf("got %v, want a refusal naming allowed_directories", err)
	}
}
