package dbt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/compile/dbt"
)

// TestSourcesConstraintsAndConfigs covers what jaffle shop does not use:
// sources, model contracts' constraints, table-level tests, custom-named
// tests, YAML anchors, ephemeral and disabled models, a model no
// properties file describes, and properties of resources that do not
// exist.
func TestSourcesConstraintsAndConfigs(t *testing.T) {
	dir := testProject(t, "sources-constraints-configs")
	db, err := dbt.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range db.Tables {
		names = append(names, tb.Name)
	}
	// helper and legacy are ephemeral, try and stg_shop disabled; keyed has
	// properties but no model.
	if want := []string{"order_lines", "orders", "untested", "shop_app.tbl_orders", "shop_app.customers"}; !slices.Equal(names, want) {
		t.Errorf("tables %v, want %v", names, want)
	}
	if !slices.Equal(db.Unmatched, []string{"keyed"}) {
		t.Errorf("unmatched %v, want [keyed]", db.Unmatched)
	}
	k := figures(db)
	if want := map[string]string{"orders": "order_id", "order_lines": "order_id, line", "shop_app.tbl_orders": "id"}; !mapsEqual(k.primaryKeys, want) {
		t.Errorf("primary keys %v, want %v", k.primaryKeys, want)
	}
	if want := []string{
		"order_lines(order_id) → orders(order_id)",
		"orders(customer_id) → tbl_customers(id)",
		"orders(raw_id) → shop_app.tbl_orders(id)",
	}; !slices.Equal(k.foreignKeys, want) {
		t.Errorf("foreign keys %v, want %v", k.foreignKeys, want)
	}
	if got := db.Table("orders").Column("channel").Enum; !slices.Equal(got, []string{"web", "1", "true"}) {
		t.Errorf("orders.channel labels %v", got)
	}
	if !db.Table("order_lines").Column("order_id").NotNull || db.Table("order_lines").Column("line").NotNull {
		t.Errorf("a table-level not_null with column_name sets that column only")
	}
	for table, want := range map[string]string{
		"shop_app.tbl_orders": "Orders as the shop's database holds them.",
		"shop_app.customers":  "A table of the source raw: The shop's application database.",
		"untested":            "A dbt model (models/untested.sql) that no properties file describes: its columns are not documented.",
	} {
		if got := db.Table(table).Meaning; got != want {
			t.Errorf("%s means %q, want %q", table, got, want)
		}
	}
	b := build(t, db)
	// The constraint's relation is no table of the project: a gap, not an
	// error.
	if want := []string{"orders(customer_id) → tbl_customers(id): no such table"}; !slices.Equal(b.Gaps.BrokenForeignKeys, want) {
		t.Errorf("broken keys %v, want %v", b.Gaps.BrokenForeignKeys, want)
	}
	compiletest.ValidateStrictly(t, b)
}

// TestSemanticLayerShapes covers the metric shapes the example leaves
// out: conversion metrics, percentiles, semi-additive measures, filters
// SQL cannot state (a Metric() filter, a coarser time grain), metric_time,
// and a foreign entity that is the only source of a join.
func TestSemanticLayerShapes(t *testing.T) {
	dir := testProject(t, "semantic-layer-shapes")
	db, err := dbt.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]string{}
	for _, r := range db.Rules {
		defs[r.Name] = r.Definition
	}
	for name, want := range map[string][]string{
		"visit_to_buy": {"The share of base events (number of rows of visits (one row per visits.visit_id)) followed within 7 days by a conversion (count of buys.buy_id over buys (one row per buys.buy_id)) of the same visits.user_id."},
		"p90_visit_seconds": {
			"Percentile 0.9 of visits.seconds over visits (one row per visits.visit_id) where visits.visited_at >= '2024-01-01'.",
			"SELECT PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY visits.seconds) FILTER (WHERE visits.visited_at >= '2024-01-01') FROM visits",
		},
		"monthly_visits":   {"where {{ TimeDimension('visit__visited_at', 'month') }} = '2024-01-01'."},
		"visits_of_buyers": {"where {{ Metric('buy_count', group_by=['user']) }} > 0."},
		"balance":          {"Sum of accounts.balance over accounts (one row per accounts.user_id), counting only the rows at the last accounts.day of each period."},
	} {
		for _, w := range want {
			if !strings.Contains(defs[name], w) {
				t.Errorf("%s: definition lacks %q:\n%s", name, w, defs[name])
			}
		}
	}
	for _, name := range []string{"visit_to_buy", "monthly_visits", "visits_of_buyers", "balance"} {
		if strings.Contains(defs[name], "```sql") {
			t.Errorf("%s: SQL given for a calculation plain SQL does not state:\n%s", name, defs[name])
		}
	}
	// The entities are the only source of these keys and joins.
	k := figures(db)
	if want := []string{"buys(user_id) → accounts(user_id)", "visits(user_id) → accounts(user_id)"}; !slices.Equal(k.foreignKeys, want) {
		t.Errorf("foreign keys %v, want %v", k.foreignKeys, want)
	}
	if len(k.primaryKeys) != 3 {
		t.Errorf("primary keys %v, want one a semantic model", k.primaryKeys)
	}
	compiletest.ValidateStrictly(t, build(t, db))
}

// TestApplyReportsWhatTheCatalogLacks layers a project on a catalog that
// lacks one of its tables and one of its columns, and has a table the
// project does not document.
func TestApplyReportsWhatTheCatalogLacks(t *testing.T) {
	dir := testProject(t, "layer-on-a-catalog")
	db := &compile.Database{Name: "shop", Engine: "sqlite", Tables: []*compile.Table{
		{Name: "orders", Columns: []*compile.Column{{Name: "id", Type: "integer"}, {Name: "total", Type: "real"}}},
		{Name: "extra", Columns: []*compile.Column{{Name: "x", Type: "text"}}},
	}}
	if err := dbt.Apply(db, dir); err != nil {
		t.Fatal(err)
	}
	if want := []string{"gone", "orders.coupon"}; !slices.Equal(db.Unmatched, want) {
		t.Errorf("unmatched %v, want %v", db.Unmatched, want)
	}
	o := db.Table("orders")
	if o.Meaning != "One row per order." || o.Column("id").Meaning != "The order's id." || !slices.Equal(o.PrimaryKey, []string{"id"}) || o.Column("id").Type != "integer" {
		t.Errorf("orders after the layer: %+v, id %+v", o, o.Column("id"))
	}
	if len(db.Tables) != 2 {
		t.Errorf("the layer added tables: %d", len(db.Tables))
	}
}

// TestPersonalDataMarks: a column is personal data where the project says
// so, in meta (pii, contains_pii, sensitive, personal_data; at its top or
// under config) or in tags (pii, sensitive, personal_data), and nowhere
// else: not from a false flag, another tag, or a name like email.
func TestPersonalDataMarks(t *testing.T) {
	dir := testProject(t, "personal-data-marks")
	db := read(t, dir)
	var marked []string
	for _, c := range db.Table("people").Columns {
		if c.PersonalData {
			marked = append(marked, c.Name)
		}
	}
	want := []string{"full_name", "phone", "address", "birthday", "ssn", "salary", "passport"}
	if !slices.Equal(marked, want) {
		t.Errorf("personal data %v, want %v", marked, want)
	}
	if !strings.Contains(string(build(t, db).Files["tables/people.md"]), "\npersonal_data: [full_name, phone, address, birthday, ssn, salary, passport]\n") {
		t.Errorf("tables/people.md:\n%s", build(t, db).Files["tables/people.md"])
	}
}
