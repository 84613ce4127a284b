package config

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/store"
)

// Serve is the serve section of okf.yaml: how okf serve listens, who may
// call it, and which tenant owns each database. Tokens are secrets, so the
// file names each by an environment variable (${VAR}), never by value.
type Serve struct {
	// Addr is the host:port to listen on; okf serve refuses an address
	// beyond loopback unless TLS is configured.
	Addr    string `yaml:"addr"`
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// Tokens grant one tenant each, read-only or read and write.
	Tokens []ServeToken `yaml:"tokens"`
	// Tenants name the databases each tenant may query. A database no
	// tenant names belongs to the tenant "default".
	Tenants []ServeTenant `yaml:"tenants"`
	// RateLimit is the requests a second each token may make, Burst how
	// many it may make at once; 0 takes the server's default.
	RateLimit float64 `yaml:"rate_limit"`
	Burst     int     `yaml:"burst"`
	// MaxRequestBytes bounds the body of any request; 0 takes the
	// server's default.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxSessionsPerToken and MaxSessions cap the MCP sessions open over
	// streamable HTTP, per token and in all; SessionIdleTimeout ends a
	// session no request has used for that long. 0 takes the server's
	// default.
	MaxSessionsPerToken int      `yaml:"max_sessions_per_token"`
	MaxSessions         int      `yaml:"max_sessions"`
	SessionIdleTimeout  Duration `yaml:"session_idle_timeout"`
	// ReadTimeout bounds the reading of a request's headers, then of its
	// whole body; ShutdownGrace is how long requests in flight may take to
	// finish on SIGTERM. 0 takes the server's default.
	ReadTimeout   Duration `yaml:"read_timeout"`
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// AllowedHosts are host names, besides loopback and the listen
	// address's, that requests may name in Host and Origin;
	// AllowedOrigins are further origins (scheme://host[:port]) browsers'
	// requests may come from.
	AllowedHosts   []string `yaml:"allowed_hosts"`
	AllowedOrigins []string `yaml:"allowed_origins"`
	// QueryTools is how many verified queries each tenant lists as tools
	// of their own (the rest are reached through run_query), unless the
	// tenant says; nil takes the engine's default, 0 lists none.
	QueryTools *int `yaml:"query_tools"`
	// OAuth admits callers signed in with an authorization server.
	OAuth *ServeOAuth `yaml:"oauth"`
}

// ServeOAuth makes okf serve an OAuth 2.1 resource server: callers send
// an access token of Issuer, a JWT, whose claims say their tenant, policy
// and values.
type ServeOAuth struct {
	Issuer   string `yaml:"issuer"`
	Audience string `yaml:"audience"`
	// JWKSURL is where the issuer's keys are; "" reads the issuer's
	// metadata for it.
	JWKSURL string `yaml:"jwks_url"`
	// Resource is the MCP endpoint as clients reach it; "" is Audience.
	Resource string `yaml:"resource"`
	// Tenant is read by a token that names none; TenantClaim names the
	// claim that does, which must name one of Tenants (or Tenant).
	Tenant      string   `yaml:"tenant"`
	Tenants     []string `yaml:"tenants"`
	TenantClaim string   `yaml:"tenant_claim"`
	PolicyClaim string   `yaml:"policy_claim"`
	// CallerClaims map a caller value's name to the claim that holds it.
	CallerClaims map[string]string `yaml:"caller_claims"`
	ClockSkew    Duration          `yaml:"clock_skew"`
}

