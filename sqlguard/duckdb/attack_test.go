package duckdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bindings "github.com/duckdb/duckdb-go-bindings"

	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/sqlguard/attacktest"
)

// The DuckDB attack suite, as sqlguard's for PostgreSQL and SQLite: every
// attack runs against a bare database (a read-write instance of a copy of
// the fixture with DuckDB's defaults, running every statement of the text)
// with one layer added, then through the whole guard. The table attack ×
// layer is sqlguard/testdata/attacks/duckdb.md, rewritten with -update.

// The harness's own limits, far above the layers' so a stop is the layer's.
const (
	// harnessDeadline ends a runaway none of the layers stopped.
	harnessDeadline = 1500 * time.Millisecond
	// settleDeadline ends any other attack: long enough for one that
	// allocates hundreds of megabytes to fail on its own on a loaded
	// machine, rather than be cut short and count as not stopped.
	settleDeadline = 10 * time.Second
	layerTimeout   = 200 * time.Millisecond
	layerRowCap    = 100
	// harnessMemory caps a bare instance's buffer manager above the
	// guard's MaxMemoryBytes, so the machine survives runs side by side.
	harnessMemory = "2GiB"
)

type attackKind int

const (
	// kindWrite leaves something behind: a changed file, a file at
	// {file}, or a change to the session or the instance (settings,
	// attached databases, secrets, temporary objects, variables).
	kindWrite attackKind = iota
	// kindRead returns what it must not, or does what must not be done;
	// any success is a breach.
	kindRead
	// kindRunaway holds the database past any reasonable time.
	kindRunaway
)

type attack struct {
	class, name string
	kind        attackKind
	sql         string
	// single says why no second layer can stop this attack.
	single string
}

const (
	duckdbOneClock   = "DuckDB has no statement timeout of its own: the interrupt is its one clock, and the query returns one row"
	recursionWhole   = "DuckDB computes a recursive CTE whole before its first row, so the row cap counts none, and it grows a row a step"
	settingsReadable = "DuckDB has no privileges: every connection reads every setting, and the plan shows the value, not the call"
	bytesKept        = "only the client knows how many bytes it keeps"
	memoryLimit      = "max_memory is DuckDB's one bound on memory: a hash table's rows reach no row cap, and it fills fast"
	textSizeOnly     = "only okf reads the text; the database takes a long list"
)

