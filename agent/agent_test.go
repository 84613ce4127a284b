package agent_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/agent"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/compile/load"
	"github.com/okf-tools/okf/engine"
	"github.com/okf-tools/okf/internal/config"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/llm/llmtest"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// shop is the project's example database: a bundle compiled from its
// LiveSQLBench-style docs, and a real SQLite file with a few orders.
type shop struct {
	bundleDir string
	view      *engine.View
	dbs       *engine.Databases
}

func newShop(t *testing.T) *shop {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	model, err := livesqlbench.Read("../examples/shop")
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Build(model, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := compile.Write(filepath.Join(dir, "bundles"), compile.WriteOptions{}, b); err != nil {
		t.Fatal(err)
	}
	bundleDir := filepath.Join(dir, "bundles", "shop")
	bundle, err := okf.Load(bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	var docs []readmodel.Doc
	for _, d := range bundle.Docs {
		docs = append(docs, readmodel.Doc{Bundle: "shop", Path: d.Path, Content: d.Raw})
	}
	snap, _ := readmodel.Build("default", docs)

	path := filepath.Join(dir, "shop.sqlite")
	if _, err := load.SQLite(ctx, path, model, load.Options{}); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`INSERT INTO customers (custid, custname, signupdt) VALUES (1, 'Ada', '2025-01-01'), (2, 'Bo', '2025-02-01')`,
		`INSERT INTO orders (ordid, custref, orderdt, ordstat, grossamt, discamt) VALUES
		  (10, 1, '2026-01-05 10:00:00', 'paid', 120, 20), (11, 1, '2026-01-06 10:00:00', 'paid', 80, NULL),
		  (12, 2, '2026-01-07 10:00:00', 'cancelled', 50, 5)`,
	} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	dbs := engine.NewDatabases([]engine.Database{{Name: "shop", Tenant: "default", DSN: "sqlite:" + path}}, nil, io.Discard)
	t.Cleanup(func() { dbs.Close() })
	return &shop{bundleDir: bundleDir, view: engine.NewView("default", snap), dbs: dbs}
}

func (s *shop) config(t *testing.T, client llm.Client, strategy agent.Strategy) agent.Config {
	root, err := os.OpenRoot(s.bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return agent.Config{
		Model: client, Databases: s.dbs, Tenant: "default", Database: "shop", Dialect: "SQLite", Strategy: strategy,
		Knowledge: agent.Knowledge{View: s.view, Bundle: "shop", Files: root.FS()},
		Now:       func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) },
	}
}

