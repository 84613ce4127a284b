package cli

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/okf-tools/okf/llm/llmtest"
	"github.com/okf-tools/okf/trace"
)

// shopProject writes a project folder: the example shop compiled into a
// bundle, a SQLite database with two orders, and okf.yaml pointing a model
// at base (the scripted server).
func shopProject(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", "../../examples/shop", "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	db := filepath.Join(dir, "shop.sqlite")
	if code, _, stderr := run(t, "load", "../../examples/shop", "--into", "sqlite:"+db); code != 0 {
		t.Fatalf("load: %s", stderr)
	}
	conn, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(`INSERT INTO customers (custid, custname, signupdt) VALUES (1, 'Ada', '2025-01-01');
		INSERT INTO orders (ordid, custref, orderdt, ordstat, grossamt, discamt) VALUES (10, 1, '2026-01-05', 'paid', 120, 20), (11, 1, '2026-01-06', 'paid', 80, NULL)`); err != nil {
		t.Fatal(err)
	}
	yaml := `databases:
  - name: shop
    dsn: sqlite:shop.sqlite
    bundle: bundles/shop
agent:
  model: mini
  runs: runs
  models:
    - name: mini
      provider: openai
      model: gpt-4.1-mini
      base_url: ` + base + `
      api_key_env: OKF_TEST_KEY
`
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("OKF_TEST_KEY=sk-from-dotenv\n"), 0o600)
	return dir
}

const novSQL = "SELECT ordid, grossamt - COALESCE(discamt, 0) AS nov FROM orders ORDER BY ordid"

func TestAskRunsAndCompare(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "context", Arguments: `{"question": "net order value of each order"}`}}, Input: 1000, Output: 10},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "` + novSQL + `", "answer": "100 and 80."}`}}, Input: 2000, Cached: 1000, Output: 20},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "I only answer questions about the shop data."}`}}, Input: 500, Output: 10},
	)
	var exported atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			exported.Add(1)
		}
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	os.Unsetenv("OKF_TEST_KEY")
	t.Cleanup(func() { os.Unsetenv("OKF_TEST_KEY") })

	code, stdout, stderr := run(t, "ask", "What is the net order value of each order?", "--db", "shop")
	if code != 0 {
		t.Fatalf("ask: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"100 and 80.", novSQL, "ordid | nov", "10    | 100", "(2 rows)", "submitted · 2 model calls", "$0.0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "step 1: context") || !strings.Contains(stderr, "runs/runs.jsonl") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer sk-from-dotenv" {
		t.Errorf("key from .env: Authorization = %q", got)
	}
	if code, stdout, _ := run(t, "ask", "Tell me a joke", "--db", "shop", "--strategy", "engine"); code != 0 || !strings.Contains(stdout, "declined") {
		t.Errorf("declined: exit %d\n%s", code, stdout)
	}

	if exported.Load() != 2 {
		t.Errorf("%d runs exported over OTLP, want 2", exported.Load())
	}
	runs, err := trace.Load("runs")
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	if r := runs[0]; r.Database != "shop" || r.Strategy != "context" || r.Model != "mini" || r.Usage.Input != 3000 || r.Usage.Cached != 1000 ||
		r.SQLAttempts != 1 || r.Answer.SQL != novSQL || !slices.Contains(r.ConceptsRead, "shop/knowledge/net-order-value") {
		t.Errorf("first run = %+v", r)
	}
	code, stdout, _ = run(t, "runs")
	if code != 0 || !strings.Contains(stdout, runs[0].ID) || !strings.Contains(stdout, "declined") {
		t.Errorf("runs list:\n%s", stdout)
	}
	code, stdout, _ = run(t, "runs", "show", "1")
	if code != 0 || !strings.Contains(stdout, "step 2") || !strings.Contains(stdout, "shop/knowledge/net-order-value, ") {
		t.Errorf("runs show:\n%s", stdout)
	}
	code, stdout, _ = run(t, "runs", "compare", runs[0].ID[:6], "last")
	if code != 0 || !regexp.MustCompile(`(?m)^strategy +context +engine$`).MatchString(stdout) {
		t.Errorf("runs compare:\n%s", stdout)
	}
	if code, _, stderr := run(t, "runs", "show", "zzz"); code != exitUsage || !strings.Contains(stderr, `no run with id "zzz"`) {
		t.Errorf("unknown run: %d %s", code, stderr)
	}
}

