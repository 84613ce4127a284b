package dbt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/internal/tokens"
)

// TestTheAdapterNamesTheTableType: the engine in a table's type is the
// dbt adapter's, from the profile dbt_project.yml names, else the
// adapter_type of the manifest dbt wrote, else the adapter package the
// project installs, and views are views; an adapter
// okf does not know, or two it cannot choose between, give a neutral
// type rather than a wrong engine.
func TestTheAdapterNamesTheTableType(t *testing.T) {
	db := read(t, jaffleDir(t))
	if db.Engine != "duckdb" {
		t.Errorf("jaffle shop's engine %q, want duckdb (profiles.yml, dbt-duckdb)", db.Engine)
	}
	b := build(t, db)
	for table, want := range map[string]string{
		"orders": "DuckDB Table", "stg_orders": "DuckDB View", "raw_orders": "DuckDB Table",
	} {
		if got := string(b.Files["tables/"+table+".md"]); !strings.HasPrefix(got, "---\ntype: "+want+"\n") {
			t.Errorf("%s: want type %s:\n%.60s", table, want, got)
		}
	}

	const models = "models/orders.sql"
	for _, c := range []struct {
		name   string
		files  map[string]string
		engine string
	}{
		{"a profile's target", map[string]string{
			"dbt_project.yml": "name: shop\nprofile: shop\n",
			"profiles.yml":    "shop:\n  target: prod\n  outputs:\n    dev: {type: duckdb}\n    prod: {type: snowflake}\nother:\n  outputs:\n    dev: {type: postgres}\n",
			// The profile decides over what the packages install.
			"requirements.txt": "dbt-duckdb==1.7.3\n",
		}, "snowflake"},
		{"one type for every output", map[string]string{
			"dbt_project.yml": "name: shop\nprofile: shop\n",
			"profiles.yml":    "shop:\n  target: \"{{ env_var('TARGET') }}\"\n  outputs:\n    a: {type: bigquery}\n    b: {type: bigquery}\n",
		}, "bigquery"},
		{"an adapter package", map[string]string{
			"pyproject.toml": "[project]\ndependencies = [\"dbt-core>=1.8\", \"DBT_Redshift>=1.8\", \"dbt-postgres\"]\n",
		}, "redshift"},
		{"an adapter okf does not know", map[string]string{
			"dbt_project.yml": "name: shop\nprofile: shop\n",
			"profiles.yml":    "shop:\n  target: dev\n  outputs:\n    dev: {type: foodb}\n",
			"requirements.in": "dbt-postgres\n",
		}, ""},
		{"two adapters", map[string]string{"requirements.txt": "dbt-duckdb\ndbt-snowflake  # dbt-postgres is not used\n"}, ""},
		// The adapter dbt last parsed the project with, in the metadata of
		// the manifest it wrote, decides over what the packages install.
		{"the manifest's adapter", map[string]string{
			"target/manifest.json": `{"metadata": {"dbt_version": "1.8.2", "adapter_type": "Snowflake"}, "nodes": {}}`,
			"requirements.txt":     "dbt-duckdb\n",
		}, "snowflake"},
		{"the manifest under target-path", map[string]string{
			"dbt_project.yml":     "name: shop\ntarget-path: build\n",
			"build/manifest.json": `{"nodes": {"model.shop.orders": {}}, "metadata": {"adapter_type": "bigquery"}}`,
		}, "bigquery"},
		{"a profile over the manifest", map[string]string{
			"dbt_project.yml":      "name: shop\nprofile: shop\n",
			"profiles.yml":         "shop:\n  target: dev\n  outputs:\n    dev: {type: duckdb}\n",
			"target/manifest.json": `{"metadata": {"adapter_type": "postgres"}}`,
		}, "duckdb"},
		{"a manifest of an adapter okf does not know", map[string]string{
			"target/manifest.json": `{"metadata": {"adapter_type": "foodb"}}`,
			"requirements.txt":     "dbt-postgres\n",
		}, ""},
		{"nothing said", map[string]string{}, ""},
	} {
		c.files[models] = "select 1"
		db := read(t, project(t, c.files))
		if db.Engine != c.engine {
			t.Errorf("%s: engine %q, want %q", c.name, db.Engine, c.engine)
		}
	}
	b = build(t, read(t, project(t, map[string]string{models: "select 1"})))
	if got := string(b.Files["tables/orders.md"]); !strings.HasPrefix(got, "---\ntype: Table\n") {
		t.Errorf("no adapter: want the neutral type Table:\n%.60s", got)
	}
}

