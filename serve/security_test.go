package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/sqlshapes"
	"github.com/okf-tools/okf/sqlguard"
)

// TestSessionBoundToToken: an MCP session opened with one token cannot be
// used with another.
func TestSessionBoundToToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, body := f.request(t, "POST", "/mcp", tokAcmeRead, strings.NewReader(init), h)
	wantStatus(t, resp, body, http.StatusOK)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	h["Mcp-Session-Id"] = session
	h["Mcp-Protocol-Version"] = "2025-06-18"
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"manifest","arguments":{}}}`
	resp, body = f.request(t, "POST", "/mcp", tokGlobexRead, strings.NewReader(call), h)
	if resp.StatusCode == http.StatusOK || strings.Contains(body, "tables/orders") {
		t.Errorf("globex's token used acme's session: %d %s", resp.StatusCode, body)
	}
}

// TestWriteNeedsWriteGrant: a read token cannot write or delete.
func TestWriteNeedsWriteGrant(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, method := range []string{"PUT", "DELETE"} {
		resp, body := f.request(t, method, "/v1/acme/source/sales/tables/orders.md", tokAcmeRead, strings.NewReader("x"), map[string]string{"If-Match": "*"})
		wantStatus(t, resp, body, http.StatusForbidden)
	}
}

// TestRequestLimits: an oversized body, over the API, over MCP, with and
// without a length, and over stdio; and the rate limit.
func TestRequestLimits(t *testing.T) {
	f := newFixture(t, fixtureOptions{maxBytes: 64 << 10, rate: 1, burst: 3})
	big := strings.Repeat("x", 100<<10)
	resp, body := f.request(t, "PUT", "/v1/acme/source/sales/big.md", tokAcmeWrite, strings.NewReader(big), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusRequestEntityTooLarge)
	// No Content-Length: the limit holds while reading.
	resp, body = f.request(t, "PUT", "/v1/acme/source/sales/big.md", tokAcmeWrite, io.MultiReader(strings.NewReader(big)), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusRequestEntityTooLarge)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	resp, body = f.request(t, "POST", "/mcp", tokGlobexRead, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+big+`"}}`), h)
	wantStatus(t, resp, body, http.StatusRequestEntityTooLarge)

	// acme-editor has made 2 requests: one more passes, then it is limited;
	// other tokens are not.
	resp, body = f.request(t, "GET", "/v1/acme/snapshot", tokAcmeWrite, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = f.request(t, "GET", "/v1/acme/snapshot", tokAcmeWrite, nil, nil)
	wantStatus(t, resp, body, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	resp, body = f.request(t, "GET", "/v1/acme/snapshot", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)

	// Over stdio, a message longer than the limit is answered with an
	// error and skipped; the session goes on to the end of the input.
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + big + `"}}` + "\n")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.srv.ServeStdio(ctx, "acme", in, &out); err != nil || !strings.Contains(out.String(), `"code":-32600`) || !strings.Contains(out.String(), "it was skipped") {
		t.Errorf("stdio with an oversized message: %v; answered %q", err, out.String())
	}
}

// TestPathTraversal: source paths that climb out of the bundle or tenant.
func TestPathTraversal(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, path := range []string{
		"/v1/acme/source/sales/..%2F..%2F..%2Fglobex%2Fsource%2Fvault%2Fknowledge%2Fzanzibar-protocol.md",
		"/v1/acme/source/sales/%2e%2e/%2e%2e/globex/source/vault/knowledge/zanzibar-protocol.md",
		"/v1/acme/source/sales/../../globex/source/vault/knowledge/zanzibar-protocol.md",
		"/v1/acme/source/sales/%2Fetc%2Fpasswd",
		"/v1/acme/source/..%2Fglobex/x.md",
		"/v1/acme/get?id=..%2F..%2Fglobex%2Fvault%2Fknowledge%2Fzanzibar-protocol&id=%2Fetc%2Fpasswd",
	} {
		resp, body := f.request(t, "GET", path, tokAcmeRead, nil, nil)
		if resp.StatusCode == http.StatusOK && !strings.Contains(path, "/get?") {
			t.Errorf("%s: 200 %s", path, body)
		}
		mustNotContain(t, path, body, "quokka", "root:")
	}
	resp, body := f.request(t, "PUT", "/v1/acme/source/sales/..%2F..%2Fescape.md", tokAcmeWrite, strings.NewReader("x"), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusBadRequest)
	mustContain(t, "traversal write", body, "starts with a dot")
}