func openAI(t *testing.T, srv *llmtest.Server, model string) llm.Client {
	c, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: model, BaseURL: srv.OpenAIURL(),
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func args(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const nov = "SELECT ordid, grossamt - COALESCE(discamt, 0) AS nov FROM orders ORDER BY ordid"

// TestContextRunRepairsSQL is a whole run over real HTTP: the model reads a
// context pack, writes SQL with a wrong column, reads the error, repairs
// it, and submits; a 429 is waited out on the way.
func TestContextRunRepairsSQL(t *testing.T) {
	s := newShop(t)
	question := "What is the net order value of each order?"
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "context", Arguments: args(map[string]any{"question": question})}}, Input: 1500, Output: 20},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": "SELECT ordid, gross - discamt FROM orders"})}}, Input: 2600, Cached: 1400, Output: 30},
		llmtest.Turn{Status: 429, RetryAfter: "3"},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: args(map[string]any{"database": "shop", "sql": nov})}}, Input: 2800, Cached: 2500, Output: 30, Reasoning: 12},
		llmtest.Turn{Text: "Three orders.", Calls: []llmtest.Call{{Name: "submit_answer", Arguments: args(map[string]any{"sql": nov, "answer": "Orders 10, 11 and 12 are worth 100, 80 and 45."})}}, Input: 3000, Cached: 2700, Output: 40},
	)
	out := agent.Run(context.Background(), s.config(t, openAI(t, srv, "gpt-4.1-mini"), agent.Context), question, "shop_1")
	r := out.Record
	if r.StopReason != trace.Submitted || r.Error != "" {
		t.Fatalf("stop = %s (%s)", r.StopReason, r.Error)
	}
	if r.Answer.SQL != nov || !strings.Contains(r.Answer.Text, "100, 80 and 45") {
		t.Errorf("answer = %+v", r.Answer)
	}
	if r.LLMCalls != 4 || len(r.Steps) != 4 || r.SQLAttempts != 3 || r.SQLErrors != 1 {
		t.Errorf("calls %d, steps %d, sql %d attempts %d errors", r.LLMCalls, len(r.Steps), r.SQLAttempts, r.SQLErrors)
	}
	if want := (llm.Usage{Input: 9900, Cached: 6600, Output: 120, Reasoning: 12}); r.Usage != want {
		t.Errorf("usage = %+v, want %+v", r.Usage, want)
	}
	// gpt-4.1-mini: 3300 plain input at $0.40, 6600 cached at $0.10, 120 output at $1.60 per million.
	if want := (3300*0.40 + 6600*0.10 + 120*1.60) / 1e6; r.Cost == nil || *r.Cost-want > 1e-12 || want-*r.Cost > 1e-12 {
		t.Errorf("cost = %v, want %v", r.Cost, want)
	}
	if r.Steps[2].Retries != 1 || r.Steps[2].WaitMS < 3000 || r.WaitSeconds < 3 {
		t.Errorf("step 3 retries %d, waited %dms; run waited %.1fs", r.Steps[2].Retries, r.Steps[2].WaitMS, r.WaitSeconds)
	}
	if !slices.Contains(r.ConceptsRead, "shop/knowledge/net-order-value") || !slices.Contains(r.ConceptsRead, "shop/tables/orders") {
		t.Errorf("concepts read = %v", r.ConceptsRead)
	}
	bad := r.Steps[1].Calls[0]
	if !bad.Error || !strings.Contains(bad.Result, "gross") {
		t.Errorf("bad SQL call = %+v", bad)
	}
	if good := r.Steps[2].Calls[0]; good.Error || !strings.Contains(good.Result, "<rows>") || !strings.Contains(good.Result, "not instructions") {
		t.Errorf("good SQL call = %+v", good)
	}
	if out.Rows == nil || len(out.Rows.Rows) != 3 || sqlguard.Cell(out.Rows.Rows[2][1]) != "45" {
		t.Errorf("rows = %+v", out.Rows)
	}
	if r.ToolCalls["context"] != 1 || r.ToolCalls["run_sql"] != 2 || r.ToolCalls["submit_answer"] != 1 || r.TaskID != "shop_1" || r.Model != "openai/gpt-4.1-mini" {
		t.Errorf("tool calls %v, task %q, model %q", r.ToolCalls, r.TaskID, r.Model)
	}

	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The stable parts come first and never change within a run.
	first, last := llmtest.At[[]any](t, reqs[0], "messages"), llmtest.At[[]any](t, reqs[4], "messages")
	sys := llmtest.At[string](t, first, 0, "content")
	if !strings.HasPrefix(sys, "You answer questions about the data in the shop database (SQLite)") || llmtest.At[map[string]any](t, last, 0)["content"] != sys {
		t.Errorf("system prompt changed or misplaced: %.80q", sys)
	}
	if llmtest.At[map[string]any](t, first, 1)["content"] != question {
		t.Errorf("first user message = %v", first[1])
	}
	if tools, _ := json.Marshal(reqs[0]["tools"]); string(tools) != mustJSON(reqs[4]["tools"]) {
		t.Error("tools changed within the run")
	}

	// The record survives the run log.
	dir := t.TempDir()
	if _, err := trace.Append(dir, r); err != nil {
		t.Fatal(err)
	}
	runs, err := trace.Load(dir)
	if err != nil || len(runs) != 1 || runs[0].ID != r.ID || runs[0].Usage != r.Usage || runs[0].Answer.SQL != nov {
		t.Errorf("loaded %+v, %v", runs, err)
	}
}

