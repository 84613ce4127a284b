package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/engine"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/search"
	"github.com/okf-tools/okf/store"
	_ "github.com/okf-tools/okf/store/postgres"
)

func decode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

// TestAPIReads checks the JSON reads and their entity tags.
func TestAPIReads(t *testing.T) {
	f := newFixture(t, fixtureOptions{})

	resp, body := f.request(t, "GET", "/v1/acme/manifest", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	etag := resp.Header.Get("ETag")
	// old-margin went stale in 2020: the tag says so, beside the digest.
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `+1stale"`) {
		t.Errorf("ETag = %s", etag)
	}
	if resp.Header.Get("Content-Type") != "text/tab-separated-values; charset=utf-8" || !strings.HasPrefix(body, "# tenant: acme\n") {
		t.Errorf("manifest: %s\n%s", resp.Header.Get("Content-Type"), body)
	}
	resp, body = f.request(t, "GET", "/v1/acme/manifest", tokAcmeRead, nil, map[string]string{"If-None-Match": etag})
	wantStatus(t, resp, body, http.StatusNotModified)
	if body != "" {
		t.Errorf("a 304 has a body: %q", body)
	}
	resp, body = f.request(t, "GET", "/v1/acme/manifest?bundle=sales", tokAcmeRead, nil, map[string]string{"If-None-Match": `"0000"`})
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = f.request(t, "GET", "/v1/acme/manifest?bundle=nope", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusBadRequest)

	var snap struct {
		Tenant, Digest string
		Commit         int64
		Bundles        []string
		Concepts       int
	}
	resp, body = f.request(t, "GET", "/v1/acme/snapshot", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	decode(t, body, &snap)
	if snap.Tenant != "acme" || snap.Commit != 1 || snap.Concepts != 5 || strings.Join(snap.Bundles, " ") != "sales" || !strings.Contains(etag, snap.Digest) {
		t.Errorf("snapshot = %+v", snap)
	}

	var hits struct {
		Digest string
		Hits   []search.Result
	}
	resp, body = f.request(t, "GET", "/v1/acme/search?q=active+customer&k=1&expand=false", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	decode(t, body, &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].ID != "knowledge/active-customer" || hits.Hits[0].Expanded || hits.Hits[0].Score <= 0 {
		t.Errorf("search = %+v", hits)
	}
	resp, body = f.request(t, "GET", "/v1/acme/search?q=x&k=lots", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusBadRequest)
	mustContain(t, "bad k", body, `k=\"lots\" is not a whole number`)

	var got struct {
		Slices  []readmodel.Slice
		Missing []string
		Errors  []engine.Problem
	}
	resp, body = f.request(t, "GET", "/v1/acme/get?id=tables/orders&id=nope&section=schema", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	decode(t, body, &got)
	if len(got.Slices) != 1 || got.Slices[0].Ref != "sales/tables/orders" || got.Slices[0].Section != "schema" ||
		!strings.Contains(got.Slices[0].Text, "| grossamt | numeric |") || strings.Join(got.Missing, " ") != "nope" || len(got.Errors) != 0 {
		t.Errorf("get = %+v", got)
	}

	var pack struct {
		Text   string
		Tokens int
		Rules  []string
	}
	resp, body = f.request(t, "GET", "/v1/acme/context?q="+url.QueryEscape("active customers")+"&budget=500", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	decode(t, body, &pack)
	if pack.Tokens == 0 || pack.Tokens > 500 || !strings.Contains(strings.Join(pack.Rules, " "), "active-customer") {
		t.Errorf("context = %+v", pack)
	}

	resp, body = f.request(t, "GET", "/v1/acme/databases", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	if strings.TrimSpace(body) != `{"databases":[{"name":"shop","engine":"sqlite","bundle":"sales"}]}` {
		t.Errorf("databases = %s", body)
	}

	resp, body = f.request(t, "POST", "/v1/acme/sql", tokAcmeRead, strings.NewReader(`{"database":"shop","sql":"SELECT count(*) AS n FROM orders WHERE custref < 100"}`), nil)
	wantStatus(t, resp, body, http.StatusOK)
	mustContain(t, "sql", body, `"rows":[[3]]`, `"text":"n\n3\n(1 row)"`)
	resp, body = f.request(t, "POST", "/v1/acme/sql", tokAcmeRead, strings.NewReader(`{"database":"shop","sql":"SELECT secret_note FROM orders"}`), nil)
	wantStatus(t, resp, body, http.StatusUnprocessableEntity)
	mustContain(t, "denied column", body, `"refused":true`, `"layer":"validator"`, `{"code":"denied_column","error":"refused by the validator: `)
	resp, body = f.request(t, "POST", "/v1/acme/sql", tokAcmeRead, strings.NewReader(`{"db":"shop"}`), nil)
	wantStatus(t, resp, body, http.StatusBadRequest)
}

// TestAPIWrites checks the preconditions of writes and that the next
// search sees a write.
func TestAPIWrites(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	doc := "/v1/acme/source/sales/knowledge/churn.md"
	content := "---\ntype: Business Rule\ndescription: A customer who stopped ordering.\n---\n\n# Definition\n\nNo order in 180 days: a platypus churn.\n"

	resp, body := f.request(t, "PUT", doc, tokAcmeRead, strings.NewReader(content), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusForbidden)
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(content), nil)
	wantStatus(t, resp, body, http.StatusPreconditionRequired)

	var w struct {
		Hash, Digest string
		Commit       int64
		Changed      bool
		Diagnostics  []string
	}
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(content), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusCreated)
	decode(t, body, &w)
	if w.Hash != store.Hash([]byte(content)) || w.Commit != 2 || !w.Changed || resp.Header.Get("ETag") != `"`+w.Hash+`"` {
		t.Errorf("create = %+v, ETag %s", w, resp.Header.Get("ETag"))
	}
	first := w.Hash

	// The next search sees the new concept, over the API and over MCP.
	var hits struct{ Hits []search.Result }
	_, body = f.request(t, "GET", "/v1/acme/search?q=platypus", tokAcmeRead, nil, nil)
	decode(t, body, &hits)
	if len(hits.Hits) == 0 || hits.Hits[0].ID != "knowledge/churn" {
		t.Errorf("search after the write = %s", body)
	}
	out, _ := call(t, f.mcpSession(t, tokAcmeRead), "search", map[string]any{"query": "platypus"})
	mustContain(t, "MCP search after the write", out, "knowledge/churn\tsales\t")

	// Creating again, or replacing with a stale hash, fails with the current hash.
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(content), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusPreconditionFailed)
	mustContain(t, "412 body", body, `"current":"`+first+`"`)
	stale := `"` + strings.Repeat("0", 64) + `"`
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(content+"More.\n"), map[string]string{"If-Match": stale})
	wantStatus(t, resp, body, http.StatusPreconditionFailed)
	if resp.Header.Get("ETag") != `"`+first+`"` {
		t.Errorf("412 ETag = %s, want the current hash", resp.Header.Get("ETag"))
	}
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(content), map[string]string{"If-Match": "W/" + stale})
	wantStatus(t, resp, body, http.StatusBadRequest)

	// Read, then replace with the hash read.
	resp, body = f.request(t, "GET", doc, tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	if body != content || resp.Header.Get("ETag") != `"`+first+`"` {
		t.Errorf("source = %q, ETag %s", body, resp.Header.Get("ETag"))
	}
	resp, body = f.request(t, "PUT", doc, tokAcmeWrite, strings.NewReader(strings.Replace(content, "platypus", "wombat", 1)),
		map[string]string{"If-Match": resp.Header.Get("ETag")})
	wantStatus(t, resp, body, http.StatusOK)
	decode(t, body, &w)
	if w.Commit != 3 {
		t.Errorf("replace = %+v", w)
	}
	_, body = f.request(t, "GET", "/v1/acme/search?q=platypus", tokAcmeRead, nil, nil)
	mustNotContain(t, "search for the replaced word", body, "knowledge/churn")

	// A document without frontmatter compiles, with a diagnostic.
	resp, body = f.request(t, "PUT", "/v1/acme/source/sales/notes/plain.md", tokAcmeWrite, strings.NewReader("# Plain\n\nJust text.\n"),
		map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusCreated)
	mustContain(t, "diagnostics", body, "no frontmatter, compiled as plain markdown")

	var list struct {
		Commit    int64
		Documents []documentJSON
	}
	_, body = f.request(t, "GET", "/v1/acme/source", tokAcmeRead, nil, nil)
	decode(t, body, &list)
	if list.Commit != 4 || len(list.Documents) != 7 {
		t.Errorf("source listing = %+v", list)
	}

	// Deletes need a precondition too.
	resp, body = f.request(t, "DELETE", doc, tokAcmeWrite, nil, nil)
	wantStatus(t, resp, body, http.StatusPreconditionRequired)
	resp, body = f.request(t, "DELETE", doc, tokAcmeWrite, nil, map[string]string{"If-Match": "*"})
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = f.request(t, "GET", doc, tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusNotFound)
	resp, body = f.request(t, "DELETE", doc, tokAcmeWrite, nil, map[string]string{"If-Match": "*"})
	wantStatus(t, resp, body, http.StatusPreconditionFailed)
	out, _ = call(t, f.mcpSession(t, tokAcmeRead), "get", map[string]any{"ids": []string{"knowledge/churn"}})
	if out != "@@ missing knowledge/churn\n" {
		t.Errorf("get after the delete = %q", out)
	}
}

// TestIfMatchStarUnderConcurrentWriters: If-Match: * means "the document
// exists", whatever its hash while other writers change it: every one of
// many concurrent replacements succeeds. On a missing document it is 412.
func TestIfMatchStarUnderConcurrentWriters(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000})
	const writers, writes = 8, 6
	doc := "/v1/acme/source/sales/knowledge/active-customer.md"
	var wg sync.WaitGroup
	statuses := make(chan string, writers*writes)
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				content := fmt.Sprintf("---\ntype: Business Rule\ndescription: Version %d of writer %d.\n---\n", i, w)
				req, _ := http.NewRequest("PUT", f.http.URL+doc, strings.NewReader(content))
				req.Header.Set("Authorization", "Bearer "+tokAcmeWrite)
				req.Header.Set("If-Match", "*")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					statuses <- err.Error()
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				statuses <- fmt.Sprintf("%d %s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if !strings.HasPrefix(st, "200 ") {
			t.Errorf("a replacement with If-Match: * answered %s", st)
		}
	}
	missing := "/v1/acme/source/sales/knowledge/never-written.md"
	resp, body := f.request(t, "PUT", missing, tokAcmeWrite, strings.NewReader("x"), map[string]string{"If-Match": "*"})
	wantStatus(t, resp, body, http.StatusPreconditionFailed)
	mustContain(t, "412 body", body, `"current":null`)
	resp, body = f.request(t, "GET", missing, tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusNotFound)
}

