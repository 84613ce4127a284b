package drift

import (
	"reflect"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
)

func build(t *testing.T, db *compile.Database) map[string][]byte {
	t.Helper()
	b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	return b.Files
}

func shop(extra ...*compile.Column) *compile.Database {
	orders := &compile.Table{Name: "orders", PrimaryKey: []string{"ordid"}, Columns: append([]*compile.Column{
		{Name: "ordid", Type: "integer", Meaning: "Order."},
		{Name: "grossamt", Type: "numeric", Meaning: "Total."},
	}, extra...)}
	return &compile.Database{Name: "shop", Tables: []*compile.Table{orders, {Name: "legacy", Columns: []*compile.Column{{Name: "x", Type: "text"}}}},
		Rules: []*compile.Rule{{ID: 1, Name: "Net Order Value", Kind: compile.CalculationKind, Definition: "grossamt - discamt"}}}
}

func TestCompare(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	was := build(t, shop(&compile.Column{Name: "discamt", Type: "numeric", Meaning: "Discount."}, &compile.Column{Name: "note", Type: "text"}))
	// A person's own rule, past its stale_after, naming a column.
	was["knowledge/mine.md"] = []byte("---\ntype: Business Rule\ntitle: Mine\nstale_after: 2026-01-01\n---\n# Definition\n\nDiscounted orders.\n\n# Columns used\n\n* [orders](../tables/orders.md): `discamt`, `grossamt`\n")
	if r := Compare("shop", was, was, now); len(r.Stale) != 1 || r.Drifted() != true || len(r.Rules)+len(r.ColumnsAdded)+len(r.TablesAdded) != 0 {
		t.Errorf("against itself: %+v", r)
	}
	now2 := shop(&compile.Column{Name: "note", Type: "character varying"}, &compile.Column{Name: "giftwrap", Type: "boolean"})
	now2.Tables = append(now2.Tables[:1], &compile.Table{Name: "carriers", Columns: []*compile.Column{{Name: "id", Type: "integer"}}})
	r := Compare("shop", was, build(t, now2), now)
	want := Report{Bundle: "shop", TablesAdded: []string{"carriers"}, TablesRemoved: []string{"legacy"},
		ColumnsAdded: []string{"orders.giftwrap"}, ColumnsRemoved: []string{"orders.discamt"},
		ColumnsRetyped: []Retyped{{"orders.note", "text", "character varying"}},
		// The person's rule, and the generated one whose formula names it.
		Rules: []RuleDrift{{Concept: "knowledge/mine", Path: "knowledge/mine.md", Columns: []string{"orders.discamt"}},
			{Concept: "knowledge/net-order-value", Path: "knowledge/net-order-value.md", Columns: []string{"orders.discamt"}}},
		Stale: []string{"knowledge/mine"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
	if r := Compare("shop", nil, was, now); !r.Missing || !r.Drifted() || r.Text() != "shop: no bundle yet: compile it first\n" {
		t.Errorf("no bundle: %+v", r)
	}
	if got := Compare("shop", build(t, shop()), build(t, shop()), now).Text(); got != "shop: no drift\n" {
		t.Errorf("no drift: %q", got)
	}
}
