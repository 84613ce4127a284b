package config

import (
	"slices"
	"strings"
	"testing"
)

// TestParsePolicies: every key of a policy read, its caller values listed,
// and the tokens that name it checked.
func TestParsePolicies(t *testing.T) {
	cfg, err := Parse([]byte(`databases:
  - {name: shop, dsn: "sqlite:shop.db"}
policies:
  - name: analyst
    databases: [shop]
    denied_columns: [customers.phone]
    masked_columns: [customers.email, customers.custname]
    row_filters:
      orders: "region = :caller.region AND team IN (:caller.team, :caller.region)"
serve:
  tokens:
    - {name: ana, token: "${T}", tenant: acme, policy: analyst}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := cfg.Policy("analyst")
	if !ok || p.Line != 4 || !slices.Equal(p.Databases, []string{"shop"}) || len(p.MaskedColumns) != 2 || p.DeniedColumns[0] != "customers.phone" {
		t.Fatalf("policy %+v", p)
	}
	if got := CallerValues(p.RowFilters["orders"]); !slices.Equal(got, []string{"region", "team"}) {
		t.Errorf("caller values %q", got)
	}
	if cfg.Serve.Tokens[0].Policy != "analyst" {
		t.Errorf("token %+v", cfg.Serve.Tokens[0])
	}
	if _, ok := cfg.Policy("nobody"); ok {
		t.Error("an unknown policy found")
	}
}

func TestParsePoliciesErrors(t *testing.T) {
	db := "databases:\n  - {name: shop, dsn: \"sqlite:shop.db\"}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"no name", "policies:\n  - {databases: []}\n", "2: policies[0]: name is missing"},
		{"twice", "policies:\n  - {name: a}\n  - {name: a}\n", `3: policies[1]: name "a" is used twice`},
		{"unknown database", db + "policies:\n  - {name: a, databases: [vault]}\n", `4: policies[0] (a): no database is called "vault"`},
		{"bare column", "policies:\n  - {name: a, masked_columns: [email]}\n", `masked_columns: "email" is not table.column`},
		{"empty filter", "policies:\n  - {name: a, row_filters: {orders: ' '}}\n", "row_filters: orders's filter is empty"},
		{"two statements", "policies:\n  - {name: a, row_filters: {orders: '1=1; DROP TABLE orders'}}\n", "a filter is one condition"},
		{"bad table", "policies:\n  - {name: a, row_filters: {'orders; x': 'true'}}\n", "is not a table name"},
		{"unknown key", "policies:\n  - {name: a, masks: [x]}\n", `unknown key "masks" in policies[0]`},
		{"token's policy", "serve:\n  tokens:\n    - {name: ana, token: '${T}', tenant: acme, policy: ghost}\n", `serve.tokens[0] (ana): no policy is called "ghost"`},
	} {
		_, err := Parse([]byte(c.yaml), env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
