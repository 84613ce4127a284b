package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

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

// TestCappedGet: a get of a concept longer than a read's cap answers the
// first window and says how long the whole is (the other tools' exchanges
// are testdata/transcripts/mcp-*.txtar).
func TestCappedGet(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	out, isErr := call(t, f.mcpSession(t, tokAcmeRead), "get", map[string]any{"ids": []string{"notes/long"}})
	total := len(longBody) + 1 // the body keeps the blank line after the frontmatter
	if want := fmt.Sprintf("@@ sales/notes/long [0..%d of %d]\n", engine.MaxReadBytes, total); isErr || !strings.HasPrefix(out, want) {
		t.Errorf("capped get (error %v) does not start %q:\n%.300s", isErr, want, out)
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
