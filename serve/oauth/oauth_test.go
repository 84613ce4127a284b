package oauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/serve/oauth"
	"github.com/okf-tools/okf/serve/oauth/oauthtest"
)

const audience = "https://okf.example/mcp"

func claims(is *oauthtest.Issuer, now time.Time, more map[string]any) map[string]any {
	c := map[string]any{"iss": is.URL, "aud": audience, "sub": "ana", "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "okf_tenant": "sales"}
	for k, v := range more {
		c[k] = v
	}
	return c
}

// TestVerify: tokens of the issuer, signed with either of its keys, pass
// and give their claims; every forged, misdirected or stale one is refused
// as an invalid token, saying why.
func TestVerify(t *testing.T) {
	is := oauthtest.Start(t)
	now := time.Now()
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audience: audience, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, alg := range []string{"RS256", "ES256"} {
		c, err := v.Verify(ctx, is.Mint(t, claims(is, now, nil), oauthtest.Token{Alg: alg}))
		if err != nil || c.Subject() != "ana" {
			t.Fatalf("%s: claims %v, %v", alg, c, err)
		}
		if tenant, _ := c.String("okf_tenant"); tenant != "sales" {
			t.Errorf("%s: tenant claim %q", alg, tenant)
		}
	}
	other := "https://other.example/mcp"
	for name, tc := range map[string]struct {
		claims map[string]any
		token  oauthtest.Token
		reason string
	}{
		"expired":           {claims(is, now, map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), oauthtest.Token{}, "expired at"},
		"no expiry":         {claims(is, now, map[string]any{"exp": nil}), oauthtest.Token{}, "no expiry"},
		"not yet valid":     {claims(is, now, map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}), oauthtest.Token{}, "not valid before"},
		"wrong audience":    {claims(is, now, map[string]any{"aud": other}), oauthtest.Token{}, "not issued for"},
		"audience list":     {claims(is, now, map[string]any{"aud": []string{other}}), oauthtest.Token{}, "not issued for"},
		"wrong issuer":      {claims(is, now, map[string]any{"iss": "https://evil.example"}), oauthtest.Token{}, "issuer"},
		"no subject":        {claims(is, now, map[string]any{"sub": ""}), oauthtest.Token{}, "no subject"},
		"wrong key":         {claims(is, now, nil), oauthtest.Token{ForeignKey: true}, "bad signature"},
		"wrong EC key":      {claims(is, now, nil), oauthtest.Token{Alg: "ES256", ForeignKey: true}, "bad signature"},
		"tampered":          {claims(is, now, nil), oauthtest.Token{Tamper: true}, "bad signature"},
		"alg none":          {claims(is, now, nil), oauthtest.Token{Alg: "none"}, `algorithm "none"`},
		"alg HS256":         {claims(is, now, nil), oauthtest.Token{Alg: "HS256"}, `algorithm "HS256"`},
		"RSA key as ES256":  {claims(is, now, nil), oauthtest.Token{Alg: "ES256", Kid: "rsa-1"}, `no key "rsa-1"`},
		"unknown key":       {claims(is, now, nil), oauthtest.Token{Kid: "rotated-away"}, `no key "rotated-away"`},
		"no kid, one RS256": {claims(is, now, map[string]any{"sub": "bo"}), oauthtest.Token{Kid: "-"}, ""},
	} {
		_, err := v.Verify(ctx, is.Mint(t, tc.claims, tc.token))
		var bad *oauth.InvalidToken
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.reason != "" && (!errors.As(err, &bad) || !strings.Contains(bad.Reason, tc.reason)):
			t.Errorf("%s: %v, want an invalid token: %s", name, err, tc.reason)
		}
	}
	for name, token := range map[string]string{
		"not a JWT":   "okf_" + strings.Repeat("a", 40),
		"four parts":  "a.b.c.d",
		"bad base64":  "e30.e30.***",
		"huge":        strings.Repeat("a", oauth.MaxTokenBytes) + ".b.c",
		"not JSON":    "bm90.e30.AAAA",
		"crit header": "eyJhbGciOiJSUzI1NiIsImNyaXQiOlsiZXhwIl19.e30.AAAA",
	} {
		var bad *oauth.InvalidToken
		if _, err := v.Verify(ctx, token); !errors.As(err, &bad) {
			t.Errorf("%s: %v, want an invalid token", name, err)
		}
	}
}

// TestKeysFetchedSparingly: tokens naming keys the issuer does not have
// make okf fetch its keys again at most once a MinRefresh, and the keys
// are fetched again once KeysTTL has passed.
func TestKeysFetchedSparingly(t *testing.T) {
	is := oauthtest.Start(t)
	now := time.Now()
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audience: audience, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	good := is.Mint(t, claims(is, now, map[string]any{"exp": now.Add(3 * time.Hour).Unix()}), oauthtest.Token{})
	if _, err := v.Verify(ctx, good); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		v.Verify(ctx, is.Mint(t, claims(is, now, nil), oauthtest.Token{Kid: "unknown"}))
	}
	if n := is.KeyFetches(); n != 1 {
		t.Errorf("%d fetches of the keys after 50 tokens naming an unknown key within %s, want 1", n, oauth.MinRefresh)
	}
	now = now.Add(oauth.MinRefresh)
	v.Verify(ctx, is.Mint(t, claims(is, now, nil), oauthtest.Token{Kid: "unknown"}))
	now = now.Add(oauth.KeysTTL)
	if _, err := v.Verify(ctx, good); err != nil || is.KeyFetches() != 3 {
		t.Errorf("after the refresh and the TTL: %v, %d fetches, want 3", err, is.KeyFetches())
	}
}

// TestNewRefuses: a configuration without an issuer URL or an audience.
func TestNewRefuses(t *testing.T) {
	for _, c := range []oauth.Config{{Audience: audience}, {Issuer: "ftp://x", Audience: audience}, {Issuer: "https://x"}, {Issuer: "https://x", Audience: audience, JWKSURL: "nope"}} {
		if _, err := oauth.New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
