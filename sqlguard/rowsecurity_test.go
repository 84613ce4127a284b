package sqlguard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/internal/pgtest"
)

// rlsDDL: customers and their views, owned by a role that is no
// superuser (owner_N), as an application's tables would be; one view
// owned by the superuser, one materialized view; two policies okf did not
// create, one of them named like okf's.
const rlsDDL = `CREATE ROLE %[1]s LOGIN;
GRANT CREATE ON SCHEMA public TO %[1]s;
SET ROLE %[1]s;
CREATE TABLE customers (id integer PRIMARY KEY, region text, name text);
INSERT INTO customers VALUES (1, 'north', 'Ana'), (2, 'south', 'Bo'), (3, 'north', 'Cy'), (4, 'east', 'Di');
CREATE TABLE orders (id integer PRIMARY KEY, custref integer);
INSERT INTO orders VALUES (10, 1), (11, 3), (12, 2);
CREATE VIEW customer_regions AS SELECT id, region FROM customers;
CREATE VIEW north_ids AS SELECT id FROM customer_regions;
CREATE MATERIALIZED VIEW customer_snapshot AS SELECT id, region FROM customers;
CREATE POLICY audit_read ON customers FOR SELECT TO pg_monitor USING (true);
CREATE POLICY okf_lookalike ON customers FOR SELECT TO pg_monitor USING (false);
RESET ROLE;
CREATE VIEW super_regions AS SELECT id, region FROM customers;`

var rlsOptions = Options{RowFilters: map[string]string{"customers": "region = :caller.region"}}

// rlsPolicy is an okf.yaml policy's options, as engine.Policy.Options
// gives them: the database's filter and the policy's, both.
var rlsPolicy = Options{Policy: "late", RowFilters: map[string]string{"customers": "(region = :caller.region) AND (id >= :caller.min_id)"}}

// rlsState is what okf prepare leaves of row-level security: every
// policy on customers and orders with its command, roles and condition,
// and the tables' switches.
func rlsState(t *testing.T, admin string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var state string
	if err := conn.QueryRow(ctx, `SELECT
		(SELECT string_agg(format('%s %s %s %s %s', c.relname, c.relrowsecurity, c.relforcerowsecurity, c.relacl, ''), '; ' ORDER BY c.relname)
			FROM pg_class c WHERE c.relname IN ('customers', 'orders', 'customer_regions', 'super_regions', 'north_ids', 'customer_snapshot')) || ' | ' ||
		coalesce((SELECT string_agg(format('%s.%s %s %s %s %s', tablename, policyname, permissive, cmd, roles, qual), '; ' ORDER BY tablename, policyname)
			FROM pg_policies WHERE tablename IN ('customers', 'orders')), '')`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	return state
}

// rawCount counts a relation's rows on a connection of conn's, after
// stmts, in one transaction.
func rawCount(t *testing.T, dsn, relation string, stmts ...string) any {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+relation).Scan(&n); err != nil {
		return err.Error()
	}
	return n
}

