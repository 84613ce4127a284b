package sqlguard

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidatePostgres(t *testing.T) {
	v, err := NewValidator(DialectPostgres, fixtureOptions, fixtureCatalog(DialectPostgres))
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"SELECT 1",
		"VALUES (1), (2)",
		"select 1 union select 2",
		"WITH a AS (SELECT 1 AS x) SELECT x FROM a",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
		"SELECT * FROM notes",
		"SELECT h.name FROM public.hero h WHERE h.id IN (SELECT id FROM hero)",
		"WITH hero AS (SELECT 1 AS x) SELECT * FROM hero", // a CTE, not the table
		"-- leading comment\nSELECT count(*) FROM hero",
	}
	for _, sql := range allowed {
		if err := v.Validate(sql); err != nil {
			t.Errorf("%q refused: %v", sql, err)
		}
	}
	refused := []struct {
		sql, code string
		pos       int
		msg       string
	}{
		{"", "empty", 0, "empty"},
		{"-- nothing", "empty", 0, "only comments"},
		{"DELETE FROM hero", "statement_kind", 1, "DELETE is not allowed"},
		{"-- tidy up\n/* old rows */ DELETE FROM hero", "statement_kind", 27, "DELETE is not allowed"},
		{"SELECT 1; UPDATE hero SET name = ''", "one_statement", 11, "found 2 statements (SELECT, UPDATE)"},
		{"SELECT 1 FROM notes WHERE body = 'a'; SELECT 2", "one_statement", 39, "found 2 statements"},
		{"WITH d AS (DELETE FROM hero RETURNING id) SELECT * FROM d", "statement_kind", 6, "a nested DELETE"},
		{"SELECT * INTO stolen FROM notes", "select_into", 15, "SELECT INTO"},
		{"SELECT body FROM notes FOR UPDATE", "locking", 24, "locking clauses"},
		{"SELECT body FROM notes\nfor  share", "locking", 24, "locking clauses"},
		{"SET statement_timeout = 0", "statement_kind", 1, "SET/RESET is not allowed"},
		{"RESET ALL", "statement_kind", 1, "SET/RESET"},
		{"CREATE INDEX i ON notes (body)", "statement_kind", 1, "CREATE INDEX is not allowed"},
		{"COPY notes TO STDOUT", "statement_kind", 1, "COPY is not allowed"},
		{"EXPLAIN ANALYZE SELECT 1", "statement_kind", 1, "EXPLAIN is not allowed"},
		{"SELECT set_config('statement_timeout', '0', false)", "function", 8, "set_config is not allowed: it reads or changes settings"},
		{"SELECT current_setting('data_directory')", "function", 8, "current_setting is not allowed: it reads or changes settings"},
		{"SELECT pg_catalog.pg_read_file('/etc/passwd')", "function", 8, "pg_read_file is not allowed: it reads or writes server files"},
		{"SELECT lo_import('/etc/passwd')", "function", 8, "lo_import"},
		{"SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a int)", "function", 15, "dblink"},
		{"SELECT PG_ADVISORY_LOCK(1)", "function", 8, "advisory locks"},
		{"SELECT pg_sleep(0.5)", "function", 8, "it sleeps"},
		{"SELECT query_to_xml('DELETE FROM hero', true, true, '')", "function", 8, "runs SQL given as text"},
		{"SELECT rolpassword FROM pg_authid", "catalog", 25, "system catalog pg_authid"},
		{"SELECT * FROM information_schema.tables", "schema", 15, "schema information_schema is not readable"},
		{"SELECT * FROM db.public.notes", "schema", 15, "names another database"},
		{"SELECT secret_identity FROM hero", "denied_column", 8, "column secret_identity is hidden (in hero)"},
		{"SELECT h.SECRET_IDENTITY FROM hero h", "denied_column", 8, "hidden"},
		{"SELECT * FROM hero", "denied_column", 8, "* would include hidden columns of hero"},
		{"SELECT h FROM hero h", "denied_column", 8, "the whole row of hero"},
		{"SELECT row_to_json(hero) FROM hero", "denied_column", 20, "the whole row of hero"},
		{"SELEC 1", "syntax_error", 1, "syntax error"},
		{"SELECT '\xff'", "invalid_utf8", 9, "not valid UTF-8"},
		{"SELECT 1\x00", "nul_byte", 9, "NUL"},
		{"SELECT " + strings.Repeat("1+", 40000) + "1", "too_long", 0, "the limit is 65536"},
		{"SELECT 1" + strings.Repeat("+1", 4001), "too_deep", 8009, "more than 4000 operators"},
		{"SELECT " + strings.Repeat("(", 201) + "1" + strings.Repeat(")", 201), "too_deep", 208, "more than 200 brackets"},
		{"SELECT 1 " + strings.Repeat("/*", 101) + "x" + strings.Repeat("*/", 101), "too_deep", 210, "run of more than 200 operator characters"},
	}
	for _, tt := range refused {
		err := v.Validate(tt.sql)
		ge, ok := AsError(err)
		if !ok {
			t.Errorf("%.60q: got %v, want a refusal %s", tt.sql, err, tt.code)
			continue
		}
		if ge.Code != tt.code || ge.Position != tt.pos || !strings.Contains(ge.Message, tt.msg) || ge.Layer != LayerValidator {
			t.Errorf("%.60q: got %s at %d: %s; want %s at %d containing %q", tt.sql, ge.Code, ge.Position, ge.Message, tt.code, tt.pos, tt.msg)
		}
		if ge.Refused == (tt.code == "syntax_error") {
			t.Errorf("%.60q: Refused = %v", tt.sql, ge.Refused)
		}
	}
}

