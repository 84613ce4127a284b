package serve

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTable counts the MCP sessions of streamable HTTP, per grant and
// in all, so that clients that open sessions and abandon them cannot hold
// memory without bound. At a cap, a new session takes the place of the
// least recently used idle one (no request in flight, no event stream
// open); when none is idle, it is refused. A session idle for the idle
// timeout is closed.
//
// It is also what decides which sessions a request may reach: a session
// is in the table from the moment its initialize reaches the server until
// it closes, is evicted or times out, and a request for any other id, or
// for another grant's session, is answered 404 before the SDK sees it.
// The table closes a session (evicted, timed out) only once it has taken
// it out, and never one with a request in flight: so no request reaches a
// session being closed, and a request admitted gets its response.
type sessionTable struct {
	perGrant, total int
	now             func() time.Time // when a session was last used; read under mu
	// afterIdle arms a session's idle timer (time.AfterFunc with the idle
	// timeout) and returns its Stop; a test fires the timers itself.
	afterIdle func(fire func()) (stop func() bool)
	// closeSession closes a session that has left the table, outside mu:
	// closing calls back into the SDK's handler, which must not wait on
	// it. Tests hold it to overtake the close.
	closeSession func(*mcp.ServerSession)
	// admitted, when a test sets it, is called as a request of a session
	// is handed to the SDK, to hold it there.
	admitted func(id string)

	mu      sync.Mutex
	live    map[string]*liveSession // by session id
	count   int                     // live sessions and sessions being opened
	byGrant map[string]int          // the same, per grant name
}

type liveSession struct {
	id, grant string
	ss        *mcp.ServerSession
	busy      int       // requests in flight
	last      time.Time // when the last request began or ended
	// idleGen is the generation of the idle timer armed as busy last fell
	// to 0; it changes whenever that timer is disarmed, so that a timer
	// firing as it was stopped finds itself out of date.
	idleGen  uint64
	stopIdle func() bool // nil when no timer is armed
}

// sessionSlot is the room kept for a session while the request that opens
// it runs; the session is recorded in it, and in the table, when the
// client initializes.
type sessionSlot struct {
	grant string
	s     *liveSession
}

type slotKey struct{}

func newSessionTable(perGrant, total int, idle time.Duration) *sessionTable {
	return &sessionTable{perGrant: perGrant, total: total, now: time.Now,
		afterIdle:    func(fire func()) func() bool { return time.AfterFunc(idle, fire).Stop },
		closeSession: func(ss *mcp.ServerSession) { ss.Close() },
		live:         map[string]*liveSession{}, byGrant: map[string]int{}}
}

// reserve keeps room for a new session of a grant, closing the least
// recently used idle session when a cap is reached; it refuses with 429
// when the grant's sessions are all busy, 503 when the server's are.
func (t *sessionTable) reserve(grant string) (*sessionSlot, *httpError) {
	var victims []*mcp.ServerSession
	defer func() {
		for _, ss := range victims {
			t.closeSession(ss)
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byGrant[grant] >= t.perGrant {
		v := t.leastRecent(grant)
		if v == nil {
			return nil, &httpError{http.StatusTooManyRequests, fmt.Sprintf("token %s has %d MCP sessions open, the most it may, and none is idle: end one (DELETE /mcp with its Mcp-Session-Id)", grant, t.perGrant)}
		}
		victims = append(victims, t.remove(v))
	}
	if t.count >= t.total {
		v := t.leastRecent("")
		if v == nil {
			return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the server has %d MCP sessions open, the most it may, and none is idle: try again later", t.total)}
		}
		victims = append(victims, t.remove(v))
	}
	t.count++
	t.byGrant[grant]++
	return &sessionSlot{grant: grant}, nil
}

// leastRecent is the idle session used longest ago, of one grant or of
// any (""); nil when every one is busy.
func (t *sessionTable) leastRecent(grant string) *liveSession {
	var oldest *liveSession
	for _, s := range t.live {
		if s.busy == 0 && (grant == "" || s.grant == grant) && (oldest == nil || s.last.Before(oldest.last)) {
			oldest = s
		}
	}
	return oldest
}

// remove takes a session out of the table; the caller closes it after
// releasing mu.
func (t *sessionTable) remove(s *liveSession) *mcp.ServerSession {
	t.disarm(s)
	delete(t.live, s.id)
	t.count--
	t.byGrant[s.grant]--
	if t.byGrant[s.grant] == 0 {
		delete(t.byGrant, s.grant)
	}
	return s.ss
}

// begin and end count a request of a session in and out, arming its idle
// timer when the last one ends.
func (t *sessionTable) begin(s *liveSession) {
	if s.busy == 0 {
		t.disarm(s)
	}
	s.busy++
	s.last = t.now()
}

func (t *sessionTable) end(s *liveSession) {
	s.busy--
	s.last = t.now()
	if s.busy == 0 {
		gen := s.idleGen
		s.stopIdle = t.afterIdle(func() { t.expire(s, gen) })
	}
}

func (t *sessionTable) disarm(s *liveSession) {
	if s.stopIdle != nil {
		s.stopIdle()
		s.stopIdle = nil
	}
	s.idleGen++
}

// expire closes a session its idle timer fired for, unless a request
// began in it since the timer was armed.
func (t *sessionTable) expire(s *liveSession, gen uint64) {
	t.mu.Lock()
	if t.live[s.id] != s || s.idleGen != gen {
		t.mu.Unlock()
		return
	}
	ss := t.remove(s)
	t.mu.Unlock()
	t.closeSession(ss)
}

// opened records the session a slot's request opened, when it
// initializes: from now on its id is served, and the initialize is its
// request in flight.
func (t *sessionTable) opened(slot *sessionSlot, ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slot.s != nil {
		return
	}
	s := &liveSession{id: ss.ID(), grant: slot.grant, ss: ss}
	t.begin(s)
	slot.s = s
	t.live[s.id] = s
	go func() {
		// The session closed: ended by its client, or by the SDK.
		ss.Wait()
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.live[s.id] == s {
			t.remove(s)
		}
	}()
}

// settle ends a slot's request: the session it opened counts as live
// until it closes (ended by the client, timed out, or evicted); a request
// that opened none gives its room back.
func (t *sessionTable) settle(slot *sessionSlot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := slot.s; s != nil {
		if t.live[s.id] == s {
			t.end(s)
		}
		return
	}
	t.count--
	t.byGrant[slot.grant]--
	if t.byGrant[slot.grant] == 0 {
		delete(t.byGrant, slot.grant)
	}
}

// enter admits a request to a session, busy until leave: only a session
// in the table, of the request's own grant.
func (t *sessionTable) enter(id, grant string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.live[id]
	if s == nil || s.grant != grant {
		return false
	}
	t.begin(s)
	return true
}

func (t *sessionTable) leave(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.live[id]; s != nil {
		t.end(s)
	}
}

// recordSessions is the MCP middleware that hands the table the session
// an initialize opens; the slot is in the context of every request of a
// session, from the request that opened it.
func (t *sessionTable) recordSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if slot, ok := ctx.Value(slotKey{}).(*sessionSlot); ok && method == "initialize" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				t.opened(slot, ss)
			}
		}
		return next(ctx, method, req)
	}
}
