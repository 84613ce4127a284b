package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/pgtest"
)

// What an attack achieves when nothing stops it.
type attackKind int

const (
	// kindWrite leaves something behind: changed rows, tables, large
	// objects, session settings or locks.
	kindWrite attackKind = iota
	// kindRead returns data it must not, or does what must not be done
	// at all (ATTACH, switching query_only off); any success is a breach.
	kindRead
	// kindRunaway holds the database past any reasonable time.
	kindRunaway
)

type attack struct {
	name   string
	kind   attackKind
	pg     string
	sqlite string // "" when the PostgreSQL text serves both
}

func (a attack) sql(d Dialect) string {
	if d == DialectSQLite && a.sqlite != "" {
		return a.sqlite
	}
	return a.pg
}

var deepNesting = "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)

var attacks = []attack{
	{name: "write", kind: kindWrite, pg: "DELETE FROM hero"},
	{name: "DDL", kind: kindWrite, pg: "DROP TABLE notes"},
	{name: "two statements", kind: kindWrite, pg: "SELECT 1; DELETE FROM hero"},
	{name: "write hidden in a CTE", kind: kindWrite, pg: "WITH d AS (DELETE FROM hero RETURNING id) SELECT count(*) FROM d"},
	{name: "SELECT INTO", kind: kindWrite, pg: "SELECT * INTO stolen FROM notes"},
	{name: "COPY from a server file", kind: kindWrite, pg: "COPY notes FROM '/etc/hostname'"},
	{name: "ATTACH", kind: kindRead, pg: "ATTACH DATABASE ':memory:' AS scratch"},
	{name: "PRAGMA that writes", kind: kindWrite, pg: "PRAGMA user_version = 7"},
	{name: "PRAGMA that switches a layer off", kind: kindRead, pg: "PRAGMA query_only = 0"},
	{name: "SET (switching the timeout off)", kind: kindWrite, pg: "SET statement_timeout = '1h'"},
	{name: "set_config (switching the timeout off)", kind: kindWrite, pg: "SELECT set_config('statement_timeout', '1h', false)"},
	{name: "pg_read_file", kind: kindRead, pg: "SELECT pg_read_file('/etc/passwd')"},
	{name: "lo_import", kind: kindWrite, pg: "SELECT lo_import('/etc/passwd')"},
	{name: "dblink", kind: kindRead, pg: "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)"},
	{name: "pg_sleep", kind: kindRunaway, pg: "SELECT pg_sleep(30)"},
	{name: "advisory lock", kind: kindWrite, pg: "SELECT pg_advisory_lock(42)"},
	{name: "runaway cross join", kind: kindRunaway, pg: "SELECT a.id, b.id, c.id FROM hero a, hero b, hero c"},
	{name: "denied column", kind: kindRead, pg: "SELECT name, secret_identity FROM hero"},
	{name: "denied column through *", kind: kindRead, pg: "SELECT * FROM hero"},
	{name: "other schemas' catalogs", kind: kindRead, pg: "SELECT rolname, rolpassword FROM pg_authid",
		sqlite: "SELECT name, sql FROM sqlite_schema"},
	{name: "very long SQL", kind: kindRead, pg: deepNesting},
	{name: "invalid UTF-8", kind: kindWrite, pg: "SELECT 1 /* \xff\xfe */; DELETE FROM hero"},
}

// The harness's own limits, far above the layers' so a stop is the layer's.
const (
	harnessDeadline = 1500 * time.Millisecond
	layerTimeout    = 200 * time.Millisecond
	layerRowCap     = 100
)

// outcome is what one run of an attack did.
type outcome struct {
	err          error
	harnessEnded bool // the harness deadline ended it, not a layer
	truncated    bool // the row cap ended it
	sessionDiff  bool // settings or locks of the session changed
}

