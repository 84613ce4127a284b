package sqlguard

import (
	"context"
	"strings"
	"testing"
)

func TestValidateDuckDB(t *testing.T) {
	v, err := NewValidator(DialectDuckDB, fixtureOptions, fixtureCatalog(DialectDuckDB))
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"SELECT 1",
		"SELECT name, power FROM hero WHERE id < 10 ORDER BY 2 DESC",
		"SELECT count(*) FROM hero",
		"SELECT h.name FROM main.hero h JOIN notes n ON n.body = h.name",
		"SELECT list_transform(list(name), x -> upper(x)) FROM hero",
		"SELECT i FROM range(10) r(i)",
		"SELECT * FROM generate_series(1, 3) g",
		"SELECT strftime(current_date, '%Y'), date_diff('day', DATE '2024-01-01', DATE '2024-03-01')",
		"SELECT (struct_pack(a := 1)).a",
		"SELECT * FROM notes",
		"SELECT name FROM hero WHERE id = $1",
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
		{"SELECT secret_identity FROM hero", "denied_column", 8, "column secret_identity is hidden"},
		{`SELECT "SECRET_IDENTITY" FROM hero`, "denied_column", 8, "hidden"}, // DuckDB ignores case, quoted or not
		{`SELECT name FROM "HERO" WHERE "Hero"."Secret_Identity" > ''`, "denied_column", 31, "hidden"},
		{"SELECT * FROM hero", "denied_column", 8, "* would include hidden columns"},
		{"SELECT h FROM hero h", "denied_column", 8, "the whole row of hero"},
		{"SELECT #3 FROM hero", "positional_column", 8, "#n reads a column by its position"},
		{"SELECT name FROM hero ORDER BY #3", "positional_column", 32, "#n"},
		{"SELECT struct_pack(*) FROM hero", "star_argument", 8, "struct_pack(*) reads every column"},
		{"SELECT hash(*) FROM notes", "star_argument", 8, "hash(*)"},
		{"SELECT COLUMNS('sec.*') FROM hero", "function", 8, "function columns is not allowed"},
		{"SELECT * EXCLUDE (id) FROM hero", "unsupported_syntax", 10, "syntax error"},
		{"FROM hero", "unsupported_syntax", 1, "syntax error"},
		{"SUMMARIZE hero", "unsupported_syntax", 1, "syntax error"},
		{"SELECT name FROM hero QUALIFY row_number() OVER () = 1", "unsupported_syntax", 0, ""},
		{"PIVOT hero ON name USING first(secret_identity)", "unsupported_syntax", 1, "syntax error"},
		{"SELECT * FROM query('SELECT secret_identity FROM hero')", "function", 15, "query is not allowed: it runs SQL given as text"},
		{"SELECT * FROM query_table('hero')", "function", 15, "query_table"},
		{"SELECT * FROM read_csv('/etc/passwd')", "function", 15, "read_csv is not allowed: it reads files"},
		{"SELECT * FROM read_text('/proc/self/environ')", "function", 15, "read_text"},
		{"SELECT * FROM glob('/*')", "function", 15, "glob"},
		{"SELECT * FROM repeat(1, 10)", "function", 15, "table function repeat is not allowed"},
		{"SELECT * FROM duckdb_tables()", "function", 15, "it reads the catalog"},
		{"SELECT current_setting('threads')", "function", 8, "settings"},
		{"SELECT getvariable('v')", "function", 8, "variables"},
		{"SELECT version()", "function", 8, "facts about the server"},
		{"SELECT * FROM information_schema.tables", "schema", 15, "not readable"},
		{"SELECT * FROM fixture.main.hero", "schema", 15, "names another database"},
		{"SELECT * FROM sqlite_master", "catalog", 15, "system catalog sqlite_master"},
		{"SELECT * FROM duckdb_views", "unknown_table", 15, "does not exist"},
		{"ATTACH ':memory:' AS m", "unsupported_syntax", 1, ""},
		{"COPY hero TO '/tmp/x.csv'", "statement_kind", 1, "COPY is not allowed"},
		{"INSTALL httpfs", "unsupported_syntax", 1, ""},
		{"LOAD httpfs", "unsupported_syntax", 0, ""},
		{"LOAD 'httpfs'", "statement_kind", 1, "LOAD"},
		{"SET threads = 8", "statement_kind", 1, "SET/RESET"},
		{"PRAGMA threads = 8", "unsupported_syntax", 1, ""},
		{"CALL pragma_version()", "statement_kind", 1, "CALL"},
		{"USE memory", "unsupported_syntax", 1, ""},
		{"EXPORT DATABASE '/tmp/x'", "unsupported_syntax", 1, ""},
		{"CREATE TEMP MACRO m(x) AS x + 1", "unsupported_syntax", 0, ""},
		{"SELECT secret_identity.upper() FROM hero", "function", 8, "not allowed"},
	}
	for _, tt := range refused {
		err := v.Validate(tt.sql)
		ge, ok := AsError(err)
		if !ok {
			t.Errorf("%.60q: got %v, want a refusal %s", tt.sql, err, tt.code)
			continue
		}
		if ge.Code != tt.code || tt.pos != 0 && ge.Position != tt.pos || !strings.Contains(ge.Message, tt.msg) || ge.Layer != LayerValidator || ge.Refused != (tt.code != "unknown_table") {
			t.Errorf("%.60q: got %s at %d (refused %v): %s; want %s at %d containing %q", tt.sql, ge.Code, ge.Position, ge.Refused, ge.Message, tt.code, tt.pos, tt.msg)
		}
	}
}

