package serve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/serve/oauth"
)

// Options configure a Server.
type Options struct {
	Library   engine.Library
	Databases *engine.Databases // nil: no databases
	// Grants are the bearer tokens the HTTP handler accepts; stdio needs
	// none.
	Grants []Grant
	// OAuth, when set, also admits callers signed in with an
	// authorization server (oauthgate.go).
	OAuth *OAuth
	// Policies are the policies grants may name, by name: what a caller
	// held to one may see of its tenant's databases.
	Policies map[string]*engine.Policy
	// RateLimit is the requests a second each token may make on average,
	// Burst how many at once; 0 takes DefaultRateLimit and DefaultBurst.
	RateLimit float64
	Burst     int
	// MaxRequestBytes bounds every request body, and every line over
	// stdio; 0 takes DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxSessionsPerGrant and MaxSessions cap the MCP sessions open over
	// streamable HTTP, per token and in all; SessionIdleTimeout closes a
	// session with no request in flight (an event stream counts) for that
	// long. 0 takes the defaults.
	MaxSessionsPerGrant int
	MaxSessions         int
	SessionIdleTimeout  time.Duration
	// ReadTimeout bounds the reading of a request, its headers and then
	// its whole body; 0 takes DefaultReadTimeout.
	ReadTimeout time.Duration
	// ShutdownGrace is how long requests in flight may take to finish once
	// shutdown begins; 0 takes DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// AllowedHosts are host names, besides loopback and the host listened
	// on, that a request may name in Host (checked when listening on
	// loopback) and in Origin.
	AllowedHosts []string
	// AllowedOrigins are further origins (scheme://host[:port]) a
	// browser's request may come from.
	AllowedOrigins []string
	// ListedQueries says how many verified queries a tenant lists as tools
	// of their own (engine.Toolbox.ListedQueries); nil takes
	// engine.DefaultQueryTools for every tenant.
	ListedQueries func(tenant string) int
	// QueryUses are the tenants' counts of verified-query calls so far
	// (engine.AuditedUses); a tenant not in it starts from none.
	QueryUses map[string]*engine.Uses
	// Now is the clock stale statuses are read against; nil is time.Now.
	Now func() time.Time
	// Version is reported to MCP clients.
	Version string
	// Log gets failures that the client is not shown in full; nil
	// discards them.
	Log io.Writer
}

// Defaults of Options.
const (
	DefaultRateLimit           = 50
	DefaultBurst               = 100
	DefaultMaxRequestBytes     = 1 << 20
	DefaultMaxSessionsPerGrant = 64
	DefaultMaxSessions         = 4096
	DefaultSessionIdleTimeout  = 5 * time.Minute
	DefaultReadTimeout         = 10 * time.Second
	DefaultShutdownGrace       = 30 * time.Second
)

// Server serves tenants' knowledge and databases over MCP and the JSON
// HTTP API. It is safe for concurrent use.
type Server struct {
	opts Options
	lib  engine.Library
	dbs  *engine.Databases

	byHash   map[[sha256.Size]byte]*grantState
	oauth    *oauthGate // nil without OAuth
	sessions *sessionTable
	origins  map[string]bool // AllowedOrigins, normalized

	mcpMu     sync.Mutex // held while a tenant's MCP server is built or synced
	mcps      map[string]*tenantMCP
	mu        sync.Mutex
	queryUses map[string]*engine.Uses
}

// callerOf is the caller a grant makes: its policy and values.
func (s *Server) callerOf(g *grantState) engine.Caller {
	return engine.Caller{Policy: s.opts.Policies[g.Policy], Values: g.Caller}
}

// grantState is a grant with its rate limiter.
type grantState struct {
	Grant
	limiter *rate.Limiter
}

type tenantMCP struct {
	srv   *mcp.Server
	strat engine.Strategy
	// queryTools are the verified-query tools served, name → schema and
	// description.
	queryTools map[string]string
}

