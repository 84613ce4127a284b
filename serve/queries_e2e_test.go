package serve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/examples/shop"
)

// TestNodeClientQueries serves the example shop's verified queries to the
// official MCP client over stdio: they are listed as tools, a call with
// values returns rows, hostile values return no more than legitimate ones
// and change nothing, and a wrong type or an out-of-range value is an
// error naming the parameter.
func TestNodeClientQueries(t *testing.T) {
	node := nodeClient(t)
	okf := okfBinary(t)
	dir := t.TempDir()
	docs, err := shop.WriteDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bundles := filepath.Join(dir, "bundles")
	if out, err := exec.Command(okf, "compile", docs, "--out", bundles).CombinedOutput(); err != nil {
		t.Fatalf("okf compile: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "shop.db")
	if err := shop.Create(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "okf.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("databases:\n  - name: shop\n    dsn: sqlite:%s\n    bundle: %s\n", db, filepath.Join(bundles, "shop"))), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, db)

	calls := []struct {
		tool    string
		args    map[string]any
		isError bool
		has     string
	}{
		{"orders_of_customer", map[string]any{"customer": 25, "max_rows": 2}, false,
			"customer=25, status=\"delivered\", max_rows=2.\n"},
		{"late_deliveries_of_carrier", map[string]any{"carrier": "ParcelCo"}, false, "ParcelCo | 30\n(1 row)"},
		{"late_deliveries_of_carrier", map[string]any{"carrier": "' OR 1=1 --"}, false, "(0 rows)"},
		{"late_deliveries_of_carrier", map[string]any{"carrier": "1; DROP TABLE orders"}, false, "(0 rows)"},
		{"orders_of_customer", map[string]any{"customer": "1; DROP TABLE orders"}, true,
			`parameter customer of shop/queries/orders-of-customer: "1; DROP TABLE orders" is not an integer`},
		{"orders_of_customer", map[string]any{"customer": 25, "max_rows": 1000}, true, "parameter max_rows of shop/queries/orders-of-customer: 1000 is above the maximum 100"},
		{"orders_of_customer", map[string]any{"customer": 25, "status": "' OR 1=1 --"}, true, "parameter status of shop/queries/orders-of-customer: \"' OR 1=1 --\" is not one of placed"},
		{"orders_of_customer", map[string]any{}, true, "parameter customer of shop/queries/orders-of-customer is required (integer)"},
		{"run_query", map[string]any{"id": "queries/net-order-value-by-region", "params": map[string]any{"since": "2025-01-01", "before": "2026-01-01"}}, false, "East | "},
		{"run_query", map[string]any{"id": "queries/net-order-value-by-region", "params": map[string]any{"since": "yesterday"}}, true, `parameter since of shop/queries/net-order-value-by-region: "yesterday" is not a date (YYYY-MM-DD)`},
		{"run_sql", map[string]any{"database": "shop", "sql": "SELECT count(*) AS n FROM orders"}, false, "n\n1812\n(1 row)"},
	}
	var list []map[string]any
	for _, c := range calls {
		list = append(list, map[string]any{"tool": c.tool, "arguments": c.args})
	}
	r := runNodeCalls(t, node, nil, list, "stdio", okf, "mcp", "--dir", bundles, "--config", cfg)
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"late_deliveries_of_carrier", "net_order_value_by_region", "orders_of_customer", "run_query", "run_sql"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if len(r.Calls) != len(calls) {
		t.Fatalf("%d calls answered, want %d", len(r.Calls), len(calls))
	}
	for i, c := range calls {
		got := r.Calls[i]
		if got.IsError != c.isError || !strings.Contains(got.Text, c.has) {
			t.Errorf("%s %v: error %v, text %q; want error %v and %q", c.tool, c.args, got.IsError, got.Text, c.isError, c.has)
		}
	}
	if fileSum(t, db) != before {
		t.Error("the database file changed")
	}
}

func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}