// stopped reports whether the run kept the attack from succeeding, given
// whether the database changed.
func (o outcome) stopped(kind attackKind, dbChanged bool) bool {
	if o.harnessEnded {
		return false
	}
	if o.err != nil || kind == kindRunaway && o.truncated {
		return true
	}
	return kind == kindWrite && !dbChanged && !o.sessionDiff
}

// layerRun runs one attack with a single layer (or none) in place.
type layerRun struct {
	layer Layer
	run   func(ctx context.Context, sql string) outcome
}

// record is one attack's verdict on one engine.
type record struct {
	attack string
	layers []string
}

func TestAttacksPostgres(t *testing.T) {
	t.Parallel()
	admin, agent := pgFixture(t)
	ctx := context.Background()
	cluster := pgtest.Shared(t)
	adminCfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	agentCfg, err := pgx.ParseConfig(agent)
	if err != nil {
		t.Fatal(err)
	}
	template := adminCfg.Database
	var cloneSeq int
	clone := func() string {
		cloneSeq++
		name := fmt.Sprintf("%s_c%d", template, cloneSeq)
		conn, err := pgx.Connect(ctx, cluster.DSN("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		db := pgx.Identifier{name}.Sanitize()
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+db+" TEMPLATE "+pgx.Identifier{template}.Sanitize()+" STRATEGY = FILE_COPY"); err != nil {
			t.Fatal(err)
		}
		// Database-level grants live outside the copied catalog.
		if _, err := conn.Exec(ctx, "REVOKE TEMPORARY ON DATABASE "+db+" FROM PUBLIC"); err != nil {
			t.Fatal(err)
		}
		return name
	}
	guarded := clone()
	guardedDSN := cluster.DSN(guarded)
	guardedAgent := strings.Replace(agent, "/"+template+"?", "/"+guarded+"?", 1)
	opts := fixtureOptions
	opts.Timeout, opts.CountLimit, opts.MaxRows = 300*time.Millisecond, layerRowCap, 10
	db, err := Open(ctx, "fixture", guardedAgent, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	initial := pgState(t, guardedDSN)
	validator, err := NewValidator(DialectPostgres, fixtureOptions, fixtureCatalog(DialectPostgres))
	if err != nil {
		t.Fatal(err)
	}

	var records []record
	for _, a := range attacks {
		sql := a.sql(DialectPostgres)
		target := clone()
		runs := pgLayerRuns(adminCfg, agentCfg, &target)
		rec := runLayers(t, a, validator, runs,
			func() string { return pgState(t, cluster.DSN(target)) },
			func() { target = clone() })
		// The whole guard must stop it too, and leave the database as it was.
		res, err := db.Query(ctx, "attack-suite", sql)
		if err == nil && !(a.kind == kindRunaway && res.Truncated()) {
			t.Errorf("%s: the guard let it through: %v", a.name, res)
		}
		if got := pgState(t, guardedDSN); got != initial {
			t.Errorf("%s: the guarded database changed:\n%s\n%s", a.name, initial, got)
		}
		records = append(records, rec)
	}
	if open, inTx := activeGuardConns(t, guardedDSN); inTx != 0 {
		t.Errorf("%d of %d guard sessions left busy", inTx, open)
	}
	reportAttacks(t, "PostgreSQL", records)
}

// pgLayerRuns builds the PostgreSQL layers, each alone on top of a bare
// superuser session in autocommit over the simple protocol (which runs
// several statements). *target names the scratch database to attack.
func pgLayerRuns(adminCfg, agentCfg *pgx.ConnConfig, target *string) []layerRun {
	type setup struct {
		agent, extended, readOnly, rollback, timeout, deadline, rowCap, reset bool
	}
	mk := func(l Layer, s setup) layerRun {
		return layerRun{layer: l, run: func(ctx context.Context, sql string) outcome {
			cfg := adminCfg
			if s.agent {
				cfg = agentCfg
			}
			cfg = cfg.Copy()
			cfg.Database = *target
			cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
				return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
			}
			return runPG(ctx, cfg, sql, s.extended, s.readOnly, s.rollback, s.timeout, s.deadline, s.rowCap, s.reset)
		}}
	}
	return []layerRun{
		mk(LayerDatabase, setup{}),
		mk(LayerOneStatement, setup{extended: true}),
		mk(LayerReadOnlyTx, setup{readOnly: true}),
		mk(LayerPrivileges, setup{agent: true}),
		mk(LayerRollback, setup{rollback: true}),
		mk(LayerSessionReset, setup{reset: true}),
		mk(LayerTimeout, setup{timeout: true}),
		mk(LayerDeadline, setup{deadline: true}),
		mk(LayerRowCap, setup{rowCap: true}),
	}
}

func runPG(ctx context.Context, cfg *pgx.ConnConfig, sql string, extended, readOnly, rollback, timeout, deadline, rowCap, reset bool) outcome {
	harness, cancel := context.WithTimeout(ctx, harnessDeadline)
	defer cancel()
	conn, err := pgx.ConnectConfig(harness, cfg)
	if err != nil {
		return outcome{err: fmt.Errorf("harness: connecting: %w", err), harnessEnded: true}
	}
	defer conn.Close(context.Background())
	if timeout {
		if _, err := conn.Exec(harness, fmt.Sprintf("SET statement_timeout = %d", layerTimeout.Milliseconds())); err != nil {
			return outcome{err: err, harnessEnded: true}
		}
	}
	before := pgSession(conn)
	switch {
	case readOnly:
		_, err = conn.Exec(harness, "BEGIN READ ONLY")
	case rollback:
		_, err = conn.Exec(harness, "BEGIN")
	}
	if err != nil {
		return outcome{err: err, harnessEnded: true}
	}
	qctx, stop := harness, context.CancelFunc(func() {})
	if deadline {
		qctx, stop = context.WithTimeout(harness, layerTimeout)
	} else if rowCap {
		qctx, stop = context.WithCancel(harness)
	}
	defer stop()
	mode := pgx.QueryExecModeSimpleProtocol
	if extended {
		mode = pgx.QueryExecModeExec
	}
	var o outcome
	rows, err := conn.Query(qctx, sql, mode)
	if err == nil {
		n := 0
		for rows.Next() {
			if n++; rowCap && n > layerRowCap {
				o.truncated = true
				stop()
				break
			}
		}
		rows.Close()
		err = rows.Err()
	}
	if !o.truncated {
		o.err = err
	}
	o.harnessEnded = harness.Err() != nil
	end := context.Background()
	switch {
	case rollback:
		conn.Exec(end, "ROLLBACK")
	case readOnly:
		conn.Exec(end, "COMMIT")
	}
	if reset {
		conn.Exec(end, "SELECT pg_advisory_unlock_all(); RESET ALL")
	}
	o.sessionDiff = before != pgSession(conn)
	return o
}

// pgSession is the session state attacks try to change; "" when the
// session is gone, which leaves nothing behind.
func pgSession(conn *pgx.Conn) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var s string
	err := conn.QueryRow(ctx, `SELECT current_setting('default_transaction_read_only') || ' ' || current_setting('statement_timeout') || ' ' ||
		(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())`).Scan(&s)
	if err != nil {
		return ""
	}
	return s
}

