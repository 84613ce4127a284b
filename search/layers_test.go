package search

import (
	"slices"
	"strings"
	"testing"
)

// layered is a bundle shaped like a compiled dbt project: two marts
// people document, the staging views they are built from and a seed as
// loaded, whose names say nothing of their layer. The staging and source
// tables repeat the marts' column names with no meanings, so that BM25
// alone, which favours short documents, ranks them first.
func layered(withLayers bool) map[string]string {
	table := func(typ, layer, grain, rows string, joins ...string) string {
		front := "---\ntype: " + typ + "\ngrain: " + grain + "\n"
		if withLayers {
			front += "layer: " + layer + "\n"
		}
		body := "---\n\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" + rows
		if len(joins) > 0 {
			body += "\n# Joins\n\n" + strings.Join(joins, "\n") + "\n"
		}
		return front + body
	}
	return map[string]string{
		"shop:tables/orders.md": table("DuckDB Table", "mart", "order_id",
			"| `order_id` | integer | primary key | This is a unique identifier for an order |\n"+
				"| `customer_id` | integer, not null | references customers.customer_id | Foreign key to the customers table |\n"+
				"| `order_date` | date |  | Date (UTC) that the order was placed |\n"+
				"| `amount` | not null |  | Total amount (AUD) of the order |\n"+
				"| `credit_card_amount` | not null |  | Amount of the order (AUD) paid for by credit card |\n",
			"* `customer_id` references `customer_id` in [customers](/tables/customers.md)."),
		"shop:tables/customers.md": table("DuckDB Table", "mart", "customer_id",
			"| `customer_id` | integer | primary key | This is a unique identifier for a customer |\n"+
				"| `total_order_amount` |  |  | Total value (AUD) of a customer's orders |\n"),
		"shop:tables/base_orders.md": table("DuckDB View", "staging", "order_id",
			"| `order_id` | integer | primary key |  |\n| `order_date` | date |  |  |\n| `customer_id` | integer |  |  |\n"),
		"shop:tables/base_payments.md": table("DuckDB View", "staging", "payment_id",
			"| `payment_id` | integer | primary key |  |\n| `order_id` | integer |  |  |\n| `payment_method` | text |  |  |\n\n# Enum values\n\n* `payment_method`: 'credit_card', 'coupon', 'bank_transfer', 'gift_card'\n"),
		"shop:tables/landing_orders.md": table("DuckDB Table", "source", "id",
			"| `id` | integer |  |  |\n| `order_date` | date |  |  |\n| `status` | text |  |  |\n"),
	}
}

func TestLayersRankMartsAboveWhatTheyAreBuiltFrom(t *testing.T) {
	flat, ix := Build(snap(t, layered(false))), Build(snap(t, layered(true)))
	// The same question: without layers, BM25 ranks a short staging
	// table above the mart that answers it as well; with them, the mart
	// comes first and the source last.
	q := "order date"
	if got := ids(flat.Search(q, Options{Bundle: "shop", NoExpand: true})); len(got) == 0 || got[0] == "shop/tables/orders" {
		t.Fatalf("without layers %v: the test no longer shows BM25's preference", got)
	}
	got := ids(ix.Search(q, Options{Bundle: "shop", NoExpand: true}))
	if want := []string{"shop/tables/orders", "shop/tables/base_orders", "shop/tables/landing_orders"}; !slices.Equal(got[:min(3, len(got))], want) {
		t.Errorf("with layers %v, want %v first", got, want)
	}

	for _, q := range []string{"Which orders were paid by credit card?", "How much did each customer spend in total?", "When was each order placed?"} {
		before := flat.Context(q, PackOptions{Count: countWords})
		p := ix.Context(q, PackOptions{Count: countWords})
		if !slices.ContainsFunc(before.Tables, lowerLayer) {
			t.Errorf("%q without layers: tables %v; the test no longer shows the lower layers coming in", q, before.Tables)
		}
		if slices.ContainsFunc(p.Tables, lowerLayer) || slices.ContainsFunc(p.Columns, lowerLayer) || len(p.Columns) == 0 {
			t.Errorf("%q: tables %v, columns %v: want the marts' alone\n%s", q, p.Tables, p.Columns, p.Text)
		}
	}
	// What only a lower layer holds still comes: no mart has a payment
	// method.
	p := ix.Context("How many payments were made with each payment method?", PackOptions{Count: countWords})
	if !slices.Contains(p.Columns, "shop/tables/base_payments.payment_method") {
		t.Errorf("columns %v: want base_payments.payment_method\n%s", p.Columns, p.Text)
	}
}

func lowerLayer(ref string) bool {
	return strings.Contains(ref, "/base_") || strings.Contains(ref, "/landing_")
}

// TestPackRowsOfColumnsWithoutType: a column of no known type reads
// "not null" or its key alone, with no dangling comma.
func TestPackRowsOfColumnsWithoutType(t *testing.T) {
	ix := Build(snap(t, layered(true)))
	p := ix.Context("total amount and credit card amount of each order", PackOptions{Count: countWords})
	for _, want := range []string{
		"- `amount` not null: Total amount (AUD) of the order\n",
		"- `credit_card_amount` not null: Amount of the order (AUD) paid for by credit card\n",
		"- `order_id` integer, primary key",
	} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("pack lacks %q:\n%s", want, p.Text)
		}
	}
	if strings.Contains(p.Text, " ,") || strings.Contains(p.Text, "` :") {
		t.Errorf("a row with a dangling comma or colon:\n%s", p.Text)
	}
}