// duckdbAttacks are the attacks, by class. {file} is a fresh path in a
// folder of the test's own, {input} a CSV file there.
var duckdbAttacks = []attack{
	// DDL and DML
	{class: "DDL/DML", name: "DELETE", kind: kindWrite, sql: "DELETE FROM hero"},
	{class: "DDL/DML", name: "UPDATE", kind: kindWrite, sql: "UPDATE hero SET name = 'x'"},
	{class: "DDL/DML", name: "INSERT", kind: kindWrite, sql: "INSERT INTO notes VALUES ('x')"},
	{class: "DDL/DML", name: "INSERT OR REPLACE", kind: kindWrite, sql: "INSERT OR REPLACE INTO hero (id, name) VALUES (1, 'x')"},
	{class: "DDL/DML", name: "TRUNCATE", kind: kindWrite, sql: "TRUNCATE notes"},
	{class: "DDL/DML", name: "DROP TABLE", kind: kindWrite, sql: "DROP TABLE notes"},
	{class: "DDL/DML", name: "CREATE TABLE", kind: kindWrite, sql: "CREATE TABLE stolen (x INTEGER)"},
	{class: "DDL/DML", name: "CREATE TABLE AS", kind: kindWrite, sql: "CREATE TABLE stolen AS SELECT body FROM notes"},
	{class: "DDL/DML", name: "ALTER TABLE", kind: kindWrite, sql: "ALTER TABLE notes ADD COLUMN x INTEGER DEFAULT 1"},
	{class: "DDL/DML", name: "CREATE VIEW", kind: kindWrite, sql: "CREATE VIEW v AS SELECT secret_identity FROM hero"},
	{class: "DDL/DML", name: "CREATE MACRO", kind: kindWrite, sql: "CREATE MACRO m(x) AS x + 1"},
	{class: "DDL/DML", name: "CREATE TEMP TABLE", kind: kindWrite, sql: "CREATE TEMP TABLE t AS SELECT secret_identity FROM hero"},
	{class: "DDL/DML", name: "CREATE TEMP MACRO", kind: kindWrite, sql: "CREATE TEMP MACRO m(x) AS x + 1"},
	{class: "DDL/DML", name: "CREATE SEQUENCE", kind: kindWrite, sql: "CREATE SEQUENCE s"},
	{class: "DDL/DML", name: "COMMENT ON", kind: kindWrite, sql: "COMMENT ON TABLE notes IS 'x'"},
	// several statements
	{class: "multi-statement", name: "two statements", kind: kindWrite, sql: "SELECT 1; DELETE FROM hero"},
	{class: "multi-statement", name: "no space after ;", kind: kindWrite, sql: "SELECT 1;DELETE FROM hero"},
	{class: "multi-statement", name: "a line comment before the second", kind: kindWrite, sql: "SELECT 1;\n-- tidy up\nTRUNCATE notes"},
	// settings
	{class: "settings", name: "SET threads", kind: kindWrite, sql: "SET threads = 3"},
	{class: "settings", name: "SET enable_external_access", kind: kindWrite, sql: "SET enable_external_access = false"},
	{class: "settings", name: "RESET max_memory", kind: kindWrite, sql: "RESET max_memory"},
	{class: "settings", name: "PRAGMA threads", kind: kindWrite, sql: "PRAGMA threads = 3"},
	{class: "settings", name: "SET GLOBAL", kind: kindWrite, sql: "SET GLOBAL preserve_insertion_order = false"},
	{class: "settings", name: "SET VARIABLE", kind: kindWrite, sql: "SET VARIABLE v = 1"},
	{class: "settings", name: "USE", kind: kindWrite, sql: "USE other"},
	{class: "settings", name: "profiling to a file", kind: kindWrite, sql: "SET profiling_output = '{file}.txt'; PRAGMA enable_profiling; SELECT 1"},
	// files
	{class: "files", name: "read_csv", kind: kindRead, sql: "SELECT * FROM read_csv('/etc/passwd')"},
	{class: "files", name: "read_text", kind: kindRead, sql: "SELECT content FROM read_text('/proc/self/environ')"},
	{class: "files", name: "read_blob", kind: kindRead, sql: "SELECT content FROM read_blob('/etc/hostname')"},
	{class: "files", name: "glob", kind: kindRead, sql: "SELECT file FROM glob('/*')"},
	{class: "files", name: "a file as a table", kind: kindRead, sql: "FROM '{input}'"},
	{class: "files", name: "a quoted file as a table", kind: kindRead, sql: `SELECT * FROM "{input}"`},
	{class: "files", name: "sniff_csv", kind: kindRead, sql: "SELECT * FROM sniff_csv('/etc/passwd')"},
	{class: "files", name: "COPY TO", kind: kindWrite, sql: "COPY hero TO '{file}'"},
	{class: "files", name: "COPY query TO parquet", kind: kindWrite, sql: "COPY (SELECT secret_identity FROM hero) TO '{file}' (FORMAT parquet)"},
	{class: "files", name: "COPY FROM", kind: kindWrite, sql: "COPY notes FROM '{input}'"},
	{class: "files", name: "EXPORT DATABASE", kind: kindWrite, sql: "EXPORT DATABASE '{file}'"},
	// other databases
	{class: "other databases", name: "ATTACH a new file", kind: kindWrite, sql: "ATTACH '{file}' AS other"},
	{class: "other databases", name: "ATTACH in memory", kind: kindWrite, sql: "ATTACH ':memory:' AS other"},
	// extensions and secrets
	{class: "extensions", name: "INSTALL", kind: kindRead, sql: "INSTALL httpfs"},
	{class: "extensions", name: "LOAD", kind: kindRead, sql: "LOAD httpfs"},
	{class: "extensions", name: "autoload by a function", kind: kindRead, sql: "SELECT * FROM read_xlsx('/etc/passwd')"},
	{class: "extensions", name: "autoload by a URL", kind: kindRead, sql: "SELECT * FROM read_csv('https://example.com/x.csv')"},
	{class: "extensions", name: "CREATE SECRET", kind: kindWrite, sql: "CREATE SECRET s (TYPE http, BEARER_TOKEN 'x')"},
	{class: "extensions", name: "CREATE PERSISTENT SECRET", kind: kindWrite, sql: "CREATE PERSISTENT SECRET s (TYPE http, BEARER_TOKEN 'x')"},
	{class: "extensions", name: "duckdb_secrets", kind: kindRead, sql: "SELECT name FROM duckdb_secrets()"},
	// catalog and settings
	{class: "catalog and settings", name: "duckdb_tables", kind: kindRead, sql: "SELECT sql FROM duckdb_tables()"},
	{class: "catalog and settings", name: "duckdb_settings", kind: kindRead, sql: "SELECT name, value FROM duckdb_settings()"},
	{class: "catalog and settings", name: "sqlite_master", kind: kindRead, sql: "SELECT sql FROM sqlite_master"},
	{class: "catalog and settings", name: "information_schema", kind: kindRead, sql: "SELECT column_name FROM information_schema.columns"},
	{class: "catalog and settings", name: "pg_catalog", kind: kindRead, sql: "SELECT relname FROM pg_catalog.pg_class"},
	{class: "catalog and settings", name: "current_setting", kind: kindRead, sql: "SELECT current_setting('temp_directory')", single: settingsReadable},
	{class: "catalog and settings", name: "SHOW TABLES", kind: kindRead, sql: "SHOW TABLES"},
	{class: "catalog and settings", name: "PRAGMA table_info", kind: kindRead, sql: "PRAGMA table_info('hero')"},
	{class: "catalog and settings", name: "CALL pragma_version", kind: kindRead, sql: "CALL pragma_version()"},
	// dynamic SQL
	{class: "dynamic SQL", name: "query", kind: kindRead, sql: "SELECT * FROM query('SELECT secret_identity FROM hero')"},
	{class: "dynamic SQL", name: "query_table", kind: kindRead, sql: "SELECT * FROM query_table('hero')"},
	{class: "dynamic SQL", name: "query_table of a list", kind: kindRead, sql: "SELECT * FROM query_table(['hero'])"},
	{class: "dynamic SQL", name: "json_execute_serialized_sql", kind: kindRead, sql: "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT secret_identity FROM hero'))"},
	{class: "dynamic SQL", name: "PREPARE and EXECUTE", kind: kindRead, sql: "PREPARE p AS SELECT secret_identity FROM hero; EXECUTE p"},
	// hidden columns in every form
	{class: "hidden columns", name: "named", kind: kindRead, sql: "SELECT name, secret_identity FROM hero"},
	{class: "hidden columns", name: "quoted, other case", kind: kindRead, sql: `SELECT "SECRET_IDENTITY" FROM hero`},
	{class: "hidden columns", name: "*", kind: kindRead, sql: "SELECT * FROM hero"},
	{class: "hidden columns", name: "t.*", kind: kindRead, sql: "SELECT h.* FROM hero h"},
	{class: "hidden columns", name: "the row as a struct", kind: kindRead, sql: "SELECT h FROM hero h"},
	{class: "hidden columns", name: "to_json of the row", kind: kindRead, sql: "SELECT to_json(h) FROM hero h"},
	{class: "hidden columns", name: "struct_pack(COLUMNS(*))", kind: kindRead, sql: "SELECT struct_pack(COLUMNS(*)) FROM hero"},
	{class: "hidden columns", name: "COLUMNS(*)", kind: kindRead, sql: "SELECT COLUMNS(*) FROM hero"},
	{class: "hidden columns", name: "COLUMNS of a pattern", kind: kindRead, sql: "SELECT COLUMNS('sec.*') FROM hero"},
	{class: "hidden columns", name: "* EXCLUDE", kind: kindRead, sql: "SELECT * EXCLUDE (name) FROM hero"},
	{class: "hidden columns", name: "* REPLACE", kind: kindRead, sql: "SELECT * REPLACE (1 AS name) FROM hero"},
	{class: "hidden columns", name: "#3", kind: kindRead, sql: "SELECT #3 FROM hero"},
	{class: "hidden columns", name: "SUMMARIZE", kind: kindRead, sql: "SUMMARIZE hero"},
	{class: "hidden columns", name: "PIVOT", kind: kindRead, sql: "PIVOT hero ON secret_identity IN ('Person 1') USING count(*)"},
	{class: "hidden columns", name: "PIVOT's values in an error", kind: kindRead, sql: "PIVOT hero ON (secret_identity::INTEGER) USING count(*)"},
	{class: "hidden columns", name: "correlated subquery", kind: kindRead, sql: "SELECT (SELECT h.secret_identity) FROM hero h"},
	{class: "hidden columns", name: "UNPIVOT", kind: kindRead, sql: "UNPIVOT hero ON name, secret_identity INTO NAME k VALUE v"},
	{class: "hidden columns", name: "FROM first", kind: kindRead, sql: "FROM hero SELECT secret_identity"},
	{class: "hidden columns", name: "NATURAL JOIN", kind: kindRead, sql: "SELECT name, k FROM hero NATURAL JOIN (SELECT 'Person ' || i AS secret_identity, i AS k FROM range(1, 10) t(i))"},
	{class: "hidden columns", name: "JOIN … USING", kind: kindRead, sql: "SELECT h.name FROM hero h JOIN hero g USING (secret_identity)"},
	{class: "hidden columns", name: "filter (a yes/no leak)", kind: kindRead, sql: "SELECT name FROM hero WHERE secret_identity LIKE 'Person 1%'"},
	{class: "hidden columns", name: "filter a statistic answers", kind: kindRead, sql: "SELECT count(*) FROM hero WHERE secret_identity IS NOT NULL"},
	{class: "hidden columns", name: "ORDER BY (an order leak)", kind: kindRead, sql: "SELECT name FROM hero ORDER BY secret_identity LIMIT 5"},
	{class: "hidden columns", name: "min", kind: kindRead, sql: "SELECT min(secret_identity) FROM hero"},
	{class: "hidden columns", name: "through a view", kind: kindRead, sql: "SELECT secret_identity FROM hero_view"},
	{class: "hidden columns", name: "a view's *", kind: kindRead, sql: "SELECT * FROM hero_view"},
	// resources
	{class: "resources", name: "runaway rows (cross join)", kind: kindRunaway, sql: "SELECT a.id, b.id, c.id FROM hero a, hero b, hero c"},
	{class: "resources", name: "runaway time (sum over a cross join)", kind: kindRunaway, sql: "SELECT sum(a.id * b.id + c.id) FROM hero a, hero b, hero c", single: duckdbOneClock},
	{class: "resources", name: "endless recursive CTE", kind: kindRunaway, sql: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r", single: recursionWhole},
	{class: "resources", name: "range of 10¹²", kind: kindRunaway, sql: "SELECT i FROM range(1000000000000) t(i)"},
	{class: "resources", name: "memory (800 MB of DISTINCT rows)", kind: kindRead, sql: "SELECT count(*) FROM (SELECT DISTINCT i, repeat('x', 100000) FROM range(8000) t(i))", single: memoryLimit},
	{class: "resources", name: "a 17 MB value", kind: kindRead, sql: "SELECT repeat('0123456789abcdef', 1100000)", single: bytesKept},
	{class: "resources", name: "deep nesting", kind: kindRead, sql: deepNesting},
	{class: "resources", name: "a 48 KB chain of +", kind: kindRead, sql: "SELECT 1" + strings.Repeat("+1", 24000)},
	{class: "resources", name: "a long IN list", kind: kindRead, sql: "SELECT 1 WHERE 1 IN (" + strings.Repeat("1,", 40000) + "1)", single: textSizeOnly},
	// parser differentials and encodings
	{class: "parser differentials", name: "nested comment", kind: kindWrite, sql: "SELECT 1 /* /* */ ; DELETE FROM hero; /* */ */"},
	{class: "parser differentials", name: "E'' string", kind: kindWrite, sql: `SELECT E'\'; DELETE FROM hero; --'`},
	{class: "parser differentials", name: "dollar quote", kind: kindWrite, sql: "SELECT $q$; DELETE FROM hero; $q$"},
	{class: "parser differentials", name: "invalid UTF-8", kind: kindWrite, sql: "SELECT 1 /* \xff\xfe */; DELETE FROM hero"},
	{class: "parser differentials", name: "NUL byte", kind: kindWrite, sql: "SELECT 1;\x00 DELETE FROM hero"},
}

var deepNesting = "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)

// layerSetup is one layer alone on top of the bare database.
type layerSetup struct {
	layer sqlguard.Layer
	// options are set when the instance opens, after the harness's own.
	options                                                    [][2]string
	oneStatement, readOnlyStmt, plan, interrupt, rowCap, reset bool
	valueCap                                                   bool
}

func layerSetups() []layerSetup {
	all := settings(1)
	pick := func(names ...string) [][2]string {
		var out [][2]string
		for _, s := range all {
			for _, n := range names {
				if s[0] == n {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return []layerSetup{
		{layer: sqlguard.LayerDatabase},
		{layer: sqlguard.LayerReadOnlyFile, options: pick("access_mode")},
		{layer: sqlguard.LayerExternalAccess, options: pick("enable_external_access")},
		{layer: sqlguard.LayerExtensions, options: pick("autoinstall_known_extensions", "autoload_known_extensions", "allow_community_extensions", "allow_unsigned_extensions")},
		{layer: sqlguard.LayerLockedConfig, options: pick("lock_configuration")},
		{layer: sqlguard.LayerLimits, options: pick("temp_directory", "max_memory", "threads"), valueCap: true},
		{layer: sqlguard.LayerSessionReset, reset: true},
		{layer: sqlguard.LayerOneStatement, oneStatement: true},
		{layer: sqlguard.LayerReadOnlyStmt, readOnlyStmt: true},
		{layer: sqlguard.LayerPlan, options: pick("disabled_optimizers"), plan: true},
		{layer: sqlguard.LayerInterrupt, interrupt: true},
		{layer: sqlguard.LayerRowCap, rowCap: true},
	}
}

// outcome is what one run of an attack did.
type outcome struct {
	err          error
	harnessEnded bool // the harness deadline ended it, not a layer
	truncated    bool // the row cap ended it
	timedOut     bool // a timeout ended it
	changed      bool // it left something behind
}

func (o outcome) stopped(kind attackKind) bool {
	// Time stops runaways; any other attack it ends might have succeeded
	// a moment later.
	if o.harnessEnded || kind != kindRunaway && o.timedOut {
		return false
	}
	switch kind {
	case kindRunaway:
		return o.err != nil || o.truncated
	case kindWrite:
		return !o.changed
	}
	// An error that quotes a hidden value ("Person 1") leaks it.
	return o.err != nil && !strings.Contains(o.err.Error(), hiddenValue)
}

// hiddenValue begins every value of the fixture's hidden column, and no
// other value of it.
const hiddenValue = "Person "

// scratch is a fresh copy of the fixture, named like it, so that its
// catalog's name is the same.
func scratch(t *testing.T, fixture string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(fixture))
	copyFile(t, fixture, path)
	return path
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// harnessOptions keep a bare instance's effects inside the test: its
// extensions and secrets in the test's folders, no extension downloaded,
// memory and threads capped for runs side by side.
func harnessOptions(dir string) [][2]string {
	return [][2]string{
		{"extension_directory", filepath.Join(dir, "extensions")},
		{"secret_directory", filepath.Join(dir, "secrets")},
		{"custom_extension_repository", filepath.Join(dir, "no-repository")},
		{"max_memory", harnessMemory},
		{"threads", "1"},
	}
}

// runLayer runs sql on a bare instance of path with one layer in place;
// home holds the instance's extensions and secrets.
func runLayer(guard *DB, s layerSetup, path, sql, home string, kind attackKind) (o outcome) {
	var config bindings.Config
	bindings.CreateConfig(&config)
	defer bindings.DestroyConfig(&config)
	for _, opt := range append(harnessOptions(home), s.options...) {
		if bindings.SetConfig(config, opt[0], opt[1]) == bindings.StateError {
			return outcome{err: fmt.Errorf("harness: setting %s", opt[0]), harnessEnded: true}
		}
	}
	var db bindings.Database
	var msg string
	if bindings.OpenExt(path, &db, config, &msg) == bindings.StateError {
		bindings.Close(&db)
		return outcome{err: fmt.Errorf("harness: opening: %s", msg), harnessEnded: true}
	}
	defer bindings.Close(&db)
	var conn bindings.Connection
	bindings.Connect(db, &conn)
	var before string
	if kind == kindWrite {
		before = instanceState(conn)
	}
	deadline := settleDeadline
	if kind == kindRunaway {
		deadline = harnessDeadline
	}
	harness, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	ctx := harness
	if s.interrupt {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(harness, layerTimeout)
		defer stop()
	}
	stopInterrupt := interruptOnDone(ctx, conn)
	o.truncated, o.err = runStatements(ctx, guard, conn, s, sql)
	stopInterrupt()
	o.timedOut = isInterrupt(o.err)
	// The harness ended the run only when its deadline interrupted it; an
	// interrupt with the interrupt layer in place is the layer's, its
	// timer running out first however late DuckDB noticed.
	o.harnessEnded = harness.Err() != nil && o.timedOut && !s.interrupt
	if kind == kindWrite {
		if s.reset {
			bindings.Disconnect(&conn)
			bindings.Connect(db, &conn)
		}
		o.changed = instanceState(conn) != before
	}
	bindings.Disconnect(&conn)
	return o
}

// isInterrupt reports whether err is DuckDB's interrupt or the guard's.
func isInterrupt(err error) bool {
	var ge *sqlguard.Error
	if errors.As(err, &ge) {
		return ge.Layer == sqlguard.LayerInterrupt
	}
	return err != nil && strings.HasPrefix(err.Error(), "INTERRUPT Error") || err != nil && strings.HasPrefix(err.Error(), "Interrupt Error")
}

// rawError is DuckDB's message, as the bare database gives it.
func rawError(msg string) error { return errors.New(plainMessage(msg)) }

// runStatements runs every statement of sql, with the layer's checks.
func runStatements(ctx context.Context, guard *DB, conn bindings.Connection, s layerSetup, sql string) (truncated bool, err error) {
	var extracted bindings.ExtractedStatements
	defer bindings.DestroyExtracted(&extracted)
	n := uint64(bindings.ExtractStatements(conn, sql, &extracted))
	if n == 0 {
		return false, rawError(bindings.ExtractStatementsError(extracted))
	}
	if s.oneStatement && n > 1 {
		return false, errors.New("more than one statement")
	}
	if s.plan {
		// The plan check reads the plan of the text, which must be one
		// statement.
		if err := guard.checkPlan(ctx, conn, sql, nil); err != nil {
			return false, err
		}
	}
	for i := range n {
		var stmt bindings.PreparedStatement
		if bindings.PrepareExtractedStatement(conn, extracted, bindings.IdxT(i), &stmt) == bindings.StateError {
			err := rawError(bindings.PrepareError(stmt))
			bindings.DestroyPrepare(&stmt)
			return false, err
		}
		truncated, err := runStatement(s, stmt)
		bindings.DestroyPrepare(&stmt)
		if err != nil || truncated {
			return truncated, err
		}
	}
	return false, nil
}

func runStatement(s layerSetup, stmt bindings.PreparedStatement) (truncated bool, err error) {
	if s.readOnlyStmt && bindings.PreparedStatementType(stmt) != bindings.StatementTypeSelect {
		return false, errors.New("not a SELECT")
	}
	var pending bindings.PendingResult
	defer bindings.DestroyPending(&pending)
	if bindings.PendingPreparedStreaming(stmt, &pending) == bindings.StateError {
		return false, rawError(bindings.PendingError(pending))
	}
	var res bindings.Result
	defer bindings.DestroyResult(&res)
	if bindings.ExecutePending(pending, &res) == bindings.StateError {
		return false, rawError(bindings.ResultError(&res))
	}
	rows := 0
	for {
		chunk := bindings.FetchChunk(res)
		if chunk.Ptr == nil {
			if msg := bindings.ResultError(&res); msg != "" {
				return false, rawError(msg)
			}
			return false, nil
		}
		n := int(bindings.DataChunkGetSize(chunk))
		big := s.valueCap && chunkHasBigValue(chunk)
		bindings.DestroyDataChunk(&chunk)
		if big {
			return false, tooBig()
		}
		if rows += n; s.rowCap && rows > layerRowCap {
			return true, nil
		}
	}
}

// chunkHasBigValue reports whether a VARCHAR or BLOB value of the chunk
// is larger than sqlguard.MaxValueBytes.
func chunkHasBigValue(chunk bindings.DataChunk) bool {
	n := uint64(bindings.DataChunkGetSize(chunk))
	for i := range uint64(bindings.DataChunkGetColumnCount(chunk)) {
		vec := bindings.DataChunkGetVector(chunk, bindings.IdxT(i))
		lt := bindings.VectorGetColumnType(vec)
		typ := bindings.GetTypeId(lt)
		bindings.DestroyLogicalType(&lt)
		if typ != bindings.TypeVarchar && typ != bindings.TypeBlob {
			continue
		}
		v := vector{data: bindings.VectorGetData(vec), validity: bindings.VectorGetValidity(vec)}
		for row := range n {
			if !v.null(row) && len(stringAt(&v, row)) > sqlguard.MaxValueBytes {
				return true
			}
		}
	}
	return false
}

// instanceState is what attacks try to change in a session or an
// instance: settings, attached databases, secrets, variables, temporary
// objects, loaded extensions, the current schema.
func instanceState(conn bindings.Connection) string {
	rows, err := query(conn, `SELECT
		(SELECT string_agg(name || '=' || coalesce(value, ''), ',' ORDER BY name) FROM duckdb_settings()) || ' | ' ||
		(SELECT string_agg(database_name, ',' ORDER BY database_name) FROM duckdb_databases()) || ' | ' ||
		coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM duckdb_secrets()), '') || ' | ' ||
		coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM duckdb_variables()), '') || ' | ' ||
		coalesce((SELECT string_agg(table_name, ',' ORDER BY table_name) FROM duckdb_tables() WHERE temporary), '') || ' | ' ||
		coalesce((SELECT string_agg(function_name, ',' ORDER BY function_name) FROM duckdb_functions() WHERE database_name = 'temp'), '') || ' | ' ||
		coalesce((SELECT string_agg(extension_name, ',' ORDER BY extension_name) FROM duckdb_extensions() WHERE loaded), '') || ' | ' ||
		current_schema() || ' ' || current_database()`)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	s, _ := rows[0][0].(string)
	return s
}

func TestAttacksDuckDB(t *testing.T) {
	if len(duckdbAttacks) < 60 {
		t.Fatalf("%d DuckDB attacks; the suite wants at least 60", len(duckdbAttacks))
	}
	fixture := writeFixture(t, "CREATE SCHEMA other;\nCREATE TABLE other.t (x INTEGER);\n")
	guarded := scratch(t, fixture)
	folder := folderState(t, guarded)
	opts := fixtureOptions
	opts.Timeout, opts.CountLimit, opts.MaxRows = 300*time.Millisecond, layerRowCap, 10
	// The whole guard, its engine kept for a bystander connection.
	var engine *DB
	sqlguard.RegisterEngine(dsn.DuckDB, func(ctx context.Context, d dsn.DSN, o sqlguard.Options) (sqlguard.Engine, error) {
		e, err := Open(d.Path, o)
		engine = e
		return e, err
	})
	defer sqlguard.RegisterEngine(dsn.DuckDB, open)
	db, err := sqlguard.Open(context.Background(), "fixture", "duckdb:"+guarded, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bystander, err := engine.connect()
	if err != nil {
		t.Fatal(err)
	}
	defer bindings.Disconnect(&bystander)
	initial := instanceState(bystander)
	validator, err := sqlguard.NewValidator(sqlguard.DialectDuckDB, fixtureOptions, engine.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	// The plan check under test is the guard's own, on the fixture's
	// catalog.
	guard, err := Open(fixture, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	files := t.TempDir()
	input := filepath.Join(files, "input.csv")
	if err := os.WriteFile(input, []byte("body\nfrom a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setups := layerSetups()
	var records []record
	for n, a := range duckdbAttacks {
		fileFor := func(run int) string { return filepath.Join(files, fmt.Sprintf("attack-%d-%d", n, run)) }
		text := func(run int) string {
			return strings.NewReplacer("{file}", fileFor(run), "{input}", input).Replace(a.sql)
		}
		rec := record{attack: a}
		if validator.Validate(text(0)) != nil {
			rec.layers = append(rec.layers, string(sqlguard.LayerValidator))
		}
		outcomes := make([]outcome, len(setups))
		run := func(i int) {
			home := t.TempDir()
			path := scratch(t, fixture)
			before := folderState(t, path)
			outcomes[i] = runLayer(guard, setups[i], path, text(i+1), home, a.kind)
			if outcomes[i].err != nil {
				outcomes[i].err = errors.New(strings.ReplaceAll(strings.ReplaceAll(outcomes[i].err.Error(), home, "{dir}"), files, "{dir}"))
			}
			if folderState(t, path) != before {
				outcomes[i].changed = true
			}
			if made, _ := filepath.Glob(fileFor(i+1) + "*"); len(made) > 0 {
				outcomes[i].changed = true
			}
		}
		// Each run has an instance and a copy of its own: they run side by
		// side, runaways all at once since most wait out the deadline. A
		// write runs alone: DuckDB keeps some settings' effects, such as
		// its threads, process-wide, so one instance's PRAGMA threads can
		// show in another's settings read at the same moment, and a loaded
		// machine made that moment likelier.
		parallel := 3
		switch a.kind {
		case kindRunaway:
			parallel = len(setups)
		case kindWrite:
			parallel = 1
		}
		slots := make(chan struct{}, parallel)
		var wg sync.WaitGroup
		for i := range setups {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				run(i)
			})
		}
		wg.Wait()
		judged := make([]attacktest.Run, len(setups))
		for i, s := range setups {
			judged[i] = attacktest.Run{Layer: string(s.layer), Stopped: outcomes[i].stopped(a.kind), Err: outcomes[i].err}
		}
		rec.layers = attacktest.Stoppers(t, a.class, a.name, a.single, rec.layers, judged, shortError)
		// The whole guard must stop it too and leave everything as it was.
		res, err := db.Query(context.Background(), "attack-suite", text(99))
		if err == nil && a.kind != kindWrite && !(a.kind == kindRunaway && res.Truncated()) {
			t.Errorf("%s / %s: the guard let it through: %v", a.class, a.name, res)
		}
		if err != nil && strings.Contains(err.Error(), hiddenValue) {
			t.Errorf("%s / %s: the guard's error quotes a hidden value: %v", a.class, a.name, err)
		}
		if got := folderState(t, guarded); got != folder {
			t.Errorf("%s / %s: the guarded file or its folder changed:\n%s\n%s", a.class, a.name, folder, got)
		}
		if made, _ := filepath.Glob(fileFor(99) + "*"); len(made) > 0 {
			t.Errorf("%s / %s: a file appeared: %s", a.class, a.name, made)
		}
		if got := instanceState(bystander); got != initial {
			t.Errorf("%s / %s: the guarded instance changed:\n%s\n%s", a.class, a.name, initial, got)
		}
		records = append(records, rec)
	}
	checkAttackTable(t, records)
}

// record is one attack's verdict.
type record struct {
	attack attack
	layers []string
}

func shortError(err error) string {
	if err == nil {
		return "no effect"
	}
	msg := err.Error()
	if je, ok := readError(msg); ok {
		msg = je.Type + ": " + je.Message
	}
	msg = strings.TrimPrefix(msg, "refused by the ")
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "|", `\|`), "\n", " ")
	if r := []rune(msg); len(r) > 60 {
		msg = string(r[:57]) + "..."
	}
	return msg
}

// checkAttackTable compares the table attack × layer with its golden file
// (rewritten with -update) and logs it.
func checkAttackTable(t *testing.T, records []record) {
	t.Helper()
	var verdicts []attacktest.Verdict
	for _, r := range records {
		verdicts = append(verdicts, attacktest.Verdict{Class: r.attack.class, Name: r.attack.name, Layers: r.layers, Single: r.attack.single})
	}
	table := attacktest.Table("DuckDB", verdicts)
	t.Log("\n" + table)
	golden.CheckFile(t, filepath.Join("..", "testdata", "attacks", "duckdb.md"), []byte(table))
}
