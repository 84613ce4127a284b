package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/serve/oauth"
	"github.com/okf-tools/okf/serve/oauth/oauthtest"
	"github.com/okf-tools/okf/sqlguard"
)

// TestCallersPolicies: two callers held to one policy, each with its own
// customer from its sign-in, and a token held to none, on one server over
// the JSON API and MCP: each caller reads only its customer's orders, with
// the amounts masked, in 1,000 mixed calls that try to widen the policy
// through SQL, tool arguments and headers; the token without a policy
// reads everything.
func TestCallersPolicies(t *testing.T) {
	is := oauthtest.Start(t)
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audience: oauthResource})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{rate: 1e6, burst: 1e6, options: func(o *Options) {
		o.OAuth = &OAuth{Verifier: v, Tenant: "acme", CallerClaims: map[string]string{"cust": "cust"}}
		o.Policies = map[string]*engine.Policy{"customer": {Name: "customer", Databases: []string{"shop"},
			MaskedColumns: []string{"orders.grossamt"}, RowFilters: map[string]string{"orders": "custref = CAST(:caller.cust AS INTEGER)"}}}
	}})
	token := func(cust string) string {
		return accessToken(t, is, map[string]any{"sub": "user-" + cust, "okf_policy": "customer", "cust": cust}, oauthtest.Token{})
	}
	callers := []struct {
		token  string
		orders []string
	}{{token("10"), []string{"1", "3"}}, {token("11"), []string{"2"}}}

	widen := []string{
		"SELECT ordid, grossamt FROM orders ORDER BY ordid",
		"SELECT ordid, grossamt FROM orders WHERE 1 = 1 OR custref <> 0 ORDER BY ordid",
		"SELECT o.ordid, o.grossamt FROM orders AS o ORDER BY 1",
		"WITH x AS (SELECT ordid, grossamt FROM orders) SELECT ordid, grossamt FROM x ORDER BY ordid",
		"SELECT ordid, grossamt FROM (SELECT ordid, grossamt, custref FROM orders) s ORDER BY ordid",
		"SELECT ordid, grossamt FROM orders UNION SELECT ordid, grossamt FROM orders ORDER BY 1",
		"SELECT ordid, max(grossamt) FROM orders GROUP BY ordid ORDER BY ordid",
	}
	mcp := []func(sql string) (string, bool){}
	for _, c := range callers {
		cs := f.mcpSession(t, c.token)
		mcp = append(mcp, func(sql string) (string, bool) {
			return call(t, cs, "run_sql", map[string]any{"database": "shop", "sql": sql})
		})
	}
	shownOrders := func(text string) []string {
		var ids []string
		for _, line := range strings.Split(text, "\n") {
			if id, rest, ok := strings.Cut(line, " | "); ok && id != "" && strings.Trim(id, "0123456789") == "" {
				ids = append(ids, id)
				if strings.TrimSpace(rest) != sqlguard.Mask && strings.TrimSpace(rest) != "" {
					ids = append(ids, "unmasked:"+rest)
				}
			}
		}
		return ids
	}
	for i := 0; i < 1000; i++ {
		who := callers[i%2]
		sql := widen[(i/2)%len(widen)]
		var text string
		if i%4 < 2 {
			body := fmt.Sprintf(`{"database": "shop", "sql": %q, "caller": {"cust": "10"}}`, sql)
			resp, out := f.request(t, "POST", "/v1/acme/sql", who.token, strings.NewReader(body), map[string]string{"Content-Type": "application/json", "X-Okf-Policy": "", "X-Caller-Cust": "11"})
			if resp.StatusCode != http.StatusOK {
				// An unknown field is refused: it widens nothing.
				if i < 4 && !strings.Contains(out, "caller") {
					t.Fatalf("API: %d %s", resp.StatusCode, out)
				}
				body = fmt.Sprintf(`{"database": "shop", "sql": %q}`, sql)
				resp, out = f.request(t, "POST", "/v1/acme/sql", who.token, strings.NewReader(body), map[string]string{"Content-Type": "application/json", "X-Caller-Cust": "11"})
				wantStatus(t, resp, out, http.StatusOK)
			}
			var res struct {
				Text          string
				MaskedColumns []string `json:"masked_columns"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			text = res.Text
			if !slices.Equal(res.MaskedColumns, []string{"grossamt"}) && !strings.Contains(sql, "max(") {
				t.Fatalf("API: masked columns %v", res.MaskedColumns)
			}
		} else {
			var isErr bool
			text, isErr = mcp[i%2](sql)
			if isErr {
				t.Fatalf("MCP %s: %s", sql, text)
			}
		}
		if got := slices.Compact(shownOrders(text)); !slices.Equal(got, who.orders) {
			t.Fatalf("call %d (%s): caller of orders %v saw %v:\n%s", i, sql, who.orders, got, text)
		}
	}
	// A setting cannot change whose rows are read.
	if text, isErr := mcp[0]("SELECT set_config('okf.cust', '11', false)"); !isErr {
		t.Errorf("set_config ran: %s", text)
	}
	// list_databases shows the caller's databases only; the token held
	// to no policy reads every order.
	if text, _ := call(t, f.mcpSession(t, callers[0].token), "list_databases", nil); !strings.Contains(text, "shop") || strings.Contains(text, "vault") {
		t.Errorf("list_databases: %s", text)
	}
	resp, out := f.request(t, "POST", "/v1/acme/sql", tokAcmeRead, strings.NewReader(`{"database": "shop", "sql": "SELECT count(*) FROM orders"}`), map[string]string{"Content-Type": "application/json"})
	wantStatus(t, resp, out, http.StatusOK)
	mustContain(t, "a token without a policy", out, "1500")
}
