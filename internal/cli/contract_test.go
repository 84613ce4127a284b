package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/llm/llmtest"
)

// TestOneToolContract: the built-in agent's model gets the very tools an
// MCP client lists (names, descriptions, input schemas; the agent adds
// submit_answer), and a call with the same arguments reads the same bytes
// through the agent, okf mcp and, for the reading tools, the CLI.
func TestOneToolContract(t *testing.T) {
	calls := []struct {
		tool string
		args string
		cli  []string // the reading command that prints the same text
	}{
		{"manifest", `{}`, []string{"manifest"}},
		{"search", `{"query": "active customer", "k": 3}`, []string{"search", "-k", "3", "active customer"}},
		{"get", `{"ids": ["knowledge/net-order-value", "tables/orders#schema", "nope"]}`, []string{"get", "knowledge/net-order-value", "tables/orders#schema", "nope"}},
		{"context", `{"question": "What is the net order value of each order?"}`, []string{"context", "What is the net order value of each order?"}},
		{"list_databases", `{}`, nil},
		{"run_sql", `{"database": "shop", "sql": "SELECT ordid, grossamt FROM orders ORDER BY ordid"}`, nil},
		{"run_sql", `{"database": "shop", "sql": "DELETE FROM orders"}`, nil},
		{"search", `{"query": "x", "k": 500}`, nil},
		{"orders_of_customer", `{"customer": 1, "status": "paid"}`, nil},
		{"run_query", `{"id": "queries/orders-of-customer", "params": {"customer": "1; DROP TABLE orders"}}`, nil},
		{"values", `{"database": "shop", "column": "customers.custname", "text": "ada"}`, nil},
	}
	var turns []llmtest.Turn
	for _, c := range calls {
		turns = append(turns, llmtest.Turn{Calls: []llmtest.Call{{Name: c.tool, Arguments: c.args}}})
	}
	turns = append(turns, llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "done"}`}}})
	srv := llmtest.New(t, turns...)
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	t.Cleanup(func() { os.Unsetenv("OKF_TEST_KEY") })
	if code, stdout, stderr := run(t, "ask", "--db", "shop", "--max-steps", "20", "Exercise every tool."); code != 0 {
		t.Fatalf("ask: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// What the model was given and what it read back.
	reqs := srv.Requests()
	type tool struct {
		Name, Description string
		Schema            string
	}
	var agentTools []tool
	for _, raw := range llmtest.At[[]any](t, reqs[0], "tools") {
		f := llmtest.At[map[string]any](t, raw, "function")
		if f["name"] == "submit_answer" {
			continue
		}
		agentTools = append(agentTools, tool{llmtest.At[string](t, f, "name"), llmtest.At[string](t, f, "description"), canonical(t, f["parameters"])})
	}
	var agentTexts []string
	for i := range calls {
		msgs := llmtest.At[[]any](t, reqs[i+1], "messages")
		agentTexts = append(agentTexts, llmtest.At[string](t, msgs, len(msgs)-1, "content"))
	}

	cs := mcpStdio(t, "--dir", filepath.Join(dir, "bundles", "shop"), "--config", filepath.Join(dir, "okf.yaml"))
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mcpTools []tool
	for _, tl := range listed.Tools {
		mcpTools = append(mcpTools, tool{tl.Name, tl.Description, canonical(t, tl.InputSchema)})
	}
	if !slices.Equal(agentTools, mcpTools) {
		t.Errorf("the agent's tools and MCP's differ:\nagent %+v\nmcp   %+v", agentTools, mcpTools)
	}
	for i, c := range calls {
		var args map[string]any
		json.Unmarshal([]byte(c.args), &args)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := toolText(t, res)
		if text != agentTexts[i] {
			t.Errorf("%s %s: the agent read\n%s\nMCP\n%s", c.tool, c.args, agentTexts[i], text)
		}
		if c.cli == nil {
			continue
		}
		_, out, _ := run(t, append(c.cli, "--dir", filepath.Join(dir, "bundles", "shop"))...)
		if out != text {
			t.Errorf("okf %s: the CLI printed\n%s\nMCP\n%s", strings.Join(c.cli, " "), out, text)
		}
	}
	// okf values reads the database of okf.yaml, not a bundle.
	if _, out, _ := run(t, "values", "shop", "customers.custname", "ada"); out != agentTexts[len(calls)-1]+"\n" || !strings.Contains(out, "\n'Ada'\n") {
		t.Errorf("okf values printed\n%s\nthe agent read\n%s", out, agentTexts[len(calls)-1])
	}
}

// canonical is a JSON value with its keys sorted, to compare schemas.
func canonical(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	json.Unmarshal(data, &back)
	out, _ := json.Marshal(back)
	return string(out)
}

// toolText is the text an MCP tool call returned first; no content, or
// content that is not text, fails the test.
func toolText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("the tool returned no content")
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return text.Text
}

// mcpStdio runs okf mcp in-process with args and connects a client to it.
func mcpStdio(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main(append([]string{"mcp"}, args...), inR, outW, &stderr)
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if code := <-done; code != 0 {
			t.Errorf("okf mcp exited %d: %s", code, stderr.String())
		}
	})
	return cs
}
