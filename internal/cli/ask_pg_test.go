package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/llm/llmtest"
	"github.com/okf-tools/okf/sqlguard"
)

// TestAskPostgres: the agent over a real PostgreSQL database, as a
// read-only role that okf doctor probes.
func TestAskPostgres(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Shared(t).NewDatabase(t)
	dir := t.TempDir()
	if code, _, stderr := run(t, "load", "../../examples/shop", "--into", admin); code != 0 {
		t.Fatalf("load: %s", stderr)
	}
	if code, _, stderr := run(t, "compile", "../../examples/shop", "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO customers (custid, custname, signupdt) VALUES (1, 'Ada', '2025-01-01');
		INSERT INTO orders (ordid, custref, orderdt, ordstat, grossamt, discamt) VALUES (10, 1, '2026-01-05', 'paid', 120.50, 20), (11, 1, '2026-01-06', 'paid', 80, NULL)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	role := fmt.Sprintf("okf_ask_%d", os.Getpid())
	agentDSN := strings.Replace(admin, "postgres@", role+":agentpw@", 1)
	if _, err := sqlguard.PreparePostgres(ctx, admin, agentDSN, sqlguard.Options{}); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql": "DELETE FROM orders"}`}}, Input: 900, Output: 10},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "` + novSQL + `", "answer": "100.50 and 80."}`}}, Input: 1200, Output: 20},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "ping", Arguments: `{"word": "pong"}`}}, Input: 60, Output: 8},
	)
	yaml := "databases:\n  - name: shop\n    dsn: " + agentDSN + "\n    bundle: bundles/shop\n" +
		"agent:\n  models:\n    - {name: mini, provider: openai, model: gpt-4.1-mini, base_url: " + srv.OpenAIURL() + "}\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)

	code, stdout, stderr := run(t, "ask", "What is the net order value of each order?", "--db", "shop")
	if code != 0 {
		t.Fatalf("ask: %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "step 1: run_sql       DELETE FROM orders  -> error") || !strings.Contains(stdout, "10    | 100.5") ||
		!strings.Contains(stdout, "2 SQL (1 error)") {
		t.Errorf("ask:\n%s\n%s", stdout, stderr)
	}
	if sys := llmtest.At[string](t, srv.Requests()[0], "messages", 0, "content"); !strings.Contains(sys, "shop database (PostgreSQL)") {
		t.Errorf("dialect not in the prompt: %.100s", sys)
	}

	code, stdout, _ = run(t, "doctor")
	for _, want := range []string{"ok    database shop            PostgreSQL", "role allowed: read a table (customers)", "role blocked: write a table", "role blocked: read a server file"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 {
		t.Errorf("doctor: exit %d\n%s", code, stdout)
	}
}
