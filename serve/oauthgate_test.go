package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/serve/oauth"
	"github.com/okf-tools/okf/serve/oauth/oauthtest"
)

const oauthResource = "https://okf.example/mcp"

// oauthFixture is the fixture served with OAuth beside its tokens: acme
// and globex are the tenants a token's okf_tenant may name, and a token
// without one reads acme.
func oauthFixture(t *testing.T) (*fixture, *oauthtest.Issuer) {
	t.Helper()
	is := oauthtest.Start(t)
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audience: oauthResource})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{options: func(o *Options) {
		o.OAuth = &OAuth{Verifier: v, Tenant: "acme", Tenants: []string{"acme", "globex"}, CallerClaims: map[string]string{"region": "region"}}
	}})
	return f, is
}

func accessToken(t *testing.T, is *oauthtest.Issuer, more map[string]any, o oauthtest.Token) string {
	now := time.Now()
	c := map[string]any{"iss": is.URL, "aud": oauthResource, "sub": "ana", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "region": "north"}
	for k, v := range more {
		c[k] = v
	}
	return is.Mint(t, c, o)
}

// TestOAuthCallers: a caller signed in with the issuer reads the tenant its
// token names, over the API and MCP, and nothing else; okf's own tokens
// keep working beside it; every bad token gets 401 with a challenge that
// names the protected-resource metadata and why, and reaches no tool.
func TestOAuthCallers(t *testing.T) {
	f, is := oauthFixture(t)

	resp, body := f.request(t, "GET", "/.well-known/oauth-protected-resource/mcp", "", nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal([]byte(body), &meta); err != nil || meta.Resource != oauthResource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != is.URL {
		t.Fatalf("metadata %s (%v)", body, err)
	}

	acme := accessToken(t, is, nil, oauthtest.Token{})
	resp, body = f.request(t, "GET", "/v1/acme/manifest", acme, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	mustContain(t, "acme manifest", body, "orders")
	resp, body = f.request(t, "GET", "/v1/globex/manifest", acme, nil, nil)
	wantStatus(t, resp, body, http.StatusForbidden)
	globex := accessToken(t, is, map[string]any{"okf_tenant": "globex"}, oauthtest.Token{Alg: "ES256"})
	resp, body = f.request(t, "GET", "/v1/globex/manifest", globex, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = f.request(t, "PUT", "/v1/acme/source/sales/tables/x.md", acme, strings.NewReader("---\ntype: Table\n---\n"), nil)
	wantStatus(t, resp, body, http.StatusForbidden)
	resp, body = f.request(t, "GET", "/v1/acme/manifest", tokAcmeRead, nil, nil)
	wantStatus(t, resp, body, http.StatusOK)

	text, isErr := call(t, f.mcpSession(t, acme), "list_databases", nil)
	if isErr || !strings.Contains(text, "shop") || strings.Contains(text, "vault") {
		t.Errorf("list_databases for an acme caller: %q", text)
	}

	metadata := `resource_metadata="https://okf.example/.well-known/oauth-protected-resource/mcp"`
	for name, token := range map[string]string{
		"expired":        accessToken(t, is, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}, oauthtest.Token{}),
		"wrong audience": accessToken(t, is, map[string]any{"aud": "https://elsewhere.example/mcp"}, oauthtest.Token{}),
		"wrong key":      accessToken(t, is, nil, oauthtest.Token{ForeignKey: true}),
		"alg none":       accessToken(t, is, nil, oauthtest.Token{Alg: "none"}),
		"tampered":       accessToken(t, is, nil, oauthtest.Token{Tamper: true}),
		"other tenant":   accessToken(t, is, map[string]any{"okf_tenant": "initech"}, oauthtest.Token{}),
	} {
		for _, path := range []string{"/v1/acme/manifest", "/mcp"} {
			var body string
			var resp *http.Response
			if path == "/mcp" {
				resp, body = f.request(t, "POST", path, token, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_sql","arguments":{"database":"shop","sql":"SELECT 1"}}}`),
					map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
			} else {
				resp, body = f.request(t, "GET", path, token, nil, nil)
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, metadata) || !strings.Contains(challenge, `error="invalid_token"`) || strings.Contains(body, "result") {
				t.Errorf("%s at %s: status %d, challenge %q, body %s", name, path, resp.StatusCode, challenge, body)
			}
		}
	}
	resp, _ = f.request(t, "GET", "/v1/acme/manifest", "", nil, nil)
	if c := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(c, metadata) || strings.Contains(c, "invalid_token") {
		t.Errorf("no token: status %d, challenge %q", resp.StatusCode, c)
	}
}

// TestOAuthGrant: a caller's grant carries its policy and values from its
// claims, is named by its subject and tenant, and the rate limits kept
// for callers are bounded.
func TestOAuthGrant(t *testing.T) {
	is := oauthtest.Start(t)
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audience: oauthResource})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newOAuthGate(OAuth{Verifier: v, Tenants: []string{"acme"}, CallerClaims: map[string]string{"region": "region", "team": "team"}})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := g.admit(t.Context(), accessToken(t, is, map[string]any{"okf_tenant": "acme", "okf_policy": "analyst"}, oauthtest.Token{}), 1, 1)
	if err != nil || gs.Name != "oauth:ana@acme" || gs.Tenant != "acme" || gs.Policy != "analyst" || len(gs.Caller) != 1 || gs.Caller["region"] != "north" || gs.Write {
		t.Fatalf("grant %+v, %v", gs, err)
	}
	if _, err := g.admit(t.Context(), accessToken(t, is, nil, oauthtest.Token{}), 1, 1); err == nil || !strings.Contains(err.Error(), "no okf_tenant claim") {
		t.Errorf("a token naming no tenant where none is the default: %v", err)
	}
	for i := 0; i < MaxOAuthCallers+10; i++ {
		g.limiter(strings.Repeat("x", i%7)+string(rune('a'+i%26))+time.Duration(i).String(), 1, 1)
	}
	if len(g.limiters) != MaxOAuthCallers || len(g.order) != MaxOAuthCallers {
		t.Errorf("%d limiters kept, %d in order; at most %d", len(g.limiters), len(g.order), MaxOAuthCallers)
	}
	if _, err := newOAuthGate(OAuth{Verifier: v}); err == nil {
		t.Error("OAuth naming no tenant accepted")
	}
}