// TestPrepareRowSecurity: okf prepare installs row-level security for
// the row filters of the database and of a policy, so that a view over a
// filtered table (which the rewrite does not reach) shows only the
// caller's rows through the guard; the agent's role on a connection of
// its own sees no filtered row, and a caller document it writes itself is
// not believed without okf's key; views row-level security cannot reach
// through are withheld; other roles read and write as before; prepare is
// idempotent, leaves policies okf did not create alone, and takes its own
// away when the filters go.
func TestPrepareRowSecurity(t *testing.T) {
	ctx := context.Background()
	cluster := pgtest.Shared(t)
	admin := cluster.NewDatabase(t)
	n := roleSeq.Add(1)
	owner := fmt.Sprintf("okf_owner_%d_%d", os.Getpid(), n)
	role := fmt.Sprintf("okf_rls_%d_%d", os.Getpid(), n)
	agent := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	ownerDSN := strings.Replace(admin, "postgres@", owner+"@", 1)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(rlsDDL, owner)); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	setup, err := PreparePostgres(ctx, admin, agent, rlsOptions, rlsPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(setup.Filtered, " "); got != "public.customers" {
		t.Errorf("filtered %q", got)
	}
	if got := strings.Join(setup.Withheld, " "); got != "public.customer_snapshot public.super_regions" {
		t.Errorf("withheld %q", got)
	}
	first := rlsState(t, admin)
	if _, err := PreparePostgres(ctx, admin, agent, rlsOptions, rlsPolicy); err != nil {
		t.Fatal(err)
	}
	if again := rlsState(t, admin); again != first {
		t.Errorf("prepare twice:\n%s\nthen\n%s", first, again)
	}
	for _, want := range []string{"customers.audit_read PERMISSIVE SELECT {pg_monitor} true", "customers.okf_lookalike PERMISSIVE SELECT {pg_monitor} false"} {
		if !strings.Contains(first, want) {
			t.Errorf("a policy okf did not create changed: want %q in\n%s", want, first)
		}
	}

	north := WithCaller(ctx, map[string]string{"region": "north", "min_id": "2"})
	guard, err := Open(ctx, "rls", agent, rlsOptions, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	late, err := Open(ctx, "rls", agent, rlsPolicy, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	for _, c := range []struct {
		db         *DB
		ctx        context.Context
		sql, want  string
		refusedVia Layer
	}{
		{guard, north, "SELECT id FROM customer_regions ORDER BY id", "[[1],[3]]", ""},
		{guard, north, "SELECT id FROM north_ids ORDER BY id", "[[1],[3]]", ""},
		{guard, north, "SELECT id FROM customers ORDER BY id", "[[1],[3]]", ""},
		{guard, north, "SELECT count(*) FROM orders", "[[3]]", ""},
		{late, north, "SELECT id FROM customer_regions ORDER BY id", "[[3]]", ""},
		{guard, WithCaller(ctx, map[string]string{"region": "east"}), "SELECT id FROM customer_regions", "[[4]]", ""},
		// The rewrite refuses a caller without a region; through a view
		// the engine shows it nothing.
		{guard, ctx, "SELECT count(*) FROM customer_regions", "[[0]]", ""},
		{guard, north, "SELECT count(*) FROM super_regions", "", LayerPrivileges},
		{guard, north, "SELECT count(*) FROM customer_snapshot", "", LayerPrivileges},
		{guard, north, "SELECT set_config('okf.caller', '', true)", "", LayerValidator},
		{guard, north, "SET okf.caller = ''", "", LayerValidator},
	} {
		res, err := c.db.Query(c.ctx, "test", c.sql)
		if c.refusedVia != "" {
			if e, ok := err.(*Error); !ok || !e.Refused || e.Layer != c.refusedVia {
				t.Errorf("%s: want a refusal by %s, got %v, %v", c.sql, c.refusedVia, res, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got, _ := json.Marshal(res.Rows); string(got) != c.want {
			t.Errorf("%s: rows %s, want %s", c.sql, got, c.want)
		}
	}

	// The agent's role on a connection of its own, outside the guard.
	forged := `{"b":"x","p":"","v":{"region":"north"}}`
	signer := callerSigner{key: rowSecurityKey(role, "agentpw")}
	stale, staleMAC := signer.sign("1.1", map[string]string{"region": "north"})
	for _, c := range []struct {
		what     string
		relation string
		stmts    []string
		want     any
	}{
		{"no caller", "customers", nil, 0},
		{"no caller, through a view", "customer_regions", nil, 0},
		{"no caller, an unfiltered table", "orders", nil, 3},
		{"a document without a MAC", "customers", []string{"SELECT set_config('okf.caller', '" + forged + "', true)"}, 0},
		{"a document with a made-up MAC", "customer_regions", []string{"SELECT set_config('okf.caller', '" + forged + "', true)",
			"SELECT set_config('okf.caller_mac', '" + strings.Repeat("0", 64) + "', true)"}, 0},
		{"okf's document of another transaction", "customers", []string{"SELECT set_config('okf.caller', '" + stale + "', true)",
			"SELECT set_config('okf.caller_mac', '" + staleMAC + "', true)"}, 0},
		{"the key table", "okf.caller_key", nil, "ERROR: permission denied for schema okf (SQLSTATE 42501)"},
	} {
		if got := rawCount(t, agent, c.relation, c.stmts...); got != c.want {
			t.Errorf("as %s, %s: count %v, want %v", role, c.what, got, c.want)
		}
	}
	// Only the holder of the key signs: okf's document for this
	// transaction is believed.
	ctxConn, err := pgx.Connect(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer ctxConn.Close(ctx)
	tx, err := ctxConn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var binding string
	var count int
	if err := tx.QueryRow(ctx, "SELECT "+txBinding).Scan(&binding); err != nil {
		t.Fatal(err)
	}
	doc, mac := signer.sign(binding, map[string]string{"region": "north"})
	if _, err := tx.Exec(ctx, "SELECT set_config('okf.caller', $1, true), set_config('okf.caller_mac', $2, true)", doc, mac); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM customer_regions").Scan(&count); err != nil || count != 2 {
		t.Errorf("okf's signed document: %d rows, %v", count, err)
	}
	tx.Rollback(ctx)

	// Other roles: the owner reads every row and writes; the superuser
	// too.
	if got := rawCount(t, ownerDSN, "customer_regions"); got != 4 {
		t.Errorf("the owner through its view: %v", got)
	}
	if got := rawCount(t, ownerDSN, "customers", "INSERT INTO customers VALUES (5, 'west', 'Ed')"); got != 5 {
		t.Errorf("the owner writing: %v", got)
	}

	// Without filters, okf's policies go and the table is as it was.
	if _, err := PreparePostgres(ctx, admin, agent, Options{}); err != nil {
		t.Fatal(err)
	}
	after := rlsState(t, admin)
	if strings.Contains(after, "okf_"+role) || strings.Contains(after, "okf_unfiltered") || !strings.Contains(after, "customers f f") ||
		!strings.Contains(after, "audit_read") || !strings.Contains(after, "okf_lookalike") {
		t.Errorf("after the filters went:\n%s", after)
	}
}
