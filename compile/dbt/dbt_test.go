package dbt_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
)

// documented reads a properties file the plain way, as the figures the
// compiled bundle must reproduce: every model's documented columns and
// their descriptions.
func documented(t *testing.T, file string) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var props struct {
		Models []struct {
			Name    string
			Columns []struct{ Name, Description string }
		}
	}
	if err := yaml.Unmarshal(data, &props); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, m := range props.Models {
		out[m.Name] = map[string]string{}
		for _, c := range m.Columns {
			out[m.Name][c.Name] = c.Description
		}
	}
	return out
}

// checkDocumented checks that every documented column is in the database,
// with its description (a doc() call resolved, not copied).
func checkDocumented(t *testing.T, db *compile.Database, want map[string]map[string]string) int {
	t.Helper()
	n := 0
	for model, cols := range want {
		tb := db.Table(model)
		if tb == nil {
			t.Errorf("model %s is missing", model)
			continue
		}
		if len(tb.Columns) != len(cols) {
			t.Errorf("%s has %d columns, its properties list %d", model, len(tb.Columns), len(cols))
		}
		for name, desc := range cols {
			n++
			c := tb.Column(name)
			switch {
			case c == nil:
				t.Errorf("%s.%s is missing", model, name)
			case strings.Contains(c.Meaning, "{{"):
				t.Errorf("%s.%s: doc() left unresolved: %q", model, name, c.Meaning)
			case !strings.Contains(desc, "doc(") && c.Meaning != strings.TrimSpace(desc):
				t.Errorf("%s.%s means %q, documented as %q", model, name, c.Meaning, desc)
			}
		}
	}
	return n
}

type keyFigures struct {
	primaryKeys map[string]string // table → key columns
	foreignKeys []string          // "t(c) → r(c)"
	enums       map[string]int    // table.column → labels
}

func figures(db *compile.Database) keyFigures {
	k := keyFigures{primaryKeys: map[string]string{}, enums: map[string]int{}}
	for _, tb := range db.Tables {
		if len(tb.PrimaryKey) > 0 {
			k.primaryKeys[tb.Name] = strings.Join(tb.PrimaryKey, ", ")
		}
		for _, fk := range tb.ForeignKeys {
			k.foreignKeys = append(k.foreignKeys, tb.Name+"("+strings.Join(fk.Columns, ", ")+") → "+fk.RefTable+"("+strings.Join(fk.RefColumns, ", ")+")")
		}
		for _, c := range tb.Columns {
			if len(c.Enum) > 0 {
				k.enums[tb.Name+"."+c.Name] = len(c.Enum)
			}
		}
	}
	slices.Sort(k.foreignKeys)
	return k
}