// New makes a server. Grant names must be unique: they name the caller
// in the audit log and bind MCP sessions to their token.
func New(o Options) (*Server, error) {
	if o.Library == nil {
		return nil, errors.New("serve: no library")
	}
	if o.RateLimit <= 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	o.MaxSessionsPerGrant = cmp.Or(max(o.MaxSessionsPerGrant, 0), DefaultMaxSessionsPerGrant)
	o.MaxSessions = cmp.Or(max(o.MaxSessions, 0), DefaultMaxSessions)
	o.SessionIdleTimeout = cmp.Or(max(o.SessionIdleTimeout, 0), DefaultSessionIdleTimeout)
	o.ReadTimeout = cmp.Or(max(o.ReadTimeout, 0), DefaultReadTimeout)
	o.ShutdownGrace = cmp.Or(max(o.ShutdownGrace, 0), DefaultShutdownGrace)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &Server{opts: o, lib: o.Library, dbs: o.Databases, byHash: map[[sha256.Size]byte]*grantState{}, mcps: map[string]*tenantMCP{}, queryUses: maps.Clone(o.QueryUses),
		sessions: newSessionTable(o.MaxSessionsPerGrant, o.MaxSessions, o.SessionIdleTimeout), origins: map[string]bool{}}
	for _, origin := range o.AllowedOrigins {
		s.origins[normalOrigin(origin)] = true
	}
	names := map[string]bool{}
	for _, g := range o.Grants {
		if names[g.Name] {
			return nil, fmt.Errorf("serve: two tokens are called %q", g.Name)
		}
		if _, dup := s.byHash[g.hash]; dup {
			return nil, fmt.Errorf("serve: token %q is given twice", g.Name)
		}
		names[g.Name] = true
		s.byHash[g.hash] = &grantState{Grant: g, limiter: rate.NewLimiter(rate.Limit(o.RateLimit), o.Burst)}
	}
	if o.OAuth != nil {
		gate, err := newOAuthGate(*o.OAuth)
		if err != nil {
			return nil, err
		}
		s.oauth = gate
	}
	return s, nil
}

func (s *Server) now() time.Time { return s.opts.Now() }

// Tenants lists the tenants the grants and OAuth's callers may read,
// sorted.
func (s *Server) Tenants() []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, g := range s.byHash {
		add(g.Tenant)
	}
	if s.oauth != nil {
		for t := range s.oauth.tenants {
			add(t)
		}
	}
	sort.Strings(out)
	return out
}

// MCPServer returns the MCP server of a tenant, built (and its manifest
// measured for the strategy sentence) on first use; later uses bring its
// verified-query tools up to date.
func (s *Server) MCPServer(ctx context.Context, tenant string) (*mcp.Server, engine.Strategy, error) {
	s.mcpMu.Lock()
	defer s.mcpMu.Unlock()
	// Callers held to a policy see its databases and query tools only:
	// each policy has a server of its own.
	key := tenant + "\x00" + engine.PolicyName(ctx)
	t := s.mcps[key]
	if t == nil {
		srv, strat, err := s.newMCPServer(ctx, tenant)
		if err != nil {
			return nil, engine.Strategy{}, err
		}
		t = &tenantMCP{srv: srv, strat: strat}
		s.mcps[key] = t
	}
	if err := s.syncQueryTools(ctx, tenant, t); err != nil {
		return nil, engine.Strategy{}, err
	}
	return t.srv, t.strat, nil
}

type grantKey struct{}

func grantFrom(ctx context.Context) *grantState {
	g, _ := ctx.Value(grantKey{}).(*grantState)
	return g
}

// Handler returns the HTTP handler: MCP over streamable HTTP at /mcp, the
// JSON API under /v1/{tenant}/, and /healthz, the only route that needs no
// token.
func (s *Server) Handler() http.Handler { return s.handler(context.Background(), "") }

// route is one route of the JSON API.
type route struct {
	method, path string
	write        bool
	h            func(w http.ResponseWriter, r *http.Request, tenant string) error
}

