package dbt_test

import (
	"slices"
	"testing"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
)

// TestContextPackForAJaffleQuestion asks the compiled jaffle shop a
// question whose SQL joins orders to customers on customer_id: the pack
// holds both ends of the join.
func TestContextPackForAJaffleQuestion(t *testing.T) {
	b := build(t, read(t, jaffleDir(t)))
	var docs []readmodel.Doc
	for _, p := range b.Paths() {
		docs = append(docs, readmodel.Doc{Bundle: b.Name, Path: p, Content: b.Files[p]})
	}
	snap, st := readmodel.Build("dbt", docs)
	if len(st.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", st.Diagnostics)
	}
	pack := search.Build(snap).Context("How many orders were placed by customers with more than 3 orders?", search.PackOptions{Count: tokens.Count})
	t.Logf("%+v\n%s", pack, pack.Text)
	for _, want := range []string{"jaffle_shop/tables/orders.customer_id", "jaffle_shop/tables/customers.customer_id"} {
		if !slices.Contains(pack.Columns, want) {
			t.Errorf("the pack's columns %v lack %s", pack.Columns, want)
		}
	}
}