func TestAttacksSQLite(t *testing.T) {
	t.Parallel()
	fixture := sqliteFixture(t)
	ctx := context.Background()
	guarded := copyFile(t, fixture)
	opts := fixtureOptions
	opts.Timeout, opts.CountLimit, opts.MaxRows = 300*time.Millisecond, layerRowCap, 10
	db, err := Open(ctx, "fixture", "sqlite:"+guarded, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	initial := sqliteState(t, guarded)
	validator, err := NewValidator(DialectSQLite, fixtureOptions, fixtureCatalog(DialectSQLite))
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer under test is the guard's own, bound to the fixture.
	guard, err := OpenSQLite(fixture, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	var records []record
	for _, a := range attacks {
		sql := a.sql(DialectSQLite)
		target := copyFile(t, fixture)
		runs := sqliteLayerRuns(guard, &target)
		rec := runLayers(t, a, validator, runs,
			func() string { return sqliteState(t, target) },
			func() { target = copyFile(t, fixture) })
		res, err := db.Query(ctx, "attack-suite", sql)
		if err == nil && !(a.kind == kindRunaway && res.Truncated()) {
			t.Errorf("%s: the guard let it through: %v", a.name, res)
		}
		if got := sqliteState(t, guarded); got != initial {
			t.Errorf("%s: the guarded file changed:\n%s\n%s", a.name, initial, got)
		}
		records = append(records, rec)
	}
	reportAttacks(t, "SQLite", records)
}

// sqliteLayerRuns builds the SQLite layers, each alone on top of a bare
// read-write connection that runs every statement of the text.
func sqliteLayerRuns(guard *SQLite, target *string) []layerRun {
	type setup struct{ roFile, queryOnly, limits, authorizer, roStmt, oneStmt, interrupt, rowCap bool }
	mk := func(l Layer, s setup) layerRun {
		return layerRun{layer: l, run: func(ctx context.Context, sql string) outcome {
			return runSQLite(ctx, guard, *target, sql, s.roFile, s.queryOnly, s.limits, s.authorizer, s.roStmt, s.oneStmt, s.interrupt, s.rowCap)
		}}
	}
	return []layerRun{
		mk(LayerDatabase, setup{}),
		mk(LayerReadOnlyFile, setup{roFile: true}),
		mk(LayerQueryOnly, setup{queryOnly: true}),
		mk(LayerLimits, setup{limits: true}),
		mk(LayerAuthorizer, setup{authorizer: true}),
		mk(LayerReadOnlyStmt, setup{roStmt: true}),
		mk(LayerOneStatement, setup{oneStmt: true}),
		mk(LayerInterrupt, setup{interrupt: true}),
		mk(LayerRowCap, setup{rowCap: true}),
	}
}

func runSQLite(ctx context.Context, guard *SQLite, path, sql string, roFile, queryOnly, limits, authorizer, roStmt, oneStmt, interrupt, rowCap bool) outcome {
	var (
		c   *sqlite3.Conn
		err error
	)
	if roFile {
		c, err = sqlite3.OpenFlags("file:"+path+"?mode=ro", sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	} else {
		c, err = sqlite3.Open(path)
	}
	if err != nil {
		return outcome{err: err, harnessEnded: true}
	}
	defer c.Close()
	if queryOnly {
		c.Exec("PRAGMA query_only = 1")
	}
	if limits {
		c.Limit(sqlite3.LIMIT_ATTACHED, 0)
		c.Limit(sqlite3.LIMIT_SQL_LENGTH, DefaultMaxSQLBytes)
		c.Limit(sqlite3.LIMIT_LENGTH, MaxValueBytes)
	}
	before := sqliteSession(c)
	if authorizer {
		sc := &sqliteConn{conn: c}
		c.SetAuthorizer(sc.authorize(guard))
	}
	harness, cancel := context.WithTimeout(ctx, harnessDeadline)
	defer cancel()
	qctx := harness
	if interrupt {
		var stop context.CancelFunc
		qctx, stop = context.WithTimeout(harness, layerTimeout)
		defer stop()
	}
	c.SetInterrupt(qctx)
	var o outcome
	o.err = func() error {
		rest := sql
		for strings.TrimSpace(rest) != "" {
			stmt, tail, err := c.Prepare(rest)
			if err != nil {
				return err
			}
			if stmt == nil {
				return nil
			}
			if oneStmt && strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tail), ";")) != "" {
				stmt.Close()
				return errors.New("more than one statement")
			}
			if roStmt && !stmt.ReadOnly() {
				stmt.Close()
				return errors.New("the statement would write")
			}
			n := 0
			for stmt.Step() {
				if n++; rowCap && n > layerRowCap {
					o.truncated = true
					break
				}
			}
			err = stmt.Err()
			stmt.Close()
			if o.truncated {
				return nil
			}
			if err != nil {
				return err
			}
			rest = tail
		}
		return nil
	}()
	o.harnessEnded = harness.Err() != nil
	c.SetInterrupt(context.Background())
	c.SetAuthorizer(nil)
	o.sessionDiff = before != sqliteSession(c)
	return o
}