// TestColumnTypesDbtKnows: seeds take their CSV values' types, then
// data_type, then the column_types dbt loads them with (dbt_project.yml's
// seeds: tree, deepest last, then the seed's properties); a column of no
// known type has none, and its row no dangling comma.
func TestColumnTypesDbtKnows(t *testing.T) {
	dir := testProject(t, "seed-column-types")
	db := read(t, dir)
	types := func(table string) string {
		var out []string
		for _, c := range db.Table(table).Columns {
			out = append(out, c.Name+" "+c.Type)
		}
		return strings.Join(out, ", ")
	}
	for table, want := range map[string]string{
		"payments":  "id integer, amount decimal(10,2), paid_on timestamp, note varchar(200), ok bool",
		"countries": "code varchar(3), name text, since timestamp",
		"orders":    "order_id bigint, amount ",
	} {
		if got := types(table); got != want {
			t.Errorf("%s: %s, want %s", table, got, want)
		}
	}
	if !slices.Contains(db.Unmatched, "countries.nope") {
		t.Errorf("unmatched %v: want countries.nope, a column_types entry for no column", db.Unmatched)
	}
	b := build(t, db)
	orders := string(b.Files["tables/orders.md"])
	if !strings.Contains(orders, "| `amount` | not null |  | Total paid. |\n") || strings.Contains(orders, "| , ") {
		t.Errorf("a column without a type:\n%s", orders)
	}
	compiletest.ValidateStrictly(t, b)
}

// TestColumnTypesFromTheCatalog: the catalog.json dbt docs generate
// writes under the target path gives the warehouse's types of models',
// seeds' and sources' columns, in its column order, where the project
// declares none (data_type and column_types still decide), and the columns
// no properties file lists; a node of another package, or of no table of
// the project, is left alone. The bundle cites the target folder.
func TestColumnTypesFromTheCatalog(t *testing.T) {
	db := read(t, testProject(t, "column-types-from-the-catalog"))
	for table, want := range map[string]string{
		"orders":     "order_id bigint, amount DECIMAL(18,3), STATUS VARCHAR",
		"people":     "person_id INTEGER, name VARCHAR",
		"countries":  "code char(2), name VARCHAR, pop BIGINT",
		"app.events": "id BIGINT, at TIMESTAMP",
	} {
		var got []string
		for _, c := range db.Table(table).Columns {
			got = append(got, c.Name+" "+c.Type)
		}
		if s := strings.Join(got, ", "); s != want {
			t.Errorf("%s: %s, want %s", table, s, want)
		}
	}
	b := build(t, db)
	if orders := string(b.Files["tables/orders.md"]); !strings.Contains(orders, "resource: shop/target/\n") {
		t.Errorf("tables/orders.md does not cite the catalog's folder:\n%s", orders)
	}
	compiletest.ValidateStrictly(t, b)

}

// TestDocsBlocksBecomeCompactText: a docs block's markdown table becomes
// "value: meaning" items, its lists items, its headings and paragraphs
// sentences, and its padding goes, so that a column's meaning reads as one
// short line.
func TestDocsBlocksBecomeCompactText(t *testing.T) {
	dir := project(t, map[string]string{
		"models/payments.sql": "select 1",
		"models/docs.md": "{% docs pay_status %}\n\nPayment   states:\n\n" +
			"| state     | meaning                    |\n" +
			"|-----------|:---------------------------|\n" +
			"| `pending` | waiting   for the bank     |\n" +
			"| paid      | settled \\| cleared         |\n" +
			"| failed    |                            |\n\n" +
			"Anything   else is\nan error.\n{% enddocs %}\n" +
			"{% docs methods %}\nHow it was paid:\n\n- card: a credit\n  or debit card\n* coupon\n1. gift card\n{% enddocs %}\n" +
			"{% docs countries %}\n## Codes\n| code | name | since |\n|---|---|---|\n| US | United States | 1776 |\n| FR | France |  |\n{% enddocs %}\n",
		"models/schema.yml": `models:
  - name: payments
    description: '{{ doc("countries") }}'
    columns:
      - name: status
        description: '{{ doc("pay_status") }}'
      - name: method
        description: "Method.  {{ doc('methods') }}"
`,
	})
	db := read(t, dir)
	p := db.Table("payments")
	for got, want := range map[string]string{
		p.Column("status").Meaning: "Payment states: `pending`: waiting for the bank; paid: settled | cleared; failed. Anything else is an error.",
		p.Column("method").Meaning: "Method. How it was paid: card: a credit or debit card; coupon; gift card",
		p.Meaning:                  "Codes. US: United States, since 1776; FR: France",
	} {
		if got != want {
			t.Errorf("meaning %q, want %q", got, want)
		}
	}

	status := read(t, jaffleDir(t)).Table("orders").Column("status").Meaning
	want := "Orders can be one of the following statuses: placed: The order has been placed but has not yet left the warehouse; " +
		"shipped: The order has ben shipped to the customer and is currently in transit; completed: The order has been received by the customer; " +
		"return_pending: The customer has indicated that they would like to return the order, but it has not yet been received at the warehouse; " +
		"returned: The order has been returned by the customer and received at the warehouse"
	if status != want {
		t.Errorf("jaffle shop's orders.status means\n%q, want\n%q", status, want)
	}
	// The block as it was, pipes and padding, is 121 tokens.
	if n := tokens.Count(status); n != 93 {
		t.Errorf("orders.status's meaning is %d tokens, want 93", n)
	}
}

