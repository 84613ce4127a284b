package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/sqlguard/attacktest"
)

var update = golden.Update

// The attack fixture adds to the fixture a sequence, an index on the
// hidden column, a view that shows it and (on PostgreSQL) dblink, and
// hides the view's column too.
const (
	attackDDL         = "CREATE INDEX hero_secret ON hero (secret_identity);\nCREATE VIEW hero_view AS SELECT id, name, secret_identity FROM hero;\n"
	attackPostgresDDL = attackDDL + "CREATE SEQUENCE hero_seq;\nCREATE EXTENSION dblink;\nSELECT lo_from_bytea(4242, 'a secret');\n"
)

var attackOptions = Options{DeniedColumns: []string{"hero.secret_identity", "hero_view.secret_identity"}}

// The harness's own limits, far above the layers' so a stop is the layer's.
const (
	harnessDeadline = 1500 * time.Millisecond
	layerTimeout    = 200 * time.Millisecond
	layerRowCap     = 100
	// walBound is the WAL a query through the guard may cause (hint bits,
	// page pruning); an attack that writes WAL writes megabytes.
	walBound = 256 << 10
)

// outcome is what one run of an attack did.
type outcome struct {
	err          error
	harnessEnded bool // the harness deadline ended it, not a layer
	truncated    bool // the row cap ended it
	timedOut     bool // a timeout or deadline ended it
	sessionDiff  bool // settings, locks or prepared statements of the session changed
}

// stopped reports whether the run kept the attack from succeeding, given
// whether it left a lasting change.
func (o outcome) stopped(kind attackKind, changed bool) bool {
	// Time stops runaways; any other attack it ends might have
	// succeeded a moment later.
	if o.harnessEnded || kind != kindRunaway && o.timedOut {
		return false
	}
	if o.err != nil || kind == kindRunaway && o.truncated {
		return true
	}
	return kind == kindWrite && !changed && !o.sessionDiff
}

// layerRun runs one attack with a single layer (or none) in place.
type layerRun struct {
	layer Layer
	run   func(ctx context.Context, sql string) outcome
}

// scratch is the copy of the database the layer runs attack.
type scratch struct {
	state func() string // rows, sequences, large objects
	reset func()        // a fresh copy after a run changed it
	// marks reads the cluster's next transaction id and WAL position;
	// nil for SQLite.
	marks func() (xid, wal int64)
}

// record is one attack's verdict on one engine.
type record struct {
	attack attack
	layers []string
}

// vars are the values of an attack's placeholders in one run.
type vars struct{ file, pid, seq, conninfo string }

func (a attack) text(v vars) string {
	return strings.NewReplacer("{file}", v.file, "{pid}", v.pid, "{seq}", v.seq, "{conninfo}", v.conninfo).Replace(a.sql)
}

// runLayers runs attack a under the validator and each layer alone and
// returns the layers that stopped it. It fails the test unless two do, or
// one for an attack only one layer can stop.
func runLayers(t *testing.T, a attack, v *Validator, runs []layerRun, s scratch, varsFor func(run int) vars) record {
	t.Helper()
	rec := record{attack: a}
	if err := v.Validate(a.text(varsFor(0))); err != nil {
		rec.layers = append(rec.layers, string(LayerValidator))
	}
	outcomes := make([]outcome, len(runs))
	changed := make([]bool, len(runs))
	if a.kind == kindWrite {
		// One at a time, on a fresh copy after any run that changed it.
		for i, r := range runs {
			vr := varsFor(i + 1)
			before := s.state()
			var xid, wal int64
			if s.marks != nil {
				xid, wal = s.marks()
			}
			outcomes[i] = r.run(context.Background(), a.text(vr))
			changed[i] = s.state() != before
			if s.marks != nil {
				xid2, wal2 := s.marks()
				changed[i] = changed[i] || a.effect&effectXID != 0 && xid2 != xid || a.effect&effectWAL != 0 && wal2-wal > walBound
			}
			if a.effect&effectFile != 0 {
				if _, err := os.Stat(vr.file); err == nil {
					changed[i] = true
				}
			}
			if changed[i] {
				s.reset()
			}
		}
	} else if a.kind == kindRead {
		// One at a time too: two runs' locks would stop each other.
		for i, r := range runs {
			outcomes[i] = r.run(context.Background(), a.text(varsFor(i+1)))
		}
	} else {
		// Runaways change nothing and lock nothing; run them side by side,
		// since most wait out the harness deadline.
		var wg sync.WaitGroup
		for i, r := range runs {
			sql := a.text(varsFor(i + 1))
			wg.Go(func() { outcomes[i] = r.run(context.Background(), sql) })
		}
		wg.Wait()
	}
	judged := make([]attacktest.Run, len(runs))
	for i, r := range runs {
		judged[i] = attacktest.Run{Layer: string(r.layer), Stopped: outcomes[i].stopped(a.kind, changed[i]), Err: outcomes[i].err}
	}
	rec.layers = attacktest.Stoppers(t, a.class, a.name, a.single, rec.layers, judged, shortError)
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
	msg = strings.ReplaceAll(msg, "|", `\|`)
	if len(msg) > 60 {
		msg = msg[:57] + "..."
	}
	return msg
}