// handler is Handler for a server listening on listenHost (a name it
// answers to besides the allowed hosts); MCP event streams end when
// stopping does.
func (s *Server) handler(stopping context.Context, listenHost string) http.Handler {
	mux := http.NewServeMux()
	routes := []route{
		{"GET", "/v1/{tenant}/manifest", false, s.apiManifest},
		{"GET", "/v1/{tenant}/snapshot", false, s.apiSnapshot},
		{"GET", "/v1/{tenant}/search", false, s.apiSearch},
		{"GET", "/v1/{tenant}/get", false, s.apiGet},
		{"GET", "/v1/{tenant}/context", false, s.apiContext},
		{"GET", "/v1/{tenant}/databases", false, s.apiDatabases},
		{"POST", "/v1/{tenant}/sql", false, s.apiSQL},
		{"GET", "/v1/{tenant}/values", false, s.apiValues},
		{"GET", "/v1/{tenant}/queries", false, s.apiQueries},
		{"POST", "/v1/{tenant}/queries/{id...}", false, s.apiRunQuery},
		{"GET", "/v1/{tenant}/source", false, s.apiSources},
		{"GET", "/v1/{tenant}/source/{bundle}/{path...}", false, s.apiSource},
		{"PUT", "/v1/{tenant}/source/{bundle}/{path...}", true, s.apiPut},
		{"DELETE", "/v1/{tenant}/source/{bundle}/{path...}", true, s.apiDelete},
	}
	allowed := map[string][]string{}
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.path, s.api(rt.write, rt.h))
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	// The mux's own 404 and 405 answers are plain text; the API answers
	// every error in its JSON shape.
	for path, methods := range allowed {
		if slices.Contains(methods, "GET") {
			methods = append(methods, "HEAD")
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeJSONError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this route takes %s", r.Method, r.URL.Path, strings.Join(methods, ", ")))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no route %s: the API is under /v1/{tenant}/, MCP at /mcp", r.URL.Path))
	})

	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		g := grantFrom(r.Context())
		srv, _, err := s.MCPServer(engine.WithCaller(r.Context(), s.callerOf(g)), g.Tenant)
		if err != nil {
			fmt.Fprintf(s.opts.Log, "okf serve: mcp for tenant %s: %v\n", g.Tenant, err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: s.opts.MaxRequestBytes,
		// The session table times idle sessions out (the SDK's own timer
		// could close a session a request had just reached), and checkHost
		// below checks Host, with the allowed hosts.
		DisableLocalhostProtection: true})
	// The SDK binds each MCP session to the token that opened it; each
	// request carries its caller to the tools.
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		g := grantFrom(r.Context())
		return &auth.TokenInfo{UserID: g.Name, Extra: map[string]any{callerInfo: s.callerOf(g)}}, nil
	}
	mux.Handle("/mcp", s.mcpGate(stopping, auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler)))

	guarded := s.guard(mux)
	own := newHostNames(s.opts.AllowedHosts, listenHost)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "ok\n")
			return
		}
		if s.oauth != nil && (r.URL.Path == metadataPath || strings.HasPrefix(r.URL.Path, metadataPath+"/")) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// Read before signing in: it says where to sign in.
			s.oauth.serveMetadata(w)
			return
		}
		if err := checkHost(r, own); err != nil {
			refuse(w, r, http.StatusMisdirectedRequest, err.Error())
			return
		}
		if err := checkOrigin(r, own, s.origins); err != nil {
			refuse(w, r, http.StatusForbidden, err.Error())
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// guard admits a request: a known bearer token, within its rate, with a
// body within bounds.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, err := s.authenticate(r)
		if g == nil {
			if s.oauth != nil {
				w.Header().Set("WWW-Authenticate", s.oauth.challenge(err))
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer realm="okf"`)
			}
			refuse(w, r, http.StatusUnauthorized, err.Error())
			return
		}
		if g.Policy != "" && s.opts.Policies[g.Policy] == nil {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("%s is held to policy %q, which this server does not define", g.Name, g.Policy))
			return
		}
		if !g.limiter.Allow() {
			w.Header().Set("Retry-After", "1")
			refuse(w, r, http.StatusTooManyRequests, fmt.Sprintf("token %s is over its rate limit of %g requests a second", g.Name, s.opts.RateLimit))
			return
		}
		if r.ContentLength > s.opts.MaxRequestBytes {
			refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is %d bytes, at most %d", r.ContentLength, s.opts.MaxRequestBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

// refuse answers a request the server will not serve: in JSON-RPC's error
// shape at /mcp, where MCP clients read it, in the API's elsewhere.
func refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if r.URL.Path == "/mcp" {
		writeRPCError(w, status, &rpcError{code: codeRefused, msg: msg})
		return
	}
	writeJSONError(w, status, msg)
}

// authenticate returns the grant of a request's bearer token: one okf
// minted, or a JWT of the OAuth issuer; else why not.
func (s *Server) authenticate(r *http.Request) (*grantState, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, errors.New("missing bearer token: send Authorization: Bearer <token>")
	}
	if g := s.byHash[sha256.Sum256([]byte(token))]; g != nil {
		return g, nil
	}
	if s.oauth != nil && oauth.IsJWT(token) {
		g, err := s.oauth.admit(r.Context(), token, s.opts.RateLimit, s.opts.Burst)
		if err != nil {
			var bad *oauth.InvalidToken
			if !errors.As(err, &bad) {
				// The issuer's keys could not be read: the caller is
				// told no more than that its token was not checked.
				fmt.Fprintf(s.opts.Log, "okf serve: %v\n", err)
				return nil, &oauth.InvalidToken{Reason: "the issuer's keys could not be read; try again later"}
			}
			return nil, err
		}
		return g, nil
	}
	return nil, errors.New("invalid token")
}
