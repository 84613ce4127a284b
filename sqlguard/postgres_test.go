package sqlguard

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPreparePostgres(t *testing.T) {
	admin, agent := pgFixture(t)
	ctx := context.Background()
	// A second run brings the same grants and changes nothing else.
	setup, err := PreparePostgres(ctx, admin, agent, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(setup.Tables, ","); got != "public.hero,public.notes" {
		t.Errorf("tables = %s", got)
	}
	if got := strings.Join(setup.Hidden, ","); got != "public.hero.secret_identity" {
		t.Errorf("hidden = %s", got)
	}
	probes, err := ProbePostgres(ctx, agent, setup.Tables[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"read a table (public.hero)":           "1500",
		"write a table (DELETE … WHERE false)": "permission denied for table hero",
		"create a table":                       "permission denied for schema public",
		"create a temporary table":             "permission denied to create temporary tables",
		"drop a table":                         "must be owner of table hero",
		"read a server file":                   "permission denied for function pg_read_file",
	}
	for _, p := range probes {
		if p.Allowed != p.Want {
			t.Errorf("%s: allowed=%v (%s), want allowed=%v", p.What, p.Allowed, p.Result, p.Want)
		}
		if w, ok := want[p.What]; !ok || !strings.Contains(p.Result, w) {
			t.Errorf("%s: %q, want it to contain %q", p.What, p.Result, w)
		}
	}
	// The role has a connection limit, and what okf cannot take away is
	// said.
	if r := setup.Reach; r.ConnectionLimit != DefaultConnectionLimit || !slices.Contains(r.OtherDatabases, "postgres") ||
		!slices.Contains(r.Functions, "pg_cancel_backend(integer)") || len(r.Notes()) != 3 {
		t.Errorf("reach = %+v\nnotes: %q", r, r.Notes())
	}
	limited := fixtureOptions
	limited.ConnectionLimit = 2
	if _, err := PreparePostgres(ctx, admin, agent, limited); err != nil {
		t.Fatal(err)
	}
	var conns []*pgx.Conn
	for range 2 {
		c, err := pgx.Connect(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if _, err := pgx.Connect(ctx, agent); err == nil || !strings.Contains(err.Error(), "too many connections for role") {
		t.Errorf("a third connection under a limit of 2: %v", err)
	}
	for _, c := range conns {
		c.Close(ctx)
	}
	// Hiding a column later takes back the whole-table grant.
	if _, err := PreparePostgres(ctx, admin, agent, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := agentReads(ctx, agent, "SELECT secret_identity FROM hero LIMIT 1"); err != nil {
		t.Fatalf("with nothing hidden: %v", err)
	}
	if _, err := PreparePostgres(ctx, admin, agent, fixtureOptions); err != nil {
		t.Fatal(err)
	}
	if err := agentReads(ctx, agent, "SELECT secret_identity FROM hero LIMIT 1"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("after hiding it: %v", err)
	}
	if err := agentReads(ctx, agent, "SELECT name FROM hero LIMIT 1"); err != nil {
		t.Errorf("a visible column: %v", err)
	}
	if _, err := PreparePostgres(ctx, admin, admin, fixtureOptions); err == nil || !strings.Contains(err.Error(), "admin role") {
		t.Errorf("preparing the admin role itself: %v", err)
	}
}

func TestPostgresQuery(t *testing.T) {
	admin, agent := pgFixture(t)
	ctx := context.Background()
	var audit bytes.Buffer
	auditLog := NewAuditLog(&audit)
	opts := fixtureOptions
	// No query on db may meet its timeout, however loaded the machine: the
	// timeout has a handle of its own below, so the row-size limit never
	// races it.
	opts.MaxRows, opts.CountLimit, opts.Timeout = 5, 100, time.Minute
	db, err := Open(ctx, "fixture", agent, opts, auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	short := opts
	// Long enough that the client-side deadline's grace (a quarter of it
	// plus 250 ms) outlasts a stall under load, so the server's timeout
	// comes first.
	short.Timeout = 2 * time.Second
	timed, err := Open(ctx, "fixture", agent, short, auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer timed.Close()

	res, err := db.Query(ctx, "test", "SELECT id, name, power, power > 10 AS strong FROM hero WHERE id <= 3 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	wantText := "id | name | power | strong\n1 | Hero 1 | 1.125 | false\n2 | Hero 2 | 2.250 | false\n3 | Hero 3 | 3.375 | false\n(3 rows)"
	if got := res.Text(20); got != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", got, wantText)
	}
	if res.Rows[0][0] != int64(1) || res.Rows[0][2] != "1.125" || res.Rows[0][3] != false || res.Columns[2].Type != "numeric" {
		t.Errorf("typed row = %#v, columns %v", res.Rows[0], res.Columns)
	}

	// Row cap: five rows kept, counting stops at 100, and the connection
	// still works afterwards.
	res, err = db.Query(ctx, "test", "SELECT a.id, b.id FROM hero a, hero b")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 5 || res.Total != 100 || res.TotalKnown {
		t.Errorf("capped result: %d rows, total %d known %v", len(res.Rows), res.Total, res.TotalKnown)
	}
	if !strings.HasSuffix(res.Text(3), "(3 of more than 100 rows)") {
		t.Errorf("capped text ends %q", res.Text(3))
	}
	res, err = db.Query(ctx, "test", "SELECT count(*) FROM hero")
	if err != nil || res.Rows[0][0] != int64(1500) {
		t.Fatalf("after the cap: %v %v", res, err)
	}

	// Errors carry the layer, the position and the database's hint.
	_, err = db.Query(ctx, "test", "SELECT nam FROM hero")
	ge, ok := AsError(err)
	if !ok || ge.Layer != LayerDatabase || ge.Position != 8 || ge.Code != "42703" {
		t.Fatalf("misspelt column: %#v", err)
	}
	if text := ge.Text("SELECT nam FROM hero"); !strings.Contains(text, "\n  SELECT nam FROM hero\n         ^") {
		t.Errorf("error text:\n%s", text)
	}
	_, err = timed.Query(ctx, "test", slowQuery)
	if ge, ok := AsError(err); !ok || ge.Layer != LayerTimeout {
		t.Errorf("slow query: %v", err)
	}
	_, err = db.Query(ctx, "test", "SELECT repeat('x', 20000000)")
	if ge, ok := AsError(err); !ok || ge.Layer != LayerLimits || ge.Code != "row_too_big" {
		t.Errorf("huge row: %v", err)
	}
	_, err = db.Query(ctx, "test", "SELECT secret_identity FROM hero")
	if ge, ok := AsError(err); !ok || ge.Layer != LayerValidator || ge.Code != "denied_column" {
		t.Errorf("denied column: %v", err)
	}

	// A cancelled context ends the query and leaks nothing.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = db.Query(cctx, "test", slowQuery)
	cancel()
	if ge, ok := AsError(err); !ok || ge.Layer != LayerDeadline {
		t.Errorf("cancelled query: %v", err)
	}
	if _, inTx := activeGuardConns(t, admin); inTx != 0 {
		t.Errorf("%d guard sessions still in a transaction", inTx)
	}

	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("audit has %d lines:\n%s", len(lines), audit.String())
	}
	var last AuditEntry
	if err := json.Unmarshal([]byte(lines[4]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Caller != "test" || last.Database != "fixture" || last.Layer != LayerTimeout || !last.Refused || last.SQL != slowQuery {
		t.Errorf("audit entry = %+v", last)
	}
}

// slowQuery counts the 3.4·10⁹ rows of a three-way cross join of the
// fixture's heroes: it runs into any timeout.
const slowQuery = "SELECT count(*) FROM hero a, hero b, hero c"

// agentReads runs sql as the agent's role, outside the guard.
func agentReads(ctx context.Context, agent, sql string) error {
	conn, err := pgx.Connect(ctx, agent)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var v any
	return conn.QueryRow(ctx, sql).Scan(&v)
}

// TestSessionLeavesNothing runs, on a pool of one connection and past the
// validator, statements that leave state in a session, and checks the
// next query on that connection finds none of it. A database with dblink
// gets a fresh connection for every query instead.
func TestSessionLeavesNothing(t *testing.T) {
	admin, agent := pgFixture(t)
	ctx := context.Background()
	opts := fixtureOptions
	opts.MaxConns = 1
	p, err := OpenPostgres(ctx, agent, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	lim := Limits{Timeout: 2 * time.Second, MaxRows: 10, CountLimit: 10}
	one := func(sql string) string {
		t.Helper()
		res, err := p.Run(ctx, sql, nil, lim)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return Cell(res.Rows[0][0])
	}
	pid := one("SELECT pg_backend_pid()")
	for _, leave := range []string{
		"SELECT pg_advisory_lock(7)",
		"SELECT set_config('okf.residue', 'left', false)",
		"PREPARE okf_residue AS SELECT 1",
		"DECLARE okf_residue CURSOR WITH HOLD FOR SELECT 1",
		"LISTEN okf_residue",
	} {
		p.Run(ctx, leave, nil, lim) // some are refused inside a read-only transaction; either way nothing may stay
		got := one(`SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) || ' ' ||
			coalesce(current_setting('okf.residue', true), '') || ' ' || (SELECT count(*) FROM pg_prepared_statements) || ' ' ||
			(SELECT count(*) FROM pg_cursors WHERE name = 'okf_residue') || ' ' || (SELECT count(*) FROM pg_listening_channels())`)
		if got != "0  0 0 0" {
			t.Errorf("after %s: locks, setting, prepared, cursors, channels = %q", leave, got)
		}
	}
	if again := one("SELECT pg_backend_pid()"); again != pid {
		t.Errorf("the connection was not reused: pid %s, then %s", pid, again)
	}
	// Values come back exact, and xml as text.
	res, err := p.Run(ctx, "SELECT 1797331.41::numeric, 99072.53::float8, 0.1::float4, '<a>1</a>'::xml, 12345678901234567890::numeric(30,2)", nil, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(1); !strings.Contains(got, "1797331.41 | 99072.53 | 0.1 | <a>1</a> | 12345678901234567890.00") {
		t.Errorf("exact values: %s", got)
	}
	if _, ok := res.Rows[0][3].(string); !ok {
		t.Errorf("xml arrived as %T", res.Rows[0][3])
	}
	// With dblink installed, every query gets a connection of its own.
	installDblink(t, admin)
	q, err := OpenPostgres(ctx, agent, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	pids := map[string]bool{}
	for range 3 {
		res, err := q.Run(ctx, "SELECT pg_backend_pid()", nil, lim)
		if err != nil {
			t.Fatal(err)
		}
		pids[Cell(res.Rows[0][0])] = true
	}
	if len(pids) != 3 {
		t.Errorf("with dblink, 3 queries ran on %d connections", len(pids))
	}
}

// BenchmarkSessionReset compares the two ways a query's session is left
// clean: DISCARD ALL on the pooled connection, and a fresh connection
// (what a database with dblink gets).
func BenchmarkSessionReset(b *testing.B) {
	admin, agent := pgFixture(b)
	ctx := context.Background()
	lim := Limits{Timeout: 2 * time.Second, MaxRows: 10, CountLimit: 10}
	run := func(b *testing.B) {
		p, err := OpenPostgres(ctx, agent, Options{MaxConns: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		for b.Loop() {
			if _, err := p.Run(ctx, "SELECT 1", nil, lim); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("discard-all", run)
	installDblink(b, admin)
	b.Run("fresh-connection", run)
}

// installDblink creates the dblink extension in the database at admin.
func installDblink(t testing.TB, admin string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION dblink"); err != nil {
		t.Fatal(err)
	}
}
