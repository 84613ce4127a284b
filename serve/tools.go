package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/search"
	"github.com/okf-tools/okf/sqlguard"
)

// ManifestURI is the resource holding a tenant's manifest, for clients
// that preload it into the cached prefix of a conversation.
const ManifestURI = "okf://manifest"

// The tools' inputs. Their JSON schemas are inferred from these structs;
// every word of a description is paid for by every conversation, so they
// stay short.
type (
	manifestIn struct {
		Bundle string `json:"bundle,omitempty" jsonschema:"only this bundle's rows"`
	}
	searchIn struct {
		Query  string `json:"query"`
		K      int    `json:"k,omitempty" jsonschema:"hits (default 8)"`
		Bundle string `json:"bundle,omitempty"`
	}
	getIn struct {
		IDs     []string `json:"ids" jsonschema:"id, bundle/id or id#section"`
		Section string   `json:"section,omitempty" jsonschema:"heading slug"`
		Offset  int      `json:"offset,omitempty"`
		Limit   int      `json:"limit,omitempty"`
		Find    string   `json:"find,omitempty" jsonschema:"phrase to jump to"`
	}
	contextIn struct {
		Question string `json:"question"`
		Budget   int    `json:"budget,omitempty" jsonschema:"tokens (default 2000)"`
	}
	noIn     struct{}
	runSQLIn struct {
		Database string `json:"database"`
		SQL      string `json:"sql"`
	}
)

// Strategy measures a tenant's manifest and says whether an agent should
// read it whole or search first. One search answer is estimated as DefaultK
// rows of the tenant's average length; reading the manifest whole pays
// off when it costs at most SearchFirstRatio such answers, the crossover
// measured over a 20-question session by the engine okf builds on.
type Strategy struct {
	Concepts       int
	ManifestTokens int
	SearchTokens   int // estimated cost of one search answer
	SearchFirst    bool
}

// SearchFirstRatio is how many search answers the manifest may cost before
// searching first is cheaper.
const SearchFirstRatio = 20

// Measure measures a view's manifest at now.
func Measure(v *View, now time.Time) Strategy {
	m, _ := v.Snap.ManifestAt("", now)
	s := Strategy{Concepts: len(v.Snap.Concepts), ManifestTokens: tokens.Count(string(m))}
	header := tokens.Count(searchHeader)
	if s.Concepts > 0 {
		perRow := float64(s.ManifestTokens-tokens.Count(string(m[:headerLen(m)]))) / float64(s.Concepts)
		s.SearchTokens = header + int(perRow*search.DefaultK+0.5)
	}
	s.SearchFirst = s.Concepts > 0 && s.ManifestTokens > SearchFirstRatio*s.SearchTokens
	return s
}

// headerLen is the length of the manifest's three header lines.
func headerLen(m []byte) int {
	n := 0
	for range 3 {
		j := bytes.IndexByte(m[n:], '\n')
		if j < 0 {
			return len(m)
		}
		n += j + 1
	}
	return n
}

// Sentence is the advice the manifest tool's description carries.
func (s Strategy) Sentence() string {
	switch {
	case s.Concepts == 0:
		return "This knowledge base is empty for now."
	case s.SearchFirst:
		return fmt.Sprintf("It holds %d concepts (%d tokens, as much as %d searches): search first, and read the manifest of one bundle at most.",
			s.Concepts, s.ManifestTokens, s.ManifestTokens/max(1, s.SearchTokens))
	}
	return fmt.Sprintf("It holds %d concepts (%d tokens, less than %d searches): read it whole once, before searching.",
		s.Concepts, s.ManifestTokens, SearchFirstRatio)
}

// Tool descriptions: what each returns, and when it is worth calling.
const (
	descManifest = "The catalogue of this knowledge as TSV, a row per concept: id, bundle, kind, status, grain, summary, links. " +
		"A deprecated, draft or stale status means the concept may mislead: say so if you use it."
	descSearch = "Rank concepts for a question (BM25 and links); returns manifest rows and pos, the body offset to read at, never bodies. " +
		"Use it to find the ids to get when you do not know them."
	descGet = "Read concepts (batch the ids): the body, one section, or a window (offset, limit; find jumps to a phrase). " +
		"Framed \"@@ bundle/id#section [start..end of total]\"; unknown ids come in \"@@ missing\". Read only what the question needs."
	descContext = "The one call to start a SQL question with: the business rules it likely needs, the columns they use, the join path " +
		"and candidate rows, within a token budget. Then get only what is still unclear."
	descListDatabases = "The databases run_sql can query: name, engine, documenting bundle, allowed tables."
	descRunSQL        = "Run one read-only SELECT (or WITH, VALUES) on a database from list_databases; rows are capped. " +
		"Writes, several statements, hidden columns and unsafe functions are refused with the reason: fix the query, do not retry it as is."
)

