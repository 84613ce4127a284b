package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/tokens"
)

func pgExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// TestTools calls every tool over streamable HTTP with the Go SDK's client
// and checks what an agent reads.
func TestTools(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	cs := f.mcpSession(t, tokAcmeRead)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s has no read-only hint", tool.Name)
		}
	}
	if got := strings.Join(names, " "); got != "context get list_databases manifest run_sql search values" {
		t.Errorf("tools = %s", got)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "manifest" {
			mustContain(t, "manifest description", tool.Description, "It holds 5 concepts", "read it whole once", "stale")
		}
	}

	out, isErr := call(t, cs, "manifest", nil)
	if isErr {
		t.Fatal(out)
	}
	mustContain(t, "manifest", out, "# tenant: acme\n", "# bundles: sales\n", "knowledge/old-margin\tsales\tbusiness_rule\tstale\t")
	mustNotContain(t, "manifest", out, "zanzibar")

	out, _ = call(t, cs, "manifest", map[string]any{"bundle": "nope"})
	mustContain(t, "manifest of an unknown bundle", out, "no such bundle: nope (bundles: sales)")

	out, _ = call(t, cs, "search", map[string]any{"query": "active customer", "k": 1})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != strings.TrimSuffix(engine.SearchHeader, "\n") || !strings.HasPrefix(lines[1], "knowledge/active-customer\tsales\t") {
		t.Errorf("search:\n%s", out)
	}
	if cells := strings.Split(lines[1], "\t"); len(cells) != 8 || cells[7] == "-" {
		t.Errorf("search hit has no pos cell: %q", lines[1])
	}
	mustContain(t, "search expansion", out, "tables/orders\tsales\t") // linked from the hit

	out, _ = call(t, cs, "get", map[string]any{"ids": []string{"tables/orders#joins", "knowledge/active-customer", "nope", "../../../etc/passwd"}})
	mustContain(t, "get", out,
		"@@ sales/tables/orders#joins [0..",
		"* [customers](customers.md) on custref",
		"@@ sales/knowledge/active-customer [0..",
		"@@ missing nope ../../../etc/passwd\n")

	out, _ = call(t, cs, "get", map[string]any{"ids": []string{"notes/long"}})
	total := len(longBody) + 1 // the body keeps the blank line after the frontmatter
	mustContain(t, "capped get", out, fmt.Sprintf("@@ sales/notes/long [0..%d of %d]", engine.MaxReadBytes, total))
	out, _ = call(t, cs, "get", map[string]any{"ids": []string{"notes/long"}, "find": "needle phrase"})
	mustContain(t, "get with find", out, "matches at ", "The needle phrase sits here.")
	out, _ = call(t, cs, "get", map[string]any{"ids": []string{"tables/orders"}, "section": "nope"})
	mustContain(t, "get of an unknown section", out, "@@ error tables/orders: no such section: tables/orders#nope (sections: schema joins)")

	out, _ = call(t, cs, "context", map[string]any{"question": "How many active customers ordered?", "budget": 600})
	mustContain(t, "context", out, "Active Customer")
	if n := tokens.Count(out); n > 600 {
		t.Errorf("context pack is %d tokens, over its budget of 600", n)
	}

	out, _ = call(t, cs, "list_databases", nil)
	if out != "name\tengine\tbundle\ttables\nshop\tsqlite\tsales\tall\n" {
		t.Errorf("list_databases:\n%s", out)
	}

	out, isErr = call(t, cs, "run_sql", map[string]any{"database": "shop", "sql": "SELECT custref, sum(grossamt) AS total FROM orders WHERE custref < 100 GROUP BY custref ORDER BY custref"})
	if isErr || out != engine.FrameRows("custref | total\n10 | 162.5\n11 | 80\n(2 rows)") {
		t.Errorf("run_sql (error %v):\n%s", isErr, out)
	}
	out, isErr = call(t, cs, "run_sql", map[string]any{"database": "shop", "sql": "DELETE FROM orders"})
	if !isErr {
		t.Errorf("a DELETE was not an error: %s", out)
	}
	mustContain(t, "refused DELETE", out, "Error: refused by the validator")

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ManifestURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/tab-separated-values" || !strings.HasPrefix(res.Contents[0].Text, "# tenant: acme\n") {
		t.Errorf("manifest resource = %+v", res.Contents)
	}

	// Bad arguments are tool errors the model can read, not crashes.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"query": "x", "k": 500}, "k is 500: give 1 to 50"},
		{"search", map[string]any{"query": " "}, "the query is empty"},
		{"get", map[string]any{"ids": []string{}}, "give at least one id"},
		{"get", map[string]any{"id": "a"}, `unknown field "id"`},
		{"get", map[string]any{"ids": []string{"a"}, "offset": -1}, "offset and limit must not be negative"},
		{"context", map[string]any{"question": "x", "budget": 1 << 20}, "budget is 1048576 tokens"},
		{"search", map[string]any{}, "query"},
	} {
		out, isErr := call(t, cs, tc.tool, tc.args)
		if !isErr || !strings.Contains(out, tc.want) {
			t.Errorf("%s %v: error %v, %q; want an error containing %q", tc.tool, tc.args, isErr, out, tc.want)
		}
	}
}

// TestDefinitionTokens measures what the tool definitions cost every
// conversation, and holds them under the budget docs/mcp.md states.
func TestDefinitionTokens(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	srv, _, err := f.srv.MCPServer(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	n, err := DefinitionTokens(context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seven tool definitions: %d o200k tokens", n)
	if n > 800 {
		t.Errorf("the tool definitions cost %d tokens, over the 800 docs/mcp.md promises", n)
	}
	cs := f.mcpSession(t, tokAcmeRead)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(res.Tools)
	if got := tokens.Count(string(data)); got != n {
		t.Errorf("over HTTP the definitions cost %d tokens, in memory %d", got, n)
	}
}
