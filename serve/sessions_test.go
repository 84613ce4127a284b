package serve

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openStream opens a session's event stream (GET /mcp), which keeps the
// session busy until the returned function closes it.
func (f *fixture) openStream(t *testing.T, token, session string) func() {
	t.Helper()
	req, err := http.NewRequest("GET", f.http.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream of %s: %s", session, resp.Status)
	}
	return func() {
		resp.Body.Close()
		// The stream ends when the server notices the closed connection.
		f.eventually(t, "the stream of "+session+" ends", func(t *sessionTable) bool {
			s := t.live[session]
			return s == nil || s.busy == 0
		})
	}
}

// eventually waits until cond holds of the server's session table; the
// deadline only keeps a broken server from hanging the test.
func (f *fixture) eventually(t *testing.T, what string, cond func(*sessionTable) bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		f.srv.sessions.mu.Lock()
		ok := cond(f.srv.sessions)
		f.srv.sessions.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain until %s", what)
		}
	}
}

// alive reports whether a session still answers.
func (f *fixture) alive(t *testing.T, token, session string) bool {
	t.Helper()
	resp, body := f.mcpPost(t, token, session, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return false
	}
	t.Fatalf("ping in session %s: %d %s", session, resp.StatusCode, body)
	return false
}

// TestSessionCaps: with at most 2 sessions a token and 3 in all, a new
// session takes the place of the least recently used idle one, of its
// token and then of anyone's; when every session it could replace is
// busy (an event stream open), it is refused: 429 at the token's cap, 503
// at the server's, each with a JSON-RPC error saying so.
func TestSessionCaps(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.MaxSessionsPerGrant, o.MaxSessions = 2, 3
	}})
	// A clock that ticks at every reading (always under the table's lock)
	// orders the sessions' uses strictly.
	tick := testNow
	f.srv.sessions.now = func() time.Time {
		tick = tick.Add(time.Second)
		return tick
	}
	a1 := f.openSession(t, tokAcmeRead)
	a2 := f.openSession(t, tokAcmeRead)
	if !f.alive(t, tokAcmeRead, a1) { // a1 is now used more recently than a2
		t.Fatal("a1 is gone before the cap was reached")
	}
	a3 := f.openSession(t, tokAcmeRead)
	if f.alive(t, tokAcmeRead, a2) || !f.alive(t, tokAcmeRead, a1) || !f.alive(t, tokAcmeRead, a3) {
		t.Fatal("the third session of a token did not replace its least recently used one")
	}

	closeA1, closeA3 := f.openStream(t, tokAcmeRead, a1), f.openStream(t, tokAcmeRead, a3)
	resp, body := f.mcpPost(t, tokAcmeRead, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	wantStatus(t, resp, body, http.StatusTooManyRequests)
	if code, msg := rpcErrorOf(t, body); code != codeRefused || !strings.Contains(msg, "token acme-reader has 2 MCP sessions open, the most it may, and none is idle") {
		t.Errorf("over the token's cap: %d %q", code, msg)
	}

	// The server's cap: acme's two are busy, globex's first is idle.
	g1 := f.openSession(t, tokGlobexRead)
	g2 := f.openSession(t, tokGlobexRead)
	if f.alive(t, tokGlobexRead, g1) || !f.alive(t, tokGlobexRead, g2) {
		t.Fatal("a session over the server's cap did not replace the least recently used idle one")
	}
	closeG2 := f.openStream(t, tokGlobexRead, g2)
	resp, body = f.mcpPost(t, tokGlobexRead, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	wantStatus(t, resp, body, http.StatusServiceUnavailable)
	if code, msg := rpcErrorOf(t, body); code != codeRefused || !strings.Contains(msg, "the server has 3 MCP sessions open, the most it may") {
		t.Errorf("over the server's cap: %d %q", code, msg)
	}

	// Once a stream ends, its session is idle and may be replaced.
	closeA3()
	a4 := f.openSession(t, tokAcmeRead)
	if f.alive(t, tokAcmeRead, a3) || !f.alive(t, tokAcmeRead, a4) || !f.alive(t, tokAcmeRead, a1) {
		t.Error("a session idle again was not the one replaced")
	}
	closeA1()
	closeG2()

	// A client that ends its session gives its room back at once.
	req, _ := http.NewRequest("DELETE", f.http.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tokAcmeRead)
	req.Header.Set("Mcp-Session-Id", a4)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	f.eventually(t, "the ended session is forgotten", func(t *sessionTable) bool { return t.live[a4] == nil })
	f.srv.sessions.mu.Lock()
	defer f.srv.sessions.mu.Unlock()
	if f.srv.sessions.count != 2 || f.srv.sessions.byGrant["acme-reader"] != 1 || f.srv.sessions.byGrant["globex-reader"] != 1 {
		t.Errorf("after the DELETE: %d sessions, by token %v", f.srv.sessions.count, f.srv.sessions.byGrant)
	}
}

// rawPost posts a JSON-RPC body to /mcp from any goroutine: the status,
// the content type and the body, or the transport's error.
func (f *fixture) rawPost(token, session, version, body string) (int, string, string, error) {
	req, err := http.NewRequest("POST", f.http.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "" {
		session = resp.Header.Get("Mcp-Session-Id")
	}
	return resp.StatusCode, resp.Header.Get("Content-Type") + " " + session, string(data), err
}

// TestSessionEvictionBurst: bursts of clients, far more than a token's
// session cap, each open a session and ping in it at once, so that
// sessions are evicted while their clients send. A ping is answered with
// its response (200), or, its session gone, with 404 and a JSON-RPC
// error; never a 200 that holds no response (the victim once left the
// table under its lock and was closed after, and a request between the
// two reached the closing session).
func TestSessionEvictionBurst(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1e6, burst: 1e6, options: func(o *Options) {
		o.MaxSessionsPerGrant, o.MaxSessions = 4, 1000
	}})
	const bursts, clients = 10, 128
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	var mu sync.Mutex
	var bad []string
	answered, gone := 0, 0
	for range bursts {
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				status, ct, _, err := f.rawPost(tokAcmeRead, "", "", initialize)
				if err != nil || status != http.StatusOK {
					return // refused at the cap (429), which TestSessionCaps pins
				}
				_, session, _ := strings.Cut(ct, " ")
				status, ct, body, err := f.rawPost(tokAcmeRead, session, "2025-03-26", `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					bad = append(bad, err.Error())
				case status == http.StatusOK && strings.Contains(body, `"id":5`) && strings.Contains(body, `"result":{}`):
					answered++
				case status == http.StatusNotFound && strings.HasPrefix(ct, "application/json") && strings.Contains(body, `"error"`):
					gone++
				default:
					bad = append(bad, fmt.Sprintf("%d %s %q", status, ct, body))
				}
			})
		}
		wg.Wait()
	}
	t.Logf("%d pings answered, %d found their session evicted", answered, gone)
	if len(bad) > 0 {
		t.Errorf("%d pings got neither their response nor a JSON-RPC 404, e.g. %s", len(bad), bad[0])
	}
	if answered == 0 {
		t.Error("no ping was answered")
	}
}

// postAnswer is what a POST to /mcp got.
type postAnswer struct {
	status      int
	ct, session string
	body        string
	err         error
}

func (f *fixture) post(token, session, body string) postAnswer {
	status, ct, data, err := f.rawPost(token, session, "2025-03-26", body)
	ct, session, _ = strings.Cut(ct, " ")
	return postAnswer{status, ct, session, data, err}
}

// wantGone asserts the answer to a request for a session the server no
// longer holds: 404 and a JSON-RPC error, never an empty event stream.
func wantGone(t *testing.T, what string, a postAnswer) {
	t.Helper()
	if a.err != nil || a.status != http.StatusNotFound || a.ct != "application/json" {
		t.Fatalf("%s: %d %q %q %v, want 404 with a JSON-RPC error", what, a.status, a.ct, a.body, a.err)
	}
	if code, _ := rpcErrorOf(t, a.body); code != codeSessionNotFound {
		t.Errorf("%s: error %d, want %d", what, code, codeSessionNotFound)
	}
}

// wantPong asserts the answer to the ping with id 5: 200 and its result.
func wantPong(t *testing.T, what string, a postAnswer) {
	t.Helper()
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"id":5`) || !strings.Contains(a.body, `"result":{}`) {
		t.Fatalf("%s: %d %q %q %v, want 200 with the ping's result", what, a.status, a.ct, a.body, a.err)
	}
}

const ping5 = `{"jsonrpc":"2.0","id":5,"method":"ping"}`

// TestSessionEvictionOvertaken holds the eviction of a session between
// its leaving the table and its close, the window the eviction race lived
// in, and sends a request for it there: the request is refused with 404
// and a JSON-RPC error, never handed to the session being closed (which
// answered 200 with an empty event stream when the close overtook it).
func TestSessionEvictionOvertaken(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.MaxSessionsPerGrant = 1
	}})
	victim := f.openSession(t, tokAcmeRead)
	overtaken := make(chan postAnswer, 1)
	f.srv.sessions.closeSession = func(ss *mcp.ServerSession) {
		if ss.ID() == victim {
			overtaken <- f.post(tokAcmeRead, victim, ping5)
		}
		ss.Close()
	}
	successor := f.openSession(t, tokAcmeRead) // takes the victim's place
	select {
	case a := <-overtaken:
		wantGone(t, "a request for a session between its eviction and its close", a)
	default:
		t.Fatal("the victim was not closed")
	}
	wantGone(t, "a request for a session closed", f.post(tokAcmeRead, victim, ping5))
	wantPong(t, "a request for its successor", f.post(tokAcmeRead, successor, ping5))
}