// TestLayersFromWhatDbtSays: seeds and sources are data as loaded; a model
// in a folder dbt's layout names (staging/, intermediate/, marts/) is of
// that layer; else a model other models are built from is staging unless
// a description, an exposure or a semantic model makes it a product, or
// it is built from models itself; every other model is a mart. An
// exposure makes any table a mart. Tables' names say nothing.
func TestLayersFromWhatDbtSays(t *testing.T) {
	layers := func(db *compile.Database) map[string]string {
		out := map[string]string{}
		for _, tb := range db.Tables {
			out[tb.Name] = tb.Layer
		}
		return out
	}
	jaffle := read(t, jaffleDir(t))
	if got, want := layers(jaffle), map[string]string{
		"customers": "mart", "orders": "mart",
		"stg_customers": "staging", "stg_orders": "staging", "stg_payments": "staging",
		"raw_customers": "source", "raw_orders": "source", "raw_payments": "source",
	}; !mapsEqual(got, want) {
		t.Errorf("jaffle shop's layers %v, want %v", got, want)
	}
	if got := string(build(t, jaffle).Files["tables/stg_orders.md"]); !strings.Contains(got, "\nlayer: staging\n") {
		t.Errorf("stg_orders does not say its layer:\n%s", got)
	}

	dir := project(t, map[string]string{
		"seeds/codes.csv": "code\nA\n",
		// Comments are not lineage; Python models ref too.
		"models/base.sql":      "select * from {{ source('app', 'events') }} {# {{ ref('codes') }} #}",
		"models/cleaned.sql":   "select * from {{ ref('base') }} join {{ ref(\"codes\") }} using (code)",
		"models/exposed.sql":   "select * from {{ source('app', 'events') }}",
		"models/described.sql": "select * from {{ source('app', 'events') }}",
		"models/semantic.sql":  "select * from {{ source('app', 'events') }}",
		"models/report.py":     "def model(dbt, session):\n    return dbt.ref('exposed').join(dbt.ref('described')).join(dbt.ref('semantic'))\n",
		"models/lonely.sql":    "select * from {{ source('app', 'events') }}",
		// dbt's layout: a described model under staging/ is staging all the
		// same, an intermediate one too, one under marts/ a mart.
		"models/Staging/app/events_typed.sql":   "select * from {{ source('app', 'events') }}",
		"models/intermediate/events_joined.sql": "select * from {{ ref('events_typed') }} join {{ ref('base') }} using (id)",
		"models/marts/core/fed.sql":             "select * from {{ source('app', 'events') }}",
		"models/staging/shown.sql":              "select * from {{ source('app', 'events') }}",
		"models/other.sql":                      "select * from {{ ref('fed') }} join {{ ref('shown') }} using (id)",
		"models/schema.yml": `sources:
  - name: app
    tables: [{name: events}]
models:
  - name: described
    description: Events, one row each.
  - name: events_typed
    description: Events with their types.
exposures:
  - name: dashboard
    type: dashboard
    owner: {name: someone}
    depends_on: [ref('exposed'), ref('shown'), "{{ ref('missing') }}", metric('m')]
semantic_models:
  - name: semantic
    model: ref('semantic')
    entities: [{name: e, type: primary, expr: id}]
`,
	})
	if got, want := layers(read(t, dir)), map[string]string{
		"codes": "source", "app.events": "source",
		"base": "staging", "cleaned": "mart", "exposed": "mart", "described": "mart", "semantic": "mart",
		"report": "mart", "lonely": "mart",
		"events_typed": "staging", "events_joined": "staging", "fed": "mart", "shown": "mart", "other": "mart",
	}; !mapsEqual(got, want) {
		t.Errorf("layers %v, want %v", got, want)
	}
}

// TestSynonymsBecomeAliases: the other names a project gives a model or a
// metric (meta.synonyms or meta.aliases, at the top or under config)
// become its concept's aliases, repeats left out, and a column's go into
// its meaning, where search reads it; the bundle validates strictly.
func TestSynonymsBecomeAliases(t *testing.T) {
	dir := testProject(t, "synonyms")
	db := read(t, dir)
	b := build(t, db)
	orders := string(b.Files["tables/orders.md"])
	if !strings.Contains(orders, "\naliases: [purchases, sales orders]\n") || !strings.Contains(orders, "What the order cost. Also called: ticket size.") {
		t.Errorf("tables/orders.md:\n%s", orders)
	}
	var rule string
	for p, f := range b.Files {
		if strings.HasPrefix(p, "knowledge/revenue") {
			rule = string(f)
		}
	}
	if !strings.Contains(rule, "\naliases: [turnover, top line]\n") {
		t.Errorf("the metric's rule:\n%s", rule)
	}
	compiletest.ValidateStrictly(t, b)
}
