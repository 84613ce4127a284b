package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestMain(m *testing.M) { Main(m) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, ctx context.Context, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestSharedServerVersion(t *testing.T) {
	c := Shared(t)
	if c != Shared(t) {
		t.Fatal("Shared returned a different cluster on the second call")
	}
	if want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port); c.DSN("postgres") != want {
		t.Fatalf("DSN = %q, want %q", c.DSN("postgres"), want)
	}
	ctx := testContext(t)
	conn := connect(t, ctx, c.DSN("postgres"))
	var ok bool
	if err := conn.QueryRow(ctx, "select current_setting('server_version_num')::int >= 150000").Scan(&ok); err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatal("server_version_num < 150000")
	}
	var fsync, user string
	if err := conn.QueryRow(ctx, "select current_setting('fsync'), current_user").Scan(&fsync, &user); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" || user != "postgres" {
		t.Fatalf("fsync = %q, current_user = %q; want off, postgres", fsync, user)
	}
}

func TestCreateDatabaseRoundTrip(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	dsn, err := c.CreateDatabase(ctx, "roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	if dsn != c.DSN("roundtrip") {
		t.Fatalf("CreateDatabase returned %q, want %q", dsn, c.DSN("roundtrip"))
	}
	conn := connect(t, ctx, dsn)
	var db string
	if err := conn.QueryRow(ctx, "select current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if db != "roundtrip" {
		t.Fatalf("current_database() = %q", db)
	}
	if _, err := conn.Exec(ctx, "create table notes (id int primary key, body text not null)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "insert into notes values ($1, $2)", 7, "héllo wörld"); err != nil {
		t.Fatal(err)
	}
	var id int
	var body string
	if err := conn.QueryRow(ctx, "select id, body from notes").Scan(&id, &body); err != nil {
		t.Fatal(err)
	}
	if id != 7 || body != "héllo wörld" {
		t.Fatalf("read back (%d, %q)", id, body)
	}

	if _, err := c.CreateDatabase(ctx, "roundtrip"); err == nil {
		t.Fatal("creating the same database twice succeeded")
	}
}

func TestCreateDatabaseIsolation(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	// The second name needs quoting both in SQL and in the URL.
	names := []string{"iso_a", `Iso "B"; drop database postgres; --`}
	var conns []*pgx.Conn
	for _, name := range names {
		dsn, err := c.CreateDatabase(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		conn := connect(t, ctx, dsn)
		var db string
		if err := conn.QueryRow(ctx, "select current_database()").Scan(&db); err != nil {
			t.Fatal(err)
		}
		if db != name {
			t.Fatalf("connected to %q, want %q", db, name)
		}
		conns = append(conns, conn)
	}
	if _, err := conns[0].Exec(ctx, "create table only_in_a (x int); insert into only_in_a values (1)"); err != nil {
		t.Fatal(err)
	}
	var inA, inB bool
	if err := conns[0].QueryRow(ctx, "select to_regclass('only_in_a') is not null").Scan(&inA); err != nil {
		t.Fatal(err)
	}
	if err := conns[1].QueryRow(ctx, "select to_regclass('only_in_a') is not null").Scan(&inB); err != nil {
		t.Fatal(err)
	}
	if !inA || inB {
		t.Fatalf("table visible in a: %v, in b: %v; want true, false", inA, inB)
	}

	dsn := c.NewDatabase(t)
	conn := connect(t, ctx, dsn)
	var db string
	if err := conn.QueryRow(ctx, "select current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(db, "t") || !strings.HasSuffix(db, "_testcreatedatabaseisolation") {
		t.Fatalf("NewDatabase created %q, want t<N>_testcreatedatabaseisolation", db)
	}
}

func TestStartStop(t *testing.T) {
	Shared(t) // skips or fails like every other test when PostgreSQL is missing
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			c.Stop()
		}
	})
	if c.Port == Shared(t).Port {
		t.Fatalf("second cluster got the shared cluster's port %d", c.Port)
	}
	if fi, err := os.Stat(c.Root); err != nil || !fi.IsDir() {
		t.Fatalf("root %s: %v", c.Root, err)
	}
	if _, err := os.Stat(filepath.Join(c.Root, ".s.PGSQL."+strconv.Itoa(c.Port))); err != nil {
		t.Fatalf("unix socket not in root: %v", err)
	}
	ctx := testContext(t)
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	conn.Close(ctx)

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if _, err := os.Stat(c.Root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("root %s still there after Stop (stat: %v)", c.Root, err)
	}
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	if nc, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		nc.Close()
		t.Fatalf("%s still accepts connections after Stop", addr)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	live.Lock()
	_, tracked := live.m[c]
	live.Unlock()
	if tracked {
		t.Fatal("stopped cluster still tracked as live")
	}
}

func TestFindBinaries(t *testing.T) {
	lib := t.TempDir()
	mk := func(dir string, progs ...string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	mk(filepath.Join(lib, "9.6", "bin"), "initdb", "pg_ctl")
	want := mk(filepath.Join(lib, "15", "bin"), "initdb", "pg_ctl")
	mk(filepath.Join(lib, "10", "bin"), "initdb", "pg_ctl")
	mk(filepath.Join(lib, "16", "bin"), "psql", "pg_ctl") // client-only package
	noPath := func(string) (string, error) { return "", errors.New("not on PATH") }

	b, err := findBinaries("", lib, noPath)
	if err != nil {
		t.Fatal(err)
	}
	if b.InitDB != filepath.Join(want, "initdb") || b.PGCtl != filepath.Join(want, "pg_ctl") {
		t.Fatalf("found %+v, want the ones in %s", b, want)
	}

	// The override is used alone, even when it is worse.
	old := filepath.Join(lib, "9.6", "bin")
	if b, err := findBinaries(old, lib, noPath); err != nil || b.InitDB != filepath.Join(old, "initdb") {
		t.Fatalf("override: %+v, %v", b, err)
	}
	if _, err := findBinaries(filepath.Join(lib, "nope"), lib, noPath); !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("missing override: err = %v, want ErrNoBinaries", err)
	}

	// PATH is the last resort.
	onPath := func(name string) (string, error) { return "/opt/pg/bin/" + name, nil }
	if b, err := findBinaries("", filepath.Join(lib, "absent"), onPath); err != nil || b.PGCtl != "/opt/pg/bin/pg_ctl" {
		t.Fatalf("PATH fallback: %+v, %v", b, err)
	}
	if _, err := findBinaries("", filepath.Join(lib, "absent"), noPath); !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("nothing anywhere: err = %v, want ErrNoBinaries", err)
	}
}

func TestCompareVersions(t *testing.T) {
	vs := []string{"9.6", "15", "10", "16beta1", "16", "9.10", "14"}
	sortVersionsDesc(vs)
	want := []string{"16beta1", "16", "15", "14", "10", "9.10", "9.6"}
	if fmt.Sprint(vs) != fmt.Sprint(want) {
		t.Fatalf("sorted %v, want %v", vs, want)
	}
}
