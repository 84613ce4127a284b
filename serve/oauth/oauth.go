// Package oauth makes okf serve an OAuth 2.1 resource server: a caller
// signs in with an authorization server it trusts, and sends the access
// token it got, a JWT, as its bearer token. The token is checked against
// the issuer's published keys (its JWKS): the signature (RS256 or ES256,
// nothing else), the issuer, the audience, expiry and not-before with a
// clock skew. Its claims then say who the caller is.
//
// Everything here reads hostile input, the tokens and the issuer's
// documents alike: sizes are bounded, algorithms are fixed by the key, not
// by the token, and keys are fetched again at most once a MinRefresh.
package oauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Limits on what a token and an issuer's documents may be.
const (
	MaxTokenBytes    = 16 << 10
	MaxDocumentBytes = 1 << 20
	MaxKeys          = 64
	// MinRSABits is the smallest RSA modulus a key may have.
	MinRSABits = 2048
	// DefaultSkew is the clock difference allowed between the issuer and
	// okf, for expiry and not-before.
	DefaultSkew = time.Minute
	// KeysTTL is how long fetched keys are used before they are fetched
	// again; MinRefresh is the least time between two fetches, so that
	// tokens naming unknown keys cannot make okf hammer the issuer.
	KeysTTL    = time.Hour
	MinRefresh = 30 * time.Second
	// FetchTimeout bounds one fetch of a document from the issuer.
	FetchTimeout = 10 * time.Second
)

// Config says which issuer's tokens to accept, and for whom.
type Config struct {
	// Issuer is the authorization server's issuer identifier, which a
	// token's iss must equal.
	Issuer string
	// Audience must be among a token's aud: this server's resource
	// identifier, so that a token issued for another service is refused.
	Audience string
	// JWKSURL is where the issuer publishes its keys; "" reads it from
	// the issuer's metadata (RFC 8414, then OpenID Connect discovery).
	JWKSURL string
	// Skew is the clock difference allowed; 0 is DefaultSkew.
	Skew time.Duration
	// HTTP fetches the issuer's documents; nil is a client with
	// FetchTimeout.
	HTTP *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Verifier checks tokens of one issuer. It is safe for concurrent use.
type Verifier struct {
	c Config

	mu      sync.Mutex
	jwksURL string
	keys    map[string]publicKey // by kid; "" for a key without one
	fetched time.Time            // when keys were last fetched
	tried   time.Time            // when a fetch was last tried
}

// publicKey is a key of the issuer and the one algorithm it verifies.
type publicKey struct {
	alg string
	rsa *rsa.PublicKey
	ec  *ecdsa.PublicKey
}

// New checks a configuration and returns its verifier; keys are fetched
// on first use.
func New(c Config) (*Verifier, error) {
	if err := httpURL("issuer", c.Issuer); err != nil {
		return nil, err
	}
	if c.Audience == "" {
		return nil, errors.New("oauth: an audience is required: the resource identifier tokens must be issued for")
	}
	if c.JWKSURL != "" {
		if err := httpURL("jwks_url", c.JWKSURL); err != nil {
			return nil, err
		}
	}
	if c.Skew <= 0 {
		c.Skew = DefaultSkew
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: FetchTimeout}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Verifier{c: c, jwksURL: c.JWKSURL}, nil
}

// Issuer is the issuer whose tokens the verifier accepts.
func (v *Verifier) Issuer() string { return v.c.Issuer }

// Audience is the audience tokens must name.
func (v *Verifier) Audience() string { return v.c.Audience }

func httpURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("oauth: %s %q is no http(s) URL", field, s)
	}
	return nil
}

// InvalidToken is a token refused, and why; the reason is safe to show the
// caller (RFC 6750's error_description).
type InvalidToken struct{ Reason string }

func (e *InvalidToken) Error() string { return "invalid token: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidToken{Reason: fmt.Sprintf(format, args...)}
}