// newMCPServer builds the MCP server of one tenant. Every tool reads the
// tenant's current view, so a write or a watched change is seen by the
// next call; the strategy sentence is measured now, once.
func (s *Server) newMCPServer(ctx context.Context, tenant string) (*mcp.Server, Strategy, error) {
	v, err := s.lib.View(ctx, tenant)
	if err != nil {
		return nil, Strategy{}, err
	}
	strat := Measure(v, s.now())
	srv := mcp.NewServer(&mcp.Implementation{Name: "okf", Version: s.opts.Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	t := &tenantTools{s: s, tenant: tenant}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(srv, &mcp.Tool{Name: "manifest", Description: descManifest + " " + strat.Sentence(), Annotations: readOnly}, t.manifest)
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: descSearch, Annotations: readOnly}, t.search)
	mcp.AddTool(srv, &mcp.Tool{Name: "get", Description: descGet, Annotations: readOnly, InputSchema: getSchema()}, t.get)
	mcp.AddTool(srv, &mcp.Tool{Name: "context", Description: descContext, Annotations: readOnly}, t.context)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_databases", Description: descListDatabases, Annotations: readOnly}, t.listDatabases)
	mcp.AddTool(srv, &mcp.Tool{Name: "run_sql", Description: descRunSQL, Annotations: readOnly}, t.runSQL)
	srv.AddResource(&mcp.Resource{URI: ManifestURI, Name: "manifest", MIMEType: "text/tab-separated-values",
		Description: "The manifest tool's answer, to preload."}, t.manifestResource)
	return srv, strat, nil
}

// getSchema is the inferred schema of get, with ids an array of 1 to
// MaxIDs strings rather than a nullable one.
func getSchema() *jsonschema.Schema {
	s, err := jsonschema.For[getIn](nil)
	if err != nil {
		panic("serve: inferring the schema of get: " + err.Error()) // a fixed struct cannot fail
	}
	ids := s.Properties["ids"]
	ids.Types, ids.Type = nil, "array"
	ids.MinItems, ids.MaxItems = new(1), new(MaxIDs)
	return s
}

// tenantTools are the tool handlers of one tenant.
type tenantTools struct {
	s      *Server
	tenant string
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// caller names who is asking, for the audit log: the token's name over
// HTTP, "mcp" over stdio.
func caller(req *mcp.CallToolRequest, tenant string) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		return "okf serve " + tenant + "/" + req.Extra.TokenInfo.UserID
	}
	return "okf mcp " + tenant
}

func (t *tenantTools) manifest(ctx context.Context, _ *mcp.CallToolRequest, in manifestIn) (*mcp.CallToolResult, any, error) {
	v, err := t.s.lib.View(ctx, t.tenant)
	if err != nil {
		return nil, nil, err
	}
	m, err := manifest(v, in.Bundle, t.s.now())
	if err != nil {
		return nil, nil, err
	}
	return text(m), nil, nil
}

func (t *tenantTools) manifestResource(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v, err := t.s.lib.View(ctx, t.tenant)
	if err != nil {
		return nil, err
	}
	m, err := manifest(v, "", t.s.now())
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ManifestURI, MIMEType: "text/tab-separated-values", Text: m}}}, nil
}

func (t *tenantTools) search(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	v, err := t.s.lib.View(ctx, t.tenant)
	if err != nil {
		return nil, nil, err
	}
	hits, err := runSearch(v, searchRequest{Query: in.Query, K: in.K, Bundle: in.Bundle})
	if err != nil {
		return nil, nil, err
	}
	return text(searchText(v, hits, t.s.now())), nil, nil
}

func (t *tenantTools) get(ctx context.Context, _ *mcp.CallToolRequest, in getIn) (*mcp.CallToolResult, any, error) {
	v, err := t.s.lib.View(ctx, t.tenant)
	if err != nil {
		return nil, nil, err
	}
	g, err := runGet(v, getRequest{IDs: in.IDs, Section: in.Section, Offset: in.Offset, Limit: in.Limit, Find: in.Find})
	if err != nil {
		return nil, nil, err
	}
	return text(getText(g)), nil, nil
}

func (t *tenantTools) context(ctx context.Context, _ *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, any, error) {
	v, err := t.s.lib.View(ctx, t.tenant)
	if err != nil {
		return nil, nil, err
	}
	p, err := runContext(v, in.Question, in.Budget)
	if err != nil {
		return nil, nil, err
	}
	return text(p.Text), nil, nil
}

func (t *tenantTools) listDatabases(_ context.Context, _ *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
	return text(databasesText(t.s.dbs.For(t.tenant))), nil, nil
}

func (t *tenantTools) runSQL(ctx context.Context, req *mcp.CallToolRequest, in runSQLIn) (*mcp.CallToolResult, any, error) {
	res, shown, err := t.s.dbs.Query(ctx, t.tenant, caller(req, t.tenant), in.Database, in.SQL)
	if ge, ok := sqlguard.AsError(err); ok {
		r := text(ge.Text(in.SQL))
		r.IsError = true
		return r, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return text(res.Text(shown)), nil, nil
}

// DefinitionTokens measures what a server's tool definitions cost an agent
// in every conversation: the o200k tokens of the tools/list answer a real
// client receives over an in-memory connection.
func DefinitionTokens(ctx context.Context, srv *mcp.Server) (int, error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return 0, fmt.Errorf("measuring the tool definitions: %w", err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "okf-measure"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return 0, fmt.Errorf("measuring the tool definitions: %w", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("measuring the tool definitions: %w", err)
	}
	data, err := json.Marshal(res.Tools)
	if err != nil {
		return 0, err
	}
	return tokens.Count(string(data)), nil
}