func TestJaffleShop(t *testing.T) {
	dir := jaffleDir(t)
	db := read(t, dir)
	if db.Name != "jaffle_shop" || db.Engine != "duckdb" {
		t.Errorf("database %q on %q, want jaffle_shop on duckdb", db.Name, db.Engine)
	}
	var names []string
	for _, tb := range db.Tables {
		names = append(names, tb.Name)
	}
	if want := []string{"customers", "orders", "stg_customers", "stg_orders", "stg_payments", "raw_customers", "raw_orders", "raw_payments"}; !slices.Equal(names, want) {
		t.Errorf("tables %v, want %v", names, want)
	}
	want := documented(t, filepath.Join(dir, "models", "schema.yml"))
	for m, cols := range documented(t, filepath.Join(dir, "models", "staging", "schema.yml")) {
		want[m] = cols
	}
	if n := checkDocumented(t, db, want); n != 21 {
		t.Errorf("%d documented model columns, want 21 (7 + 9 + 1 + 2 + 2)", n)
	}
	k := figures(db)
	if wantPK := map[string]string{"customers": "customer_id", "orders": "order_id", "stg_customers": "customer_id", "stg_orders": "order_id", "stg_payments": "payment_id"}; len(k.primaryKeys) != 5 || !mapsEqual(k.primaryKeys, wantPK) {
		t.Errorf("primary keys %v, want %v", k.primaryKeys, wantPK)
	}
	if wantFK := []string{"orders(customer_id) → customers(customer_id)"}; !slices.Equal(k.foreignKeys, wantFK) {
		t.Errorf("foreign keys %v, want %v", k.foreignKeys, wantFK)
	}
	if wantEnums := map[string]int{"orders.status": 5, "stg_orders.status": 5, "stg_payments.payment_method": 4}; !mapsEqual(k.enums, wantEnums) {
		t.Errorf("enum columns %v, want %v", k.enums, wantEnums)
	}
	status := db.Table("orders").Column("status")
	if !strings.HasPrefix(status.Meaning, "Orders can be one of the following statuses:") || !strings.Contains(status.Meaning, "; return_pending: The customer has indicated") {
		t.Errorf("orders.status: the docs block orders_status is not resolved: %q", status.Meaning)
	}
	notNull := 0
	for _, c := range db.Table("orders").Columns {
		if c.NotNull {
			notNull++
		}
	}
	if notNull != 7 {
		t.Errorf("orders: %d not-null columns, want 7 (order_id, customer_id, amount and the four payment amounts)", notNull)
	}
	// Seeds: the CSV header gives the columns, the values their types.
	for table, cols := range map[string]string{
		"raw_customers": "id integer, first_name text, last_name text",
		"raw_orders":    "id integer, user_id integer, order_date date, status text",
		"raw_payments":  "id integer, order_id integer, payment_method text, amount integer",
	} {
		var got []string
		for _, c := range db.Table(table).Columns {
			got = append(got, c.Name+" "+c.Type)
		}
		if strings.Join(got, ", ") != cols {
			t.Errorf("seed %s: %s, want %s", table, strings.Join(got, ", "), cols)
		}
	}
	var sources []string
	for _, s := range db.Sources {
		sources = append(sources, s.ID+" "+s.Resource)
	}
	if want := []string{"dbt_project jaffle_shop_duckdb/dbt_project.yml", "dbt-models jaffle_shop_duckdb/models/", "dbt-seeds jaffle_shop_duckdb/seeds/"}; !slices.Equal(sources, want) {
		t.Errorf("sources %v, want %v", sources, want)
	}

	b := build(t, db)
	// The staging models and the seeds are not described: 5 + 11 columns.
	if g := b.Gaps; len(g.ColumnsWithoutMeaning) != 16 || g.Count() != 16 || b.Tables != 8 || b.Rules != 0 {
		t.Errorf("%d tables, %d rules, gaps %+v", b.Tables, b.Rules, g)
	}
	compiletest.ValidateStrictly(t, b)
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// metricNames reads the metrics (and create_metric measures) of a
// semantic layer file the plain way.
func metricNames(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sem struct {
		SemanticModels []struct {
			Measures []struct {
				Name         string
				CreateMetric bool `yaml:"create_metric"`
			}
		} `yaml:"semantic_models"`
		Metrics []struct{ Name string }
	}
	if err := yaml.Unmarshal(data, &sem); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sm := range sem.SemanticModels {
		for _, m := range sm.Measures {
			if m.CreateMetric {
				out = append(out, m.Name)
			}
		}
	}
	for _, m := range sem.Metrics {
		out = append(out, m.Name)
	}
	return out
}

func TestSemanticExample(t *testing.T) {
	db := read(t, exampleDir)
	if db.Name != "jaffle_semantic" || len(db.Tables) != 6 {
		t.Fatalf("database %q with %d tables, want jaffle_semantic with 6", db.Name, len(db.Tables))
	}
	if n := checkDocumented(t, db, documented(t, filepath.Join(exampleDir, "models", "schema.yml"))); n != 17 {
		t.Errorf("%d documented model columns, want 17 (7 + 5 + 5)", n)
	}
	k := figures(db)
	if want := map[string]string{"customers": "customer_id", "orders": "order_id", "payments": "payment_id", "raw_payments": "id"}; !mapsEqual(k.primaryKeys, want) {
		t.Errorf("primary keys %v, want %v", k.primaryKeys, want)
	}
	if want := []string{
		"orders(customer_id) → customers(customer_id)",
		"payments(order_id) → orders(order_id)",
		"raw_payments(order_id) → raw_orders(id)",
	}; !slices.Equal(k.foreignKeys, want) {
		t.Errorf("foreign keys %v, want %v", k.foreignKeys, want)
	}
	if want := map[string]int{"orders.status": 5, "payments.payment_method": 4}; !mapsEqual(k.enums, want) {
		t.Errorf("enum columns %v, want %v", k.enums, want)
	}
	for col, want := range map[string]string{
		"customers.lifetime_value": "What the customer has paid over all their orders. Amount in Australian dollars (AUD).",
		"payments.payment_method":  "How the payment was made: credit_card, coupon, bank_transfer or gift_card.",
		// A seed's properties: the description, through a docs block.
		"raw_payments.payment_method": "How the payment was made: credit_card, coupon, bank_transfer or gift_card.",
	} {
		tb, c, _ := strings.Cut(col, ".")
		if got := db.Table(tb).Column(c).Meaning; got != want {
			t.Errorf("%s means %q, want %q", col, got, want)
		}
	}
	if got := db.Table("orders").Column("status").Meaning; !strings.HasPrefix(got, "Where the order is in its life: placed: ordered, not yet shipped; shipped:") {
		t.Errorf("orders.status: docs block not resolved: %q", got)
	}
	// data_type wins over the CSV's values; a seed without properties
	// keeps the inferred types.
	if got := db.Table("raw_payments").Column("amount").Type + " " + db.Table("raw_orders").Column("order_date").Type; got != "integer date" {
		t.Errorf("seed types %q", got)
	}

	metrics := metricNames(t, filepath.Join(exampleDir, "models", "semantic.yml"))
	if len(metrics) != 18 || len(db.Rules) != 18 {
		t.Fatalf("%d metrics in semantic.yml, %d rules", len(metrics), len(db.Rules))
	}
	withSQL := 0
	for i, r := range db.Rules {
		if r.ID != i+1 || r.Kind != compile.CalculationKind {
			t.Errorf("rule %d: id %d, kind %s", i+1, r.ID, r.Kind)
		}
		if !slices.ContainsFunc(metrics, func(m string) bool { return r.Name == m || strings.HasSuffix(r.Name, "("+m+")") }) {
			t.Errorf("rule %q names no metric of semantic.yml", r.Name)
		}
		if strings.Contains(r.Definition, "```sql\nSELECT ") {
			withSQL++
		}
	}
	// Cumulative metrics and the one with a time offset have no plain SQL.
	if withSQL != 15 {
		t.Errorf("%d rules with SQL, want 15", withSQL)
	}
	deps := map[string]int{}
	for _, r := range db.Rules {
		if len(r.DependsOn) > 0 {
			deps[r.Name] = len(r.DependsOn)
		}
	}
	if want := map[string]int{
		"Average order value (average_order_value)": 2, "Completion rate (completion_rate)": 2,
		"Credit card share (credit_card_share)": 1, "Orders per customer (orders_per_customer)": 2,
		"Net order total (net_order_total)": 2, "Order total growth (order_total_growth)": 1,
	}; !mapsEqual(deps, want) {
		t.Errorf("rules built on rules %v, want %v", deps, want)
	}

	b := build(t, db)
	g := b.Gaps
	if len(g.ColumnsWithoutMeaning) != 7 || g.Count() != 7 {
		t.Errorf("gaps %+v, want only the 7 columns of the two seeds without properties", g)
	}
	for path, line := range map[string]string{
		"knowledge/order-total.md":                         "* [orders](/tables/orders.md): `order_id`, `amount`",
		"knowledge/orders-per-customer.md":                 "* [customers](/tables/customers.md): `customer_id`",
		"knowledge/credit-card-share.md":                   "* [payments](/tables/payments.md): `payment_id`, `payment_method`, `amount`",
		"knowledge/orders-of-customers-new-in-february.md": "* [customers](/tables/customers.md): `customer_id`, `first_order`",
		"tables/orders.md":                                 "* [Average order value (average_order_value)](/knowledge/average-order-value.md): `order_id`, `amount`",
	} {
		if !strings.Contains(string(b.Files[path]), line+"\n") {
			t.Errorf("%s lacks %q:\n%s", path, line, b.Files[path])
		}
	}
	compiletest.ValidateStrictly(t, b)
}