func (o *ServeOAuth) check(line int) error {
	at := fmt.Sprintf("%d: serve.oauth", line)
	for _, u := range []struct{ key, value string }{{"issuer", o.Issuer}, {"jwks_url", o.JWKSURL}, {"resource", o.Resource}} {
		if u.value == "" && u.key != "issuer" {
			continue
		}
		if p, err := url.Parse(u.value); err != nil || p.Host == "" || p.Scheme != "https" && p.Scheme != "http" {
			return fmt.Errorf("%s.%s: %q is not an http(s) URL", at, u.key, u.value)
		}
	}
	if o.Audience == "" {
		return fmt.Errorf("%s.audience is missing: the resource identifier the issuer puts in the tokens it issues for okf", at)
	}
	if o.Tenant == "" && len(o.Tenants) == 0 {
		return fmt.Errorf("%s: give tenant (read by every caller) or tenants (those a token's %s claim may name)", at, cmp.Or(o.TenantClaim, "okf_tenant"))
	}
	for _, t := range append(slices.Clone(o.Tenants), o.Tenant) {
		if t == "" {
			continue
		}
		if err := store.ValidateTenant(t); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	if o.ClockSkew < 0 {
		return fmt.Errorf("%s.clock_skew must not be negative", at)
	}
	return nil
}

// ServeToken is one bearer token of the serve section.
type ServeToken struct {
	Name   string `yaml:"name"`
	Token  string `yaml:"token"` // "${VAR}", expanded by Secret
	Tenant string `yaml:"tenant"`
	Write  bool   `yaml:"write"`
	// Policy names the policy the token's caller is held to.
	Policy string `yaml:"policy"`
	Line   int    `yaml:"-"`
}

// ServeTenant lists the databases of one tenant.
type ServeTenant struct {
	Name      string   `yaml:"name"`
	Databases []string `yaml:"databases"`
	// QueryTools overrides Serve.QueryTools for this tenant.
	QueryTools *int `yaml:"query_tools"`
	Line       int  `yaml:"-"`
}

// ListedQueries is how many verified queries a tenant lists as tools, as
// engine.Toolbox.ListedQueries takes it: 0 for the default, -1 for none.
func (s Serve) ListedQueries(tenant string) int {
	n := s.QueryTools
	for _, t := range s.Tenants {
		if t.Name == tenant && t.QueryTools != nil {
			n = t.QueryTools
		}
	}
	switch {
	case n == nil:
		return 0
	case *n == 0:
		return -1
	}
	return *n
}

// maxQueryTools is engine.MaxQueryTools, which config does not import.
const maxQueryTools = 64

// DefaultTenant owns every database that no tenant of the serve section
// names.
const DefaultTenant = "default"

// UnmarshalYAML reads and checks the serve section, so a mistake is
// reported with its line when the file is loaded.
func (s *Serve) UnmarshalYAML(n *yaml.Node) error {
	type plain Serve
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = Serve(p)
	if list := mappingValue(n, "tokens"); list != nil && list.Kind == yaml.SequenceNode {
		for i, item := range list.Content {
			if i < len(s.Tokens) {
				s.Tokens[i].Line = item.Line
			}
		}
	}
	if list := mappingValue(n, "tenants"); list != nil && list.Kind == yaml.SequenceNode {
		for i, item := range list.Content {
			if i < len(s.Tenants) {
				s.Tenants[i].Line = item.Line
			}
		}
	}
	if s.OAuth != nil {
		line := n.Line
		if v := mappingValue(n, "oauth"); v != nil {
			line = v.Line
		}
		if err := s.OAuth.check(line); err != nil {
			return err
		}
	}
	return s.check(n.Line)
}

func (s *Serve) check(line int) error {
	switch {
	case s.RateLimit < 0:
		return fmt.Errorf("%d: serve.rate_limit must not be negative", line)
	case s.Burst < 0:
		return fmt.Errorf("%d: serve.burst must not be negative", line)
	case s.MaxRequestBytes < 0:
		return fmt.Errorf("%d: serve.max_request_bytes must not be negative", line)
	case s.MaxSessionsPerToken < 0:
		return fmt.Errorf("%d: serve.max_sessions_per_token must not be negative", line)
	case s.MaxSessions < 0:
		return fmt.Errorf("%d: serve.max_sessions must not be negative", line)
	case (s.TLSCert == "") != (s.TLSKey == ""):
		return fmt.Errorf("%d: serve: give both tls_cert and tls_key, or neither", line)
	}
	var names []string
	for i, t := range s.Tokens {
		at := fmt.Sprintf("%d: serve.tokens[%d]", t.Line, i)
		switch {
		case t.Name == "":
			return fmt.Errorf("%s: name is missing", at)
		case slices.Contains(names, t.Name):
			return fmt.Errorf("%s: name %q is used twice", at, t.Name)
		case t.Token == "":
			return fmt.Errorf("%s (%s): token is missing", at, t.Name)
		case !envRef.Get().MatchString(t.Token):
			return fmt.Errorf("%s (%s): token must name an environment variable, like ${OKF_TOKEN_%s}: okf.yaml is committed, tokens are secrets",
				at, t.Name, tokenVar(t.Name))
		case envRef.Get().ReplaceAllString(t.Token, "") != "":
			// The text is not repeated: it may be the secret.
			return fmt.Errorf("%s (%s): token holds %d characters of clear text besides its environment variables: give only ${OKF_TOKEN_%s}: okf.yaml is committed, tokens are secrets",
				at, t.Name, len(envRef.Get().ReplaceAllString(t.Token, "")), tokenVar(t.Name))
		}
		if err := store.ValidateTenant(t.Tenant); err != nil {
			return fmt.Errorf("%s (%s): %w", at, t.Name, err)
		}
		names = append(names, t.Name)
	}
	for i, h := range s.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t") {
			return fmt.Errorf("%d: serve.allowed_hosts[%d]: %q is not a host name", line, i, h)
		}
	}
	for i, o := range s.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" {
			return fmt.Errorf("%d: serve.allowed_origins[%d]: %q is not an origin like https://app.example.com:8443", line, i, o)
		}
	}
	if n := s.QueryTools; n != nil && (*n < 0 || *n > maxQueryTools) {
		return fmt.Errorf("%d: serve.query_tools: %d is not between 0 and %d", line, *n, maxQueryTools)
	}
	var tenants, dbs []string
	for i, t := range s.Tenants {
		at := fmt.Sprintf("%d: serve.tenants[%d]", t.Line, i)
		if n := t.QueryTools; n != nil && (*n < 0 || *n > maxQueryTools) {
			return fmt.Errorf("%s: query_tools: %d is not between 0 and %d", at, *n, maxQueryTools)
		}
		if err := store.ValidateTenant(t.Name); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if slices.Contains(tenants, t.Name) {
			return fmt.Errorf("%s: tenant %q is listed twice", at, t.Name)
		}
		tenants = append(tenants, t.Name)
		for _, d := range t.Databases {
			if slices.Contains(dbs, d) {
				return fmt.Errorf("%s (%s): database %q already belongs to another tenant", at, t.Name, d)
			}
			dbs = append(dbs, d)
		}
	}
	return nil
}

