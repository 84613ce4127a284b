package dbt_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	// The SQLite driver registers itself as "sqlite3".
	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/compile/load"
	"github.com/okf-tools/okf/compile/source"
	"github.com/okf-tools/okf/sqlguard"
)

var refCallRe = regexp.MustCompile(`\{\{\s*ref\('([^']+)'\)\s*\}\}`)

// exampleSQLite does what dbt seed and dbt run would for the example: it
// creates the seed tables (typed as the compiled seeds are), loads the
// CSV rows, and builds each model from its SQL with ref() replaced by the
// table's name. It returns the file.
func exampleSQLite(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	docs := read(t, exampleDir)
	seeds := &compile.Database{Name: docs.Name, Engine: "sqlite"}
	for _, name := range []string{"raw_customers", "raw_orders", "raw_payments"} {
		seeds.Tables = append(seeds.Tables, docs.Table(name))
	}
	path := filepath.Join(t.TempDir(), "jaffle_semantic.db")
	if _, err := load.SQLite(ctx, path, seeds, load.Options{}); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tb := range seeds.Tables {
		f, err := os.Open(filepath.Join(exampleDir, "seeds", tb.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		insert := "INSERT INTO " + tb.Name + " VALUES (?" + strings.Repeat(", ?", len(tb.Columns)-1) + ")"
		for _, row := range rows[1:] {
			args := make([]any, len(row))
			for i, v := range row {
				args[i] = v
			}
			if _, err := conn.ExecContext(ctx, insert, args...); err != nil {
				t.Fatalf("%s: %v", insert, err)
			}
		}
	}
	for _, model := range []string{"customers", "orders", "payments"} {
		text, err := os.ReadFile(filepath.Join(exampleDir, "models", model+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "CREATE TABLE "+model+" AS "+refCallRe.ReplaceAllString(string(text), "$1")); err != nil {
			t.Fatalf("model %s: %v", model, err)
		}
	}
	return path
}

var sqlBlockRe = regexp.MustCompile("(?s)```sql\n(.*?)\n```")

// TestExampleAgainstSQLite shows that the compiled example names the real
// tables and columns: every one of them is in the database dbt would
// build, a question's SQL written from the bundle runs through the guard,
// and so does the SQL of every metric, with the values the rows give.
func TestExampleAgainstSQLite(t *testing.T) {
	ctx := context.Background()
	path := exampleSQLite(t)
	docs := read(t, exampleDir)
	live, err := catalog.ReadSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	columns := 0
	for _, tb := range docs.Tables {
		lt := live.Table(tb.Name)
		if lt == nil {
			t.Errorf("table %s is not in the database", tb.Name)
			continue
		}
		for _, c := range tb.Columns {
			columns++
			if lt.Column(c.Name) == nil {
				t.Errorf("column %s.%s is not in the database", tb.Name, c.Name)
			}
		}
	}
	if len(live.Tables) != 6 || columns != 28 {
		t.Errorf("%d tables in the database, %d columns compiled; want 6 and 28", len(live.Tables), columns)
	}

	guard, err := sqlguard.Open(ctx, docs.Name, "sqlite:"+path, sqlguard.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	// How many orders were placed by customers with more than 3 orders?
	res, err := guard.Query(ctx, "test", "SELECT count(*) FROM orders WHERE customer_id IN (SELECT customer_id FROM customers WHERE number_of_orders > 3)")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0][0]; got != int64(8) {
		t.Errorf("orders of customers with more than 3 orders: %v, want 8 (customers 1 and 2, 4 orders each)", got)
	}

	// What the seeds add up to, worked out by hand.
	want := map[string]float64{
		"order_total": 375, "order_count": 12, "completed_order_count": 6, "returned_order_total": 115,
		"large_order_count": 3, "february_customer_order_count": 1, "customers_with_orders": 5,
		"customer_count": 12, "payment_total": 375, "average_order_value": 31.25, "completion_rate": 0.5,
		"credit_card_share": 215.0 / 375, "orders_per_customer": 1, "net_order_total": 260, "largest_order": 70,
	}
	ran := 0
	for _, r := range docs.Rules {
		m := sqlBlockRe.FindStringSubmatch(r.Definition)
		if m == nil {
			continue
		}
		name := r.Name[strings.LastIndexByte(r.Name, '(')+1 : len(r.Name)-1]
		res, err := guard.Query(ctx, "test", m[1])
		if err != nil {
			t.Errorf("%s: %s: %v", name, m[1], err)
			continue
		}
		ran++
		var got float64
		switch v := res.Rows[0][0].(type) {
		case int64:
			got = float64(v)
		case float64:
			got = v
		}
		if w, ok := want[name]; !ok || math.Abs(got-w) > 1e-9 {
			t.Errorf("%s: %s gives %v, want %v", name, m[1], res.Rows[0][0], w)
		}
	}
	if ran != len(want) {
		t.Errorf("ran the SQL of %d metrics, want %d", ran, len(want))
	}
}

// TestExampleLayeredOnTheCatalog compiles --from the database with the
// project layered on it: the catalog's tables and types, the project's
// descriptions, and the keys and joins its tests prove where the catalog
// has none.
func TestExampleLayeredOnTheCatalog(t *testing.T) {
	path := exampleSQLite(t)
	db, err := source.ReadCatalog(context.Background(), "sqlite:"+path, "", exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	if db.Engine != "sqlite" || len(db.Tables) != 6 || len(db.Rules) != 18 || len(db.Unmatched) != 0 {
		t.Errorf("engine %s, %d tables, %d rules, unmatched %v", db.Engine, len(db.Tables), len(db.Rules), db.Unmatched)
	}
	orders := db.Table("orders")
	for col, want := range map[string]string{
		// CREATE TABLE … AS types a column copied from a typed one…
		"order_id": "INT",
		// …and leaves an expression's untyped, which dbt's data_type fills.
		"amount": "numeric",
	} {
		if got := orders.Column(col).Type; got != want {
			t.Errorf("orders.%s is typed %q, want %q", col, got, want)
		}
	}
	if got := orders.Column("customer_id").Meaning; got != "The customer who placed the order." {
		t.Errorf("orders.customer_id means %q", got)
	}
	k := figures(db)
	if want := map[string]string{"customers": "customer_id", "orders": "order_id", "payments": "payment_id", "raw_payments": "id"}; !mapsEqual(k.primaryKeys, want) {
		t.Errorf("primary keys %v, want %v", k.primaryKeys, want)
	}
	if len(k.foreignKeys) != 3 || len(k.enums) != 2 {
		t.Errorf("foreign keys %v, enums %v", k.foreignKeys, k.enums)
	}
	b := build(t, db)
	if b.Gaps.Count() != 7 || len(b.Gaps.UnlinkedRules) != 0 {
		t.Errorf("gaps %+v", b.Gaps)
	}
	compiletest.ValidateStrictly(t, b)
}
