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
// open); when none is idle, it is refused.
//
// It is also what decides which sessions a request may reach: a session
// is in the table from the moment its initialize reaches the server until
// it closes or is chosen for eviction, and a request for any other id is
// answered 404 before the SDK sees it. So a request never reaches a
// session that is being closed.
type sessionTable struct {
	perGrant, total int
	now             func() time.Time // when a session was last used; read under mu

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
}

// sessionSlot is the room kept for a session while the request that opens
// it runs; the session is recorded in it, and in the table, when the
// client initializes.
type sessionSlot struct {
	grant string
	s     *liveSession
}

type slotKey struct{}

func newSessionTable(perGrant, total int) *sessionTable {
	return &sessionTable{perGrant: perGrant, total: total, now: time.Now,
		live: map[string]*liveSession{}, byGrant: map[string]int{}}
}

// reserve keeps room for a new session of a grant, closing the least
// recently used idle session when a cap is reached; it refuses with 429
// when the grant's sessions are all busy, 503 when the server's are.
func (t *sessionTable) reserve(grant string) (*sessionSlot, *httpError) {
	var victims []*mcp.ServerSession
	defer func() {
		// Closing a session calls back into the SDK's handler, which
		// must not wait on this table's lock.
		for _, ss := range victims {
			ss.Close()
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

func (t *sessionTable) remove(s *liveSession) *mcp.ServerSession {
	delete(t.live, s.id)
	t.count--
	t.byGrant[s.grant]--
	if t.byGrant[s.grant] == 0 {
		delete(t.byGrant, s.grant)
	}
	return s.ss
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
	s := &liveSession{id: ss.ID(), grant: slot.grant, ss: ss, busy: 1, last: t.now()}
	slot.s = s
	t.live[s.id] = s
	go func() {
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
		s.busy--
		s.last = t.now()
		return
	}
	t.count--
	t.byGrant[slot.grant]--
	if t.byGrant[slot.grant] == 0 {
		delete(t.byGrant, slot.grant)
	}
}

// use marks a session busy for a request's length (delta 1 as it begins,
// -1 as it ends); it reports whether the session is in the table, which
// a request must find it in to be served.
func (t *sessionTable) use(id string, delta int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.live[id]
	if s == nil {
		return false
	}
	s.busy += delta
	s.last = t.now()
	return true
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
