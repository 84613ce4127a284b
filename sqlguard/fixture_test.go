package sqlguard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The fixture: heroes with a hidden column, and a notes table. 1,500
// heroes make a three-way cross join of 3.4·10⁹ rows.
const (
	fixtureHeroes = 1500
	fixtureDDL    = `CREATE TABLE hero (id integer PRIMARY KEY, name text NOT NULL, secret_identity text, power numeric(8,3));
CREATE TABLE notes (body text);
INSERT INTO notes VALUES ('first'), ('second'), ('third');`
)

var fixtureOptions = Options{DeniedColumns: []string{"hero.secret_identity"}}

// fixtureCatalog is the fixture's tables as the engines read them.
func fixtureCatalog(d Dialect) *Catalog {
	schema := "public"
	if d == DialectSQLite || d == DialectDuckDB {
		schema = "main"
	}
	c := &Catalog{Tables: map[string][]string{
		schema + ".hero":  {"id", "name", "secret_identity", "power"},
		schema + ".notes": {"body"},
	}}
	if d == DialectSQLite {
		c.Rowid = map[string]string{"main.hero": "id", "main.notes": ""}
	}
	return c
}

var roleSeq atomic.Int64

// pgFixture creates a database holding the fixture, prepares an agent role
// for it and returns the admin and agent DSNs.
func pgFixture(t testing.TB) (admin, agent string) {
	t.Helper()
	return pgFixtureOn(t, pgtest.Shared(t), "", fixtureOptions)
}

// pgFixtureOn creates the fixture on cluster, then runs extra DDL, and
// prepares an agent role with opts.
func pgFixtureOn(t testing.TB, cluster *pgtest.Cluster, extra string, opts Options) (admin, agent string) {
	t.Helper()
	ctx := context.Background()
	admin = cluster.NewDatabase(t)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fixtureDDL+fmt.Sprintf(`
INSERT INTO hero SELECT i, 'Hero ' || i, 'Person ' || i, i * 1.125 FROM generate_series(1, %d) i;
`, fixtureHeroes)+extra); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_agent_%d_%d", os.Getpid(), roleSeq.Add(1))
	agent = strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	if _, err := PreparePostgres(ctx, admin, agent, opts); err != nil {
		t.Fatal(err)
	}
	return admin, agent
}

// pgState is every table's row count and a checksum of its rows, the
// number of large objects and the sequences' values: any change an attack
// leaves in the database shows here.
func pgState(t testing.TB, admin string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		var n int
		var sum string
		q := "SELECT count(*), coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM " + pgx.Identifier{table}.Sanitize() + " t"
		if err := conn.QueryRow(ctx, q).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:%d:%s ", table, n, sum)
	}
	var objects int
	var sequences string
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_largeobject_metadata),
		coalesce((SELECT string_agg(sequencename || '=' || coalesce(last_value::text, 'unused'), ',' ORDER BY sequencename) FROM pg_sequences), '')`).Scan(&objects, &sequences); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "large objects:%d sequences:%s", objects, sequences)
	// The catalog: relations with their grants, functions, foreign
	// servers, comments and role settings.
	var catalog string
	if err := conn.QueryRow(ctx, `SELECT md5(concat_ws('|',
		(SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || coalesce(c.relacl::text, ''), ',' ORDER BY c.relname)
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')),
		(SELECT string_agg(p.proname, ',' ORDER BY p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'),
		(SELECT string_agg(srvname, ',' ORDER BY srvname) FROM pg_foreign_server),
		(SELECT string_agg(description, ',' ORDER BY description) FROM pg_description WHERE objoid >= 16384),
		(SELECT string_agg(setconfig::text, ',' ORDER BY setconfig::text) FROM pg_db_role_setting)))`).Scan(&catalog); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, " catalog:%s", catalog)
	return b.String()
}

// sqliteFixture writes the fixture to a new SQLite file.
func sqliteFixture(t testing.TB) string {
	t.Helper()
	return sqliteFixtureWith(t, "")
}

// sqliteFixtureWith writes the fixture, then runs extra DDL.
func sqliteFixtureWith(t testing.TB, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.sqlite")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(fixtureDDL + fmt.Sprintf(`
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
INSERT INTO hero SELECT i, 'Hero ' || i, 'Person ' || i, i * 1.125 FROM s;
`, fixtureHeroes) + extra); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqliteState is the file's SHA-256 and its row counts.
func sqliteState(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	c, err := sqlite3.OpenFlags("file:"+path+"?mode=ro", sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tables []string
	stmt, _, err := c.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for stmt.Step() {
		tables = append(tables, stmt.ColumnText(0))
	}
	stmt.Close()
	state := hex.EncodeToString(h.Sum(nil))
	for _, table := range tables {
		stmt, _, err := c.Prepare("SELECT count(*) FROM " + sqlite3.QuoteIdentifier(table))
		if err != nil {
			t.Fatal(err)
		}
		stmt.Step()
		state += fmt.Sprintf(" %s:%d", table, stmt.ColumnInt(0))
		stmt.Close()
	}
	return state
}

func copyFile(t testing.TB, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// activeGuardConns counts the server sessions the guard holds open.
func activeGuardConns(t testing.TB, admin string) (open, inTx int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Closed connections leave pg_stat_activity a moment after the client
	// goes, so poll briefly.
	for range 50 {
		err = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state LIKE 'idle in transaction%' OR state = 'active')
			FROM pg_stat_activity WHERE application_name = 'okf-sqlguard'`).Scan(&open, &inTx)
		if err != nil {
			t.Fatal(err)
		}
		if inTx == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return open, inTx
}