// tokenVar is the environment variable a token's error suggests.
func tokenVar(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// Secret returns the token's value, its ${VAR} references expanded. Every
// variable must hold part of it: an empty one is a mistake, or hides what
// the value really is.
func (t ServeToken) Secret(lookup func(string) (string, bool)) (string, error) {
	v, err := Expand(t.Token, lookup)
	if err != nil {
		return "", fmt.Errorf("serve token %s: %w", t.Name, err)
	}
	for _, ref := range envRef.Get().FindAllStringSubmatch(t.Token, -1) {
		if part, _ := lookup(ref[1]); part == "" {
			return "", fmt.Errorf("serve token %s: %s is empty", t.Name, ref[0])
		}
	}
	return v, nil
}

// DatabaseTenants maps every database to the tenant that owns it: the one
// whose serve.tenants entry names it, else DefaultTenant. A name that the
// file defines no database for is an error.
func (c *Config) DatabaseTenants() (map[string]string, error) {
	out := make(map[string]string, len(c.Databases))
	for _, d := range c.Databases {
		out[d.Name] = DefaultTenant
	}
	for i, t := range c.Serve.Tenants {
		for _, d := range t.Databases {
			if _, ok := out[d]; !ok {
				return nil, fmt.Errorf("%s:%d: serve.tenants[%d] (%s): no database is called %q", c.Path, t.Line, i, t.Name, d)
			}
			out[d] = t.Name
		}
	}
	return out, nil
}
