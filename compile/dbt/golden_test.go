package dbt_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/golden"
)

// TestGoldenExample pins the key files of the example's bundle and its
// gap report byte for byte (go test -update rewrites them): the indexes,
// a model's tables (customers with columns marked as personal data) and a
// seed's, and a metric of each shape.
func TestGoldenExample(t *testing.T) {
	b, err := compile.Build(read(t, exampleDir), compile.Options{
		Generator:   "okf/test",
		GeneratedAt: time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC),
		SourceBase:  "https://example.com/okf/examples",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"index.md",
		"log.md",
		"tables/index.md",
		"tables/customers.md",
		"tables/orders.md",
		"tables/raw_payments.md",
		"knowledge/index.md",
		"knowledge/order-total.md",
		"knowledge/orders-of-customers-new-in-february.md",
		"knowledge/credit-card-share.md",
		"knowledge/orders-per-customer.md",
		"knowledge/net-order-total.md",
		"knowledge/order-total-growth.md",
		"knowledge/order-total-month-to-date.md",
	} {
		data, ok := b.Files[p]
		if !ok {
			t.Errorf("%s was not compiled", p)
			continue
		}
		golden.Check(t, "golden/"+p, data)
	}
	var gaps bytes.Buffer
	if err := b.Gaps.WriteText(&gaps); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "golden/gaps.txt", gaps.Bytes())
}
