package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// mcpPost posts a JSON-RPC payload to /mcp, in a session unless session
// is "".
func (f *fixture) mcpPost(t *testing.T, token, session, body string) (*http.Response, string) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if session != "" {
		h["Mcp-Session-Id"] = session
		h["Mcp-Protocol-Version"] = "2025-03-26"
	}
	return f.request(t, "POST", "/mcp", token, strings.NewReader(body), h)
}

// openSession initializes an MCP session with a token and returns its id.
func (f *fixture) openSession(t *testing.T, token string) string {
	t.Helper()
	resp, body := f.mcpPost(t, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	wantStatus(t, resp, body, http.StatusOK)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize opened no session")
	}
	return id
}

// eventStream opens a session and its event stream (GET /mcp), closed
// when the test ends, and returns both.
func (f *fixture) eventStream(t *testing.T, token string) (string, *http.Response) {
	t.Helper()
	session := f.openSession(t, token)
	req, _ := http.NewRequest("GET", f.http.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return session, resp
}

// rpcErrorOf reads the JSON-RPC error of an answer's body.
func rpcErrorOf(t *testing.T, body string) (code int, msg string) {
	t.Helper()
	var m rpcReply
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return m.Error.Code, m.Error.Message
}

// TestMCPHTTPMalformed posts malformed JSON-RPC to /mcp, with and without
// a session: each gets a 4xx with a JSON-RPC error, and the session and
// the server go on serving.
func TestMCPHTTPMalformed(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000})
	session := f.openSession(t, tokAcmeRead)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	batch := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"not JSON", `{not json`, codeParseError, "not valid JSON"},
		{"empty", ``, codeParseError, "not valid JSON"},
		{"a number", `42`, codeInvalidRequest, "must be a JSON object"},
		{"an empty batch", `[]`, codeInvalidRequest, "the batch is empty"},
		{"a batch over the cap", batch(MaxBatch + 1), codeInvalidRequest, "the batch holds 33 messages, at most 32"},
		{"a bad message in a batch", `[` + ping + `,{"id":3,"method":"ping"}]`, codeInvalidRequest, `batch message 2: invalid request: "jsonrpc" must be "2.0"`},
		{"an id twice in a batch", `[` + ping + `,` + ping + `]`, codeInvalidRequest, "id 2 is used twice"},
		{"no jsonrpc", `{"id":7,"method":"ping"}`, codeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, codeInvalidRequest, "must be a string or a whole number"},
	} {
		for _, in := range []string{"", session} {
			resp, body := f.mcpPost(t, tokAcmeRead, in, tc.body)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s (session %q): %d %s %s", tc.name, in, resp.StatusCode, resp.Header.Get("Content-Type"), body)
				continue
			}
			if code, msg := rpcErrorOf(t, body); code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("%s: error %d %q, want %d saying %q", tc.name, code, msg, tc.code, tc.msg)
			}
		}
		resp, body := f.mcpPost(t, tokAcmeRead, session, ping)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result":{}`) {
			t.Fatalf("after %s, a ping in the session: %d %s", tc.name, resp.StatusCode, body)
		}
	}
	cs := f.mcpSession(t, tokAcmeRead)
	if out, _ := call(t, cs, "search", map[string]any{"query": "orders"}); !strings.Contains(out, "tables/orders") {
		t.Errorf("a new session after the malformed posts: %s", out)
	}
}

// TestMCPBatchCountsEachMessage: every message of a JSON-RPC batch counts
// against the token's rate limit, not the batch as one request.
func TestMCPBatchCountsEachMessage(t *testing.T) {
	// 10 requests at once, then (nearly) none: the test spends the burst.
	f := newFixture(t, fixtureOptions{rate: 0.001, burst: 10})
	session := f.openSession(t, tokAcmeRead) // 1 of 10
	five := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`
	resp, body := f.mcpPost(t, tokAcmeRead, session, five) // 6 of 10
	wantStatus(t, resp, body, http.StatusOK)
	if n := strings.Count(body, `"result":{}`); n != 5 {
		t.Errorf("a batch of 5 pings got %d results: %s", n, body)
	}
	resp, body = f.mcpPost(t, tokAcmeRead, session, five) // 7, and 4 more refused
	wantStatus(t, resp, body, http.StatusTooManyRequests)
	if code, msg := rpcErrorOf(t, body); code != codeRefused || !strings.Contains(msg, "each message of a batch counts") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an over-limit batch: %d %q, Retry-After %q", code, msg, resp.Header.Get("Retry-After"))
	}
	// The refused batch spent one request, not five: 3 more are left.
	for range 3 {
		resp, body := f.mcpPost(t, tokAcmeRead, session, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		wantStatus(t, resp, body, http.StatusOK)
	}
	resp, body = f.mcpPost(t, tokAcmeRead, session, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	wantStatus(t, resp, body, http.StatusTooManyRequests)
}

// TestMCPRefusalsAreJSONRPC: what /mcp refuses is a JSON-RPC error
// whoever refuses it, okf or the SDK: a request for a session the server
// does not hold (POST, GET or DELETE), a batch in a session of protocol
// 2025-06-18 (which has no batches), an initialize in a batch, and a POST
// whose Accept header leaves out event streams.
func TestMCPRefusalsAreJSONRPC(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000})
	session := f.openSession(t, tokAcmeRead)
	pings := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	initialize := `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name, method, session, version, accept, body string
		status, code                                 int
		msg                                          string
	}{
		{"an unknown session", "POST", "NOSUCHSESSION", "2025-03-26", "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 404, codeSessionNotFound, "session not found"},
		{"an unknown session's stream", "GET", "NOSUCHSESSION", "2025-03-26", "text/event-stream", "", 404, codeSessionNotFound, "session not found"},
		{"an unknown session's end", "DELETE", "NOSUCHSESSION", "2025-03-26", "", "", 404, codeSessionNotFound, "session not found"},
		{"a batch in a 2025-06-18 session", "POST", session, "2025-06-18", "", pings, 400, codeInvalidRequest, "batching is not supported in 2025-06-18"},
		{"initialize twice in a batch", "POST", "", "", "", "[" + fmt.Sprintf(initialize, 1) + "," + fmt.Sprintf(initialize, 2) + "]", 400, codeInvalidRequest, "initialize may not be part of a batch"},
		{"no event streams accepted", "POST", session, "2025-03-26", "application/json", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 400, codeInvalidRequest, "Accept must contain both"},
	} {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if tc.accept != "" {
			h["Accept"] = tc.accept
		}
		if tc.session != "" {
			h["Mcp-Session-Id"], h["Mcp-Protocol-Version"] = tc.session, tc.version
		}
		resp, body := f.request(t, tc.method, "/mcp", tokAcmeRead, strings.NewReader(tc.body), h)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %q, want %d with a JSON-RPC error", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status)
			continue
		}
		if code, msg := rpcErrorOf(t, body); code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: error %d %q, want %d saying %q", tc.name, code, msg, tc.code, tc.msg)
		}
	}
	if !f.alive(t, tokAcmeRead, session) {
		t.Error("the session is gone after the refusals")
	}
}