// TestAPIErrorsAreJSON: unknown routes and wrong methods are answered in
// the API's JSON error shape, like every other error.
func TestAPIErrorsAreJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct {
		method, path string
		status       int
		allow, msg   string
	}{
		{"GET", "/v1/acme/nope", http.StatusNotFound, "", "no route /v1/acme/nope"},
		{"GET", "/nowhere", http.StatusNotFound, "", "the API is under /v1/{tenant}/"},
		{"POST", "/v1/acme/manifest", http.StatusMethodNotAllowed, "GET, HEAD", "POST /v1/acme/manifest: this route takes GET, HEAD"},
		{"GET", "/v1/acme/sql", http.StatusMethodNotAllowed, "POST", "this route takes POST"},
		{"PATCH", "/v1/acme/source/sales/tables/orders.md", http.StatusMethodNotAllowed, "GET, PUT, DELETE, HEAD", "this route takes GET, PUT, DELETE, HEAD"},
	} {
		resp, body := f.request(t, tc.method, tc.path, tokAcmeRead, nil, nil)
		wantStatus(t, resp, body, tc.status)
		var e map[string]string
		decode(t, body, &e)
		if resp.Header.Get("Content-Type") != "application/json" || len(e) != 1 || !strings.Contains(e["error"], tc.msg) || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %s %q, Allow %q", tc.method, tc.path, resp.Header.Get("Content-Type"), body, resp.Header.Get("Allow"))
		}
	}
}