func TestDeclinesOutOfScope(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t, llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "I answer questions about the shop data, such as order values or delivery rates."}`}}, Input: 900, Output: 30})
	c, err := llm.New(llm.Config{Provider: llm.Anthropic, Model: "claude-haiku-4-5", BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	r := agent.Run(context.Background(), s.config(t, c, agent.Engine), "Write me a poem about databases", "").Record
	if r.StopReason != trace.Declined || r.SQLAttempts != 0 || r.LLMCalls != 1 || !strings.Contains(r.Answer.Text, "shop data") {
		t.Errorf("record = %+v", r)
	}
	if want := (900*1.0 + 30*5.0) / 1e6; r.Cost == nil || *r.Cost-want > 1e-12 || want-*r.Cost > 1e-12 {
		t.Errorf("cost = %v, want %v", r.Cost, want)
	}
	// The engine strategy puts the manifest in the prompt, after the instructions.
	sys := llmtest.At[string](t, srv.Requests()[0], "system", 0, "text")
	if i, j := strings.Index(sys, "Only questions about this database"), strings.Index(sys, "knowledge/net-order-value"); i < 0 || j < i {
		t.Errorf("system prompt lacks instructions before the manifest")
	}
}

// TestStepLimitAndNudges: a model that answers in text is nudged each
// time, and the run stops at the step limit.
func TestStepLimitAndNudges(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t,
		llmtest.Turn{Text: "The answer is probably 42."},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read_file", Arguments: `{"path": "index.md"}`}}},
		llmtest.Turn{Text: "Still thinking."},
	)
	cfg := s.config(t, openAI(t, srv, "local-model"), agent.Browse)
	cfg.MaxSteps = 3
	r := agent.Run(context.Background(), cfg, "How many orders?", "").Record
	if r.StopReason != trace.StepLimit || len(r.Steps) != 3 || !r.Steps[0].Nudged || r.Steps[1].Nudged || !r.Steps[2].Nudged {
		t.Errorf("stop %s, steps %+v", r.StopReason, r.Steps)
	}
	if r.Cost != nil {
		t.Errorf("cost = %v for an unpriced model, want unknown", *r.Cost)
	}
	msgs := llmtest.At[[]any](t, srv.Requests()[1], "messages")
	if nudge := llmtest.At[map[string]any](t, msgs, len(msgs)-1); nudge["role"] != "user" || !strings.Contains(llmtest.At[string](t, nudge, "content"), "submit_answer") {
		t.Errorf("no nudge after a text answer: %v", nudge)
	}
}

// TestBrowseConfinedAndBrokenArguments: read_file stays inside the
// bundle, lists a folder without an index, and broken arguments come back
// as an error the model can act on.
func TestBrowseConfinedAndBrokenArguments(t *testing.T) {
	s := newShop(t)
	os.Remove(filepath.Join(s.bundleDir, "tables", "index.md"))
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{
			{Name: "read_file", Arguments: `{"path": "../../shop.sqlite"}`},
			{Name: "read_file", Arguments: `{"path": "tables/"}`},
			{Name: "read_file", Arguments: `{"path": "knowledge/net-order-value.md"}`},
			{Name: "run_sql", Arguments: `{"sql": "SELECT 1`},
			{Name: "drop_table", Arguments: `{}`},
		}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"database": "shop", "sql": "DELETE FROM orders"}`}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) FROM orders", "answer": "3 orders."}`}}},
	)
	r := agent.Run(context.Background(), s.config(t, openAI(t, srv, "m"), agent.Browse), "How many orders?", "").Record
	if r.StopReason != trace.Submitted {
		t.Fatalf("stop = %s (%s)", r.StopReason, r.Error)
	}
	calls := r.Steps[0].Calls
	if !calls[0].Error || strings.Contains(calls[0].Result, "SQLite format") {
		t.Errorf("escape: %+v", calls[0])
	}
	if calls[1].Error || !strings.Contains(calls[1].Result, "No index.md here") || !strings.Contains(calls[1].Result, "[orders](orders.md)") {
		t.Errorf("folder listing: %+v", calls[1])
	}
	if calls[2].Error || !strings.Contains(calls[2].Result, "grossamt - COALESCE(discamt, 0)") {
		t.Errorf("read: %+v", calls[2])
	}
	if !calls[3].Error || !strings.Contains(calls[3].Result, "not a JSON object") {
		t.Errorf("broken arguments: %+v", calls[3])
	}
	if !calls[4].Error || !strings.Contains(calls[4].Result, "no tool \"drop_table\"") {
		t.Errorf("unknown tool: %+v", calls[4])
	}
	if del := r.Steps[1].Calls[0]; !del.Error || r.SQLErrors != 1 {
		t.Errorf("DELETE was not refused: %+v", del)
	}
	if len(r.ConceptsRead) != 1 || r.ConceptsRead[0] != "shop/knowledge/net-order-value" {
		t.Errorf("concepts read = %v", r.ConceptsRead)
	}
}

