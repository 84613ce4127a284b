package serve

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOriginAndHost: /mcp takes requests without Origin, from loopback
// origins and from the allowed ones, and refuses other origins with 403;
// on a loopback listener, a Host that names neither loopback nor an
// allowed host is refused with 421, in the API's JSON error shape.
func TestOriginAndHost(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.AllowedHosts = []string{"okf.internal"}
		o.AllowedOrigins = []string{"https://App.Example.com:8443/"}
	}})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"http://localhost:5173", http.StatusOK},
		{"https://localhost", http.StatusOK},
		{"http://127.0.0.1:9", http.StatusOK},
		{"http://[::1]:3000", http.StatusOK},
		{"https://okf.internal", http.StatusOK},
		{"https://app.example.com:8443", http.StatusOK},
		{"https://app.example.com", http.StatusForbidden},
		{"http://evil.example", http.StatusForbidden},
		{"http://localhost.evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"file://", http.StatusForbidden},
	} {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		resp, body := f.request(t, "POST", "/mcp", tokAcmeRead, strings.NewReader(initialize), h)
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %q: %d %s, want %d", tc.origin, resp.StatusCode, body, tc.want)
			continue
		}
		if tc.want == http.StatusForbidden {
			if code, msg := rpcErrorOf(t, body); code != codeRefused || !strings.Contains(msg, "serve.allowed_origins") {
				t.Errorf("Origin %q: %d %q", tc.origin, code, msg)
			}
		}
	}

	getWithHost := func(path, host string) (*http.Response, string) {
		req, err := http.NewRequest("GET", f.http.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Authorization", "Bearer "+tokAcmeRead)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"", true}, // the test server's own address
		{"localhost:7777", true},
		{"[::1]:7777", true},
		{"okf.internal:7777", true},
		{"OKF.internal", true},
		{"evil.example:7777", false},
		{"rebound.evil.example", false},
	} {
		resp, body := getWithHost("/v1/acme/snapshot", tc.host)
		if tc.ok {
			wantStatus(t, resp, body, http.StatusOK)
			continue
		}
		wantStatus(t, resp, body, http.StatusMisdirectedRequest)
		var e struct{ Error string }
		if decode(t, body, &e); !strings.Contains(e.Error, fmt.Sprintf("the Host header %q names neither loopback nor this server", tc.host)) {
			t.Errorf("Host %q: %s", tc.host, body)
		}
		resp, body = getWithHost("/mcp", tc.host)
		wantStatus(t, resp, body, http.StatusMisdirectedRequest)
		if code, _ := rpcErrorOf(t, body); code != codeRefused {
			t.Errorf("Host %q on /mcp: %s", tc.host, body)
		}
	}
}
