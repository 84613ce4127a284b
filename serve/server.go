package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/okf-tools/okf/engine"
)

// Options configure a Server.
type Options struct {
	Library   *engine.Library
	Databases *engine.Databases // nil: no databases
	// Grants are the bearer tokens the HTTP handler accepts; stdio needs
	// none.
	Grants []Grant
	// RateLimit is the requests a second each token may make on average,
	// Burst how many at once; 0 takes DefaultRateLimit and DefaultBurst.
	RateLimit float64
	Burst     int
	// MaxRequestBytes bounds every request body; 0 takes
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
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
	DefaultRateLimit       = 50
	DefaultBurst           = 100
	DefaultMaxRequestBytes = 1 << 20
)

// Server serves tenants' knowledge and databases over MCP and the JSON
// HTTP API. It is safe for concurrent use.
type Server struct {
	opts Options
	lib  *engine.Library
	dbs  *engine.Databases

	byHash map[[sha256.Size]byte]*grantState

	mu   sync.Mutex
	mcps map[string]*tenantMCP
}

// grantState is a grant with its rate limiter.
type grantState struct {
	Grant
	limiter *rate.Limiter
}

type tenantMCP struct {
	srv   *mcp.Server
	strat engine.Strategy
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
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &Server{opts: o, lib: o.Library, dbs: o.Databases, byHash: map[[sha256.Size]byte]*grantState{}, mcps: map[string]*tenantMCP{}}
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
	return s, nil
}

func (s *Server) now() time.Time { return s.opts.Now() }

// Tenants lists the tenants the grants name, sorted.
func (s *Server) Tenants() []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range s.byHash {
		if !seen[g.Tenant] {
			seen[g.Tenant] = true
			out = append(out, g.Tenant)
		}
	}
	sort.Strings(out)
	return out
}

// MCPServer returns the MCP server of a tenant, built (and its manifest
// measured for the strategy sentence) on first use.
func (s *Server) MCPServer(ctx context.Context, tenant string) (*mcp.Server, engine.Strategy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.mcps[tenant]; t != nil {
		return t.srv, t.strat, nil
	}
	srv, strat, err := s.newMCPServer(ctx, tenant)
	if err != nil {
		return nil, engine.Strategy{}, err
	}
	s.mcps[tenant] = &tenantMCP{srv: srv, strat: strat}
	return srv, strat, nil
}

// ServeStdio serves one tenant over MCP on a process's standard input and
// output (newline-delimited JSON-RPC) until the client hangs up or ctx
// ends. A message longer than MaxRequestBytes ends the session.
func (s *Server) ServeStdio(ctx context.Context, tenant string, in io.Reader, out io.Writer) error {
	srv, _, err := s.MCPServer(ctx, tenant)
	if err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}, MaxLineLength: int(s.opts.MaxRequestBytes)}
	return srv.Run(ctx, t)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type grantKey struct{}

func grantFrom(ctx context.Context) *grantState {
	g, _ := ctx.Value(grantKey{}).(*grantState)
	return g
}

// Handler returns the HTTP handler: MCP over streamable HTTP at /mcp, the
// JSON API under /v1/{tenant}/, and /healthz, the only route that needs no
// token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/{tenant}/manifest", s.api(false, s.apiManifest))
	mux.HandleFunc("GET /v1/{tenant}/snapshot", s.api(false, s.apiSnapshot))
	mux.HandleFunc("GET /v1/{tenant}/search", s.api(false, s.apiSearch))
	mux.HandleFunc("GET /v1/{tenant}/get", s.api(false, s.apiGet))
	mux.HandleFunc("GET /v1/{tenant}/context", s.api(false, s.apiContext))
	mux.HandleFunc("GET /v1/{tenant}/databases", s.api(false, s.apiDatabases))
	mux.HandleFunc("POST /v1/{tenant}/sql", s.api(false, s.apiSQL))
	mux.HandleFunc("GET /v1/{tenant}/source", s.api(false, s.apiSources))
	mux.HandleFunc("GET /v1/{tenant}/source/{bundle}/{path...}", s.api(false, s.apiSource))
	mux.HandleFunc("PUT /v1/{tenant}/source/{bundle}/{path...}", s.api(true, s.apiPut))
	mux.HandleFunc("DELETE /v1/{tenant}/source/{bundle}/{path...}", s.api(true, s.apiDelete))

	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		g := grantFrom(r.Context())
		srv, _, err := s.MCPServer(r.Context(), g.Tenant)
		if err != nil {
			fmt.Fprintf(s.opts.Log, "okf serve: mcp for tenant %s: %v\n", g.Tenant, err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: s.opts.MaxRequestBytes, SessionTimeout: 30 * time.Minute})
	// The SDK binds each MCP session to the token that opened it.
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: grantFrom(r.Context()).Name}, nil
	}
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler))

	guarded := s.guard(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "ok\n")
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// guard admits a request: a known bearer token, within its rate, with a
// body within bounds.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, msg := s.authenticate(r)
		if g == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="okf"`)
			writeJSONError(w, http.StatusUnauthorized, msg)
			return
		}
		if !g.limiter.Allow() {
			w.Header().Set("Retry-After", "1")
			writeJSONError(w, http.StatusTooManyRequests, fmt.Sprintf("token %s is over its rate limit of %g requests a second", g.Name, s.opts.RateLimit))
			return
		}
		if r.ContentLength > s.opts.MaxRequestBytes {
			writeJSONError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is %d bytes, at most %d", r.ContentLength, s.opts.MaxRequestBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

func (s *Server) authenticate(r *http.Request) (*grantState, string) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, "missing bearer token: send Authorization: Bearer <token>"
	}
	g := s.byHash[sha256.Sum256([]byte(strings.TrimSpace(token)))]
	if g == nil {
		return nil, "invalid token"
	}
	return g, ""
}