func TestCheckDuckDBPlan(t *testing.T) {
	v, err := NewValidator(DialectDuckDB, Options{Tables: []string{"hero"}, DeniedColumns: []string{"hero.secret_identity"}}, fixtureCatalog(DialectDuckDB))
	if err != nil {
		t.Fatal(err)
	}
	scan := func(table, extra string) string {
		return `[{"name": "PROJECTION", "children": [{"name": "SEQ_SCAN", "children": [], "extra_info": {"Table": "` + table + `", "Type": "Sequential Scan"` + extra + `}}], "extra_info": {"Projections": "#0"}}]`
	}
	for _, tt := range []struct {
		plan, code string
	}{
		{scan("fixture.main.hero", `, "Projections": ["id", "name"]`), ""},
		{scan("fixture.main.hero", `, "Projections": "name", "Filters": "name='secret_identity'"`), ""}, // a literal, not the column
		{scan("fixture.main.hero", `, "Projections": ["name", "secret_identity"]`), "denied_column"},
		{scan("fixture.main.hero", `, "Projections": "", "Filters": "(SECRET_IDENTITY IS NOT NULL)"`), "denied_column"},
		{scan("fixture.main.hero", `, "Filters": "optional: Dynamic Filter (secret_identity)"`), "denied_column"},
		{scan("fixture.main.notes", `, "Projections": "body"`), "table"}, // outside the allowlist
		{scan("other.main.hero", `, "Projections": "name"`), "table"},    // another catalog
		{scan("fixture.temp.hero", `, "Projections": "name"`), "table"},  // another schema
		{`[{"name": "RANGE", "children": [], "extra_info": {"Function": "RANGE"}}]`, ""},
		{`[{"name": "READ_CSV", "children": [], "extra_info": {"Function": "READ_CSV"}}]`, "function"},
		{`[{"name": "DUCKDB_TABLES", "children": [], "extra_info": {"Function": "DUCKDB_TABLES"}}]`, "function"},
		{`[{"name": "INSERT", "children": [], "extra_info": {}}]`, "operator"},
		{`[]`, "unreadable_plan"},
		{`not json`, "unreadable_plan"},
	} {
		err := v.CheckDuckDBPlan(tt.plan, "Fixture")
		ge, _ := AsError(err)
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.plan, err)
		case tt.code != "" && (ge == nil || ge.Code != tt.code || ge.Layer != LayerPlan || !ge.Refused):
			t.Errorf("%s: got %v, want %s", tt.plan, err, tt.code)
		}
	}
}

// Without package sqlguard/duckdb, which this test binary does not link,
// a duckdb: DSN says what is missing.
func TestOpenDuckDBUnregistered(t *testing.T) {
	_, err := Open(context.Background(), "hubs", "duckdb:hubs.duckdb", Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "built without DuckDB") {
		t.Errorf("got %v", err)
	}
}