// sqliteSession is the connection state attacks try to change.
func sqliteSession(c *sqlite3.Conn) string {
	stmt, _, err := c.Prepare("SELECT (SELECT query_only FROM pragma_query_only) || ' ' || (SELECT count(*) FROM pragma_database_list)")
	if err != nil {
		return ""
	}
	defer stmt.Close()
	stmt.Step()
	return stmt.ColumnText(0)
}

// runLayers runs attack a under the validator and each layer alone and
// returns the layers that stopped it. It fails the test unless two do.
func runLayers(t *testing.T, a attack, v *Validator, runs []layerRun, state func() string, reset func()) record {
	t.Helper()
	sql := a.sql(v.dialect)
	rec := record{attack: a.name}
	if err := v.Validate(sql); err != nil {
		rec.layers = append(rec.layers, string(LayerValidator))
	}
	outcomes := make([]outcome, len(runs))
	changed := make([]bool, len(runs))
	if a.kind == kindWrite {
		// One at a time, on a fresh copy after any run that changed it.
		for i, r := range runs {
			before := state()
			outcomes[i] = r.run(context.Background(), sql)
			if changed[i] = state() != before; changed[i] {
				reset()
			}
		}
	} else {
		// Reads and runaways change nothing; run them side by side, since
		// the runaways wait out the harness deadline.
		var wg sync.WaitGroup
		for i, r := range runs {
			wg.Go(func() { outcomes[i] = r.run(context.Background(), sql) })
		}
		wg.Wait()
	}
	base := outcomes[0]
	baseStopped := base.stopped(a.kind, changed[0])
	if baseStopped {
		rec.layers = append(rec.layers, fmt.Sprintf("database (%s)", shortError(base.err)))
	}
	for i, r := range runs[1:] {
		o := outcomes[i+1]
		if !o.stopped(a.kind, changed[i+1]) {
			continue
		}
		// Refused for the very reason the bare database refused: not this layer's doing.
		if baseStopped && o.err != nil && base.err != nil && o.err.Error() == base.err.Error() {
			continue
		}
		rec.layers = append(rec.layers, string(r.layer))
	}
	if len(rec.layers) < 2 {
		t.Errorf("%s: stopped by %d layers (%s); want at least two", a.name, len(rec.layers), strings.Join(rec.layers, ", "))
	}
	return rec
}

func shortError(err error) string {
	if err == nil {
		return "no effect"
	}
	msg := err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg = pe.Message
	}
	msg = strings.TrimPrefix(msg, "sqlite3: ")
	if len(msg) > 60 {
		msg = msg[:57] + "..."
	}
	return msg
}

// reportAttacks logs the table and, when OKF_ATTACK_TABLE names a file,
// appends it there as markdown for the documentation.
func reportAttacks(t *testing.T, engine string, records []record) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| attack (%s) | stopped by |\n| --- | --- |\n", engine)
	for _, r := range records {
		fmt.Fprintf(&b, "| %s | %s |\n", r.attack, strings.Join(r.layers, ", "))
	}
	t.Log(b.String())
	if path := os.Getenv("OKF_ATTACK_TABLE"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(b.String()); err != nil {
			t.Fatal(err)
		}
	}
}
