package compile

import (
	"strings"
	"testing"
)

// TestTableConceptsSayTheirEngineLayerAndTypes pins what a table concept
// says of its relation: the engine's own table or view type (a neutral
// one when the engine is unknown), the layer it sits in, and a column of
// no known type without a dangling comma.
func TestTableConceptsSayTheirEngineLayerAndTypes(t *testing.T) {
	db := func(engine string) *Database {
		return &Database{Name: "shop", Engine: engine, Tables: []*Table{
			{Name: "orders", PrimaryKey: []string{"id"}, Layer: "mart", Columns: []*Column{
				{Name: "id", Type: "integer", NotNull: true},
				{Name: "amount", NotNull: true, Meaning: "Total paid."},
				{Name: "note", Meaning: "Free text."},
				{Name: "placed", Type: "date", NotNull: true},
			}},
			{Name: "stg_orders", View: true, Layer: "staging", Columns: []*Column{{Name: "id", Type: "integer"}}},
		}}
	}
	for _, c := range []struct{ engine, table, view string }{
		{"duckdb", "DuckDB Table", "DuckDB View"},
		{"postgres", "PostgreSQL Table", "PostgreSQL View"},
		{"sqlite", "SQLite Table", "SQLite View"},
		{"", "Table", "View"},
		{"nosuchdb", "Table", "View"},
	} {
		b, err := Build(db(c.engine), Options{Generator: "okf/test"})
		if err != nil {
			t.Fatal(err)
		}
		orders, stg := string(b.Files["tables/orders.md"]), string(b.Files["tables/stg_orders.md"])
		if !strings.HasPrefix(orders, "---\ntype: "+c.table+"\n") || !strings.HasPrefix(stg, "---\ntype: "+c.view+"\n") {
			t.Errorf("engine %q: types\n%s\n%s", c.engine, orders, stg)
		}
		if !strings.Contains(string(b.Files["tables/index.md"]), "# "+c.view+"\n") {
			t.Errorf("engine %q: the index does not group the view:\n%s", c.engine, b.Files["tables/index.md"])
		}
	}
	b, err := Build(db("duckdb"), Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	orders := string(b.Files["tables/orders.md"])
	for _, want := range []string{
		"grain: [id]\nlayer: mart\ngenerated:\n",
		"| `id` | integer | primary key |  |\n",
		"| `amount` | not null |  | Total paid. |\n",
		"| `note` |  |  | Free text. |\n",
		"| `placed` | date, not null |  |  |\n",
	} {
		if !strings.Contains(orders, want) {
			t.Errorf("orders lacks %q:\n%s", want, orders)
		}
	}
	if stg := string(b.Files["tables/stg_orders.md"]); !strings.Contains(stg, "tags: [shop]\nlayer: staging\ngenerated:\n") {
		t.Errorf("stg_orders does not say its layer:\n%s", stg)
	}
}
