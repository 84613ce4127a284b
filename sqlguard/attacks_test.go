package sqlguard

import "strings"

// The attack suite's attacks, by class, each class in several spellings.
// {file} is a fresh path no file is at, {pid} the process id of another
// session of the agent's role, {seq} a sequence of the fixture and
// {conninfo} a libpq connection string to the cluster's postgres database.

// What an attack achieves when nothing stops it.
type attackKind int

const (
	// kindWrite leaves something behind: changed rows, tables, sequences,
	// large objects, session settings or locks, and any effect it lists.
	kindWrite attackKind = iota
	// kindRead returns data it must not, or does what must not be done
	// at all (ATTACH, signalling a session); any success is a breach.
	kindRead
	// kindRunaway holds the database past any reasonable time.
	kindRunaway
)

// effect is a lasting change beyond the database's rows and the session.
type effect int

const (
	effectXID  effect = 1 << iota // consumes a transaction id
	effectWAL                     // grows the WAL by more than walBound
	effectFile                    // creates the file at {file}
)

type attack struct {
	class  string
	name   string
	kind   attackKind
	sql    string
	effect effect
	// single says why no second layer can stop this attack on this
	// engine; "" means at least two must.
	single string
}

// Why only one layer can stop some attacks.
const (
	sameRole        = "PostgreSQL lets every role signal its own sessions; no grant of okf's takes that away"
	publicFunction  = "PostgreSQL lets PUBLIC execute it; no grant of okf's takes that away"
	catalogReadable = "PostgreSQL's catalogs are readable by every role"
	xidNeedsNothing = "taking a transaction id needs no privilege, and a rollback does not give it back"
	textSizeOnly    = "only okf reads the text; the database takes a long list"
	bytesKept       = "only the client knows how many bytes it keeps"
	oneClock        = "SQLite has one clock, the interrupt, and the query returns one row"
)