// checkAttackTable compares the table attack × layer with its golden file
// (rewritten with -update) and logs it.
func checkAttackTable(t *testing.T, engine, name string, records []record) {
	t.Helper()
	var verdicts []attacktest.Verdict
	for _, r := range records {
		verdicts = append(verdicts, attacktest.Verdict{Class: r.attack.class, Name: r.attack.name, Layers: r.layers, Single: r.attack.single})
	}
	table := attacktest.Table(engine, verdicts)
	t.Log("\n" + table)
	golden.CheckFile(t, filepath.Join("testdata", "attacks", name), []byte(table))
}

func TestAttacksPostgres(t *testing.T) {
	t.Parallel()
	if len(postgresAttacks) < 60 {
		t.Fatalf("%d PostgreSQL attacks; the suite wants at least 60", len(postgresAttacks))
	}
	cluster := pgtest.Own(t)
	ctx := context.Background()
	super, err := pgx.Connect(ctx, cluster.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	// Nothing else may assign transaction ids or write WAL while the
	// guarded runs are measured.
	if _, err := super.Exec(ctx, "ALTER SYSTEM SET autovacuum = off"); err != nil {
		t.Fatal(err)
	}
	if _, err := super.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	admin, agent := pgFixtureOn(t, cluster, attackPostgresDDL, attackOptions)
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
		db := pgx.Identifier{name}.Sanitize()
		if _, err := super.Exec(ctx, "CREATE DATABASE "+db+" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		// Database-level grants live outside the copied catalog.
		if _, err := super.Exec(ctx, "REVOKE TEMPORARY ON DATABASE "+db+" FROM PUBLIC"); err != nil {
			t.Fatal(err)
		}
		return name
	}
	guarded := clone()
	guardedDSN := cluster.DSN(guarded)
	guardedAgent := strings.Replace(agent, "/"+template+"?", "/"+guarded+"?", 1)
	opts := attackOptions
	opts.Timeout, opts.CountLimit, opts.MaxRows = 300*time.Millisecond, layerRowCap, 10
	db, err := Open(ctx, "fixture", guardedAgent, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	validator, err := NewValidator(DialectPostgres, attackOptions, db.engine.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	by := &bystanders{t: t, agent: guardedAgent, admin: guardedDSN}
	defer by.close()
	marks := func() (int64, int64) { return clusterMarks(t, super) }

	var records []record
	for n, a := range postgresAttacks {
		target := clone()
		by.ensure()
		varsFor := func(run int) vars {
			return vars{file: filepath.Join(cluster.Root, fmt.Sprintf("attack-%d-%d", n, run)), pid: strconv.Itoa(int(by.agentPID)), seq: "hero_seq",
				conninfo: fmt.Sprintf("host=%s port=%d dbname=postgres user=%s", cluster.Host, cluster.Port, pgtest.Superuser)}
		}
		runs := pgLayerRuns(adminCfg, agentCfg, &target)
		s := scratch{state: func() string { return pgState(t, cluster.DSN(target)) }, reset: func() { target = clone() }, marks: marks}
		rec := runLayers(t, a, validator, runs, s, varsFor)
		// The whole guard must stop it too, leave the database as it was
		// and touch no other session.
		by.ensure()
		v := varsFor(99)
		initial := pgState(t, guardedDSN)
		xid, wal := marks()
		res, err := db.Query(ctx, "attack-suite", a.text(v))
		if err == nil && a.kind != kindWrite && !(a.kind == kindRunaway && res.Truncated()) {
			t.Errorf("%s / %s: the guard let it through: %v", a.class, a.name, res)
		}
		xid2, wal2 := marks()
		if got := pgState(t, guardedDSN); got != initial {
			t.Errorf("%s / %s: the guarded database changed:\n%s\n%s", a.class, a.name, initial, got)
		}
		if xid2 != xid || wal2-wal > walBound {
			t.Errorf("%s / %s: through the guard, %d transaction ids went and the WAL grew %d bytes", a.class, a.name, xid2-xid, wal2-wal)
		}
		if _, err := os.Stat(v.file); err == nil {
			t.Errorf("%s / %s: a file appeared at %s", a.class, a.name, v.file)
		}
		by.check(a)
		records = append(records, rec)
	}
	if open, inTx := activeGuardConns(t, guardedDSN); inTx != 0 {
		t.Errorf("%d of %d guard sessions left busy", inTx, open)
	}
	checkAttackTable(t, "PostgreSQL", "postgres.md", records)
}

// clusterMarks reads the next transaction id and the WAL insert position,
// neither of which reading them changes.
func clusterMarks(t *testing.T, conn *pgx.Conn) (xid, wal int64) {
	t.Helper()
	err := conn.QueryRow(context.Background(), `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
		pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`).Scan(&xid, &wal)
	if err != nil {
		t.Fatal(err)
	}
	return xid, wal
}

// bystanders are sessions an attack must not reach: one of the agent's
// role (which the same role could signal) and one of the admin's.
type bystanders struct {
	t            *testing.T
	agent, admin string
	conns        [2]*pgx.Conn
	agentPID     uint32
}

// ensure (re)connects any bystander a layer run ended.
func (b *bystanders) ensure() {
	for i, dsn := range []string{b.agent, b.admin} {
		if c := b.conns[i]; c != nil && c.Ping(context.Background()) == nil {
			continue
		}
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			b.t.Fatal(err)
		}
		if _, err := c.Exec(context.Background(), "SET application_name = 'okf-bystander'; SELECT 'okf-bystander-secret'"); err != nil {
			b.t.Fatal(err)
		}
		b.conns[i] = c
	}
	b.agentPID = b.conns[0].PgConn().PID()
}

// check fails the test if a bystander was ended or its session changed.
func (b *bystanders) check(a attack) {
	for _, c := range b.conns {
		var name string
		if err := c.QueryRow(context.Background(), "SELECT current_setting('application_name')").Scan(&name); err != nil || name != "okf-bystander" {
			b.t.Errorf("%s / %s: a bystander session was reached: %v %q", a.class, a.name, err, name)
		}
	}
}

func (b *bystanders) close() {
	for _, c := range b.conns {
		if c != nil {
			c.Close(context.Background())
		}
	}
}

// pgLayerRuns builds the PostgreSQL layers, each alone on top of a bare
// superuser session in autocommit over the simple protocol (which runs
// several statements). *target names the scratch database to attack.
func pgLayerRuns(adminCfg, agentCfg *pgx.ConnConfig, target *string) []layerRun {
	type setup struct {
		agent, extended, readOnly, rollback, timeout, deadline, rowCap, reset, limits bool
	}
	mk := func(l Layer, s setup) layerRun {
		return layerRun{layer: l, run: func(ctx context.Context, sql string) outcome {
			cfg := adminCfg
			if s.agent {
				cfg = agentCfg
			}
			cfg = cfg.Copy()
			cfg.Database = *target
			// No cached statements: DISCARD ALL would leave them stale.
			cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
			cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
				return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
			}
			if s.limits {
				cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
					f := pgproto3.NewFrontend(r, w)
					f.SetMaxBodyLen(MaxValueBytes)
					return f
				}
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
		mk(LayerLimits, setup{limits: true}),
	}
}

// setupDeadline bounds the harness's own work around a query (connecting,
// setting a layer up), apart from the query's deadline so that a slow
// machine's connection does not count against the query.
const setupDeadline = 30 * time.Second

func runPG(ctx context.Context, cfg *pgx.ConnConfig, sql string, extended, readOnly, rollback, timeout, deadline, rowCap, reset bool) outcome {
	setup, cancelSetup := context.WithTimeout(ctx, setupDeadline)
	defer cancelSetup()
	conn, err := pgx.ConnectConfig(setup, cfg)
	if err != nil {
		return outcome{err: fmt.Errorf("harness: connecting: %w", err), harnessEnded: true}
	}
	defer conn.Close(context.Background())
	if timeout {
		if _, err := conn.Exec(setup, fmt.Sprintf("SET statement_timeout = %d", layerTimeout.Milliseconds())); err != nil {
			return outcome{err: err, harnessEnded: true}
		}
	}
	before := pgSession(conn)
	switch {
	case readOnly:
		_, err = conn.Exec(setup, "BEGIN READ ONLY")
	case rollback:
		_, err = conn.Exec(setup, "BEGIN")
	}
	if err != nil {
		return outcome{err: err, harnessEnded: true}
	}
	harness, cancel := context.WithTimeout(ctx, harnessDeadline)
	defer cancel()
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
	var pe *pgconn.PgError
	canceled := errors.As(err, &pe) && pe.Code == "57014"
	// The harness ended the run only when its deadline cancelled the
	// query. An error of the query's own, on a slow machine after the
	// deadline, is still the query's; a layer's timer (the statement
	// timeout, the deadline) runs out before the harness's, so the
	// cancellation is the layer's however late it arrives.
	layerTimer := deadline || timeout && canceled && strings.Contains(pe.Message, "statement timeout")
	o.harnessEnded = harness.Err() != nil && !layerTimer && (err == nil || canceled || errors.Is(err, context.DeadlineExceeded))
	o.timedOut = canceled || qctx.Err() != nil && !o.truncated
	end := context.Background()
	switch {
	case rollback:
		conn.Exec(end, "ROLLBACK")
	case readOnly:
		conn.Exec(end, "COMMIT")
	}
	if reset {
		conn.Exec(end, "ROLLBACK")
		conn.Exec(end, "DISCARD ALL")
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
		current_user || ' ' || (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) || ' ' ||
		(SELECT count(*) FROM pg_prepared_statements)`).Scan(&s)
	if err != nil {
		return ""
	}
	return s
}

func TestAttacksSQLite(t *testing.T) {
	t.Parallel()
	if len(sqliteAttacks) < 60 {
		t.Fatalf("%d SQLite attacks; the suite wants at least 60", len(sqliteAttacks))
	}
	fixture := sqliteFixtureWith(t, attackDDL)
	ctx := context.Background()
	guarded := copyFile(t, fixture)
	opts := attackOptions
	opts.Timeout, opts.CountLimit, opts.MaxRows = 300*time.Millisecond, layerRowCap, 10
	db, err := Open(ctx, "fixture", "sqlite:"+guarded, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	initial := sqliteState(t, guarded)
	validator, err := NewValidator(DialectSQLite, attackOptions, db.engine.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer and the program check under test are the guard's
	// own, bound to the fixture.
	guard, err := OpenSQLite(fixture, attackOptions)
	if err != nil {
		t.Fatal(err)
	}
	bystander, err := sqlite3.OpenFlags("file:"+guarded+"?mode=ro", sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	if err != nil {
		t.Fatal(err)
	}
	defer bystander.Close()
	files := t.TempDir()
	var records []record
	for n, a := range sqliteAttacks {
		target := copyFile(t, fixture)
		varsFor := func(run int) vars { return vars{file: filepath.Join(files, fmt.Sprintf("attack-%d-%d", n, run))} }
		runs := sqliteLayerRuns(guard, &target)
		s := scratch{state: func() string { return sqliteState(t, target) }, reset: func() { target = copyFile(t, fixture) }}
		rec := runLayers(t, a, validator, runs, s, varsFor)
		v := varsFor(99)
		res, err := db.Query(ctx, "attack-suite", a.text(v))
		if err == nil && a.kind != kindWrite && !(a.kind == kindRunaway && res.Truncated()) {
			t.Errorf("%s / %s: the guard let it through: %v", a.class, a.name, res)
		}
		if got := sqliteState(t, guarded); got != initial {
			t.Errorf("%s / %s: the guarded file changed:\n%s\n%s", a.class, a.name, initial, got)
		}
		if _, err := os.Stat(v.file); err == nil {
			t.Errorf("%s / %s: a file appeared at %s", a.class, a.name, v.file)
		}
		if err := bystander.Exec("SELECT count(*) FROM notes"); err != nil {
			t.Errorf("%s / %s: another connection can no longer read: %v", a.class, a.name, err)
		}
		records = append(records, rec)
	}
	checkAttackTable(t, "SQLite", "sqlite.md", records)
}

// sqliteLayerRuns builds the SQLite layers, each alone on top of a bare
// read-write connection that runs every statement of the text.
func sqliteLayerRuns(guard *SQLite, target *string) []layerRun {
	type setup struct{ roFile, queryOnly, limits, authorizer, program, roStmt, oneStmt, interrupt, rowCap bool }
	mk := func(l Layer, s setup) layerRun {
		return layerRun{layer: l, run: func(ctx context.Context, sql string) outcome {
			return runSQLite(ctx, guard, *target, sql, s.roFile, s.queryOnly, s.limits, s.authorizer, s.program, s.roStmt, s.oneStmt, s.interrupt, s.rowCap)
		}}
	}
	return []layerRun{
		mk(LayerDatabase, setup{}),
		mk(LayerReadOnlyFile, setup{roFile: true}),
		mk(LayerQueryOnly, setup{queryOnly: true}),
		mk(LayerLimits, setup{limits: true}),
		mk(LayerAuthorizer, setup{authorizer: true}),
		mk(LayerProgram, setup{program: true}),
		mk(LayerReadOnlyStmt, setup{roStmt: true}),
		mk(LayerOneStatement, setup{oneStmt: true}),
		mk(LayerInterrupt, setup{interrupt: true}),
		mk(LayerRowCap, setup{rowCap: true}),
	}
}

func runSQLite(ctx context.Context, guard *SQLite, path, sql string, roFile, queryOnly, limits, authorizer, program, roStmt, oneStmt, interrupt, rowCap bool) outcome {
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
		c.HardHeapLimit(MaxSQLiteHeapBytes)
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
	o.err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r) // out of memory inside the sandbox
			}
		}()
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
			if program {
				if err := guard.checkProgram(c, stmt.SQL()); err != nil {
					stmt.Close()
					return err
				}
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
	// The harness ended the run only when its deadline interrupted the
	// statement. One that failed on its own (out of memory) after the
	// deadline, on a slow machine, still failed; and with the interrupt
	// layer in place, whose timer runs out first, an interrupt is the
	// layer's, however late the statement noticed it.
	o.harnessEnded = harness.Err() != nil && errors.Is(o.err, sqlite3.INTERRUPT) && !interrupt
	c.SetInterrupt(context.Background())
	c.SetAuthorizer(nil)
	o.sessionDiff = before != sqliteSession(c)
	return o
}

// sqliteSession is the connection state attacks try to change.
func sqliteSession(c *sqlite3.Conn) string {
	stmt, _, err := c.Prepare("SELECT (SELECT query_only FROM pragma_query_only) || ' ' || (SELECT count(*) FROM pragma_database_list) || ' ' || (SELECT writable_schema FROM pragma_writable_schema)")
	if err != nil {
		return ""
	}
	defer stmt.Close()
	stmt.Step()
	return stmt.ColumnText(0)
}