// holdRequests holds the first request admitted to a session between its
// admission (the session found and marked busy) and the SDK, until the
// returned release is called; held is closed once it is there.
func (f *fixture) holdRequests(session string) (held <-chan struct{}, release func()) {
	h, r := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.srv.sessions.admitted = func(id string) {
		if id == session {
			once.Do(func() {
				close(h)
				<-r
			})
		}
	}
	return h, sync.OnceFunc(func() { close(r) })
}

// TestSessionInFlightNotEvicted: a request in flight in a session, held
// between its admission and the SDK, keeps the session from eviction:
// a new session at the cap replaces another, idle one, or is refused
// when there is none; the held request then gets its response.
func TestSessionInFlightNotEvicted(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.MaxSessionsPerGrant = 2
	}})
	busy := f.openSession(t, tokAcmeRead) // the least recently used
	idle := f.openSession(t, tokAcmeRead)
	held, release := f.holdRequests(busy)
	defer release()
	answer := make(chan postAnswer, 1)
	go func() { answer <- f.post(tokAcmeRead, busy, ping5) }()
	<-held
	third := f.openSession(t, tokAcmeRead)
	resp, body := f.mcpPost(t, tokAcmeRead, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	// third is idle now, and the one left to replace.
	wantStatus(t, resp, body, http.StatusOK)
	release()
	wantPong(t, "the request in flight", <-answer)
	wantPong(t, "a request after it", f.post(tokAcmeRead, busy, ping5))
	wantGone(t, "the idle session replaced", f.post(tokAcmeRead, idle, ping5))
	wantGone(t, "the next idle session replaced", f.post(tokAcmeRead, third, ping5))

	// With every session busy, a new one is refused.
	f = newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.MaxSessionsPerGrant = 1
	}})
	only := f.openSession(t, tokAcmeRead)
	held, release = f.holdRequests(only)
	defer release()
	go func() { answer <- f.post(tokAcmeRead, only, ping5) }()
	<-held
	resp, body = f.mcpPost(t, tokAcmeRead, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	wantStatus(t, resp, body, http.StatusTooManyRequests)
	release()
	wantPong(t, "the request in flight at the cap", <-answer)
}