func TestAskErrors(t *testing.T) {
	srv := llmtest.New(t)
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ask", "q"}, "no database: pass --db"},
		{[]string{"ask", "q", "--db", "nope"}, `unknown database "nope"`},
		{[]string{"ask", "q", "--db", "shop", "--strategy", "magic"}, `unknown strategy "magic"`},
		{[]string{"ask", "q", "--db", "shop", "--model", "gpt-9"}, `unknown model "gpt-9"`},
		{[]string{"ask", "q", "--db", "shop", "--model", "anthropic/claude-haiku-4-5"}, "set ANTHROPIC_API_KEY"},
		{[]string{"ask", "--task", "x"}, "--task needs --questions"},
		{[]string{"ask", "", "--db", "shop"}, "the question is empty"},
		{[]string{"ask", " \n\t", "--db", "shop"}, "the question is empty"},
	} {
		t.Setenv("ANTHROPIC_API_KEY", "")
		os.Unsetenv("ANTHROPIC_API_KEY")
		code, _, stderr := run(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("bad usage reached the model")
	}
}

func TestAskTaskAndChat(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) AS n FROM orders", "answer": "2 orders."}`}}, Input: 800, Output: 15},
		llmtest.Turn{Text: "Hello! Ask me about the shop."},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "", "answer": "Ask me about orders."}`}}, Input: 800, Output: 15},
	)
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	q, _ := json.Marshal(map[string]any{"instance_id": "shop_7", "selected_database": "shop", "query": "How many orders are there?", "sol_sql": []string{"SELECT count(*) FROM orders"}})
	os.WriteFile("questions.jsonl", append(q, '\n'), 0o644)
	code, stdout, stderr := run(t, "ask", "--task", "shop_7", "--questions", "questions.jsonl")
	if code != 0 || !strings.Contains(stdout, "2 orders.") {
		t.Fatalf("ask --task: %d\n%s\n%s", code, stdout, stderr)
	}
	if first := llmtest.At[map[string]any](t, srv.Requests()[0], "messages", 1)["content"]; first != "How many orders are there?" {
		t.Errorf("question sent = %v", first)
	}

	var out, errOut strings.Builder
	in := strings.NewReader("/strategy nonsense\n/strategy raw\nhello\n/runs\n/exit\n")
	if code := Main([]string{"chat", "--db", "shop"}, in, &out, &errOut); code != 0 {
		t.Fatalf("chat: exit %d\n%s", code, errOut.String())
	}
	for _, want := range []string{"okf chat · shop · context · mini", `unknown strategy "nonsense"`, "now: shop · raw · mini",
		"step 1: (answered in text; nudged to use the tools)", "Ask me about orders.", "declined · 2 model calls", "How many orders are there?"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("chat output lacks %q:\n%s", want, out.String())
		}
	}
	runs, _ := trace.Load("runs")
	if len(runs) != 2 || runs[1].Strategy != "raw" || runs[1].Question != "hello" || runs[0].TaskID != "shop_7" {
		t.Errorf("runs = %+v", runs)
	}
}

func TestDoctor(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Calls: []llmtest.Call{{Name: "ping", Arguments: `{"word": "pong"}`}}, Input: 60, Output: 8},
		llmtest.Turn{Text: "pong"})
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	code, stdout, _ := run(t, "doctor")
	for _, want := range []string{"ok    model mini", "answers and calls tools (60 in / 8 out tokens, $0.0000", "ok    bundle bundles/shop",
		"ok    database shop            SQLite, opened read-only through the guard: the agent reads 5 tables, 30 columns (0 masked), 0 columns hidden"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 {
		t.Errorf("doctor: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "doctor")
	if code != exitFail || !strings.Contains(stdout, "called no tool") {
		t.Errorf("a model that calls no tool: exit %d\n%s", code, stdout)
	}
	if strings.Contains(stdout, "personal data") {
		t.Errorf("a bundle that marks no personal data:\n%s", stdout)
	}
}

// okf doctor warns about each column the bundle marks as personal data that
// okf.yaml neither masks nor denies, naming the key to set, and says ok
// once every one is.
func TestDoctorPersonalData(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Calls: []llmtest.Call{{Name: "ping", Arguments: `{"word": "pong"}`}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "ping", Arguments: `{"word": "pong"}`}}})
	dir := shopProject(t, srv.OpenAIURL())
	t.Chdir(dir)
	customers := filepath.Join("bundles", "shop", "tables", "customers.md")
	data, err := os.ReadFile(customers)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(customers, []byte("---\npersonal_data: [email, custname, region]\n"+strings.TrimPrefix(string(data), "---\n")), 0o644)
	code, stdout, _ := run(t, "doctor")
	if want := "warn  personal data of shop    customers.email, customers.custname, customers.region: marked as personal data in the bundle, neither masked nor denied: add them to guard.masked_columns of shop in okf.yaml\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want %q:\n%s", code, want, stdout)
	}
	config, _ := os.ReadFile("okf.yaml")
	os.WriteFile("okf.yaml", []byte(strings.Replace(string(config), "    bundle: bundles/shop\n", "    bundle: bundles/shop\n    guard:\n      masked_columns: [customers.email, custname]\n      denied_columns: [region]\n", 1)), 0o644)
	code, stdout, _ = run(t, "doctor")
	if want := "ok    personal data of shop    3 columns marked as personal data in the bundle, each masked or denied\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want %q:\n%s", code, want, stdout)
	}
}

// TestAgentCommandsFailWhenTheAuditLogFails: sql, ask, chat and eval run exit 1
// naming the audit log when it cannot be written, rather than run
// statements unaudited without a word.
func TestAgentCommandsFailWhenTheAuditLogFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := shopProject(t, "http://127.0.0.1:1")
	t.Chdir(dir)
	f, err := os.OpenFile("okf.yaml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("audit_log: /dev/full\n")
	f.Close()
	answer := `{"tool_calls": [{"name": "submit_answer", "arguments": {"sql": "SELECT count(*) AS n FROM orders", "answer": "2 orders."}}]}` + "\n"
	os.WriteFile("answer.jsonl", []byte(answer), 0o644)
	q, _ := json.Marshal(map[string]any{"instance_id": "shop_7", "selected_database": "shop", "query": "How many orders are there?", "sol_sql": []string{"SELECT count(*) FROM orders"}})
	os.WriteFile("questions.jsonl", append(q, '\n'), 0o644)
	model := "script/answer.jsonl"
	for _, args := range [][]string{
		{"sql", "shop", "SELECT 1"},
		{"ask", "How many orders are there?", "--db", "shop", "--model", model},
		{"eval", "run", "--questions", "questions.jsonl", "--models", model},
	} {
		if code, stdout, stderr := run(t, args...); code != exitFail || !strings.Contains(stderr, "writing the audit log: write /dev/full") {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want exit 1 naming /dev/full", args[0], code, stderr, stdout)
		}
	}
	var out, errOut strings.Builder
	in := strings.NewReader("How many orders are there?\nAnd now?\n")
	if code := Main([]string{"chat", "--db", "shop", "--model", model}, in, &out, &errOut); code != exitFail || !strings.Contains(errOut.String(), "/dev/full") {
		t.Errorf("chat: exit %d, stderr %q", code, errOut.String())
	}
}

// anthropicProject is shopProject with its model speaking the Anthropic
// format at base.
func anthropicProject(t *testing.T, base string) string {
	t.Helper()
	dir := shopProject(t, base)
	path := filepath.Join(dir, "okf.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.NewReplacer("provider: openai", "provider: anthropic", "model: gpt-4.1-mini", "model: claude-sonnet-4-5").Replace(string(data))
	os.WriteFile(path, []byte(yaml), 0o644)
	return dir
}

// TestAskBrokenAndWholeReplies: the issue 25 replies, through okf ask
// (which streams). An OpenAI stream that ends cleanly, Content-Length
// met, after a chunk whose run_sql arguments stop at `{"sql": "SELECT
// cou`, with no finish_reason and no [DONE], once ran the fragment four
// times and stopped at the step limit with no error: it is asked again
// (max_retries, 5), never run, and the run fails saying the reply broke
// off, one model call recorded. An Anthropic stream cut after its
// message_start fails the same way, the run recording the input tokens
// each broken attempt was billed and their cost. An Anthropic endpoint
// that answers a streaming request with whole JSON once read as empty
// turns (four nudges, 0 tokens, cost unknown): its replies are read, and
// the run submits with the tokens billed.
func TestAskBrokenAndWholeReplies(t *testing.T) {
	const fragment = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null,` +
		`"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"run_sql","arguments":"{\"sql\": \"SELECT cou"}}]},"finish_reason":null}]}` + "\n\n"
	noWait := map[string]string{"Content-Type": "text/event-stream", "Content-Length": strconv.Itoa(len(fragment)), "Retry-After-Ms": "0"}
	cutAnthropic := llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql": "SELECT count(*) FROM orders"}`}}, Input: 5029, Output: 20,
		CutAfter: 2, Header: map[string]string{"Retry-After-Ms": "0"}}
	for _, tc := range []struct {
		name    string
		turn    llmtest.Turn
		project func(*testing.T, string) string
		input   int
	}{
		{"openai", llmtest.Turn{Raw: fragment, Header: noWait}, func(t *testing.T, url string) string { return shopProject(t, url+"/v1") }, 0},
		{"anthropic", cutAnthropic, anthropicProject, 6 * 5029},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := make([]llmtest.Turn, 6)
			for i := range turns {
				turns[i] = tc.turn
			}
			srv := llmtest.New(t, turns...)
			t.Chdir(tc.project(t, srv.URL))
			code, stdout, stderr := run(t, "ask", "How many orders are there?", "--db", "shop")
			if code != exitFail || !strings.Contains(stdout, "giving up after 6 attempts") || !strings.Contains(stdout, "the reply broke off") ||
				strings.Count(stderr, "asking again") != 5 || len(srv.Requests()) != 6 {
				t.Errorf("exit %d after %d requests\n%s\n%s", code, len(srv.Requests()), stdout, stderr)
			}
			runs, err := trace.Load("runs")
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs: %v, %v", runs, err)
			}
			r := runs[0]
			if r.StopReason != trace.Failed || r.SQLAttempts != 0 || len(r.ToolCalls) != 0 || r.LLMCalls != 1 || r.Usage.Input != tc.input || (r.Cost != nil) != (tc.input > 0) {
				t.Errorf("run: stop %s, %d SQL attempts, tools %v, %d model calls, usage %+v, cost %v", r.StopReason, r.SQLAttempts, r.ToolCalls, r.LLMCalls, r.Usage, r.Cost)
			}
		})
	}
	t.Run("anthropic whole JSON", func(t *testing.T) {
		srv := llmtest.New(t,
			llmtest.Turn{Calls: []llmtest.Call{{Name: "run_sql", Arguments: `{"sql": "SELECT count(*) AS n FROM orders"}`}}, Input: 5029, Output: 20, IgnoreStream: true},
			llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: `{"sql": "SELECT count(*) AS n FROM orders", "answer": "2 orders."}`}}, Input: 5100, Output: 30, IgnoreStream: true})
		t.Chdir(anthropicProject(t, srv.URL))
		code, stdout, stderr := run(t, "ask", "How many orders are there?", "--db", "shop")
		if code != 0 || !strings.Contains(stdout, "submitted · 2 model calls · 2 tool calls · 10129 in (0 cached) / 50 out") || strings.Contains(stdout, "unknown") {
			t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if stream, _ := srv.Requests()[0]["stream"].(bool); !stream {
			t.Error("okf ask did not ask for a stream")
		}
	})
}
