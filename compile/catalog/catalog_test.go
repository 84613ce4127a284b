package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/compile/load"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Each reconstructed LiveSQLBench schema, loaded into PostgreSQL and read
// back from the live catalog, gives the same tables, columns, types and
// keys as the documentation it was loaded from.
func TestPostgresRoundTripMatchesTheDocs(t *testing.T) {
	cluster := pgtest.Shared(t)
	ctx := context.Background()
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			docs, err := livesqlbench.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			dsn := cluster.NewDatabase(t)
			if _, err := load.Postgres(ctx, dsn, docs, load.Options{}); err != nil {
				t.Fatal(err)
			}
			live, err := catalog.ReadPostgres(ctx, dsn, catalog.PostgresOptions{})
			if err != nil {
				t.Fatal(err)
			}
			compareModels(t, docs, live)

			// The catalog with the docs layered on top compiles to a
			// bundle as complete as the docs alone.
			if _, err := livesqlbench.ApplyDocs(live, dir); err != nil {
				t.Fatal(err)
			}
			b, err := compile.Build(live, compile.Options{Generator: "okf/test"})
			if err != nil {
				t.Fatal(err)
			}
			fromDocs, err := compile.Build(docs, compile.Options{Generator: "okf/test"})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Gaps.UnlinkedRules) != len(fromDocs.Gaps.UnlinkedRules) || len(b.Files) != len(fromDocs.Files) {
				t.Errorf("catalog+docs: %d files, %d unlinked rules; docs: %d files, %d unlinked rules",
					len(b.Files), len(b.Gaps.UnlinkedRules), len(fromDocs.Files), len(fromDocs.Gaps.UnlinkedRules))
			}
		})
	}
}

// compareModels checks that live (read from a catalog) holds the tables,
// columns and keys of docs. A foreign key the docs give to a column that
// does not exist cannot be created, so it is not expected back.
func compareModels(t *testing.T, docs, live *compile.Database) {
	t.Helper()
	var docNames, liveNames []string
	for _, tb := range docs.Tables {
		docNames = append(docNames, tb.Name)
	}
	for _, tb := range live.Tables {
		liveNames = append(liveNames, tb.Name)
	}
	slices.Sort(docNames)
	if !slices.Equal(docNames, liveNames) {
		t.Fatalf("tables: docs %v, catalog %v", docNames, liveNames)
	}
	for _, d := range docs.Tables {
		l := live.Table(d.Name)
		if len(d.Columns) != len(l.Columns) {
			t.Errorf("%s: %d columns in the docs, %d in the catalog", d.Name, len(d.Columns), len(l.Columns))
			continue
		}
		for i, dc := range d.Columns {
			lc := l.Columns[i]
			want := dc.Type
			if dc.Type == "USER-DEFINED" && lc.Type == "text" {
				want = "text" // an enum whose labels the docs do not list
			}
			if dc.Name != lc.Name || want != lc.Type || dc.NotNull != lc.NotNull {
				t.Errorf("%s column %d: docs %s %s notnull=%v, catalog %s %s notnull=%v", d.Name, i, dc.Name, dc.Type, dc.NotNull, lc.Name, lc.Type, lc.NotNull)
			}
		}
		if !slices.Equal(d.PrimaryKey, l.PrimaryKey) {
			t.Errorf("%s: primary key: docs %v, catalog %v", d.Name, d.PrimaryKey, l.PrimaryKey)
		}
		var wantFKs []string
		for _, fk := range d.ForeignKeys {
			if ref := docs.Table(fk.RefTable); ref != nil && slices.Equal(ref.PrimaryKey, fk.RefColumns) {
				wantFKs = append(wantFKs, fkString(fk))
			}
		}
		var gotFKs []string
		for _, fk := range l.ForeignKeys {
			gotFKs = append(gotFKs, fkString(fk))
		}
		slices.Sort(wantFKs)
		slices.Sort(gotFKs)
		if !slices.Equal(wantFKs, gotFKs) {
			t.Errorf("%s: foreign keys: docs %v, catalog %v", d.Name, wantFKs, gotFKs)
		}
	}
}

