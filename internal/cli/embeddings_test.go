package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/okf-tools/okf/embed/embedtest"
)

var embedBundle = map[string]string{
	"sales/tables/orders.md":    "---\ntype: Table\ntitle: Orders\ndescription: One row per order.\n---\n# Schema\n| ordid | grossamt |\n",
	"sales/tables/customers.md": "---\ntype: Table\ntitle: Customers\ndescription: One row per customer.\n---\n# Schema\n| custid | region |\n",
	"sales/knowledge/active.md": "---\ntype: Business Rule\ntitle: Active Customer\ndescription: A customer who bought recently.\n---\nA customer with a paid order in the last 90 days.\n",
}

// TestImportEmbeds: with an embeddings section, import embeds the new
// concepts and says what it cost; again, it reuses them; without the
// section it says nothing of embeddings.
func TestImportEmbeds(t *testing.T) {
	srv := embedtest.New(t)
	srv.APIKey = "sk-test"
	t.Setenv("EMBED_KEY", "sk-test")
	cfg := writeConfig(t, fmt.Sprintf("embeddings:\n  url: %s\n  model: test-embed\n  api_key: ${EMBED_KEY}\n  batch: 2\n", srv.URL()))
	dir := writeBundle(t, embedBundle)
	data := storeArgs(t)

	code, _, errOut := run(t, cmd(data, "import", dir, "--config", cfg)...)
	if code != 0 || !strings.Contains(errOut, "embeddings: 2 calls, ") || !strings.Contains(errOut, " tokens, 0 reused\n") || srv.Texts() != 3 {
		t.Fatalf("first import: exit %d, %d texts embedded, stderr:\n%s", code, srv.Texts(), errOut)
	}
	code, _, errOut = run(t, cmd(data, "import", dir, "--config", cfg)...)
	if code != 0 || !strings.Contains(errOut, "embeddings: 0 calls, 0 tokens, 3 reused\n") || srv.Texts() != 3 {
		t.Fatalf("unchanged import: exit %d, %d texts embedded, stderr:\n%s", code, srv.Texts(), errOut)
	}
	// A failing endpoint fails the import, after the commit, saying so.
	srv.Fail(embedtest.Fault{Status: 400})
	changed := writeBundle(t, map[string]string{"sales/tables/orders.md": "---\ntype: Table\ntitle: Orders\n---\nChanged.\n"})
	code, out, errOut := run(t, cmd(data, "import", changed, "--config", cfg)...)
	if code != 1 || !strings.Contains(out, "commit 2,") || !strings.Contains(errOut, "HTTP 400") || !strings.Contains(errOut, "importing again embeds the rest") {
		t.Errorf("a failing endpoint: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}

	// Without the section, nothing new.
	plain := writeConfig(t, "audit_log: audit.jsonl\n")
	code, _, errOut = run(t, cmd(storeArgs(t), "import", dir, "--config", plain)...)
	if code != 0 || strings.Contains(errOut, "embeddings") {
		t.Errorf("without embeddings: exit %d, stderr:\n%s", code, errOut)
	}
	// An okf.yaml import was not pointed at that does not load is a
	// warning; one it was pointed at, an error.
	broken := writeConfig(t, "embeddings: {url: http://h/v1}\n")
	if code, _, errOut := run(t, cmd(storeArgs(t), "import", dir, "--config", broken)...); code != 2 || !strings.Contains(errOut, "model is missing") {
		t.Errorf("a broken --config: exit %d, stderr:\n%s", code, errOut)
	}
	t.Chdir(filepath.Dir(broken))
	if code, _, errOut := run(t, cmd(storeArgs(t), "import", dir)...); code != 0 || !strings.Contains(errOut, "importing without embeddings") {
		t.Errorf("a broken okf.yaml in the folder: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestMCPEmbeds: okf mcp with an embeddings section embeds the folder's
// concepts, then each question, once; a failing endpoint at question time
// leaves the tool answering.
func TestMCPEmbeds(t *testing.T) {
	srv := embedtest.New(t)
	cfg := writeConfig(t, fmt.Sprintf("embeddings:\n  url: %s\n  model: test-embed\n", srv.URL()))
	bundles := writeBundle(t, embedBundle)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "--dir", bundles, "--config", cfg}, inR, outW, &stderr)
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool, arg, value string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{arg: value}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", tool, err, res)
		}
		return toolText(t, res)
	}
	if text := call("search", "query", "customer who bought"); !strings.Contains(text, "knowledge/active") {
		t.Errorf("search:\n%s", text)
	}
	call("context", "question", "customer who bought")
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[0].Input) != 3 || len(reqs[1].Input) != 1 || reqs[1].Input[0] != "customer who bought" {
		t.Errorf("requests %+v: want the 3 concepts, then the question once", reqs)
	}
	srv.Fail(embedtest.Fault{Status: 500})
	if text := call("search", "query", "orders"); !strings.Contains(text, "tables/orders") {
		t.Errorf("search with a failing endpoint:\n%s", text)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("okf mcp exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{"search fuses BM25 with the embeddings of test-embed", "HTTP 500", "this question ranks by BM25 alone"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestEvalRetrievalEmbeds: okf eval retrieval with an embeddings section
// measures what a served search would answer: the concepts and questions
// embedded, the cost said.
func TestEvalRetrievalEmbeds(t *testing.T) {
	srv := embedtest.New(t)
	cfg := writeConfig(t, fmt.Sprintf("embeddings:\n  url: %s\n  model: test-embed\n", srv.URL()))
	bundles := writeBundle(t, embedBundle)
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	q := `{"instance_id": "sales_1", "selected_database": "sales", "query": "Which customers bought lately?", "sol_sql": ["SELECT custid FROM customers"], "external_knowledge": []}` + "\n"
	if err := os.WriteFile(questions, []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "eval", "retrieval", "--bundles", bundles, "--questions", questions, "--config", cfg)
	if code != 0 || !strings.Contains(out, "context") || !strings.Contains(errOut, "eval: search fuses BM25 with the embeddings of test-embed") ||
		!strings.Contains(errOut, "embeddings: 2 calls, ") || srv.Texts() != 4 {
		t.Errorf("exit %d, %d texts embedded, stdout:\n%s\nstderr:\n%s", code, srv.Texts(), out, errOut)
	}
}
