// Package oauthtest is an authorization server for tests, on loopback: it
// publishes its metadata (RFC 8414) and its keys (a JWKS with an RSA and a
// P-256 key), and mints access tokens signed with them, or signed wrongly
// on purpose.
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// Issuer is a test authorization server.
type Issuer struct {
	URL      string // the issuer identifier, http://127.0.0.1:port
	rsaKey   *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
	keyFetch atomic.Int64
}

// Start starts an issuer that stops when the test ends.
func Start(t testing.TB) *Issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{URL: "http://" + ln.Addr().String(), rsaKey: rk, ecKey: ek}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"authorization_endpoint": is.URL + "/authorize", "token_endpoint": is.URL + "/token", "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.keyFetch.Add(1)
		writeJSON(w, map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
			{"kty": "EC", "kid": "ec-1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad32(ek.X)), "y": b64(pad32(ek.Y))},
		}})
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return is
}

// KeyFetches counts the fetches of the JWKS.
func (is *Issuer) KeyFetches() int { return int(is.keyFetch.Load()) }

// Token options.
type Token struct {
	// Alg is RS256 (the default) or ES256, or any other name, which
	// signs with RS256 under that name ("none" signs nothing).
	Alg string
	// Kid overrides the key id; "-" leaves it out.
	Kid string
	// ForeignKey signs with a key the issuer does not publish, under
	// the published key's id.
	ForeignKey bool
	// Tamper changes the claims after signing.
	Tamper bool
}

// Mint returns a signed access token with the claims.
func (is *Issuer) Mint(t testing.TB, claims map[string]any, o Token) string {
	t.Helper()
	alg := o.Alg
	if alg == "" {
		alg = "RS256"
	}
	header := map[string]any{"alg": alg, "typ": "at+jwt"}
	switch {
	case o.Kid == "-":
	case o.Kid != "":
		header["kid"] = o.Kid
	case alg == "ES256":
		header["kid"] = "ec-1"
	default:
		header["kid"] = "rsa-1"
	}
	signing := part(t, header) + "." + part(t, claims)
	digest := sha256.Sum256([]byte(signing))
	var sig []byte
	switch {
	case alg == "none":
	case alg == "ES256":
		k := is.ecKey
		if o.ForeignKey {
			k, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = append(pad32(r), pad32(s)...)
	default:
		k := is.rsaKey
		if o.ForeignKey {
			var err error
			if k, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:]); err != nil {
			t.Fatal(err)
		}
	}
	token := signing + "." + b64(sig)
	if o.Tamper {
		parts := strings.Split(token, ".")
		tampered := map[string]any{}
		for k, v := range claims {
			tampered[k] = v
		}
		tampered["sub"] = "someone-else"
		parts[1] = part(t, tampered)
		token = strings.Join(parts, ".")
	}
	return token
}

func part(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b64(b)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func pad32(n *big.Int) []byte {
	b := make([]byte, 32)
	return n.FillBytes(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
