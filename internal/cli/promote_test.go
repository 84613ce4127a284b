package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/examples/shop"
)

// TestPromoteCorrectRuns: an evaluation replayed by a script model that
// gets every other shop question right promotes exactly the correct
// answers to draft query concepts, which validate and stay off the tool
// list until a person changes a draft's status; okf runs promote does the
// same for one run and never overwrites a draft.
func TestPromoteCorrectRuns(t *testing.T) {
	dir, docs := shopBundles(t)
	questions := filepath.Join(docs, shop.QuestionsFile)
	tasks, err := eval.LoadTasks(questions)
	if err != nil {
		t.Fatal(err)
	}
	oracleScript(t, filepath.Join(dir, "half.jsonl"), tasks, func(i int) bool { return i%2 == 1 })
	yaml := "databases:\n  - name: shop\n    dsn: sqlite:shop.db\n    bundle: bundles/shop\n" +
		"agent:\n  models:\n    - {name: half, provider: script, script: half.jsonl}\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)
	served := func() []string { return toolNames(t, "--dir", "bundles", "--config", "okf.yaml") }
	toolsBefore := served()

	code, _, stderr := run(t, "eval", "run", "--questions", questions, "--model", "half", "--promote", "bundles")
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "eval: promoted 5 correct answers to draft query concepts in bundles (0 already there)") {
		t.Errorf("stderr:\n%s", stderr)
	}
	drafts, _ := filepath.Glob("bundles/shop/queries/*-*.md")
	var promoted []string
	for _, p := range drafts {
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), "status: draft\ngenerated:\n  by: okf/") {
			promoted = append(promoted, p)
		}
	}
	if len(promoted) != 5 {
		t.Fatalf("%d drafts: %v", len(promoted), promoted)
	}
	if code, stdout, _ := run(t, "validate", "bundles/shop"); code != 0 || strings.Contains(stdout, "verified-invalid") || strings.Contains(stdout, "generated-missing") {
		t.Errorf("the drafts do not validate:\n%s", stdout)
	}
	// A recompile keeps them and lists them in the queries index.
	if code, _, stderr := run(t, "compile", docs, "--out", "bundles"); code != 0 || !strings.Contains(stderr, "keeping 5 concepts people wrote") {
		t.Errorf("recompile: exit %d\n%s", code, stderr)
	}
	index, _ := os.ReadFile("bundles/shop/queries/index.md")
	if !strings.Contains(string(index), "("+filepath.Base(promoted[0])+")") {
		t.Errorf("the queries index does not list the drafts:\n%s", index)
	}
	if code, stdout, _ := run(t, "validate", "bundles/shop"); code != 0 || strings.Contains(stdout, "[orphan]") {
		t.Errorf("after recompiling:\n%s", stdout)
	}
	if got := served(); !slices.Equal(got, toolsBefore) {
		t.Errorf("drafts were served: %v, before %v", got, toolsBefore)
	}

	// A person reviews one and marks it stable: it becomes a tool.
	data, _ := os.ReadFile(promoted[0])
	os.WriteFile(promoted[0], []byte(strings.Replace(string(data), "status: draft\n", "status: stable\nverified:\n  - {by: \"human:dana\", at: 2026-12-01}\n", 1)), 0o644)
	name := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(promoted[0]), ".md"), "-", "_")
	if got := served(); !slices.Contains(got, name) || len(got) != len(toolsBefore)+1 {
		t.Errorf("after review the tools are %v; want %s added to %v", got, name, toolsBefore)
	}

	// A second evaluation keeps the drafts already there, and okf runs
	// promote refuses to overwrite one.
	code, _, stderr = run(t, "eval", "run", "--questions", questions, "--model", "half", "--promote", "bundles")
	if code != 0 || !strings.Contains(stderr, "promoted 0 correct answers to draft query concepts in bundles (5 already there)") {
		t.Errorf("second eval run: exit %d\n%s", code, stderr)
	}
	code, _, stderr = run(t, "runs", "promote", "1", "--out", "bundles")
	if code == 0 || !strings.Contains(stderr, "already exists") {
		t.Errorf("runs promote over a draft: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "runs", "promote", "1", "--out", "elsewhere")
	if code != 0 || !strings.Contains(stdout, "wrote elsewhere/shop/queries/") {
		t.Errorf("runs promote: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestQueryToolsRankedByAuditedUse: okf mcp lists the verified queries its
// audit log shows called most, so a stdio server, started anew for every
// session, still ranks by use.
func TestQueryToolsRankedByAuditedUse(t *testing.T) {
	dir, _ := shopBundles(t)
	yaml := "audit_log: audit.jsonl\ndatabases:\n  - name: shop\n    dsn: sqlite:shop.db\n    bundle: bundles/shop\nserve:\n  query_tools: 1\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)
	listed := func() []string {
		var names []string
		for _, name := range toolNames(t, "--dir", "bundles", "--config", "okf.yaml") {
			if !slices.Contains(engine.ToolNames, name) && name != engine.ToolRunQuery {
				names = append(names, name)
			}
		}
		return names
	}
	if got := listed(); !slices.Equal(got, []string{"late_deliveries_of_carrier"}) {
		t.Errorf("with no use, the first by id is listed: %v", got)
	}
	calls := `[{"tool": "run_query", "arguments": {"id": "queries/orders-of-customer", "params": {"customer": 25}}},` +
		`{"tool": "run_query", "arguments": {"id": "orders_of_customer", "params": {"customer": 231}}},` +
		`{"tool": "run_query", "arguments": {"id": "orders_of_customer", "params": {"customer": "x"}}}]`
	mcpCalls(t, calls, []string{"--dir", "bundles", "--config", "okf.yaml"})
	audit, _ := os.ReadFile("audit.jsonl")
	if n := strings.Count(string(audit), `"query":"shop/queries/orders-of-customer"`); n != 2 {
		t.Errorf("the audit log names the query %d times, want 2 (the bad value never ran):\n%s", n, audit)
	}
	if got := listed(); !slices.Equal(got, []string{"orders_of_customer"}) {
		t.Errorf("after two calls, the most used is listed: %v", got)
	}
}

// shopBundles writes the example shop's documentation into a temporary
// folder, compiles it into bundles/ there and creates shop.db beside it;
// it returns the folder and the documentation's.
func shopBundles(t *testing.T) (dir, docs string) {
	t.Helper()
	dir = t.TempDir()
	docs, err := shop.WriteDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "compile", docs, "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	if err := shop.Create(context.Background(), filepath.Join(dir, "shop.db")); err != nil {
		t.Fatal(err)
	}
	return dir, docs
}

// toolNames are the names of the tools okf mcp lists with the flags.
func toolNames(t *testing.T, flags ...string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(mcpTools(t, flags), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), `"name": "`); ok {
			names = append(names, strings.TrimRight(name, `",`))
		}
	}
	return names
}
