package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/store"
	_ "github.com/okf-tools/okf/store/postgres"
)

func decode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
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