func fkString(fk compile.ForeignKey) string {
	return strings.Join(fk.Columns, ",") + "->" + fk.RefTable + "(" + strings.Join(fk.RefColumns, ",") + ")"
}

// The catalog gives comments as meanings, enum labels in order, and the
// key paths of JSON documents found in the rows.
func TestPostgresCommentsEnumsAndJSONPaths(t *testing.T) {
	ctx := context.Background()
	dsn := postgresWith(t, `
CREATE TYPE tier AS ENUM ('Bronze', 'Silver', 'Gold');
CREATE TABLE customers (id int PRIMARY KEY, tier tier, prefs jsonb, tags text[]);
COMMENT ON TABLE customers IS 'One row per customer.';
COMMENT ON COLUMN customers.tier IS 'Loyalty tier.';
CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL REFERENCES customers);
INSERT INTO customers VALUES
  (1, 'Gold', '{"mail": {"weekly": true}, "lang": "de"}', '{a}'),
  (2, 'Bronze', '{"mail": {"daily": false}, "sizes": [1, 2]}', NULL);`)
	db, err := catalog.ReadPostgres(ctx, dsn, catalog.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := db.Table("customers")
	if c.Meaning != "One row per customer." {
		t.Errorf("table meaning %q", c.Meaning)
	}
	tier := c.Column("tier")
	if tier.Type != "USER-DEFINED" || tier.EnumType != "tier" || !slices.Equal(tier.Enum, []string{"Bronze", "Silver", "Gold"}) || tier.Meaning != "Loyalty tier." {
		t.Errorf("tier: %+v", tier)
	}
	if typ := c.Column("tags").Type; typ != "ARRAY" {
		t.Errorf("tags type %q, want ARRAY", typ)
	}
	var paths []string
	for _, f := range c.Column("prefs").JSONFields {
		paths = append(paths, f.Path)
	}
	if want := []string{"lang", "mail.daily", "mail.weekly", "sizes"}; !slices.Equal(paths, want) {
		t.Errorf("JSON paths %v, want %v", paths, want)
	}
	o := db.Table("orders")
	if len(o.ForeignKeys) != 1 || fkString(o.ForeignKeys[0]) != "customer->customers(id)" || !o.Column("customer").NotNull {
		t.Errorf("orders: %+v", o)
	}
	if !strings.HasPrefix(db.Sources[0].Resource, "postgres://postgres@") {
		t.Errorf("source %q", db.Sources[0].Resource)
	}
}

func TestSQLiteCatalogOfSuperhero(t *testing.T) {
	path := filepath.Join(shareddata.Dir(t, "bird", "superhero"), "superhero.sqlite")
	db, err := catalog.ReadSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if db.Name != "superhero" || db.Engine != "sqlite" || len(db.Tables) != 10 {
		t.Fatalf("%s (%s): %d tables", db.Name, db.Engine, len(db.Tables))
	}
	hp := db.Table("hero_power")
	var fks []string
	for _, fk := range hp.ForeignKeys {
		fks = append(fks, fkString(fk))
	}
	slices.Sort(fks)
	if want := []string{"hero_id->superhero(id)", "power_id->superpower(id)"}; !slices.Equal(fks, want) {
		t.Errorf("hero_power foreign keys %v, want %v", fks, want)
	}
	if pk := db.Table("superhero").PrimaryKey; !slices.Equal(pk, []string{"id"}) {
		t.Errorf("superhero primary key %v", pk)
	}
}

func TestSQLiteMissingFile(t *testing.T) {
	_, err := catalog.ReadSQLite(context.Background(), filepath.Join(t.TempDir(), "nope.db"))
	if err == nil || !strings.Contains(err.Error(), "nope.db") {
		t.Fatalf("got %v, want an error naming nope.db", err)
	}
}

func TestSQLitePathWithURICharacters(t *testing.T) {
	src := filepath.Join(shareddata.Dir(t, "bird", "superhero"), "superhero.sqlite")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "odd?name#1%.sqlite")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := catalog.ReadSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Tables) != 10 {
		t.Errorf("%d tables", len(db.Tables))
	}
}

// postgresWith is a new database of the test cluster holding what ddl
// makes.
func postgresWith(t *testing.T, ddl string) string {
	t.Helper()
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	return dsn
}
