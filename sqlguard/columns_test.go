package sqlguard

import (
	"strings"
	"testing"
)

func TestColumnsRead(t *testing.T) {
	cat := &Catalog{Tables: map[string][]string{
		"public.orders":    {"id", "customer_id", "total", "status", "detail"},
		"public.customers": {"id", "name", "segment"},
	}}
	for _, tc := range []struct{ sql, want string }{
		{"SELECT o.total FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.segment = 'x'",
			"customers.id customers.segment orders.customer_id orders.total"},
		{"SELECT name FROM customers", "customers.name"},
		{"WITH t AS (SELECT customer_id, sum(total) AS s FROM orders GROUP BY customer_id) SELECT c.name, t.s FROM t JOIN customers c ON c.id = t.customer_id",
			"customers.id customers.name orders.customer_id orders.total"},
		// The inner id is the inner table's, as the database reads it.
		{"SELECT name FROM customers WHERE segment IN (SELECT status FROM orders WHERE id = 1)",
			"customers.name customers.segment orders.id orders.status"},
		{"SELECT total FROM orders JOIN customers USING (id)", "customers.id orders.id orders.total"},
		{"SELECT * FROM customers", "customers.id customers.name customers.segment"},
		{"SELECT c.* FROM customers c JOIN orders o ON o.customer_id = c.id", "customers.id customers.name customers.segment orders.customer_id"},
		{"SELECT total AS t FROM orders ORDER BY t", "orders.total"},
		{"SELECT (o.detail->>'x')::numeric, my_udf(o.status) FROM orders o", "orders.detail orders.status"},
		{"SELECT T1.name FROM customers AS T1 INNER JOIN orders AS T2 ON T1.id = T2.customer_id WHERE T2.total > (SELECT avg(T1.total) FROM orders AS T1)",
			"customers.id customers.name orders.customer_id orders.total"},
		// Statements other than SELECT are read for their queries.
		{"UPDATE orders o SET total = c.id FROM customers c WHERE c.id = o.customer_id AND c.segment = 'x'",
			"customers.id customers.segment orders.customer_id orders.total"},
		{"DELETE FROM orders USING customers WHERE customers.id = orders.customer_id RETURNING orders.status",
			"customers.id orders.customer_id orders.status"},
		{"INSERT INTO orders (id, status) SELECT id, segment FROM customers", "customers.id customers.segment orders.id orders.status"},
		{"CREATE MATERIALIZED VIEW v AS SELECT name FROM customers; CREATE VIEW w AS SELECT total FROM orders",
			"customers.name orders.total"},
		{"CREATE INDEX ON orders ((detail->>'k'), status)", "orders.detail orders.status"},
		{"WITH c AS (SELECT id FROM customers WHERE segment = 'x') UPDATE orders SET status = 'y' WHERE customer_id IN (SELECT id FROM c)",
			"customers.id customers.segment orders.customer_id orders.status"},
	} {
		got, unread, err := ColumnsRead(tc.sql, cat)
		if err != nil || len(unread) > 0 || strings.Join(got, " ") != tc.want {
			t.Errorf("%s\n got %v (unread %v), %v\nwant %s", tc.sql, got, unread, err, tc.want)
		}
	}
	got, unread, err := ColumnsRead("ALTER TABLE orders ADD COLUMN x int; SELECT name FROM customers; SELECT x FROM nowhere; DO $$ BEGIN END $$", cat)
	if err != nil || strings.Join(got, " ") != "customers.name" || len(unread) != 3 {
		t.Errorf("a mixed script: %v, unread %q, %v", got, unread, err)
	}
	if _, _, err := ColumnsRead("SELEC 1", cat); err == nil {
		t.Error("a script that does not parse read without an error")
	}
}