var postgresAttacks = []attack{
	// DDL and DML in every form
	{class: "DDL/DML", name: "DELETE", kind: kindWrite, sql: "DELETE FROM hero"},
	{class: "DDL/DML", name: "UPDATE", kind: kindWrite, sql: "UPDATE hero SET name = 'x'"},
	{class: "DDL/DML", name: "INSERT", kind: kindWrite, sql: "INSERT INTO notes VALUES ('x')"},
	{class: "DDL/DML", name: "INSERT … ON CONFLICT", kind: kindWrite, sql: "INSERT INTO hero (id, name) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET name = 'x'"},
	{class: "DDL/DML", name: "MERGE", kind: kindWrite, sql: "MERGE INTO notes USING (SELECT 'x' AS b) s ON false WHEN NOT MATCHED THEN INSERT VALUES (s.b)"},
	{class: "DDL/DML", name: "TRUNCATE", kind: kindWrite, sql: "TRUNCATE notes"},
	{class: "DDL/DML", name: "DROP TABLE", kind: kindWrite, sql: "DROP TABLE notes"},
	{class: "DDL/DML", name: "CREATE TABLE", kind: kindWrite, sql: "CREATE TABLE stolen (x int)"},
	{class: "DDL/DML", name: "ALTER TABLE", kind: kindWrite, sql: "ALTER TABLE notes ADD COLUMN x int DEFAULT 1"},
	{class: "DDL/DML", name: "GRANT", kind: kindWrite, sql: "GRANT SELECT ON hero TO PUBLIC"},
	{class: "DDL/DML", name: "COMMENT", kind: kindWrite, sql: "COMMENT ON TABLE notes IS 'x'"},
	{class: "DDL/DML", name: "DELETE in a CTE", kind: kindWrite, sql: "WITH d AS (DELETE FROM hero RETURNING id) SELECT count(*) FROM d"},
	{class: "DDL/DML", name: "UPDATE in a CTE", kind: kindWrite, sql: "WITH u AS (UPDATE hero SET name = 'x' RETURNING id) SELECT 1"},
	{class: "DDL/DML", name: "SELECT INTO", kind: kindWrite, sql: "SELECT * INTO stolen FROM notes"},
	{class: "DDL/DML", name: "CREATE TABLE AS", kind: kindWrite, sql: "CREATE TABLE stolen AS SELECT body FROM notes"},
	{class: "DDL/DML", name: "DO block", kind: kindWrite, sql: "DO $$ BEGIN DELETE FROM hero; END $$"},
	{class: "DDL/DML", name: "CREATE FUNCTION", kind: kindWrite, sql: "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'"},
	// several statements
	{class: "multi-statement", name: "two statements", kind: kindWrite, sql: "SELECT 1; DELETE FROM hero"},
	{class: "multi-statement", name: "no space after ;", kind: kindWrite, sql: "SELECT 1;DELETE FROM hero"},
	{class: "multi-statement", name: "; inside a comment, then a real one", kind: kindWrite, sql: "SELECT 1 /* ; */ ; UPDATE hero SET name = 'x'"},
	{class: "multi-statement", name: "a line comment before the second", kind: kindWrite, sql: "SELECT 1;\n-- tidy up\nTRUNCATE notes"},
	// settings and roles
	{class: "settings and roles", name: "SET statement_timeout", kind: kindWrite, sql: "SET statement_timeout = '1h'"},
	{class: "settings and roles", name: "set_config", kind: kindWrite, sql: "SELECT set_config('statement_timeout', '1h', false)"},
	{class: "settings and roles", name: "SET ROLE", kind: kindRead, sql: "SET ROLE postgres"},
	{class: "settings and roles", name: "SET SESSION AUTHORIZATION", kind: kindRead, sql: "SET SESSION AUTHORIZATION postgres"},
	{class: "settings and roles", name: "set_config of role", kind: kindRead, sql: "SELECT set_config('role', 'postgres', false)"},
	{class: "settings and roles", name: "ALTER ROLE", kind: kindWrite, sql: "ALTER ROLE CURRENT_USER SET work_mem = '64kB'"},
	// transaction control
	{class: "transaction control", name: "COMMIT", kind: kindWrite, sql: "COMMIT"},
	{class: "transaction control", name: "SET TRANSACTION READ WRITE", kind: kindWrite, sql: "SET TRANSACTION READ WRITE"},
	{class: "transaction control", name: "SAVEPOINT", kind: kindWrite, sql: "SAVEPOINT s"},
	{class: "transaction control", name: "START TRANSACTION READ WRITE", kind: kindWrite, sql: "START TRANSACTION READ WRITE"},
	// files and programs
	{class: "files and programs", name: "COPY FROM a server file", kind: kindWrite, sql: "COPY notes FROM '/etc/hostname'"},
	{class: "files and programs", name: "COPY TO a server file", kind: kindWrite, sql: "COPY notes TO '{file}'", effect: effectFile},
	{class: "files and programs", name: "COPY TO PROGRAM", kind: kindWrite, sql: "COPY (SELECT 1) TO PROGRAM 'touch {file}'", effect: effectFile},
	{class: "files and programs", name: "pg_read_file", kind: kindRead, sql: "SELECT pg_read_file('/etc/passwd')"},
	{class: "files and programs", name: "pg_read_binary_file, qualified", kind: kindRead, sql: "SELECT pg_catalog.pg_read_binary_file('/etc/hostname')"},
	{class: "files and programs", name: "pg_ls_dir", kind: kindRead, sql: "SELECT * FROM pg_ls_dir('.')"},
	{class: "files and programs", name: "pg_stat_file", kind: kindRead, sql: "SELECT size FROM pg_stat_file('PG_VERSION')"},
	// large objects
	{class: "large objects", name: "lo_import", kind: kindWrite, sql: "SELECT lo_import('/etc/hostname')"},
	{class: "large objects", name: "lo_from_bytea", kind: kindWrite, sql: "SELECT lo_from_bytea(0, 'x')"},
	{class: "large objects", name: "lo_export", kind: kindWrite, sql: "SELECT lo_export(4242, '{file}')", effect: effectFile},
	{class: "large objects", name: "lo_get", kind: kindRead, sql: "SELECT lo_get(4242)"},
	{class: "large objects", name: "lo_unlink", kind: kindWrite, sql: "SELECT lo_unlink(4242)"},
	// dynamic SQL
	{class: "dynamic SQL", name: "query_to_xml", kind: kindRead, sql: "SELECT query_to_xml('SELECT secret_identity FROM hero', true, false, '')"},
	{class: "dynamic SQL", name: "ts_rewrite runs SQL text", kind: kindRead, sql: "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, plainto_tsquery(''simple'', secret_identity) FROM hero WHERE id = 1')"},
	{class: "dynamic SQL", name: "ts_stat runs SQL text", kind: kindRead, sql: "SELECT * FROM ts_stat('SELECT to_tsvector(secret_identity) FROM hero')"},
	{class: "dynamic SQL", name: "table_to_xml reads every column", kind: kindRead, sql: "SELECT table_to_xml('hero', true, false, '')"},
	{class: "dynamic SQL", name: "PREPARE", kind: kindWrite, sql: "PREPARE p AS DELETE FROM hero"},
	// functions called by attribute notation
	{class: "attribute notation", name: "(42::bigint).pg_advisory_lock", kind: kindWrite, sql: "SELECT (42::bigint).pg_advisory_lock"},
	{class: "attribute notation", name: "(x).pg_cancel_backend", kind: kindRead, sql: "SELECT (p).pg_cancel_backend FROM (SELECT {pid} AS p) s", single: sameRole},
	{class: "attribute notation", name: "('seq'::regclass).nextval", kind: kindWrite, sql: "SELECT ('{seq}'::regclass).nextval"},
	{class: "attribute notation", name: "(10::float8).pg_sleep", kind: kindRunaway, sql: "SELECT (10::float8).pg_sleep"},
	{class: "attribute notation", name: "t.row_to_json on a hidden row", kind: kindRead, sql: "SELECT h.row_to_json FROM hero h"},
	// sequences and transaction ids
	{class: "sequences and xids", name: "nextval", kind: kindWrite, sql: "SELECT nextval('{seq}')"},
	{class: "sequences and xids", name: "setval", kind: kindWrite, sql: "SELECT setval('{seq}', 1000)"},
	{class: "sequences and xids", name: "txid_current", kind: kindWrite, sql: "SELECT txid_current()", effect: effectXID, single: xidNeedsNothing},
	{class: "sequences and xids", name: "pg_current_xact_id", kind: kindWrite, sql: "SELECT pg_current_xact_id()", effect: effectXID, single: xidNeedsNothing},
	// locks
	{class: "locks", name: "pg_advisory_lock", kind: kindWrite, sql: "SELECT pg_advisory_lock(42)"},
	{class: "locks", name: "pg_try_advisory_lock, qualified", kind: kindWrite, sql: "SELECT pg_catalog.pg_try_advisory_lock(42)"},
	{class: "locks", name: "SELECT … FOR UPDATE", kind: kindRead, sql: "SELECT id FROM hero WHERE id = 1 FOR UPDATE"},
	{class: "locks", name: "SELECT … FOR SHARE", kind: kindRead, sql: "SELECT body FROM notes FOR SHARE"},
	{class: "locks", name: "LOCK TABLE", kind: kindRead, sql: "LOCK TABLE hero IN ACCESS EXCLUSIVE MODE"},
	// other sessions
	{class: "other sessions", name: "pg_cancel_backend", kind: kindRead, sql: "SELECT pg_cancel_backend({pid})", single: sameRole},
	{class: "other sessions", name: "pg_terminate_backend", kind: kindRead, sql: "SELECT pg_terminate_backend({pid})", single: sameRole},
	{class: "other sessions", name: "read their SQL (pg_stat_activity)", kind: kindRead, sql: "SELECT query FROM pg_stat_activity", single: catalogReadable},
	{class: "other sessions", name: "read their SQL (pg_stat_get_activity)", kind: kindRead, sql: "SELECT query FROM pg_stat_get_activity(NULL)", single: publicFunction},
	// catalog and statistics
	{class: "catalog and statistics", name: "pg_authid", kind: kindRead, sql: "SELECT rolname, rolpassword FROM pg_authid"},
	{class: "catalog and statistics", name: "pg_catalog.pg_class", kind: kindRead, sql: "SELECT relname FROM pg_catalog.pg_class", single: catalogReadable},
	{class: "catalog and statistics", name: "information_schema", kind: kindRead, sql: "SELECT table_name FROM information_schema.tables", single: catalogReadable},
	{class: "catalog and statistics", name: "column statistics (pg_stats)", kind: kindRead, sql: "SELECT most_common_vals FROM pg_stats", single: catalogReadable},
	{class: "catalog and statistics", name: "pg_show_all_settings", kind: kindRead, sql: "SELECT name, setting FROM pg_show_all_settings()", single: publicFunction},
	{class: "catalog and statistics", name: "current_setting", kind: kindRead, sql: "SELECT current_setting('data_directory')"},
	{class: "catalog and statistics", name: "pg_get_functiondef", kind: kindRead, sql: "SELECT pg_get_functiondef('pg_catalog.now'::regproc)", single: publicFunction},
	{class: "catalog and statistics", name: "pg_control_system", kind: kindRead, sql: "SELECT system_identifier FROM pg_control_system()", single: publicFunction},
	{class: "catalog and statistics", name: "version", kind: kindRead, sql: "SELECT version()", single: publicFunction},
	{class: "catalog and statistics", name: "pg_relation_size", kind: kindRead, sql: "SELECT pg_relation_size('hero')", single: publicFunction},
	// WAL and replication
	{class: "WAL and replication", name: "pg_logical_emit_message", kind: kindWrite, sql: "SELECT pg_logical_emit_message(false, 'okf', repeat('x', 2000000))", effect: effectWAL, single: publicFunction},
	{class: "WAL and replication", name: "pg_switch_wal", kind: kindRead, sql: "SELECT pg_switch_wal()"},
	{class: "WAL and replication", name: "replication slot", kind: kindRead, sql: "SELECT pg_create_physical_replication_slot('okf')"},
	// dblink and foreign data
	{class: "dblink and foreign data", name: "dblink", kind: kindRead, sql: "SELECT * FROM dblink('{conninfo}', 'SELECT 1') AS t(x int)"},
	{class: "dblink and foreign data", name: "dblink_connect", kind: kindRead, sql: "SELECT dblink_connect('c', '{conninfo}')"},
	{class: "dblink and foreign data", name: "dblink_exec", kind: kindRead, sql: "SELECT dblink_exec('{conninfo}', 'SELECT 1')"},
	{class: "dblink and foreign data", name: "dblink_send_query", kind: kindRead, sql: "SELECT dblink_connect('c', '{conninfo}'), dblink_send_query('c', 'SELECT pg_sleep(30)')"},
	{class: "dblink and foreign data", name: "CREATE SERVER", kind: kindWrite, sql: "CREATE SERVER s FOREIGN DATA WRAPPER dblink_fdw OPTIONS (dbname 'postgres')"},
	// resource exhaustion
	{class: "resources", name: "runaway rows (cross join)", kind: kindRunaway, sql: "SELECT a.id, b.id, c.id FROM hero a, hero b, hero c"},
	{class: "resources", name: "runaway time (count of a cross join)", kind: kindRunaway, sql: "SELECT count(*) FROM hero a, hero b, hero c"},
	{class: "resources", name: "pg_sleep", kind: kindRunaway, sql: "SELECT pg_sleep(30)"},
	{class: "resources", name: "endless recursive CTE", kind: kindRunaway, sql: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"},
	{class: "resources", name: "generate_series of 10¹²", kind: kindRunaway, sql: "SELECT i FROM generate_series(1, 1000000000000) i"},
	{class: "resources", name: "memory (array_agg of 10⁹)", kind: kindRunaway, sql: "SELECT cardinality(array_agg(i)) FROM generate_series(1, 1000000000) i"},
	{class: "resources", name: "a 17 MB row", kind: kindRead, sql: "SELECT repeat('x', 17000000)", single: bytesKept},
	{class: "resources", name: "deep nesting", kind: kindRead, sql: deepNesting},
	{class: "resources", name: "a 48 KB chain of +", kind: kindRead, sql: "SELECT 1" + strings.Repeat("+1", 24000)},
	{class: "resources", name: "a long IN list", kind: kindRead, sql: "SELECT 1 WHERE 1 IN (" + strings.Repeat("1,", 40000) + "1)", single: textSizeOnly},
	// parser differentials and encodings
	{class: "parser differentials", name: "nested comment", kind: kindWrite, sql: "SELECT 1 /* /* */ ; DELETE FROM hero; /* */ */"},
	{class: "parser differentials", name: "E'' string", kind: kindWrite, sql: `SELECT E'\'; DELETE FROM hero; --'`},
	{class: "parser differentials", name: "dollar quote", kind: kindWrite, sql: "SELECT $q$; DELETE FROM hero; $q$"},
	{class: "parser differentials", name: "invalid UTF-8", kind: kindWrite, sql: "SELECT 1 /* \xff\xfe */; DELETE FROM hero"},
	{class: "parser differentials", name: "NUL byte", kind: kindWrite, sql: "SELECT 1;\x00 DELETE FROM hero"},
	// hidden columns in every syntactic form
	{class: "hidden columns", name: "named", kind: kindRead, sql: "SELECT name, secret_identity FROM hero"},
	{class: "hidden columns", name: "quoted", kind: kindRead, sql: `SELECT "secret_identity" FROM hero`},
	{class: "hidden columns", name: "*", kind: kindRead, sql: "SELECT * FROM hero"},
	{class: "hidden columns", name: "t.*", kind: kindRead, sql: "SELECT h.* FROM hero h"},
	{class: "hidden columns", name: "whole row", kind: kindRead, sql: "SELECT h FROM hero h"},
	{class: "hidden columns", name: "row_to_json(t)", kind: kindRead, sql: "SELECT row_to_json(h) FROM hero h"},
	{class: "hidden columns", name: "(t).column", kind: kindRead, sql: "SELECT (h).secret_identity FROM hero h"},
	{class: "hidden columns", name: "NATURAL JOIN", kind: kindRead, sql: "SELECT name, k FROM hero NATURAL JOIN (SELECT 'Person ' || i AS secret_identity, i AS k FROM generate_series(1, 9) i) s"},
	{class: "hidden columns", name: "JOIN … USING", kind: kindRead, sql: "SELECT h.name, s.k FROM hero h JOIN (SELECT 'Person ' || i AS secret_identity, i AS k FROM generate_series(1, 9) i) s USING (secret_identity)"},
	{class: "hidden columns", name: "NATURAL JOIN with VALUES", kind: kindRead, sql: "SELECT name, k FROM hero NATURAL JOIN (VALUES ('Person 1', 1)) v(secret_identity, k)"},
	{class: "hidden columns", name: "alias column list", kind: kindRead, sql: "SELECT f.c FROM hero AS f(a, b, c)"},
	{class: "hidden columns", name: "alias shadowing a table", kind: kindRead, sql: "SELECT notes FROM hero notes"},
	{class: "hidden columns", name: "* in a CTE", kind: kindRead, sql: "WITH t AS (SELECT * FROM hero) SELECT name FROM t"},
	{class: "hidden columns", name: "correlated subquery", kind: kindRead, sql: "SELECT (SELECT h.secret_identity) FROM hero h"},
	{class: "hidden columns", name: "filter (a yes/no leak)", kind: kindRead, sql: "SELECT name FROM hero WHERE secret_identity LIKE 'Person 1%'"},
	{class: "hidden columns", name: "ORDER BY (an order leak)", kind: kindRead, sql: "SELECT name FROM hero ORDER BY secret_identity"},
	{class: "hidden columns", name: "join ON", kind: kindRead, sql: "SELECT a.name FROM hero a JOIN notes n ON a.secret_identity = n.body"},
	{class: "hidden columns", name: "through a view", kind: kindRead, sql: "SELECT secret_identity FROM hero_view"},
}

var sqliteAttacks = []attack{
	// DDL and DML in every form
	{class: "DDL/DML", name: "DELETE", kind: kindWrite, sql: "DELETE FROM hero"},
	{class: "DDL/DML", name: "UPDATE", kind: kindWrite, sql: "UPDATE hero SET name = 'x'"},
	{class: "DDL/DML", name: "INSERT", kind: kindWrite, sql: "INSERT INTO notes VALUES ('x')"},
	{class: "DDL/DML", name: "INSERT OR REPLACE", kind: kindWrite, sql: "INSERT OR REPLACE INTO hero (id, name) VALUES (1, 'x')"},
	{class: "DDL/DML", name: "REPLACE INTO", kind: kindWrite, sql: "REPLACE INTO hero (id, name) VALUES (1, 'x')"},
	{class: "DDL/DML", name: "UPSERT", kind: kindWrite, sql: "INSERT INTO hero (id, name) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET name = 'x'"},
	{class: "DDL/DML", name: "DELETE after a CTE", kind: kindWrite, sql: "WITH t AS (SELECT 1) DELETE FROM hero"},
	{class: "DDL/DML", name: "DROP TABLE", kind: kindWrite, sql: "DROP TABLE notes"},
	{class: "DDL/DML", name: "CREATE TABLE", kind: kindWrite, sql: "CREATE TABLE stolen (x)"},
	{class: "DDL/DML", name: "CREATE TEMP TABLE", kind: kindWrite, sql: "CREATE TEMP TABLE stolen AS SELECT * FROM hero"},
	{class: "DDL/DML", name: "CREATE VIEW", kind: kindWrite, sql: "CREATE VIEW v AS SELECT secret_identity FROM hero"},
	{class: "DDL/DML", name: "CREATE TRIGGER", kind: kindWrite, sql: "CREATE TRIGGER t AFTER INSERT ON notes BEGIN DELETE FROM hero; END"},
	{class: "DDL/DML", name: "ALTER TABLE", kind: kindWrite, sql: "ALTER TABLE notes RENAME TO gone"},
	{class: "DDL/DML", name: "VACUUM", kind: kindWrite, sql: "VACUUM"},
	{class: "DDL/DML", name: "REINDEX", kind: kindWrite, sql: "REINDEX"},
	{class: "DDL/DML", name: "ANALYZE", kind: kindWrite, sql: "ANALYZE"},
	// several statements
	{class: "multi-statement", name: "two statements", kind: kindWrite, sql: "SELECT 1; DELETE FROM hero"},
	{class: "multi-statement", name: "no space after ;", kind: kindWrite, sql: "SELECT 1;DELETE FROM hero"},
	{class: "multi-statement", name: "a line comment before the second", kind: kindWrite, sql: "SELECT 1;\n-- tidy up\nDELETE FROM notes"},
	// settings (pragmas)
	{class: "settings", name: "PRAGMA query_only = 0", kind: kindRead, sql: "PRAGMA query_only = 0"},
	{class: "settings", name: "PRAGMA writable_schema", kind: kindRead, sql: "PRAGMA writable_schema = 1"},
	{class: "settings", name: "PRAGMA user_version", kind: kindWrite, sql: "PRAGMA user_version = 7"},
	{class: "settings", name: "PRAGMA journal_mode", kind: kindRead, sql: "PRAGMA journal_mode = DELETE"},
	{class: "settings", name: "pragma table function", kind: kindRead, sql: "SELECT name FROM pragma_table_info('hero')"},
	// transaction control
	{class: "transaction control", name: "BEGIN EXCLUSIVE", kind: kindRead, sql: "BEGIN EXCLUSIVE"},
	{class: "transaction control", name: "SAVEPOINT", kind: kindRead, sql: "SAVEPOINT s"},
	{class: "transaction control", name: "COMMIT", kind: kindRead, sql: "COMMIT"},
	// files and programs
	{class: "files and programs", name: "ATTACH in memory", kind: kindRead, sql: "ATTACH DATABASE ':memory:' AS scratch"},
	{class: "files and programs", name: "ATTACH a new file", kind: kindWrite, sql: "ATTACH DATABASE '{file}' AS scratch", effect: effectFile},
	{class: "files and programs", name: "VACUUM INTO a file", kind: kindWrite, sql: "VACUUM INTO '{file}'", effect: effectFile},
	{class: "files and programs", name: "load_extension", kind: kindRead, sql: "SELECT load_extension('/tmp/okf-none.so')"},
	{class: "files and programs", name: "readfile", kind: kindRead, sql: "SELECT readfile('/etc/passwd')"},
	{class: "files and programs", name: "writefile", kind: kindWrite, sql: "SELECT writefile('{file}', 'x')", effect: effectFile},
	// catalogs
	{class: "catalogs", name: "sqlite_schema", kind: kindRead, sql: "SELECT name, sql FROM sqlite_schema"},
	{class: "catalogs", name: "sqlite_master, qualified", kind: kindRead, sql: "SELECT sql FROM main.sqlite_master"},
	{class: "catalogs", name: "temp.sqlite_schema", kind: kindRead, sql: "SELECT name FROM temp.sqlite_schema"},
	{class: "catalogs", name: "count(*) of sqlite_schema", kind: kindRead, sql: "SELECT count(*) FROM sqlite_schema"},
	{class: "catalogs", name: "dbstat", kind: kindRead, sql: "SELECT name FROM dbstat"},
	{class: "catalogs", name: "functions outside the list", kind: kindRead, sql: "SELECT sqlite_compileoption_get(0)"},
	// resource exhaustion
	{class: "resources", name: "runaway rows (cross join)", kind: kindRunaway, sql: "SELECT a.id, b.id, c.id FROM hero a, hero b, hero c"},
	{class: "resources", name: "runaway time (count of a cross join)", kind: kindRunaway, sql: "SELECT count(*) FROM hero a, hero b, hero c", single: oneClock},
	{class: "resources", name: "endless recursive CTE", kind: kindRunaway, sql: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"},
	{class: "resources", name: "randomblob of 300 MB", kind: kindRead, sql: "SELECT length(randomblob(300000000))"},
	{class: "resources", name: "zeroblob of 1 GB", kind: kindRead, sql: "SELECT zeroblob(1000000000)"},
	{class: "resources", name: "printf width of 10⁹", kind: kindRead, sql: "SELECT printf('%.*c', 1000000000, 'x')"},
	{class: "resources", name: "deep nesting", kind: kindRead, sql: deepNesting},
	{class: "resources", name: "a 48 KB chain of +", kind: kindRead, sql: "SELECT 1" + strings.Repeat("+1", 24000)},
	// parser differentials and encodings
	{class: "parser differentials", name: "nested comment", kind: kindWrite, sql: "SELECT 1 /* /* */ ; DELETE FROM hero; -- */"},
	{class: "parser differentials", name: "nested comment hiding a column", kind: kindRead, sql: "SELECT 1 /* /* */, secret_identity /* */ FROM hero"},
	{class: "parser differentials", name: "E'' string hiding a column", kind: kindRead, sql: `WITH t(e) AS (SELECT 1) SELECT e'\', secret_identity FROM t, hero -- '`},
	{class: "parser differentials", name: "[ ] identifier", kind: kindRead, sql: "SELECT [secret_identity] FROM hero"},
	{class: "parser differentials", name: "backtick identifier", kind: kindRead, sql: "SELECT `secret_identity` FROM hero"},
	{class: "parser differentials", name: "nested comment hiding a NATURAL JOIN", kind: kindRead, sql: "SELECT name, k FROM hero /* /* */ NATURAL JOIN (SELECT 'Person 1' AS secret_identity, 1 AS k) /* */"},
	{class: "parser differentials", name: "invalid UTF-8", kind: kindWrite, sql: "SELECT 1 /* \xff\xfe */; DELETE FROM hero"},
	// hidden columns in every syntactic form
	{class: "hidden columns", name: "named", kind: kindRead, sql: "SELECT name, secret_identity FROM hero"},
	{class: "hidden columns", name: "quoted", kind: kindRead, sql: `SELECT "secret_identity" FROM hero`},
	{class: "hidden columns", name: "*", kind: kindRead, sql: "SELECT * FROM hero"},
	{class: "hidden columns", name: "t.*", kind: kindRead, sql: "SELECT h.* FROM hero h"},
	{class: "hidden columns", name: "NATURAL JOIN", kind: kindRead, sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9) SELECT name, k FROM hero NATURAL JOIN (SELECT 'Person ' || i AS secret_identity, i AS k FROM n)"},
	{class: "hidden columns", name: "JOIN … USING", kind: kindRead, sql: "SELECT h.name FROM hero h JOIN hero g USING (secret_identity)"},
	{class: "hidden columns", name: "NATURAL JOIN with VALUES", kind: kindRead, sql: "WITH v(secret_identity, k) AS (VALUES ('Person 1', 1)) SELECT name, k FROM hero NATURAL JOIN v"},
	{class: "hidden columns", name: "* in a CTE", kind: kindRead, sql: "WITH t AS (SELECT * FROM hero) SELECT name FROM t"},
	{class: "hidden columns", name: "correlated subquery", kind: kindRead, sql: "SELECT (SELECT h.secret_identity) FROM hero h"},
	{class: "hidden columns", name: "filter (a yes/no leak)", kind: kindRead, sql: "SELECT name FROM hero WHERE secret_identity LIKE 'Person 1%'"},
	{class: "hidden columns", name: "ORDER BY (an order leak)", kind: kindRead, sql: "SELECT name FROM hero ORDER BY secret_identity"},
	{class: "hidden columns", name: "join ON", kind: kindRead, sql: "SELECT a.name FROM hero a JOIN notes n ON a.secret_identity = n.body"},
	{class: "hidden columns", name: "json_object", kind: kindRead, sql: "SELECT json_object('s', secret_identity) FROM hero"},
	{class: "hidden columns", name: "through a view", kind: kindRead, sql: "SELECT secret_identity FROM hero_view"},
	{class: "hidden columns", name: "a view's *", kind: kindRead, sql: "SELECT * FROM hero_view"},
}

var deepNesting = "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)