// attacks is the guard's attack suite, sent through run_sql over the wire.
// What each would do unguarded is in sqlguard's own attack test.
var attacks = []struct{ name, sql string }{
	{"write", "DELETE FROM orders"},
	{"DDL", "DROP TABLE orders"},
	{"two statements", "SELECT 1; DELETE FROM orders"},
	{"write hidden in a CTE", "WITH d AS (DELETE FROM orders RETURNING ordid) SELECT count(*) FROM d"},
	{"SELECT INTO", "SELECT * INTO stolen FROM orders"},
	{"COPY from a server file", "COPY orders FROM '/etc/hostname'"},
	{"ATTACH", "ATTACH DATABASE ':memory:' AS scratch"},
	{"PRAGMA that writes", "PRAGMA user_version = 7"},
	{"PRAGMA that switches a layer off", "PRAGMA query_only = 0"},
	{"SET", "SET statement_timeout = '1h'"},
	{"set_config", "SELECT set_config('statement_timeout', '1h', false)"},
	{"pg_read_file", "SELECT pg_read_file('/etc/passwd')"},
	{"lo_import", "SELECT lo_import('/etc/passwd')"},
	{"dblink", "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)"},
	{"pg_sleep", "SELECT pg_sleep(30)"},
	{"advisory lock", "SELECT pg_advisory_lock(42)"},
	{"denied column", "SELECT ordid, secret_note FROM orders"},
	{"denied column through *", "SELECT * FROM orders"},
	{"catalogs", "SELECT rolname, rolpassword FROM pg_authid"},
	{"sqlite catalog", "SELECT name, sql FROM sqlite_schema"},
	{"very long SQL", "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)},
	{"invalid UTF-8", "SELECT 1 /* \xff\xfe */; DELETE FROM orders"},
	{"runaway cross join", "SELECT a.ordid, b.ordid, c.ordid FROM orders a, orders b, orders c"},
}

// runAttacks sends every attack through run_sql and checks that each is
// refused (a runaway may instead come back cut short) and that the
// database is unchanged.
func runAttacks(t *testing.T, f *fixture, database string, state func() string) {
	t.Helper()
	before := state()
	cs := f.mcpSession(t, tokAcmeRead)
	for _, a := range attacks {
		out, isErr := call(t, cs, "run_sql", map[string]any{"database": database, "sql": a.sql})
		stoppedShort := strings.Contains(out, "of more than")
		if !isErr && !(a.name == "runaway cross join" && stoppedShort) {
			t.Errorf("%s on %s: not stopped:\n%.300s", a.name, database, out)
		}
		mustNotContain(t, a.name, out, "root:x:0", "note 1", "vip")
	}
	if after := state(); after != before {
		t.Errorf("the attacks changed %s:\nbefore %s\nafter  %s", database, before, after)
	}
	out, isErr := call(t, cs, "run_sql", map[string]any{"database": database, "sql": "SELECT count(*) AS n FROM orders"})
	if isErr {
		t.Errorf("%s after the attacks: %s", database, out)
	}
}

// TestAttacksOverMCPSQLite runs the attack suite on acme's SQLite file.
func TestAttacksOverMCPSQLite(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	runAttacks(t, f, "shop", func() string {
		data, err := os.ReadFile(f.acmeDB)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	})
}

// TestAttacksOverMCPPostgres runs the attack suite on a PostgreSQL
// database of acme's, queried as a role prepared by the guard.
func TestAttacksOverMCPPostgres(t *testing.T) {
	admin, agent := pgDatabase(t)
	f := newFixture(t, fixtureOptions{extraDBs: []engine.Database{{Name: "pgshop", Tenant: "acme", DSN: agent,
		Guard: sqlguard.Options{DeniedColumns: []string{"orders.secret_note"}, Timeout: time.Second}}}})
	ctx := context.Background()
	runAttacks(t, f, "pgshop", func() string {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var state string
		err = conn.QueryRow(ctx, `SELECT (SELECT count(*) || ':' || md5(string_agg(o::text, ',' ORDER BY ordid)) FROM orders o)
			|| ' ' || (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public')
			|| ' ' || (SELECT count(*) FROM pg_largeobject_metadata)
			|| ' ' || (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory')`).Scan(&state)
		if err != nil {
			t.Fatal(err)
		}
		return state
	})
}

// TestCheckAddr: loopback listens without TLS, anything else needs it.
func TestCheckAddr(t *testing.T) {
	ctx := context.Background()
	for _, addr := range []string{"127.0.0.1:7777", "127.0.0.2:0", "[::1]:7777", "localhost:0"} {
		if err := CheckAddr(ctx, addr, false); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{":7777", "0.0.0.0:7777", "[::]:7777", "10.1.2.3:80", "192.168.1.1:7777", "7777"} {
		if err := CheckAddr(ctx, addr, false); err == nil {
			t.Errorf("%s: listening without TLS was allowed", addr)
		}
	}
	if err := CheckAddr(ctx, "0.0.0.0:7777", true); err != nil {
		t.Errorf("with TLS: %v", err)
	}
}

// TestHugeQueries: queries of every hostile shape, at the largest size the
// guard accepts and at 1 MB, over MCP and the JSON API, each answered with
// an error or a result while the server goes on serving.
func TestHugeQueries(t *testing.T) {
	f := newFixture(t, fixtureOptions{maxBytes: 4 << 20, extraDBs: []engine.Database{{Name: "big", Tenant: "acme", DSN: "sqlite:" + shopDB(t, t.TempDir()),
		Guard: sqlguard.Options{MaxSQLBytes: sqlguard.MaxSQLBytesLimit}}}})
	cs := f.mcpSession(t, tokAcmeRead)
	for _, s := range sqlshapes.Shapes {
		for _, size := range []int{sqlguard.MaxSQLBytesLimit - 64, 1_000_000} {
			sql := s.Text(size)
			out, _ := call(t, cs, "run_sql", map[string]any{"database": "big", "sql": sql})
			if out == "" {
				t.Errorf("%s at %d bytes over MCP: no answer", s.Name, size)
			}
			body, err := json.Marshal(map[string]string{"database": "big", "sql": sql})
			if err != nil {
				t.Fatal(err)
			}
			resp, text := f.request(t, "POST", "/v1/acme/sql", tokAcmeRead, bytes.NewReader(body), nil)
			if resp.StatusCode >= 500 {
				t.Errorf("%s at %d bytes over HTTP: %d %.200s", s.Name, size, resp.StatusCode, text)
			}
		}
	}
	if out, isErr := call(t, cs, "run_sql", map[string]any{"database": "big", "sql": "SELECT count(*) AS n FROM orders"}); isErr {
		t.Errorf("after the huge queries: %s", out)
	}
}