// TestModelFailureEndsRun: an error from the provider ends the run with
// stop reason error and the message; a submit whose SQL fails is refused.
func TestModelFailureEndsRun(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT nope FROM orders", "answer": "x"}`}}},
		llmtest.Turn{Raw: `{"choices": [{"message": `},
	)
	r := agent.Run(context.Background(), s.config(t, openAI(t, srv, "m"), agent.Raw), "How many orders?", "").Record
	if r.StopReason != trace.Failed || !strings.Contains(r.Error, "malformed reply") || r.Answer != nil {
		t.Errorf("stop %s, error %q, answer %+v", r.StopReason, r.Error, r.Answer)
	}
	if c := r.Steps[0].Calls[0]; !c.Error || !strings.Contains(c.Result, "not accepted") {
		t.Errorf("failing submit: %+v", c)
	}
	// Raw pastes every document, so every concept counts as read.
	if len(r.ConceptsRead) != len(s.view.Snap.Concepts) {
		t.Errorf("raw read %d concepts of %d", len(r.ConceptsRead), len(s.view.Snap.Concepts))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBrowseStore: browse reads the store's snapshot as a folder, with
// listings standing in for the indexes.
func TestBrowseStore(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read_file", Arguments: `{"path": "index.md"}`}, {Name: "read_file", Arguments: `{"path": "/knowledge/paid-order.md"}`}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) FROM orders WHERE ordstat <> 'cancelled'", "answer": "2."}`}}},
	)
	cfg := s.config(t, openAI(t, srv, "m"), agent.Browse)
	cfg.Knowledge.Files = engine.SnapshotFiles(s.view.Snap, "shop")
	out := agent.Run(context.Background(), cfg, "How many orders were not cancelled?", "")
	r := out.Record
	if r.StopReason != trace.Submitted || sqlguard.Cell(out.Rows.Rows[0][0]) != "2" {
		t.Fatalf("stop %s (%s), rows %+v", r.StopReason, r.Error, out.Rows)
	}
	calls := r.Steps[0].Calls
	if !strings.Contains(calls[0].Result, "[knowledge/](knowledge/index.md) - folder") || !strings.Contains(calls[1].Result, "title: Paid Order") {
		t.Errorf("calls = %+v", calls)
	}
	if len(r.ConceptsRead) != 1 || r.ConceptsRead[0] != "shop/knowledge/paid-order" {
		t.Errorf("concepts read = %v", r.ConceptsRead)
	}
}

// toolNames are the tools a request offered the model, sorted.
func toolNames(t *testing.T, req map[string]any) []string {
	t.Helper()
	var names []string
	for _, tool := range llmtest.At[[]any](t, req, "tools") {
		names = append(names, llmtest.At[string](t, tool, "function", "name"))
	}
	slices.Sort(names)
	return names
}

func systemText(t *testing.T, req map[string]any) string {
	t.Helper()
	return llmtest.At[string](t, req, "messages", 0, "content")
}

// TestSchemaStrategy: the baseline pastes every table's schema and no
// business knowledge, with the same SQL tools as raw, so that only the
// knowledge differs.
func TestSchemaStrategy(t *testing.T) {
	s := newShop(t)
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) FROM orders", "answer": "3 orders."}`}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) FROM orders", "answer": "3 orders."}`}}},
	)
	r := agent.Run(context.Background(), s.config(t, openAI(t, srv, "m"), agent.Schema), "How many orders?", "").Record
	if r.StopReason != trace.Submitted || r.Strategy != "schema" || r.AutoStrategy != "" {
		t.Fatalf("stop %s (%s), strategy %s", r.StopReason, r.Error, r.Strategy)
	}
	agent.Run(context.Background(), s.config(t, openAI(t, srv, "m"), agent.Raw), "How many orders?", "")
	schema, raw := srv.Requests()[0], srv.Requests()[1]
	if got, want := toolNames(t, schema), toolNames(t, raw); !slices.Equal(got, want) || !slices.Equal(got, []string{"run_sql", "submit_answer", "values"}) {
		t.Errorf("schema tools %v, raw tools %v", got, want)
	}
	sys := systemText(t, schema)
	text, tables := engine.SchemaText(s.view.Snap, "shop")
	if !strings.HasSuffix(sys, strings.TrimSpace(text)) || !strings.Contains(sys, "| `grossamt` | numeric, not null |") || !strings.Contains(sys, "no business rules are written down") {
		t.Errorf("schema prompt:\n%s", sys)
	}
	// Not a word of the business rules, nor of a table's other sections.
	for _, rule := range []string{"Net Order Value", "money has actually arrived", "# Joins", "Related knowledge"} {
		if strings.Contains(sys, rule) {
			t.Errorf("the schema prompt holds %q", rule)
		}
	}
	if len(tables) != 5 || !slices.Equal(r.ConceptsRead, tables) {
		t.Errorf("concepts read %v, want the tables %v", r.ConceptsRead, tables)
	}
}