func TestValidateAllowlist(t *testing.T) {
	v, err := NewValidator(DialectPostgres, Options{Tables: []string{"notes", "public.hero"}}, fixtureCatalog(DialectPostgres))
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"SELECT body FROM notes", "SELECT name FROM public.hero", "SELECT name FROM hero"} {
		if err := v.Validate(sql); err != nil {
			t.Errorf("%q: %v", sql, err)
		}
	}
	// A plain CTE's body reads the real table, even when named like it.
	for _, sql := range []string{"SELECT * FROM secrets", "WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets"} {
		ge, ok := AsError(v.Validate(sql))
		if !ok || ge.Code != "table" || !strings.Contains(ge.Hint, "Allowed tables: notes, public.hero") {
			t.Errorf("%q: %v (hint %q)", sql, ge, ge.Hint)
		}
	}
	if _, err := NewValidator(DialectPostgres, Options{DeniedColumns: []string{"a..b"}}, fixtureCatalog(DialectPostgres)); err == nil {
		t.Error("a malformed denied column was accepted")
	}
}

func TestValidateSQLite(t *testing.T) {
	v, err := NewValidator(DialectSQLite, fixtureOptions, fixtureCatalog(DialectSQLite))
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"SELECT `name` FROM hero WHERE `id` = 1",
		"SELECT name FROM hero WHERE name GLOB 'H*'",
		"SELECT replace(name, 'a', 'b') FROM hero",
		"SELECT IIF(id > 3, 'big', 'small') FROM main.hero",
		"SELECT body FROM notes WHERE body = 'DELETE FROM hero' -- PRAGMA",
	}
	for _, sql := range allowed {
		if err := v.Validate(sql); err != nil {
			t.Errorf("%q refused: %v", sql, err)
		}
	}
	refused := []struct {
		sql, code string
		pos       int
	}{
		{"PRAGMA query_only = 0", "statement_kind", 1},
		{"ATTACH DATABASE ':memory:' AS x", "statement_kind", 1},
		{"REPLACE INTO notes VALUES ('x')", "statement_kind", 1},
		{"SELECT name FROM hero WHERE name GLOB 'H*'; DELETE FROM hero", "one_statement", 45},
		{"SELECT name FROM hero WHERE name GLOB 'H*' AND 1 IN (SELECT 1 FROM (DELETE FROM hero))", "statement_kind", 69},
		{"SELECT load_extension('/tmp/x.so')", "function", 8},
		{"SELECT name FROM hero WHERE name GLOB readfile('/etc/passwd')", "function", 39},
		{"SELECT * FROM pragma_table_info('hero')", "function", 15},
		{"SELECT sql FROM sqlite_master", "catalog", 17},
		{"SELECT secret_identity FROM hero", "denied_column", 8},
	}
	for _, tt := range refused {
		ge, ok := AsError(v.Validate(tt.sql))
		if !ok || ge.Code != tt.code || ge.Position != tt.pos {
			t.Errorf("%q: got %v, want %s at %d", tt.sql, ge, tt.code, tt.pos)
		}
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Layer: LayerDatabase, Message: `column "nam" does not exist`, Hint: `Perhaps you meant "name".`, Position: 8}
	want := "Error: column \"nam\" does not exist (at character 8)\n  SELECT nam FROM hero\n         ^\nHint: Perhaps you meant \"name\"."
	if got := e.Text("SELECT nam FROM hero"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	e = &Error{Layer: LayerValidator, Refused: true, Message: "DELETE is not allowed", Position: 4}
	want = "Error: refused by the validator: DELETE is not allowed (at character 4)\n  DELETE FROM t\n  ^"
	if got := e.Text("x;\nDELETE FROM t"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// tenth is a variable so that tenth + 0.2 is computed in float64.
var tenth = 0.1

func TestResultText(t *testing.T) {
	r := &Result{
		Columns: []Column{{Name: "name"}, {Name: "ratio"}, {Name: "note"}},
		Rows: [][]any{
			{"a|b", 3.14159265, nil},
			{"line\nbreak", "12345.678901", strings.Repeat("é", 150)},
		},
		Total: 7, TotalKnown: true,
	}
	want := "name | ratio | note\n" +
		`a\|b | 3.14159265 | NULL` + "\n" +
		`line\nbreak | 12345.678901 | ` + strings.Repeat("é", 97) + "...\n" +
		"(2 of 7 rows)"
	if got := r.Text(20); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	r.Total, r.TotalKnown = 1000, false
	if got := r.Text(1); !strings.HasSuffix(got, "(1 of more than 1000 rows)") {
		t.Errorf("unknown total: %s", got)
	}
	r.Rows, r.Total, r.TotalKnown = r.Rows[:1], 1, true
	if got := r.Text(20); !strings.HasSuffix(got, "(1 row)") {
		t.Errorf("one row: %s", got)
	}
	for v, want := range map[any]string{
		int64(1234567890): "1234567890", 1797331.41: "1797331.41", 99072.53: "99072.53", "1797331.41": "1797331.41",
		"-0.000000000000000000000001": "-0.000000000000000000000001", 1e-7: "1e-7", 1e21: "1e+21", tenth + 0.2: "0.30000000000000004",
	} {
		if got := Cell(v); got != want {
			t.Errorf("Cell(%v) = %s, want %s", v, got, want)
		}
	}
	// The text stays within its bound however wide the rows are.
	wide := &Result{Total: 50, TotalKnown: true}
	for i := range 200 {
		wide.Columns = append(wide.Columns, Column{Name: fmt.Sprintf("column_%03d", i)})
	}
	for range 50 {
		row := make([]any, 200)
		for i := range row {
			row[i] = strings.Repeat("x", 90)
		}
		wide.Rows = append(wide.Rows, row)
	}
	if got := wide.Text(20); len(got) > MaxTextBytes || !strings.HasSuffix(got, "rows; the text stops at 16 KiB)") {
		t.Errorf("wide result: %d bytes, ends %q", len(got), got[max(0, len(got)-60):])
	}
}

// BenchmarkValidate measures the validator alone on a join with a CTE, a
// window function and a subquery, the size of a typical gold query.
func BenchmarkValidate(b *testing.B) {
	v, err := NewValidator(DialectPostgres, fixtureOptions, fixtureCatalog(DialectPostgres))
	if err != nil {
		b.Fatal(err)
	}
	sql := `WITH ranked AS (
    SELECT h.id, h.name, h.power, rank() OVER (ORDER BY h.power DESC) AS r
    FROM hero h JOIN notes n ON length(n.body) = h.id % 7
    WHERE h.power > (SELECT avg(power) FROM hero)
)
SELECT name, round(power, 2) AS power, r FROM ranked WHERE r <= 10 ORDER BY r`
	for b.Loop() {
		if err := v.Validate(sql); err != nil {
			b.Fatal(err)
		}
	}
}

// TestValidateHiddenForms reads hidden columns in every syntactic form the
// validator resolves, on both dialects, and a set of queries next to the
// hidden column that read nothing hidden.
func TestValidateHiddenForms(t *testing.T) {
	refused := []string{
		"SELECT secret_identity FROM hero",
		"SELECT h.secret_identity FROM hero h",
		"SELECT public.hero.secret_identity FROM hero",
		"SELECT name FROM hero WHERE secret_identity LIKE 'P%'",
		"SELECT name FROM hero ORDER BY secret_identity",
		"SELECT count(DISTINCT secret_identity) FROM hero",
		"SELECT * FROM hero",
		"SELECT h.* FROM hero h",
		"SELECT (h).* FROM hero h",
		"SELECT h FROM hero h",
		"SELECT row_to_json(h) FROM hero h",
		"SELECT to_jsonb(hero) FROM hero",
		"SELECT h.row_to_json FROM hero h",
		"SELECT h.concat FROM hero h",
		"SELECT (h).secret_identity FROM hero h",
		"SELECT name, kg FROM hero NATURAL JOIN (SELECT 'Person 1' AS secret_identity, 1 AS kg) s",
		"SELECT h.name FROM hero h JOIN (SELECT 'Person 1' AS secret_identity) s USING (secret_identity)",
		"SELECT h.name FROM hero h JOIN hero g USING (secret_identity)",
		"SELECT f.c FROM hero AS f(a, b, c)",
		"SELECT name FROM hero AS f(i, n, s) WHERE s = 'x'",
		"SELECT x FROM (SELECT secret_identity AS x FROM hero) t",
		"WITH t AS (SELECT secret_identity FROM hero) SELECT 1 FROM t",
		"SELECT (SELECT h.secret_identity) FROM hero h",
		"SELECT n.body FROM notes n WHERE EXISTS (SELECT 1 FROM hero h WHERE h.secret_identity = n.body)",
		"SELECT u FROM hero h, LATERAL unnest(ARRAY[h.secret_identity]) u",
		"SELECT name FROM hero NATURAL JOIN (SELECT upper('x')) s",
		"SELECT a FROM (SELECT * FROM hero) s(a)",
		"SELECT max(secret_identity) OVER () FROM hero",
		"SELECT name FROM hero GROUP BY name HAVING max(secret_identity) > ''",
		"SELECT notes FROM hero notes",
		"SELECT x FROM hero AS notes, notes AS x, LATERAL (SELECT notes) s(x)",
		"SELECT (SELECT notes FROM notes) FROM hero notes",
		"SELECT j.c FROM (hero h JOIN notes n ON true) AS j(a, b, c)",
		"SELECT j.secret_identity FROM (hero JOIN notes ON true) j",
		"SELECT j FROM (hero JOIN notes ON true) j",
		"SELECT * FROM notes, hero",
		"SELECT * FROM notes JOIN hero ON true",
		"SELECT t.* FROM (notes CROSS JOIN hero) t",
		"SELECT name FROM (hero NATURAL JOIN notes) NATURAL JOIN (SELECT 1 AS secret_identity) s",
	}
	allowed := []string{
		"SELECT name, power FROM hero",
		"SELECT h.name FROM hero h JOIN hero g USING (id)",
		"SELECT name FROM hero NATURAL JOIN (SELECT 1 AS id) s",
		"SELECT f.b FROM hero AS f(a, b)",
		"SELECT (h).name FROM hero h",
		"SELECT body FROM notes WHERE body = 'secret_identity'",
		"SELECT secret_identity FROM (SELECT 1 AS secret_identity) s",
		"WITH hero AS (SELECT 1 AS secret_identity) SELECT secret_identity FROM hero",
		"SELECT count(*) FROM hero",
		"SELECT t.* FROM (SELECT name FROM hero) t",
		"SELECT n.body FROM notes n WHERE n.body IN (SELECT name FROM hero)",
	}
	// PostgreSQL's functions and casts.
	allowedPostgres := []string{
		"SELECT row_to_json(t) FROM (SELECT name FROM hero) t",
		"SELECT key, value FROM jsonb_each('{\"a\":1}'::jsonb)",
		"SELECT (jsonb_each('{\"a\":1}'::jsonb)).key",
		"SELECT g FROM generate_series(1, 3) g",
		"SELECT g.i FROM generate_series(1, 3) AS g(i)",
	}
	for _, d := range []Dialect{DialectPostgres, DialectSQLite} {
		v, err := NewValidator(d, fixtureOptions, fixtureCatalog(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, sql := range refused {
			// SQLite lacks some of PostgreSQL's functions and reads [ ] as
			// quotes; those are refused for that.
			ge, ok := AsError(v.Validate(sql))
			if !ok || !ge.Refused || ge.Code != "denied_column" && d == DialectPostgres {
				t.Errorf("dialect %d: %q: got %v, want a denied_column refusal", d, sql, ge)
			}
		}
		list := allowed
		if d == DialectPostgres {
			list = append(list[:len(list):len(list)], allowedPostgres...)
		}
		for _, sql := range list {
			if err := v.Validate(sql); err != nil {
				t.Errorf("dialect %d: %q refused: %v", d, sql, err)
			}
		}
	}
}
