package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/tokens"
)

// ManifestURI is the resource holding a tenant's manifest, for clients
// that preload it into the cached prefix of a conversation.
const ManifestURI = "okf://manifest"

// newMCPServer builds the MCP server of one tenant from the engine's tools.
// Every tool reads the tenant's current view, so a write or a watched
// change is seen by the next call; the strategy sentence is measured now,
// once.
func (s *Server) newMCPServer(ctx context.Context, tenant string) (*mcp.Server, engine.Strategy, error) {
	tb := s.toolbox(tenant)
	tools, strat, err := tb.Tools(ctx)
	if err != nil {
		return nil, engine.Strategy{}, err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "okf", Version: s.opts.Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	srv.AddReceivingMiddleware(s.sessions.recordSessions)
	for _, tool := range tools {
		if slices.Contains(engine.ToolNames, tool.Name) { // syncQueryTools adds the rest
			addTool(srv, tb, tenant, tool)
		}
	}
	srv.AddResource(&mcp.Resource{URI: ManifestURI, Name: "manifest", MIMEType: "text/tab-separated-values",
		Description: "The manifest tool's answer, to preload."}, func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v, err := s.lib.View(ctx, tenant)
		if err != nil {
			return nil, err
		}
		m, err := engine.Manifest(v, "", s.now())
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ManifestURI, MIMEType: "text/tab-separated-values", Text: m}}}, nil
	})
	return srv, strat, nil
}

// addTool serves one of the engine's tools.
func addTool(srv *mcp.Server, tb *engine.Toolbox, tenant string, tool engine.Tool) {
	name := tool.Name
	srv.AddTool(&mcp.Tool{Name: name, Description: tool.Description, InputSchema: tool.InputSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := tb.Call(callerContext(ctx, req), caller(req, tenant), name, req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
		})
}

// syncQueryTools brings a tenant's MCP server's verified-query tools up to
// date with its current view: a query concept added, verified or removed
// since changes the list, and the SDK tells the sessions open that it did.
func (s *Server) syncQueryTools(ctx context.Context, tenant string, t *tenantMCP) error {
	tb := s.toolbox(tenant)
	tools, err := tb.QueryTools(ctx)
	if err != nil {
		return err
	}
	now := map[string]string{}
	for _, tool := range tools {
		now[tool.Name] = string(engine.SchemaJSON(tool.InputSchema)) + tool.Description
	}
	var gone []string
	for name, was := range t.queryTools {
		if now[name] != was {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		t.srv.RemoveTools(gone...)
	}
	for _, tool := range tools {
		if t.queryTools[tool.Name] != now[tool.Name] {
			addTool(t.srv, tb, tenant, tool)
		}
	}
	t.queryTools = now
	return nil
}

// toolbox is the engine's tools of one tenant.
func (s *Server) toolbox(tenant string) *engine.Toolbox {
	tb := &engine.Toolbox{Current: engine.CurrentOf(s.lib, tenant), Databases: s.dbs, Tenant: tenant, Now: s.now, Uses: s.uses(tenant)}
	if s.opts.ListedQueries != nil {
		tb.ListedQueries = s.opts.ListedQueries(tenant)
	}
	return tb
}

// uses is a tenant's count of verified-query calls, shared by its
// toolboxes.
func (s *Server) uses(tenant string) *engine.Uses {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.queryUses[tenant]
	if u == nil {
		if s.queryUses == nil {
			s.queryUses = map[string]*engine.Uses{}
		}
		u = &engine.Uses{}
		s.queryUses[tenant] = u
	}
	return u
}

// callerContext holds a tool call to the policy and values of the grant
// that authenticated it (set where the request was admitted, never from
// the call's arguments); over stdio there is none.
func callerContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if c, ok := req.Extra.TokenInfo.Extra[callerInfo].(engine.Caller); ok {
			return engine.WithCaller(ctx, c)
		}
	}
	return ctx
}

// callerInfo is the key of the caller in an MCP request's token info.
const callerInfo = "okf_caller"

// caller names who is asking, for the audit log: the token's name over
// HTTP, "mcp" over stdio.
func caller(req *mcp.CallToolRequest, tenant string) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		return "okf serve " + tenant + "/" + req.Extra.TokenInfo.UserID
	}
	return "okf mcp " + tenant
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