// TestFolderIsReadOnly checks that a server reading a folder refuses
// writes with 409.
func TestFolderIsReadOnly(t *testing.T) {
	lib, _ := engine.NewFolderLibrary("acme", nil)
	g, err := NewGrant("w", "acme", true, tokAcmeWrite)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Library: lib, Grants: []Grant{g}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv}
	f.http = newLoopbackServer(t, srv)
	resp, body := f.request(t, "PUT", "/v1/acme/source/b/x.md", tokAcmeWrite, strings.NewReader("x"), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusConflict)
	resp, body = f.request(t, "GET", "/v1/acme/manifest", tokAcmeWrite, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	if body != "# tenant: acme\n# bundles: \nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n" {
		t.Errorf("empty manifest = %q", body)
	}
}

// TestSharedPostgresStore: two servers on one PostgreSQL store, as a team
// would run them. A write through one is seen by the next read through the
// other, which compiles the new commit itself.
func TestSharedPostgresStore(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	var servers []*fixture
	for range 2 {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		g, err := NewGrant("editor", "acme", true, tokAcmeWrite)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(Options{Library: engine.NewStoreLibrary(st), Grants: []Grant{g}})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, &fixture{st: st, srv: srv, http: newLoopbackServer(t, srv)})
	}
	if _, err := servers[0].st.Sync(ctx, "acme", acmeDocs, "fixture"); err != nil {
		t.Fatal(err)
	}
	a, b := servers[0], servers[1]
	resp, body := b.request(t, "GET", "/v1/acme/search?q=kangaroo", tokAcmeWrite, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	mustNotContain(t, "search before the write", body, "knowledge/kangaroo")
	etag := resp.Header.Get("ETag")

	resp, body = a.request(t, "PUT", "/v1/acme/source/sales/knowledge/kangaroo.md", tokAcmeWrite,
		strings.NewReader("---\ntype: Business Rule\ndescription: Kangaroo orders ship by hopping.\n---\nRule.\n"), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusCreated)

	resp, body = b.request(t, "GET", "/v1/acme/search?q=kangaroo", tokAcmeWrite, nil, map[string]string{"If-None-Match": etag})
	wantStatus(t, resp, body, http.StatusOK)
	mustContain(t, "the other server's search after the write", body, `"id":"knowledge/kangaroo"`)
	if resp.Header.Get("ETag") == etag {
		t.Error("the ETag did not change with the write")
	}
}
