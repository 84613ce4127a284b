package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/time/rate"

	"github.com/okf-tools/okf/serve/oauth"
	"github.com/okf-tools/okf/store"
)

// OAuth admits callers who signed in with an authorization server, beside
// the tokens okf mints: their access tokens are JWTs checked by Verifier,
// and their claims say the tenant and who the caller is. Such a caller
// reads; writing the knowledge takes a token okf minted.
type OAuth struct {
	Verifier *oauth.Verifier
	// Resource is the MCP endpoint as clients reach it
	// ("https://okf.example/mcp"), which the protected-resource metadata
	// names; "" is the verifier's audience.
	Resource string
	// TenantClaim names the claim that says the caller's tenant, which
	// must be one of Tenants; a token without it is Tenant's, or refused
	// when Tenant is "".
	TenantClaim string
	Tenant      string
	Tenants     []string
	// PolicyClaim names the claim that says the caller's policy, and
	// CallerClaims the claims of the caller's values, by value name.
	PolicyClaim  string
	CallerClaims map[string]string
}

// Defaults of OAuth's claim names.
const (
	DefaultTenantClaim = "okf_tenant"
	DefaultPolicyClaim = "okf_policy"
)

// MaxOAuthCallers bounds the callers whose rate limits are kept; past it
// the oldest are forgotten, so tokens of ever new subjects cannot grow the
// server's memory.
const MaxOAuthCallers = 10000

// oauthGate is a server's OAuth: the options, checked, and the callers'
// rate limiters.
type oauthGate struct {
	o        OAuth
	metadata string // the protected-resource metadata's URL
	tenants  map[string]bool

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	order    []string // limiters' keys, oldest first
}

func newOAuthGate(o OAuth) (*oauthGate, error) {
	if o.Verifier == nil {
		return nil, errors.New("serve: OAuth without a verifier")
	}
	if o.Resource == "" {
		o.Resource = o.Verifier.Audience()
	}
	u, err := url.Parse(o.Resource)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("serve: OAuth resource %q is no http(s) URL", o.Resource)
	}
	if o.TenantClaim == "" {
		o.TenantClaim = DefaultTenantClaim
	}
	if o.PolicyClaim == "" {
		o.PolicyClaim = DefaultPolicyClaim
	}
	g := &oauthGate{o: o, tenants: map[string]bool{}, limiters: map[string]*rate.Limiter{},
		// RFC 9728: the well-known path goes between the host and the
		// resource's path.
		metadata: u.Scheme + "://" + u.Host + metadataPath + strings.TrimSuffix(u.Path, "/")}
	for _, t := range append(slices.Clone(o.Tenants), o.Tenant) {
		if t == "" {
			continue
		}
		if err := store.ValidateTenant(t); err != nil {
			return nil, fmt.Errorf("serve: OAuth tenant: %w", err)
		}
		g.tenants[t] = true
	}
	if len(g.tenants) == 0 {
		return nil, errors.New("serve: OAuth names no tenant: give the tenant its callers read, or the tenants their tokens may name")
	}
	return g, nil
}

// metadataPath is where the protected-resource metadata is served.
const metadataPath = "/.well-known/oauth-protected-resource"

// admit checks a JWT and returns the caller's grant, or why it is
// refused.
func (g *oauthGate) admit(ctx context.Context, token string, perSecond float64, burst int) (*grantState, error) {
	claims, err := g.o.Verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	tenant, ok := claims.String(g.o.TenantClaim)
	switch {
	case !ok && g.o.Tenant == "":
		return nil, &oauth.InvalidToken{Reason: fmt.Sprintf("no %s claim names the tenant", g.o.TenantClaim)}
	case !ok:
		tenant = g.o.Tenant
	case !g.tenants[tenant]:
		return nil, &oauth.InvalidToken{Reason: fmt.Sprintf("tenant %q is not served to these tokens", tenant)}
	}
	gr := Grant{Name: "oauth:" + claims.Subject() + "@" + tenant, Tenant: tenant}
	gr.Policy, _ = claims.String(g.o.PolicyClaim)
	for name, claim := range g.o.CallerClaims {
		if v, ok := claims.String(claim); ok {
			if gr.Caller == nil {
				gr.Caller = map[string]string{}
			}
			gr.Caller[name] = v
		}
	}
	return &grantState{Grant: gr, limiter: g.limiter(gr.Name, perSecond, burst)}, nil
}

// limiter returns a caller's rate limiter, made on its first request.
func (g *oauthGate) limiter(name string, perSecond float64, burst int) *rate.Limiter {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.limiters[name]; l != nil {
		return l
	}
	if len(g.order) >= MaxOAuthCallers {
		delete(g.limiters, g.order[0])
		g.order = g.order[1:]
	}
	l := rate.NewLimiter(rate.Limit(perSecond), burst)
	g.limiters[name] = l
	g.order = append(g.order, name)
	return l
}

// challenge is the WWW-Authenticate of a refused request: where MCP
// clients read which issuer to sign in with, and, for a token refused,
// why (RFC 6750).
func (g *oauthGate) challenge(err error) string {
	c := fmt.Sprintf(`Bearer resource_metadata=%q`, g.metadata)
	var bad *oauth.InvalidToken
	if errors.As(err, &bad) {
		c += fmt.Sprintf(`, error="invalid_token", error_description=%q`, strings.ReplaceAll(bad.Reason, `"`, "'"))
	}
	return c
}

// serveMetadata answers the protected-resource metadata (RFC 9728).
func (g *oauthGate) serveMetadata(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 g.o.Resource,
		"authorization_servers":    []string{g.o.Verifier.Issuer()},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "okf",
	})
}
