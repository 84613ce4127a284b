package queries

import (
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/sqlguard"
)

func query(sql string) []byte {
	return []byte("---\ntype: SQL Query\ntitle: Q\nparameters:\n  - {name: region, type: text}\n---\n# SQL\n\n```sql\n" + sql + "\n```\n")
}

func TestCheckSQL(t *testing.T) {
	b := okf.NewBundle([]*okf.Document{
		okf.Parse("queries/good.md", query("SELECT count(*) FROM orders WHERE region = :region")),
		okf.Parse("queries/write.md", query("DELETE FROM orders WHERE region = :region")),
		okf.Parse("queries/broken.md", query("SELECT FROM WHERE :region")),
		okf.Parse("queries/two.md", query("SELECT 1 WHERE :region = 'x'; SELECT 2")),
	})
	got := map[string]string{}
	for _, f := range CheckSQL(b) {
		if f.Code != "query-sql-invalid" || f.Line != 10 {
			t.Errorf("finding %+v", f)
		}
		got[f.Path] = f.Message
	}
	if len(got) != 3 || got["queries/good.md"] != "" || !strings.Contains(got["queries/write.md"], "DELETE") || !strings.Contains(got["queries/two.md"], "2 statements") {
		t.Errorf("findings %v", got)
	}
}

func TestBind(t *testing.T) {
	if sql, names := Bind("SELECT :a, :b, :a", sqlguard.DialectPostgres); sql != "SELECT $1, $2, $3" || len(names) != 3 {
		t.Errorf("postgres: %q %v", sql, names)
	}
	if sql, _ := Bind("SELECT :a, ':b'", sqlguard.DialectSQLite); sql != "SELECT ?, ':b'" {
		t.Errorf("sqlite: %q", sql)
	}
}

func TestDialect(t *testing.T) {
	for typ, want := range map[string]sqlguard.Dialect{
		"PostgreSQL Table": sqlguard.DialectPostgres, "SQLite Table": sqlguard.DialectSQLite,
		"DuckDB View": sqlguard.DialectDuckDB, "Table": sqlguard.DialectPostgres,
	} {
		b := okf.NewBundle([]*okf.Document{okf.Parse("tables/t.md", []byte("---\ntype: "+typ+"\ntitle: T\n---\n# T\n"))})
		if got := Dialect(b); got != want {
			t.Errorf("%s: %s, want %s", typ, got, want)
		}
	}
	// DuckDB binds $1 as PostgreSQL does.
	if sql, _ := Bind("SELECT :a", sqlguard.DialectDuckDB); sql != "SELECT $1" {
		t.Errorf("duckdb: %q", sql)
	}
}
