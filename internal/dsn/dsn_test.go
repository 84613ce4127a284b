package dsn

import (
	"strings"
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in     string
		engine Engine
		path   string
	}{
		{"postgres://u:p@h/db", Postgres, ""},
		{"postgresql://h/db?sslmode=disable", Postgres, ""},
		{"host=db dbname=solar user=okf", Postgres, ""},
		{"sqlite:shop.db", SQLite, "shop.db"},
		{"sqlite:/abs/shop", SQLite, "/abs/shop"},
		{"sqlite://rel/shop.db", SQLite, "rel/shop.db"},
		{"sqlite:///abs/shop.db", SQLite, "/abs/shop.db"},
		{"shop.db", SQLite, "shop.db"},
		{"data/Shop.SQLite3", SQLite, "data/Shop.SQLite3"},
		{"x.sqlite", SQLite, "x.sqlite"},
		{"duckdb:hubs.duckdb", DuckDB, "hubs.duckdb"},
		{"DuckDB:/abs/hubs", DuckDB, "/abs/hubs"},
		{"duckdb://rel/hubs.duckdb", DuckDB, "rel/hubs.duckdb"},
		{"duckdb:///abs/hubs.duckdb", DuckDB, "/abs/hubs.duckdb"},
		{"data/Hubs.DuckDB", DuckDB, "data/Hubs.DuckDB"},
		{"solar", None, ""},
		{"store.file", None, ""},
		{"", None, ""},
	} {
		got, err := Parse(c.in)
		if err != nil || got.Engine != c.engine || got.Path != c.path {
			t.Errorf("Parse(%q) = %+v, %v; want %s %q", c.in, got, err, c.engine, c.path)
		}
	}
	for _, bad := range []string{"sqlite:", "sqlite://", "duckdb:", "duckdb://", "mysql://u:secret@h/db"} {
		_, err := Parse(bad)
		if err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q) shows the password: %v", bad, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ text, dsn, want string }{
		{"postgres://okf:s3cret@db/solar", "postgres://okf:s3cret@db/solar", "postgres://okf:xxxxx@db/solar"},
		{"cannot reach okf:s3cret@db", "postgres://okf:s3cret@db/solar", "cannot reach okf:xxxxx@db"},
		// A one-letter password does not garble the rest.
		{"store postgres://okf:a@db/a: failed", "postgres://okf:a@db/a", "store postgres://okf:xxxxx@db/a: failed"},
		{"host=db password=s3cret dbname=x", "host=db password=s3cret dbname=x", "host=db password=xxxxx dbname=x"},
		{`password = 'it\'s' user=u`, `password = 'it\'s' user=u`, "password=xxxxx user=u"},
		{"postgres://okf@db/solar", "postgres://okf@db/solar", "postgres://okf@db/solar"},
		{"shop.db", "shop.db", "shop.db"},
	} {
		if got := Redact(c.text, c.dsn); got != c.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", c.text, c.dsn, got, c.want)
		}
	}
}

func TestEngineName(t *testing.T) {
	for e, want := range map[Engine]string{Postgres: "PostgreSQL", SQLite: "SQLite", DuckDB: "DuckDB", None: "no database"} {
		if got := e.Name(); got != want {
			t.Errorf("%q.Name() = %q, want %q", e, got, want)
		}
	}
}

func TestRegistry(t *testing.T) {
	var r Registry[string]
	if _, ok := r.Lookup(DuckDB); ok {
		t.Error("an empty registry has DuckDB")
	}
	r.Register(DuckDB, "a")
	r.Register(DuckDB, "b")
	if got, ok := r.Lookup(DuckDB); !ok || got != "b" {
		t.Errorf("DuckDB: %q, %v; want the last registered", got, ok)
	}
	if _, ok := r.Lookup(None); ok {
		t.Error("None is registered")
	}
}
