package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ncruces/go-sqlite3"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/store"
	_ "github.com/okf-tools/okf/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The fixture: two tenants whose knowledge and databases must never meet.
// acme has a sales bundle (with a stale concept and a long one) and a
// SQLite database with a hidden column; globex has a vault bundle whose
// words appear nowhere in acme's, and its own database.
var (
	testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	longBody = strings.Repeat("Filler line about nothing in particular.\n", 450) + "The needle phrase sits here.\n" + strings.Repeat("More filler.\n", 100)

	acmeDocs = map[string]map[string][]byte{"sales": {
		"tables/orders.md": []byte(`---
type: PostgreSQL Table
title: orders
description: One row per order; grossamt is before discounts.
grain: [ordid]
---

# Schema

| Column | Type | Meaning |
|---|---|---|
| ordid | integer | the order |
| custref | integer | the customer, see [customers](customers.md) |
| grossamt | numeric | order value before discounts |

# Joins

* [customers](customers.md) on custref
`),
		"tables/customers.md": []byte(`---
type: PostgreSQL Table
title: customers
description: One row per customer.
grain: [custid]
---

# Schema

| Column | Type | Meaning |
|---|---|---|
| custid | integer | the customer |
| region | text | sales region |
`),
		"knowledge/active-customer.md": []byte(`---
type: Business Rule
title: Active Customer
description: A customer who ordered in the last 90 days.
---

# Definition

A customer with at least one order whose date falls in the 90 days before the reporting date.

# Columns used

* [orders](../tables/orders.md): ` + "`grossamt`" + `
`),
		"knowledge/old-margin.md": []byte(`---
type: Business Rule
title: Old Margin
description: The margin rule of 2019.
stale_after: 2020-01-01
---

# Definition

Margin is grossamt minus cost.
`),
		"notes/long.md": []byte("---\ntype: Note\ndescription: A long note.\n---\n\n" + longBody),
	}}

	globexDocs = map[string]map[string][]byte{"vault": {
		"knowledge/zanzibar-protocol.md": []byte(`---
type: Business Rule
title: Zanzibar Protocol
description: Globex's confidential escalation rule.
---

# Definition

Escalate every quokka incident to the zanzibar desk.
`),
	}}
)

// Tokens of the fixture, one per grant.
const (
	tokAcmeRead    = "acme-read-token-0123456789abcdef"
	tokAcmeWrite   = "acme-write-token-0123456789abcdef"
	tokGlobexRead  = "globex-read-token-0123456789abcdef"
	tokGlobexWrite = "globex-write-token-0123456789abcdef"
)

// fixture is a server over a store of both tenants.
type fixture struct {
	st     store.Store
	srv    *Server
	http   *httptest.Server
	acmeDB string // path of acme's SQLite database
}

type fixtureOptions struct {
	rate     float64
	burst    int
	maxBytes int64
	extraDBs []engine.Database
	// options, if set, changes the server's options before it is made.
	options func(*Options)
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	dir := t.TempDir()
	st := seedStore(t, dir)
	f := &fixture{st: st, acmeDB: shopDB(t, dir)}
	vault := sqliteDB(t, dir, "vault.sqlite", `CREATE TABLE vault (code text); INSERT INTO vault VALUES ('zanzibar-42');`)
	dbs := engine.NewDatabases(append([]engine.Database{
		{Name: "shop", Tenant: "acme", DSN: "sqlite:" + f.acmeDB, Bundle: "sales", Guard: sqlguard.Options{DeniedColumns: []string{"orders.secret_note"}, Timeout: 2 * time.Second}},
		{Name: "vault", Tenant: "globex", DSN: "sqlite:" + vault},
	}, o.extraDBs...), nil, io.Discard)
	t.Cleanup(func() { dbs.Close() })
	var grants []Grant
	for _, g := range []struct {
		name, tenant string
		write        bool
		token        string
	}{
		{"acme-reader", "acme", false, tokAcmeRead},
		{"acme-editor", "acme", true, tokAcmeWrite},
		{"globex-reader", "globex", false, tokGlobexRead},
		{"globex-editor", "globex", true, tokGlobexWrite},
	} {
		gr, err := NewGrant(g.name, g.tenant, g.write, g.token)
		if err != nil {
			t.Fatal(err)
		}
		grants = append(grants, gr)
	}
	opts := Options{
		Library: engine.NewStoreLibrary(st), Databases: dbs, Grants: grants,
		RateLimit: o.rate, Burst: o.burst, MaxRequestBytes: o.maxBytes,
		Now: func() time.Time { return testNow }, Version: "test",
	}
	if o.options != nil {
		o.options(&opts)
	}
	var err error
	f.srv, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.http = newLoopbackServer(t, f.srv)
	return f
}

// seedStore opens a store in dir holding both tenants' knowledge.
func seedStore(t *testing.T, dir string) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Sync(ctx, "acme", acmeDocs, "fixture"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sync(ctx, "globex", globexDocs, "fixture"); err != nil {
		t.Fatal(err)
	}
	return st
}

// shopDB writes acme's SQLite database: 1,500 orders with a hidden note,
// enough for a three-way cross join to run away.
func shopDB(t *testing.T, dir string) string {
	t.Helper()
	return sqliteDB(t, dir, "shop.sqlite", `CREATE TABLE orders (ordid integer PRIMARY KEY, custref integer, grossamt real, secret_note text);
INSERT INTO orders VALUES (1, 10, 120.5, 'vip'), (2, 11, 80, 'late'), (3, 10, 42, NULL);
WITH RECURSIVE s(i) AS (SELECT 4 UNION ALL SELECT i + 1 FROM s WHERE i < 1500)
INSERT INTO orders SELECT i, 100 + i % 7, 0, 'note ' || i FROM s;
CREATE TABLE carriers (name text);
INSERT INTO carriers VALUES ('ParcelCo'), ('Swift Post'), ('X' || printf('%.300c', 'x'));`)
}

func sqliteDB(t *testing.T, dir, name, ddl string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	return path
}

// bearer adds a token to every request of a client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpSession connects a Go MCP client to the fixture's /mcp with a token.
func (f *fixture) mcpSession(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{
		Endpoint:   f.http.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "okf-test"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text and whether it was an error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// request sends an API request with a token ("" for none).
func (f *fixture) request(t *testing.T, method, path, token string, body io.Reader, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(data)
}

func wantStatus(t *testing.T, resp *http.Response, body string, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q:\n%s", what, sub, s)
		}
	}
}

// pgDatabase makes a PostgreSQL database for acme with the guard's agent
// role, holding the orders table with a hidden column.
func pgDatabase(t *testing.T) (admin, agent string) {
	t.Helper()
	ctx := context.Background()
	admin = pgtest.Shared(t).NewDatabase(t)
	ddl := `CREATE TABLE orders (ordid integer PRIMARY KEY, custref integer, grossamt numeric, secret_note text);
INSERT INTO orders SELECT i, i % 7, i * 1.5, 'note ' || i FROM generate_series(1, 1500) i;
CREATE TABLE notes (body text); INSERT INTO notes VALUES ('first');`
	if err := pgExec(ctx, admin, ddl); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("okf_serve_agent_%d", time.Now().UnixNano())
	agent = strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	if _, err := sqlguard.PreparePostgres(ctx, admin, agent, sqlguard.Options{DeniedColumns: []string{"orders.secret_note"}}); err != nil {
		t.Fatal(err)
	}
	return admin, agent
}

// newLoopbackServer serves s on 127.0.0.1 for the test.
func newLoopbackServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	h := httptest.NewServer(s.Handler())
	t.Cleanup(h.Close)
	return h
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
