package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
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

// standardCode reports a JSON-RPC error code the specification defines:
// one of its five, or in the range it leaves to server errors.
func standardCode(code int) bool {
	switch code {
	case codeParseError, codeInvalidRequest, codeMethodNotFound, codeInvalidParams, codeInternal:
		return true
	}
	return code >= -32099 && code <= -32000
}

// TestMCPRefusalsAreJSONRPC: every refusal at /mcp, whoever refuses (the
// guard, okf's gate, the SDK), is a JSON-RPC error with its HTTP status:
// Content-Type application/json, a standard nonzero code, and the id of
// the call refused once okf has read it (null before, or for a batch).
func TestMCPRefusalsAreJSONRPC(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, maxBytes: 4096})
	tight := newFixture(t, fixtureOptions{rate: 0.001, burst: 1})
	session := f.openSession(t, tokAcmeRead)
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	pings := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	initialize := `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	batchOf := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	big := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	post := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	in := func(h map[string]string, kv ...string) map[string]string {
		out := maps.Clone(h)
		if out == nil {
			out = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	inSession := in(post, "Mcp-Session-Id", session, "Mcp-Protocol-Version", "2025-03-26")
	for _, tc := range []struct {
		name   string
		f      *fixture
		method string
		token  string
		header map[string]string
		body   io.Reader
		status int
		code   int
		msg    string
		id     string // the error's id, as JSON
		check  string // a header the refusal must carry
	}{
		{"no token", f, "POST", "", post, strings.NewReader(ping), 401, codeRefused, "missing bearer token", "null", "WWW-Authenticate"},
		{"an unknown token", f, "POST", "not-a-token-of-this-server-at-all", post, strings.NewReader(ping), 401, codeRefused, "invalid token", "null", "WWW-Authenticate"},
		{"a Host not allowed", f, "POST", tokAcmeRead, in(post, "Host", "rebound.example"), strings.NewReader(ping), 421, codeRefused, "the Host header", "null", ""},
		{"an Origin not allowed", f, "POST", tokAcmeRead, in(post, "Origin", "https://evil.example"), strings.NewReader(ping), 403, codeRefused, "origin", "null", ""},
		{"over the rate limit", tight, "POST", tokAcmeRead, post, strings.NewReader(ping), 429, codeRefused, "over its rate limit", "null", "Retry-After"},
		{"a body over the limit, by its length", f, "POST", tokAcmeRead, inSession, strings.NewReader(big), 413, codeRefused, "at most 4096", "null", ""},
		{"a body over the limit, no length given", f, "POST", tokAcmeRead, inSession, io.MultiReader(strings.NewReader(big)), 413, codeRefused, "over 4096 bytes", "null", ""},
		{"not JSON", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":`), 400, codeParseError, "not valid JSON", "null", ""},
		{"not JSON-RPC", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":"1.0","id":7,"method":"ping"}`), 400, codeInvalidRequest, `"jsonrpc" must be "2.0"`, "7", ""},
		{"a batch over the cap", f, "POST", tokAcmeRead, inSession, strings.NewReader(batchOf(MaxBatch + 1)), 400, codeInvalidRequest, "at most 32", "null", ""},
		{"initialize twice in a batch", f, "POST", tokAcmeRead, post, strings.NewReader("[" + fmt.Sprintf(initialize, 1) + "," + fmt.Sprintf(initialize, 2) + "]"), 400, codeInvalidRequest, "initialize may not be part of a batch", "null", ""},
		{"a batch in a 2025-06-18 session", f, "POST", tokAcmeRead, in(inSession, "Mcp-Protocol-Version", "2025-06-18"), strings.NewReader(pings), 400, codeInvalidRequest, "batching is not supported in 2025-06-18", "null", ""},
		{"an unknown session", f, "POST", tokAcmeRead, in(inSession, "Mcp-Session-Id", "NOSUCHSESSION"), strings.NewReader(ping), 404, codeSessionNotFound, "session not found", "7", ""},
		{"an unknown session's stream", f, "GET", tokAcmeRead, map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "NOSUCHSESSION"}, nil, 404, codeSessionNotFound, "session not found", "null", ""},
		{"an unknown session's end", f, "DELETE", tokAcmeRead, map[string]string{"Mcp-Session-Id": "NOSUCHSESSION"}, nil, 404, codeSessionNotFound, "session not found", "null", ""},
		{"another token's session", f, "POST", tokGlobexRead, inSession, strings.NewReader(ping), 404, codeSessionNotFound, "session not found", "7", ""},
		{"a Content-Type not JSON", f, "POST", tokAcmeRead, in(inSession, "Content-Type", "text/plain"), strings.NewReader(ping), 415, codeInvalidRequest, "Content-Type must be 'application/json'", "null", ""},
		{"no Content-Type", f, "POST", tokAcmeRead, in(inSession, "Content-Type", ""), strings.NewReader(ping), 415, codeInvalidRequest, "Content-Type must be 'application/json'", "null", ""},
		{"an Accept without event streams", f, "POST", tokAcmeRead, in(inSession, "Accept", "application/json"), strings.NewReader(ping), 400, codeInvalidRequest, "Accept must contain both", "7", ""},
		{"a stream's Accept without event streams", f, "GET", tokAcmeRead, map[string]string{"Accept": "application/json", "Mcp-Session-Id": session}, nil, 400, codeInvalidRequest, "Accept must contain 'text/event-stream'", "null", ""},
		{"a stream without a session", f, "GET", tokAcmeRead, map[string]string{"Accept": "text/event-stream"}, nil, 400, codeInvalidRequest, "GET requires an Mcp-Session-Id header", "null", ""},
		{"an end without a session", f, "DELETE", tokAcmeRead, nil, nil, 400, codeInvalidRequest, "DELETE requires an Mcp-Session-Id header", "null", ""},
		{"PUT", f, "PUT", tokAcmeRead, inSession, strings.NewReader(ping), 405, codeInvalidRequest, "Method Not Allowed", "null", "Allow"},
		{"OPTIONS", f, "OPTIONS", tokAcmeRead, nil, nil, 405, codeInvalidRequest, "Method Not Allowed", "null", "Allow"},
		{"a protocol version unknown", f, "POST", tokAcmeRead, in(inSession, "Mcp-Protocol-Version", "1999-01-01"), strings.NewReader(ping), 400, codeInvalidRequest, "Unsupported protocol version", "7", ""},
		{"a protocol version for stateless servers", f, "POST", tokAcmeRead, in(inSession, "Mcp-Protocol-Version", "2026-07-28"), strings.NewReader(ping), 400, -32022, "is not supported by this server", "7", ""},
		{"an unknown method", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"no/such"}`), 400, codeMethodNotFound, `"no/such" unsupported`, "7", ""},
		{"an unknown notification", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/no-such"}`), 400, codeMethodNotFound, "unsupported", "null", ""},
		{"a call without an id", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":"2.0","method":"tools/list"}`), 400, codeInvalidRequest, `missing id for "tools/list"`, "null", ""},
		{"a call without its params", f, "POST", tokAcmeRead, inSession, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`), 400, codeInvalidParams, `missing required "params"`, "7", ""},
		{"a POST resuming a stream", f, "POST", tokAcmeRead, in(inSession, "Last-Event-ID", "s_1"), strings.NewReader(ping), 400, codeInvalidRequest, "Last-Event-ID", "7", ""},
	} {
		if tc.f == tight {
			// Spend the token's one request.
			resp, body := tight.request(t, "GET", "/v1/acme/snapshot", tokAcmeRead, nil, nil)
			wantStatus(t, resp, body, http.StatusOK)
		}
		req, err := http.NewRequest(tc.method, tc.f.http.URL+"/mcp", tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		for k, v := range tc.header {
			switch {
			case k == "Host":
				req.Host = v
			case v != "":
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    *int    `json:"code"`
				Message *string `json:"message"`
			} `json:"error"`
		}
		switch {
		case resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json":
			t.Errorf("%s: %d %q %s, want %d application/json", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), data, tc.status)
		case json.Unmarshal(data, &reply) != nil || reply.JSONRPC != "2.0" || reply.Error == nil || reply.Error.Code == nil || reply.Error.Message == nil:
			t.Errorf("%s: not a JSON-RPC error: %s", tc.name, data)
		case *reply.Error.Code != tc.code || !standardCode(*reply.Error.Code) || !strings.Contains(*reply.Error.Message, tc.msg):
			t.Errorf("%s: error %d %q, want %d saying %q", tc.name, *reply.Error.Code, *reply.Error.Message, tc.code, tc.msg)
		case string(reply.ID) != tc.id:
			t.Errorf("%s: id %s, want %s", tc.name, reply.ID, tc.id)
		case tc.check != "" && resp.Header.Get(tc.check) == "":
			t.Errorf("%s: no %s header", tc.name, tc.check)
		}
	}
	if !f.alive(t, tokAcmeRead, session) {
		t.Error("the session is gone after the refusals")
	}
}
