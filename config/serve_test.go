package config

import (
	"strings"
	"testing"
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
  tokens:
    - name: claude
      token: ${OKF_TOKEN_CLAUDE}
      tenant: acme
    - name: pipeline
      token: ${OKF_TOKEN_PIPELINE}
      tenant: acme
      write: true
  tenants:
    - name: acme
      databases: [shop]
`)
	cfg, err := Parse(data, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Serve
	if s.Addr != "127.0.0.1:8080" || s.RateLimit != 20 || s.Burst != 40 || s.MaxRequestBytes != 65536 || len(s.Tokens) != 2 {
		t.Fatalf("serve = %+v", s)
	}
	if tok := s.Tokens[1]; tok.Name != "pipeline" || !tok.Write || tok.Tenant != "acme" || tok.Line != 13 {
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
		{"no name", "serve:\n  tokens:\n    - {token: '${X}', tenant: acme}\n", "3: serve.tokens[0]: name is missing"},
		{"no token", "serve:\n  tokens:\n    - {name: a, tenant: acme}\n", "serve.tokens[0] (a): token is missing"},
		{"duplicate token", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: acme}\n    - {name: a, token: '${Y}', tenant: acme}\n", `4: serve.tokens[1]: name "a" is used twice`},
		{"bad tenant", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: Acme}\n", `tenant name "Acme"`},
		{"tenant twice", "serve:\n  tenants:\n    - {name: acme}\n    - {name: acme}\n", `serve.tenants[1]: tenant "acme" is listed twice`},
		{"database twice", "serve:\n  tenants:\n    - {name: a, databases: [x]}\n    - {name: b, databases: [x]}\n", `database "x" already belongs to another tenant`},
		{"negative rate", "serve:\n  rate_limit: -1\n", "serve.rate_limit must not be negative"},
		{"half TLS", "serve:\n  tls_cert: c.pem\n", "give both tls_cert and tls_key"},
		{"unknown key", "serve:\n  tokens:\n    - {name: a, token: '${X}', tenant: acme, scope: all}\n", `unknown key "scope" in serve.tokens[0]`},
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