// TestSessionIdleTimeout fires idle timers by hand: one that fires as a
// request is admitted (its stop too late) leaves the session be, and the
// request gets its response; one armed when the session went idle closes
// it, and a request then gets 404 with a JSON-RPC error.
func TestSessionIdleTimeout(t *testing.T) {
	f := newFixture(t, fixtureOptions{rate: 1000, burst: 1000})
	timers := make(chan func(), 8)
	f.srv.sessions.afterIdle = func(fire func()) func() bool {
		timers <- fire
		return func() bool { return false } // fired, or firing, already
	}
	armed := func(what string) func() {
		t.Helper()
		select {
		case fire := <-timers:
			return fire
		default:
			t.Fatalf("no idle timer was armed %s", what)
			return nil
		}
	}
	session := f.openSession(t, tokAcmeRead)
	first := armed("after the initialize")
	held, release := f.holdRequests(session)
	defer release()
	answer := make(chan postAnswer, 1)
	go func() { answer <- f.post(tokAcmeRead, session, ping5) }()
	<-held
	first()
	release()
	wantPong(t, "a request admitted as the idle timer fired", <-answer)
	second := armed("after the ping")
	second()
	wantGone(t, "a request after the idle timeout", f.post(tokAcmeRead, session, ping5))
	f.srv.sessions.mu.Lock()
	n := f.srv.sessions.count
	f.srv.sessions.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions counted after the only one timed out", n)
	}

	// The server's own timers, with SessionIdleTimeout.
	f = newFixture(t, fixtureOptions{rate: 1000, burst: 1000, options: func(o *Options) {
		o.SessionIdleTimeout = time.Millisecond
	}})
	session = f.openSession(t, tokAcmeRead)
	f.eventually(t, "the session times out", func(t *sessionTable) bool { return t.count == 0 })
	wantGone(t, "a request after the server's idle timeout", f.post(tokAcmeRead, session, ping5))
}
