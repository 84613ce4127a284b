package serve

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/engine"
)

// TestAPIQueries: a query concept written to acme's bundle becomes a
// verified query of acme only: listed by the API, run by it with values
// checked and bound, and a tool of the next MCP session.
func TestAPIQueries(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	before := toolList(t, f, tokAcmeRead)
	query := "---\ntype: SQL Query\ntitle: Big orders\ndescription: Orders of at least an amount.\nparameters:\n  - {name: least, type: number, min: 0}\nstatus: stable\n---\n\n# SQL\n\n```sql\nSELECT count(*) AS n FROM orders WHERE grossamt >= :least\n```\n"
	resp, body := f.request(t, "PUT", "/v1/acme/source/sales/queries/big-orders.md", tokAcmeWrite, strings.NewReader(query), map[string]string{"If-None-Match": "*"})
	wantStatus(t, resp, body, http.StatusCreated)

	resp, body = f.request(t, "GET", "/v1/acme/queries", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	var list struct{ Queries []engine.QueryInfo }
	decode(t, body, &list)
	if len(list.Queries) != 1 || list.Queries[0].ID != "sales/queries/big-orders" || list.Queries[0].Tool != "big_orders" || list.Queries[0].Database != "shop" {
		t.Errorf("queries = %s", body)
	}
	resp, body = f.request(t, "POST", "/v1/acme/queries/queries/big-orders", tokAcmeRead, strings.NewReader(`{"least": 80}`), nil)
	wantStatus(t, resp, body, http.StatusOK)
	mustContain(t, "the run", body, `"values":["least=80"]`, `"rows":[[2]]`)
	for _, bad := range []struct{ body, has string }{
		{`{"least": -1}`, "below the minimum 0"},
		{`{"least": "1; DROP TABLE orders"}`, "is not a finite number"},
		{`{"most": 1}`, `has no parameter \"most\"`},
		{`[1]`, "a JSON object of parameter values"},
	} {
		resp, body = f.request(t, "POST", "/v1/acme/queries/queries/big-orders", tokAcmeRead, strings.NewReader(bad.body), nil)
		wantStatus(t, resp, body, http.StatusBadRequest)
		mustContain(t, bad.body, body, bad.has)
	}
	resp, body = f.request(t, "POST", "/v1/globex/queries/queries/big-orders", tokGlobexRead, strings.NewReader(`{"least": 1}`), nil)
	wantStatus(t, resp, body, http.StatusBadRequest)
	resp, body = f.request(t, "GET", "/v1/globex/queries", tokGlobexRead, nil, nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "big") {
		t.Errorf("globex sees acme's query: %s", body)
	}

	after := toolList(t, f, tokAcmeRead)
	if want := append(slices.Clone(before), "big_orders", engine.ToolRunQuery); !slices.Equal(after, sortedCopy(want)) {
		t.Errorf("tools after the write %v, want %v", after, sortedCopy(want))
	}
	out, isErr := call(t, f.mcpSession(t, tokAcmeRead), "big_orders", map[string]any{"least": 80})
	if isErr || !strings.Contains(out, "n\n2\n(1 row)") {
		t.Errorf("big_orders over MCP: %v %s", isErr, out)
	}
}

func toolList(t *testing.T, f *fixture, token string) []string {
	t.Helper()
	res, err := f.mcpSession(t, token).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
