package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseServe(t *testing.T) {
	data := []byte(`databases:
  - {name: shop, dsn: "sqlite:shop.db"}
  - {name: vault, dsn: "sqlite:vault.db"}
serve:
  addr: 127.0.0.1:8080
  rate_limit: 20
  burst: 40
  max_request_bytes: 65536
  max_sessions_per_token: 8
  max_sessions: 100
  session_idle_timeout: 2m
  read_timeout: 5s
  shutdown_grace: 1m
  allowed_hosts: [okf.internal]
  allowed_origins: ["https://app.example.com:8443"]
  tokens:
    - name: claude
      token: ${OKF_TOKEN_CLAUDE}
      tenant: acme
    - name: pipeline
      token: ${OKF_TOKEN_PIPELINE}
      tenant: acme
      write: true
  query_tools: 4
  tenants:
    - name: acme
      databases: [shop]
      query_tools: 0
    - name: beta
`)
	cfg, err := Parse(data, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Serve
	if s.Addr != "127.0.0.1:8080" || s.RateLimit != 20 || s.Burst != 40 || s.MaxRequestBytes != 65536 || len(s.Tokens) != 2 {
		t.Fatalf("serve = %+v", s)
	}
	if s.MaxSessionsPerToken != 8 || s.MaxSessions != 100 || s.SessionIdleTimeout != Duration(2*time.Minute) || s.ReadTimeout != Duration(5*time.Second) ||
		s.ShutdownGrace != Duration(time.Minute) || len(s.AllowedHosts) != 1 || s.AllowedOrigins[0] != "https://app.example.com:8443" {
		t.Errorf("serve limits = %+v", s)
	}
	if tok := s.Tokens[1]; tok.Name != "pipeline" || !tok.Write || tok.Tenant != "acme" || tok.Line != 20 {
		t.Errorf("tokens[1] = %+v", tok)
	}
	secret, err := s.Tokens[0].Secret(env(map[string]string{"OKF_TOKEN_CLAUDE": "s3cret"}))
	if err != nil || secret != "s3cret" {
		t.Errorf("secret = %q, %v", secret, err)
	}
	if _, err := s.Tokens[1].Secret(env(nil)); err == nil || !strings.Contains(err.Error(), "OKF_TOKEN_PIPELINE is not set") {
		t.Errorf("unset secret: %v", err)
	}
	if _, err := s.Tokens[1].Secret(env(map[string]string{"OKF_TOKEN_PIPELINE": ""})); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty secret: %v", err)
	}
	// Each variable must hold part of the value, not only all of them.
	two := ServeToken{Name: "two", Token: "${OKF_A}${OKF_B}"}
	if _, err := two.Secret(env(map[string]string{"OKF_A": "okf_SECRETSECRETSECRETSECRET", "OKF_B": ""})); err == nil || !strings.Contains(err.Error(), "${OKF_B} is empty") {
		t.Errorf("a token with an empty variable: %v", err)
	}
	if a, b, other := s.ListedQueries("acme"), s.ListedQueries("beta"), (Serve{}).ListedQueries("x"); a != -1 || b != 4 || other != 0 {
		t.Errorf("listed queries: acme %d (want -1: none), beta %d (want 4), unset %d (want 0: the default)", a, b, other)
	}
	owners, err := cfg.DatabaseTenants()
	if err != nil || owners["shop"] != "acme" || owners["vault"] != DefaultTenant || len(owners) != 2 {
		t.Errorf("owners = %v, %v", owners, err)
	}
	cfg.Serve.Tenants[0].Databases = []string{"nope"}
	if _, err := cfg.DatabaseTenants(); err == nil || !strings.Contains(err.Error(), `serve.tenants[0] (acme): no database is called "nope"`) {
		t.Errorf("unknown database: %v", err)
	}
}

func TestParseServeErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"literal token", "serve:\n  tokens:\n    - {name: ci-bot, token: abc, tenant: acme}\n",
			"3: serve.tokens[0] (ci-bot): token must name an environment variable, like ${OKF_TOKEN_CI_BOT}"},
		// A token in clear followed by a variable that expands to nothing
		// still names a variable; the text around references is checked.
		{"literal token before a variable", "serve:\n  tokens:\n    - {name: ci-bot, token: 'okf_SECRETSECRETSECRETSECRET${EMPTY}', tenant: acme}\n",
			"3: serve.tokens[0] (ci-bot): token holds 28 characters of clear text besides its environment variables: give only ${OKF_TOKEN_CI_BOT}"},
		{"literal token after a variable", "serve:\n  tokens:\n    - {name: a, token: '${EMPTY}okf_SECRET', tenant: acme}\n", "token holds 10 characters of clear text"},
		{"negative sessions", "serve:\n  max_sessions: -1\n", "serve.max_sessions must not be negative"},
		{"negative timeout", "serve:\n  read_timeout: -1s\n", `"-1s" is not a duration`},
		{"bad origin", "serve:\n  allowed_origins: [app.example.com]\n", `serve.allowed_origins[0]: "app.example.com" is not an origin`},
		{"origin with a path", "serve:\n  allowed_origins: ['https://app.example.com/x']\n", "is not an origin"},
		{"bad host", "serve:\n  allowed_hosts: ['http://okf.internal']\n", `serve.allowed_hosts[0]: "http://okf.internal" is not a host name`},
		{"no name", "serve:\n  tokens:\n    - {token: '${X}', tenant: acme}\n", "3: serve.tokens[0]: name is missing"},
		{"no token", "serve:\n  tokens:\n    - {name: a, tenant: acme}\n", "serve.tokens[0] (a): token is missing"},
		{"duplicate token", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: acme}\n    - {name: a, token: '${Y}', tenant: acme}\n", `4: serve.tokens[1]: name "a" is used twice`},
		{"bad tenant", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: Acme}\n", `tenant name "Acme"`},
		{"tenant twice", "serve:\n  tenants:\n    - {name: acme}\n    - {name: acme}\n", `serve.tenants[1]: tenant "acme" is listed twice`},
		{"database twice", "serve:\n  tenants:\n    - {name: a, databases: [x]}\n    - {name: b, databases: [x]}\n", `database "x" already belongs to another tenant`},
		{"negative rate", "serve:\n  rate_limit: -1\n", "serve.rate_limit must not be negative"},
		{"query tools", "serve:\n  query_tools: 65\n", "serve.query_tools: 65 is not between 0 and 64"},
		{"tenant query tools", "serve:\n  tenants:\n    - {name: a, query_tools: -1}\n", "serve.tenants[0]: query_tools: -1 is not between 0 and 64"},
		{"half TLS", "serve:\n  tls_cert: c.pem\n", "give both tls_cert and tls_key"},
		{"unknown key", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: acme, scope: all}\n", `unknown key "scope" in serve.tokens[0]`},
		{"oauth without audience", "serve:\n  oauth:\n    issuer: https://id.example\n    tenant: acme\n", "3: serve.oauth.audience is missing"},
		{"oauth issuer", "serve:\n  oauth:\n    issuer: id.example\n    audience: x\n    tenant: acme\n", `3: serve.oauth.issuer: "id.example" is not an http(s) URL`},
		{"oauth no tenant", "serve:\n  oauth: {issuer: 'https://id.example', audience: x}\n", "serve.oauth: give tenant (read by every caller) or tenants (those a token's okf_tenant claim may name)"},
		{"oauth bad tenant", "serve:\n  oauth: {issuer: 'https://id.example', audience: x, tenants: [Acme]}\n", `tenant name "Acme"`},
		{"oauth unknown key", "serve:\n  oauth: {issuer: 'https://id.example', audience: x, tenant: a, scopes: [x]}\n", `unknown key "scopes" in serve.oauth`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestParseServeOAuth: the oauth section of serve, every key read.
func TestParseServeOAuth(t *testing.T) {
	cfg, err := Parse([]byte(`serve:
  oauth:
    issuer: https://id.example
    audience: https://okf.example/mcp
    jwks_url: https://id.example/keys
    resource: https://okf.example/mcp
    tenant: acme
    tenants: [acme, beta]
    tenant_claim: org
    policy_claim: role
    caller_claims: {region: sales_region}
    clock_skew: 30s
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Serve.OAuth
	if o == nil || o.Issuer != "https://id.example" || o.Audience != "https://okf.example/mcp" || o.JWKSURL != "https://id.example/keys" || o.Resource != "https://okf.example/mcp" ||
		o.Tenant != "acme" || len(o.Tenants) != 2 || o.TenantClaim != "org" || o.PolicyClaim != "role" || o.CallerClaims["region"] != "sales_region" || o.ClockSkew != Duration(30*time.Second) {
		t.Errorf("oauth = %+v", o)
	}
}