// TestAutoStrategy: auto pastes the documents when that costs no more
// than a context pack for each question of the session, and reads packs
// otherwise; the record names the choice.
func TestAutoStrategy(t *testing.T) {
	s := newShop(t)
	rawText := systemText(t, func() map[string]any {
		srv := llmtest.New(t, llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "no"}`}}})
		agent.Run(context.Background(), s.config(t, openAI(t, srv, "m"), agent.Raw), "Hello?", "")
		return srv.Requests()[0]
	}())
	for _, c := range []struct {
		questions, budget int
		want              agent.Strategy
	}{{1, 0, agent.Context}, {0, 0, agent.Context}, {1, 1_000_000, agent.Raw}, {500, 0, agent.Raw}} {
		srv := llmtest.New(t, llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "no"}`}}})
		cfg := s.config(t, openAI(t, srv, "m"), agent.Auto)
		cfg.Questions, cfg.ContextBudget = c.questions, c.budget
		r := agent.Run(context.Background(), cfg, "Hello?", "").Record
		req := srv.Requests()[0]
		if r.Strategy != "auto" || r.AutoStrategy != string(c.want) {
			t.Errorf("%d questions, budget %d: strategy %s chose %q, want %s", c.questions, c.budget, r.Strategy, r.AutoStrategy, c.want)
		}
		if pasted := systemText(t, req) == rawText; pasted != (c.want == agent.Raw) || slices.Contains(toolNames(t, req), "context") == (c.want == agent.Raw) {
			t.Errorf("%d questions: pasted %v, tools %v; want %s", c.questions, pasted, toolNames(t, req), c.want)
		}
	}
}

// TestConfigKnowsEveryStrategy: okf.yaml accepts exactly the strategies
// the agent has.
func TestConfigKnowsEveryStrategy(t *testing.T) {
	var names []string
	for _, s := range agent.Strategies {
		names = append(names, string(s))
	}
	if !slices.Equal(names, config.Strategies) {
		t.Errorf("agent strategies %v, okf.yaml's %v", names, config.Strategies)
	}
}
