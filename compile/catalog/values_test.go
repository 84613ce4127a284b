package catalog_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/sqlguard"
)

// sqliteFile creates a SQLite file in a temporary folder from statements.
func sqliteFile(t *testing.T, name string, statements ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	conn, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range statements {
		if _, err := conn.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// audited reads the values of db with an audit log, and returns the
// statements the log holds.
func audited(t *testing.T, db *compile.Database, opt catalog.ValueOptions) (catalog.ValueStats, []sqlguard.AuditEntry) {
	t.Helper()
	var log bytes.Buffer
	opt.Audit = sqlguard.NewAuditLog(&log)
	st, err := catalog.ReadValues(context.Background(), db, opt)
	if err != nil {
		t.Fatal(err)
	}
	var entries []sqlguard.AuditEntry
	sc := bufio.NewScanner(&log)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e sqlguard.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Caller != "okf compile" || e.Error != "" {
			t.Errorf("audit entry %+v", e)
		}
		entries = append(entries, e)
	}
	if len(entries) != st.Queries {
		t.Errorf("%d statements in the audit log, %d counted", len(entries), st.Queries)
	}
	return st, entries
}

func values(t *testing.T, db *compile.Database, table, column string) *compile.ValueList {
	t.Helper()
	tb := db.Table(table)
	if tb == nil || tb.Column(column) == nil {
		t.Fatalf("no column %s.%s", table, column)
	}
	return tb.Column(column).Values
}

// A SQLite file's text columns get their values: all of them for a column
// of few, or of a lookup table however many and unique, in byte order;
// the most frequent for a larger one; none for a column of mostly unique
// values, a primary key of many, a typeless column
// of numbers, or a column denied by the guard's options or skipped. A
// value that cannot be listed makes its column's list the most frequent
// ones, and a table's lists stay within their bytes.
func TestValuesOfASQLiteFile(t *testing.T) {
	path := sqliteFile(t, "shop.db",
		`CREATE TABLE gender (id INTEGER PRIMARY KEY, gender TEXT)`,
		`INSERT INTO gender VALUES (1, 'Male'), (2, 'Female'), (3, 'N/A'), (4, NULL), (5, ''), (6, 'Male'), (7, 'male')`,
		`CREATE TABLE cities (id INTEGER PRIMARY KEY, city TEXT, name TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
		 INSERT INTO cities SELECT i, CASE WHEN i <= 50 THEN 'O''Hare' WHEN i <= 90 THEN 'Paris' WHEN i <= 120 THEN 'London'
		   WHEN i <= 140 THEN 'Berlin' WHEN i <= 150 THEN 'Rome' WHEN i <= 160 THEN 'Madrid' ELSE 'town ' || i END, 'name ' || i FROM n`,
		`CREATE TABLE codes (code TEXT PRIMARY KEY, label TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
		 INSERT INTO codes SELECT 'c' || i, CASE i % 3 WHEN 0 THEN 'zero' WHEN 1 THEN 'one' ELSE 'two' END FROM n`,
		`CREATE TABLE powers (id INTEGER PRIMARY KEY, power_name TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
		 INSERT INTO powers SELECT i, printf('Power %03d', i) FROM n`,
		`CREATE TABLE kinds (kind TEXT PRIMARY KEY)`,
		`INSERT INTO kinds VALUES ('b'), ('a')`,
		`CREATE TABLE mixed (id INTEGER PRIMARY KEY, anything, word, bad TEXT, secret TEXT, skipped TEXT, amount REAL)`,
		`INSERT INTO mixed VALUES
		   (1, 1, 'x', 'ok', 'pw1', 's', 1.5), (2, 2, 'y', 'ok', 'pw2', 's', 2), (3, 3, 'x', 'ok', 'pw3', 's', 3),
		   (4, 4, 'y', 'a|b', 'pw4', 's', 4), (5, 5, 'x', 'line' || char(10) || 'break', 'pw5', 's', 5),
		   (6, 6, 'y', 'tick`+"``"+`', 'pw6', 's', 6), (7, 7, 'x', printf('%.90c', 'w'), 'pw7', 's', 7), (8, 8, 'y', 'ok', 'pw8', 's', 8)`,
		`CREATE TABLE wide (id INTEGER PRIMARY KEY, a TEXT, b TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
		 INSERT INTO wide SELECT i, printf('%.70c', 'a') || (i % 60), 'b' || (i % 4) FROM n`,
	)
	read := func() *compile.Database {
		db, err := catalog.ReadSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := read()
	opt := catalog.ValueOptions{Guard: sqlguard.Options{DeniedColumns: []string{"mixed.secret"}}, Skip: []string{"Mixed.Skipped"}}
	st, log := audited(t, db, opt)

	wide70 := strings.Repeat("a", 70)
	var powers []string
	for i := 1; i <= 100; i++ {
		powers = append(powers, fmt.Sprintf("Power %03d", i))
	}
	for _, c := range []struct {
		table, column string
		want          *compile.ValueList
	}{
		// Byte order: upper case first; NULL and '' are no values.
		{"gender", "gender", &compile.ValueList{Values: []string{"Female", "Male", "N/A", "male"}}},
		{"cities", "city", &compile.ValueList{Values: []string{"O'Hare", "Paris", "London", "Berlin", "Madrid"}, Count: 146}},
		{"cities", "name", nil},
		{"codes", "code", nil},
		// A lookup table's unique names are its values.
		{"powers", "power_name", &compile.ValueList{Values: powers}},
		{"codes", "label", &compile.ValueList{Values: []string{"one", "two", "zero"}}},
		{"kinds", "kind", &compile.ValueList{Values: []string{"a", "b"}}},
		{"mixed", "anything", nil},
		{"mixed", "word", &compile.ValueList{Values: []string{"x", "y"}}},
		{"mixed", "bad", &compile.ValueList{Values: []string{"ok"}, Count: 5}},
		{"mixed", "secret", nil},
		{"mixed", "skipped", nil},
		{"mixed", "amount", nil},
		// 60 values of 72 bytes do not fit in a table's 4 KiB: the five
		// most frequent do.
		{"wide", "a", &compile.ValueList{Values: []string{wide70 + "0", wide70 + "1", wide70 + "10", wide70 + "11", wide70 + "12"}, Count: 60}},
		{"wide", "b", &compile.ValueList{Values: []string{"b0", "b1", "b2", "b3"}}},
	} {
		if got := values(t, db, c.table, c.column); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s.%s: %+v, want %+v", c.table, c.column, got, c.want)
		}
	}
	if st.Columns != 9 || len(st.Unread) != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, e := range log {
		if strings.Contains(e.SQL, "secret") || strings.Contains(e.SQL, "skipped") || !strings.Contains(e.SQL, " LIMIT ") {
			t.Errorf("ran %s", e.SQL)
		}
	}
	want := compile.Source{ID: "values", Resource: "shop/shop.db", Title: "values read from the database", Values: true}
	if n := len(db.Sources); n != 2 || db.Sources[1] != want {
		t.Errorf("sources %+v", db.Sources)
	}

	// The same file gives the same values.
	again := read()
	audited(t, again, opt)
	if !reflect.DeepEqual(again, db) {
		t.Error("a second read gives other values")
	}

	// Tables outside the guard's allowlist are not read either.
	allowed := read()
	_, log = audited(t, allowed, catalog.ValueOptions{Guard: sqlguard.Options{Tables: []string{"kinds"}}})
	if values(t, allowed, "gender", "gender") != nil || values(t, allowed, "kinds", "kind") == nil {
		t.Error("the allowlist is not kept")
	}
	for _, e := range log {
		if !strings.Contains(e.SQL, `FROM "kinds"`) {
			t.Errorf("ran %s", e.SQL)
		}
	}
}

// A table of two million rows is read within the bounds: each column's
// query reads its first rows only, so a column of few values lists those
// it holds there, as the most frequent, and says how many rows were read.
func TestValuesOfAVeryLargeTable(t *testing.T) {
	const rows = 2_000_000
	path := sqliteFile(t, "big.db",
		`CREATE TABLE people (id INTEGER PRIMARY KEY, gender TEXT, city TEXT, name TEXT, note TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000)
		 INSERT INTO people SELECT i, CASE i % 3 WHEN 0 THEN 'Female' WHEN 1 THEN 'Male' ELSE 'N/A' END,
		   'city' || (i % 1000), 'name' || i, NULL FROM n`,
	)
	db, err := catalog.ReadSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st, log := audited(t, db, catalog.ValueOptions{})
	for _, c := range []struct {
		column string
		want   *compile.ValueList
	}{
		{"gender", &compile.ValueList{Values: []string{"Male", "Female", "N/A"}, Count: 3, Rows: catalog.ValueScanRows}},
		{"city", &compile.ValueList{Values: []string{"city0", "city1", "city10", "city100", "city101"}, Count: 1000, Rows: catalog.ValueScanRows}},
		{"name", nil},
		{"note", nil},
	} {
		if got := values(t, db, "people", c.column); !reflect.DeepEqual(got, c.want) {
			t.Errorf("people.%s: %+v, want %+v", c.column, got, c.want)
		}
	}
	// One query tells the table's size, one reads each text column.
	if st.Queries != 5 || len(log) != 5 {
		t.Errorf("%d queries: %+v", st.Queries, log)
	}
	if limit := catalog.ValueProbeRows + 4*catalog.ValueScanRows; st.Rows > limit || st.Rows >= rows {
		t.Errorf("%d rows read; at most %d", st.Rows, limit)
	}
	for _, e := range log {
		if e.Rows > catalog.ValueThreshold+2 {
			t.Errorf("%d rows back from %s", e.Rows, e.SQL)
		}
	}
}

// A database of many text columns stops reading at its rows budget,
// smallest tables first, so that lookups are always read.
func TestValuesRowsBudget(t *testing.T) {
	statements := []string{`CREATE TABLE aaa_big (id INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT, d TEXT, e TEXT, f TEXT, g TEXT, h TEXT, i TEXT, j TEXT, k TEXT, l TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
		 INSERT INTO aaa_big SELECT i, 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x' FROM n`,
		`CREATE TABLE zzz_small (id INTEGER PRIMARY KEY, kind TEXT)`,
		`INSERT INTO zzz_small VALUES (1, 'one'), (2, 'two')`,
	}
	db, err := catalog.ReadSQLite(context.Background(), sqliteFile(t, "many.db", statements...))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := audited(t, db, catalog.ValueOptions{})
	if v := values(t, db, "zzz_small", "kind"); v == nil || len(v.Values) != 2 {
		t.Errorf("the lookup table was not read: %+v", v)
	}
	read := 0
	for _, c := range db.Table("aaa_big").Columns {
		if c.Values != nil {
			read++
		}
	}
	if read != catalog.ValueRowsBudget/catalog.ValueScanRows || len(st.Unread) != 12-read {
		t.Errorf("%d columns of the large table read, unread %v", read, st.Unread)
	}
	if st.Rows > catalog.ValueRowsBudget+2*catalog.ValueProbeRows {
		t.Errorf("%d rows read", st.Rows)
	}
}

// PostgreSQL's text, varchar and char columns get their values in byte
// order, whatever the database's collation; enum columns keep their labels
// and no values; a denied column is never read.
func TestValuesFromPostgres(t *testing.T) {
	ctx := context.Background()
	dsn := postgresWith(t, `
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE publisher (id int PRIMARY KEY, name varchar(40), code char(3), mood mood, secret text, note text);
INSERT INTO publisher
SELECT i, (ARRAY['Marvel Comics', 'DC Comics', 'dark horse', 'Image'])[i % 4 + 1], (ARRAY['ab', 'c'])[i % 2 + 1],
       'ok', 'pw' || i, 'note ' || (i % 100)
FROM generate_series(1, 1000) AS i;`)
	db, err := catalog.ReadPostgres(ctx, dsn, catalog.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, log := audited(t, db, catalog.ValueOptions{Guard: sqlguard.Options{DeniedColumns: []string{"secret"}}})
	for _, c := range []struct {
		column string
		want   *compile.ValueList
	}{
		{"name", &compile.ValueList{Values: []string{"DC Comics", "Image", "Marvel Comics", "dark horse"}}},
		{"code", &compile.ValueList{Values: []string{"ab", "c"}}},
		{"mood", nil},
		{"secret", nil},
		{"note", &compile.ValueList{Values: []string{"note 0", "note 1", "note 10", "note 11", "note 12"}, Count: 100}},
	} {
		if got := values(t, db, "publisher", c.column); !reflect.DeepEqual(got, c.want) {
			t.Errorf("publisher.%s: %+v, want %+v", c.column, got, c.want)
		}
	}
	if st.Columns != 3 {
		t.Errorf("stats %+v", st)
	}
	for _, e := range log {
		if strings.Contains(e.SQL, "secret") {
			t.Errorf("ran %s", e.SQL)
		}
	}
	if got := db.Sources[len(db.Sources)-1]; !got.Values || got.Resource != db.Sources[0].Resource || strings.Contains(got.Resource, "password") {
		t.Errorf("sources %+v", db.Sources)
	}
}

// A column marked as personal data is never read, though no guard option
// denies or masks it: no statement names it.
func TestValuesSkipPersonalData(t *testing.T) {
	path := sqliteFile(t, "people.db",
		`CREATE TABLE people (id INTEGER PRIMARY KEY, email TEXT, kind TEXT)`,
		`INSERT INTO people VALUES (1, 'ada@example.com', 'staff'), (2, 'bob@example.com', 'guest')`,
	)
	db, err := catalog.ReadSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Table("people").Column("email").PersonalData = true
	st, log := audited(t, db, catalog.ValueOptions{})
	if v := values(t, db, "people", "email"); v != nil {
		t.Errorf("email, personal data: values %v", v.Values)
	}
	if v := values(t, db, "people", "kind"); v == nil || !slices.Equal(v.Values, []string{"guest", "staff"}) || st.Columns != 1 {
		t.Errorf("kind: %+v; %d columns", v, st.Columns)
	}
	for _, e := range log {
		if strings.Contains(e.SQL, "email") {
			t.Errorf("a statement names the personal data: %s", e.SQL)
		}
	}
}