// IsJWT reports whether a bearer token has a JWT's shape, three
// base64url parts: what okf mints never does.
func IsJWT(token string) bool {
	if strings.Count(token, ".") != 2 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Claims are a verified token's claims, as its JSON has them.
type Claims map[string]any

// String returns a claim that is a string, or a number written as one.
func (c Claims) String(name string) (string, bool) {
	switch x := c[name].(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// Subject is the token's sub claim.
func (c Claims) Subject() string { s, _ := c.String("sub"); return s }

// Verify checks a token and returns its claims: a *InvalidToken when the
// token is refused, another error when the issuer's keys could not be
// read.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	if len(token) > MaxTokenBytes {
		return nil, invalid("%d bytes, at most %d", len(token), MaxTokenBytes)
	}
	if !IsJWT(token) {
		return nil, invalid("not a JWT")
	}
	parts := strings.Split(token, ".")
	var header struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodePart(parts[0], &header); err != nil {
		return nil, invalid("header: %v", err)
	}
	if header.Alg != "RS256" && header.Alg != "ES256" {
		return nil, invalid("algorithm %q: RS256 and ES256 are accepted", header.Alg)
	}
	if header.Crit != nil {
		return nil, invalid("critical header parameters are not understood")
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return nil, invalid("signature: %v", err)
	}
	key, err := v.key(ctx, header.Kid, header.Alg)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !key.verify(digest[:], sig) {
		return nil, invalid("bad signature")
	}
	var claims Claims
	if err := decodePart(parts[1], &claims); err != nil {
		return nil, invalid("claims: %v", err)
	}
	if err := v.check(claims); err != nil {
		return nil, err
	}
	return claims, nil
}

// check checks the registered claims of a signed token.
func (v *Verifier) check(c Claims) error {
	if iss, _ := c.String("iss"); iss != v.c.Issuer {
		return invalid("issuer %q, want %q", iss, v.c.Issuer)
	}
	if !hasAudience(c["aud"], v.c.Audience) {
		return invalid("not issued for %s", v.c.Audience)
	}
	now := v.c.Now()
	exp, ok := numericDate(c["exp"])
	if !ok {
		return invalid("no expiry (exp)")
	}
	if !now.Before(exp.Add(v.c.Skew)) {
		return invalid("expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := numericDate(c["nbf"]); ok && now.Add(v.c.Skew).Before(nbf) {
		return invalid("not valid before %s", nbf.UTC().Format(time.RFC3339))
	} else if !ok && c["nbf"] != nil {
		return invalid("nbf is no date")
	}
	if c.Subject() == "" {
		return invalid("no subject (sub)")
	}
	return nil
}

func hasAudience(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

// numericDate reads a NumericDate claim: seconds since the epoch.
func numericDate(x any) (time.Time, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > 1<<40 {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true
}

// decodePart decodes a base64url JSON object, numbers kept as written.
func decodePart(part string, into any) error {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(part)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(into); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

func (k publicKey) verify(digest, sig []byte) bool {
	switch {
	case k.rsa != nil:
		return rsa.VerifyPKCS1v15(k.rsa, crypto.SHA256, digest, sig) == nil
	case k.ec != nil:
		// JWS writes an ES256 signature as r and s, 32 bytes each.
		if len(sig) != 64 {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k.ec, digest, r, s)
	}
	return false
}

// key returns the issuer's key a token names, for the token's algorithm,
// fetching the keys when they are old or the token names one not known.
func (v *Verifier) key(ctx context.Context, kid, alg string) (publicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.c.Now()
	k, found := v.lookup(kid, alg)
	stale := v.keys == nil || now.Sub(v.fetched) >= KeysTTL
	if (stale || !found) && (v.tried.IsZero() || now.Sub(v.tried) >= MinRefresh) {
		v.tried = now
		keys, err := v.fetchKeys(ctx)
		switch {
		case err == nil:
			v.keys, v.fetched = keys, now
			k, found = v.lookup(kid, alg)
		case v.keys == nil:
			return publicKey{}, fmt.Errorf("oauth: reading the keys of %s: %w", v.c.Issuer, err)
		}
	}
	if !found {
		return publicKey{}, invalid("no key %q of the issuer verifies %s", kid, alg)
	}
	return k, nil
}

// lookup finds the key kid names; a token naming none may use the one
// key of its algorithm, when there is exactly one.
func (v *Verifier) lookup(kid, alg string) (publicKey, bool) {
	if kid != "" {
		k, ok := v.keys[kid]
		return k, ok && k.alg == alg
	}
	var only publicKey
	n := 0
	for _, k := range v.keys {
		if k.alg == alg {
			only, n = k, n+1
		}
	}
	return only, n == 1
}

func (v *Verifier) fetchKeys(ctx context.Context) (map[string]publicKey, error) {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := v.fetch(ctx, v.jwksURL, &set); err != nil {
		return nil, err
	}
	if len(set.Keys) > MaxKeys {
		return nil, fmt.Errorf("%s: %d keys, at most %d", v.jwksURL, len(set.Keys), MaxKeys)
	}
	keys := map[string]publicKey{}
	for _, raw := range set.Keys {
		kid, k, ok := parseJWK(raw)
		if !ok {
			continue // a key okf cannot use (another kind, an encryption key) is not one of its
		}
		keys[kid] = k
	}
	return keys, nil
}

// discover reads the issuer's metadata for its jwks_uri: RFC 8414's
// document, then OpenID Connect's.
func (v *Verifier) discover(ctx context.Context) (string, error) {
	issuer := strings.TrimSuffix(v.c.Issuer, "/")
	u, _ := url.Parse(issuer)
	var errs []error
	for _, doc := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + u.Path,
		issuer + "/.well-known/openid-configuration",
	} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.fetch(ctx, doc, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != issuer {
			return "", fmt.Errorf("%s names issuer %q, not %q", doc, meta.Issuer, v.c.Issuer)
		}
		if err := httpURL("jwks_uri", meta.JWKSURI); err != nil {
			return "", fmt.Errorf("%s: %w", doc, err)
		}
		return meta.JWKSURI, nil
	}
	return "", errors.Join(errs...)
}

func (v *Verifier) fetch(ctx context.Context, u string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if len(body) > MaxDocumentBytes {
		return fmt.Errorf("%s: over %d bytes", u, MaxDocumentBytes)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}

// parseJWK reads one key of a JWKS: an RSA key of MinRSABits or more for
// RS256, or a P-256 key for ES256, meant for signatures.
func parseJWK(raw json.RawMessage) (string, publicKey, bool) {
	var j struct {
		Kty, Kid, Use, Alg, Crv string
		N, E, X, Y              string
	}
	if json.Unmarshal(raw, &j) != nil || j.Use != "" && j.Use != "sig" {
		return "", publicKey{}, false
	}
	b64 := base64.RawURLEncoding.Strict()
	switch j.Kty {
	case "RSA":
		if j.Alg != "" && j.Alg != "RS256" {
			return "", publicKey{}, false
		}
		n, err1 := b64.DecodeString(j.N)
		e, err2 := b64.DecodeString(j.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return "", publicKey{}, false
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < MinRSABits || pub.E < 3 || pub.E%2 == 0 {
			return "", publicKey{}, false
		}
		return j.Kid, publicKey{alg: "RS256", rsa: pub}, true
	case "EC":
		if j.Crv != "P-256" || j.Alg != "" && j.Alg != "ES256" {
			return "", publicKey{}, false
		}
		x, err1 := b64.DecodeString(j.X)
		y, err2 := b64.DecodeString(j.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return "", publicKey{}, false
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", publicKey{}, false
		}
		return j.Kid, publicKey{alg: "ES256", ec: pub}, true
	}
	return "", publicKey{}, false
}
