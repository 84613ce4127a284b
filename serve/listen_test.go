package serve

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "okf test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// TestListenAndServe serves HTTPS on loopback, answers, and stops when its
// context ends; an address beyond loopback without TLS never listens.
func TestListenAndServe(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if err := f.srv.ListenAndServe(context.Background(), ListenOptions{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "every interface") && !strings.Contains(err.Error(), "beyond loopback") {
		t.Errorf("listening on 0.0.0.0 without TLS: %v", err)
	}
	cert, key, pool := selfSigned(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- f.srv.ListenAndServe(ctx, ListenOptions{Addr: "127.0.0.1:0", TLSCert: cert, TLSKey: key, Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+addr.String()+"/v1/acme/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+tokAcmeRead)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"tenant":"acme"`) {
		t.Errorf("over TLS: %d %s", resp.StatusCode, body)
	}
	if resp, err := http.Get("http://" + addr.String() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS port: %d", resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe after its context ended: %v", err)
	}
}

// listen runs the fixture's server with ListenAndServe on a loopback port
// until ctx ends; done gets what it returned.
func listen(t *testing.T, f *fixture, ctx context.Context) (addr string, done chan error) {
	t.Helper()
	ready := make(chan net.Addr, 1)
	done = make(chan error, 1)
	go func() {
		done <- f.srv.ListenAndServe(ctx, ListenOptions{Addr: "127.0.0.1:0", Ready: func(a net.Addr) { ready <- a }})
	}()
	select {
	case a := <-ready:
		return a.String(), done
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	return "", nil
}

// TestReadTimeout: a client that sends a request's headers and then
// nothing of the body it announced, or stops within its headers, is
// answered 408 (or cut off) once the read timeout passes, on the API and
// on /mcp; an MCP event stream, which reads nothing more, is not cut.
func TestReadTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) { o.ReadTimeout = timeout }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _ := listen(t, f, ctx)

	// answer reads what the server says to a silent client, until it
	// closes; the deadline, far beyond the timeout, only keeps a server
	// that never answers from hanging the test.
	answer := func(request string) string {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, request); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("the server held a silent client: %v (after %q)", err, got)
		}
		return string(got)
	}
	for _, tc := range []struct{ name, request, want string }{
		{"API", "PUT /v1/acme/source/sales/x.md HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + tokAcmeWrite +
			"\r\nIf-None-Match: *\r\nContent-Length: 200\r\n\r\n", `{"error":"the request body did not arrive within 200ms"}`},
		{"SQL", "POST /v1/acme/sql HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + tokAcmeRead +
			"\r\nContent-Length: 200\r\n\r\n{\"database\":", `{"error":"the request body did not arrive within 200ms"}`},
		{"MCP", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + tokAcmeRead +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n",
			`"error":{"code":-32000,"message":"the request body did not arrive within 200ms"}`},
	} {
		got := answer(tc.request)
		if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: a silent body was answered %q", tc.name, got)
		}
	}
	if got := answer("GET /v1/acme/snapshot HTTP/1.1\r\nHost: " + addr + "\r\n"); got != "" {
		t.Errorf("headers cut short were answered %q", got)
	}

	// An event stream outlives the read timeout many times over.
	f.http.URL = "http://" + addr
	session, resp := f.eventStream(t, tokAcmeRead)
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the event stream ended while the client read it: %v", err)
	case <-time.After(10 * timeout):
	}
	if !f.alive(t, tokAcmeRead, session) {
		t.Error("the session is gone")
	}
}

// TestShutdownFinishesRequests: once shutdown begins, no connection is
// accepted, but a request in flight, its body still arriving, finishes
// with its response; an open MCP event stream does not hold the shutdown
// up.
func TestShutdownFinishesRequests(t *testing.T) {
	// The burst is all the editor's token may spend: the one request this
	// test makes with it shows in its limiter once it is in flight.
	f := newFixture(t, fixtureOptions{rate: 0.001, burst: 100, options: func(o *Options) {
		o.ReadTimeout, o.ShutdownGrace = time.Minute, time.Minute
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := listen(t, f, ctx)
	f.http.URL = "http://" + addr
	// The event stream is opened here rather than left to an MCP client's
	// background request, which a loaded machine may make late or, failed
	// once, never again.
	f.eventStream(t, tokAcmeRead)
	f.eventually(t, "the client's event stream is open", func(t *sessionTable) bool {
		for _, s := range t.live {
			if s.busy > 0 {
				return true
			}
		}
		return false
	})

	content := "---\ntype: Business Rule\ndescription: Written during shutdown.\n---\n"
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PUT /v1/acme/source/sales/knowledge/late.md HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nIf-None-Match: *\r\nContent-Length: %d\r\n\r\n%s",
		addr, tokAcmeWrite, len(content), content[:10])
	editor := f.srv.byHash[sha256.Sum256([]byte(tokAcmeWrite))].limiter
	for deadline := time.Now().Add(20 * time.Second); editor.Tokens() > 99.5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	cancel()
	// Shutdown has begun once the listener refuses connections.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		d, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		d.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections after shutdown began")
		}
	}
	// The request stays in flight longer than the 3 s the server used to
	// allow, and the server waits for it.
	select {
	case err := <-done:
		t.Fatalf("ListenAndServe returned with a request in flight: %v", err)
	case <-time.After(4 * time.Second):
	}
	io.WriteString(c, content[10:])
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request in flight got no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"path":"knowledge/late.md"`) {
		t.Errorf("the request in flight: %d %s", resp.StatusCode, body)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("ListenAndServe did not return once the request in flight finished")
	}
}
