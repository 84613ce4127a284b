package dbt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
)

// jaffleIndex is the compiled jaffle shop's search index.
func jaffleIndex(t *testing.T) *search.Index {
	t.Helper()
	b := build(t, read(t, jaffleDir(t)))
	var docs []readmodel.Doc
	for _, p := range b.Paths() {
		docs = append(docs, readmodel.Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
	}
	snap, st := readmodel.Build("dbt", docs)
	if len(st.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", st.Diagnostics)
	}
	return search.Build(snap)
}

// TestContextPackForAJaffleQuestion asks the compiled jaffle shop a
// question whose SQL joins orders to customers on customer_id: the pack
// holds both ends of the join.
func TestContextPackForAJaffleQuestion(t *testing.T) {
	pack := jaffleIndex(t).Context("How many orders were placed by customers with more than 3 orders?", search.PackOptions{Count: tokens.Count})
	t.Logf("%+v\n%s", pack, pack.Text)
	for _, want := range []string{"jaffle_shop/tables/orders.customer_id", "jaffle_shop/tables/customers.customer_id"} {
		if !slices.Contains(pack.Columns, want) {
			t.Errorf("the pack's columns %v lack %s", pack.Columns, want)
		}
	}
}

// TestJafflePacksHoldTheMarts asks questions the marts answer: the packs
// hold the marts' columns, not the staging models' and seeds' they are
// built from (which once came in by their shorter, undocumented rows),
// and no row has a dangling comma.
func TestJafflePacksHoldTheMarts(t *testing.T) {
	ix := jaffleIndex(t)
	marts := []string{"jaffle_shop/tables/customers", "jaffle_shop/tables/orders"}
	for q, want := range map[string]string{
		"How much did each customer spend in total?": "jaffle_shop/tables/customers.total_order_amount",
		"Which orders were paid by credit card?":     "jaffle_shop/tables/orders.credit_card_amount",
		"How many orders has each customer placed?":  "jaffle_shop/tables/customers.number_of_orders",
	} {
		pack := ix.Context(q, search.PackOptions{Count: tokens.Count})
		if !slices.Equal(pack.Tables, marts) || !slices.Contains(pack.Columns, want) {
			t.Errorf("%q: tables %v, columns %v; want the marts' alone, with %s", q, pack.Tables, pack.Columns, want)
		}
		if strings.Contains(pack.Text, " ,") || strings.Contains(pack.Text, "` :") || strings.Contains(pack.Text, `\|`) {
			t.Errorf("%q: a row with a dangling comma or escaped pipes:\n%s", q, pack.Text)
		}
	}
}
