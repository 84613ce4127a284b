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

// TestValuesSection pins the Values section the readers parse: after the
// Schema and Enum values, one line per column, values as SQL literals;
// a complete list as it is given, a list of the most frequent with how
// many values there are (and, for a larger table, how many rows were
// read). Only a table with values cites the database for them, and the
// log says how many columns' values were read.
func TestValuesSection(t *testing.T) {
	db := &Database{Name: "shop", Engine: "sqlite", Tables: []*Table{
		{Name: "customers", PrimaryKey: []string{"id"}, Columns: []*Column{
			{Name: "id", Type: "integer", NotNull: true},
			{Name: "gender", Type: "TEXT", Values: &ValueList{Values: []string{"Female", "Male", "N/A"}}},
			{Name: "tier", Type: "USER-DEFINED", EnumType: "tier", Enum: []string{"Bronze", "Gold"}},
			{Name: "city", Type: "TEXT", Values: &ValueList{Values: []string{"O'Hare", "Paris"}, Count: 1203}},
			{Name: "status", Type: "TEXT", Values: &ValueList{Values: []string{"open", "closed"}, Count: 2, Rows: 100000}},
		}},
		{Name: "notes", Columns: []*Column{{Name: "body", Type: "TEXT"}}},
	}, Sources: []Source{
		{ID: "catalog", Resource: "shop/shop.sqlite", Title: "shop SQLite catalog"},
		{ID: "values", Resource: "shop/shop.sqlite", Title: "values read from the database", Values: true},
	}}
	b, err := Build(db, Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	customers := string(b.Files["tables/customers.md"])
	want := "# Enum values\n\n* `tier` (`tier`): 'Bronze', 'Gold'\n\n" +
		"# Values\n\n" +
		"* `gender`: 'Female', 'Male', 'N/A'\n" +
		"* `city` (1,203 values, the most frequent): 'O''Hare', 'Paris'\n" +
		"* `status` (2 values in the first 100,000 rows, the most frequent): 'open', 'closed'\n"
	if !strings.Contains(customers, want) || strings.Index(customers, "# Schema") > strings.Index(customers, "# Values") {
		t.Errorf("customers lacks\n%s\nin:\n%s", want, customers)
	}
	if !strings.Contains(customers, "  - id: values\n    resource: shop/shop.sqlite\n    title: values read from the database\n") {
		t.Errorf("customers does not cite the database for its values:\n%s", customers)
	}
	if notes := string(b.Files["tables/notes.md"]); strings.Contains(notes, "# Values") || strings.Contains(notes, "id: values") {
		t.Errorf("notes has no values, yet:\n%s", notes)
	}
	if log := string(b.Files["log.md"]); !strings.Contains(log, "from `shop/shop.sqlite` with `okf/test`; the values of 3 columns read from the database.\n") {
		t.Errorf("log.md:\n%s", log)
	}
}
