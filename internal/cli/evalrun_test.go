package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/pgtest"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// oracleScript writes a conversation file that submits, for each task in
// order, its gold SQL, or a wrong query when wrong(i) says so.
func oracleScript(t *testing.T, path string, tasks []eval.Task, wrong func(i int) bool) {
	var b strings.Builder
	for i, task := range tasks {
		sql := task.Gold
		if wrong(i) {
			sql = "SELECT 'not the answer' AS x"
		}
		args, _ := json.Marshal(map[string]string{"sql": sql, "answer": "see the rows"})
		line, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "submit_answer", "arguments": json.RawMessage(args)}},
			"usage": map[string]int{"input": 1000, "output": 50}})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalRunOracle: a scripted model that submits each question's gold
// SQL scores 100% on bird/superhero's real rows; one that gets every other
// question wrong scores exactly the rest; an interrupted run resumes.
func TestEvalRunOracle(t *testing.T) {
	bird := shareddata.Dir(t, "bird")
	questions := filepath.Join(bird, "questions.jsonl")
	tasks, err := eval.LoadTasks(questions)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", filepath.Join(bird, "superhero"), "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	oracleScript(t, filepath.Join(dir, "oracle.jsonl"), tasks, func(int) bool { return false })
	oracleScript(t, filepath.Join(dir, "half.jsonl"), tasks, func(i int) bool { return i%2 == 1 })
	yaml := "databases:\n  - name: superhero\n    dsn: sqlite:" + filepath.Join(bird, "superhero", "superhero.sqlite") + "\n    bundle: bundles/superhero\n" +
		"agent:\n  models:\n    - {name: oracle, provider: script, script: oracle.jsonl}\n    - {name: half, provider: script, script: half.jsonl}\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)

	code, stdout, stderr := run(t, "eval", "run", "--questions", questions, "--models", "oracle,half")
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%s", code, stderr)
	}
	results := map[string]int{}
	data, _ := os.ReadFile("runs/eval-results.jsonl")
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r eval.Score
		json.Unmarshal([]byte(line), &r)
		if r.Correct {
			results[r.Model]++
		} else if r.Model == "oracle" {
			t.Errorf("oracle wrong on %s: %s", r.Task, r.Note)
		}
	}
	if len(tasks) != 65 || results["oracle"] != 65 || results["half"] != 33 {
		t.Errorf("%d tasks; correct: %v, want oracle 65 and half 33", len(tasks), results)
	}
	for _, want := range []string{"| context | oracle | 65 | 65 | 100.0% | 94.4–100.0% |", "| context | half | 65 | 33 | 50.8% | 38.9–62.5% |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// Everything is scored: a second run asks nothing and reports the same.
	code, again, stderr := run(t, "eval", "run", "--questions", questions, "--models", "oracle,half")
	if code != 0 || again != stdout || !strings.Contains(stderr, "0 runs to do, 130 already scored") {
		t.Errorf("resume: exit %d\n%s\n%s", code, again, stderr)
	}
	if code, _, stderr := run(t, "eval", "run", "--questions", questions, "--models", "oracle,half", "--report", "eval.md", "--html", "eval.html"); code != 0 {
		t.Fatalf("report files: %s", stderr)
	}
	if md, _ := os.ReadFile("eval.md"); string(md) != stdout {
		t.Errorf("eval.md differs from the printed report:\n%s", md)
	}
	page, _ := os.ReadFile("eval.html")
	for _, want := range []string{"<figcaption>Accuracy, with its 95% interval</figcaption>", ">100.0% (94.4–100.0%)</text>", ">50.8% (38.9–62.5%)</text>",
		"context · half", "<figcaption>Cost per correct answer</figcaption>", "<figcaption>Outcomes by reason</figcaption>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("eval.html lacks %q", want)
		}
	}
}

// TestEvalRunOracleLiveSQLBench: on LiveSQLBench's solar database in a
// real PostgreSQL, as a read-only role, a scripted model that submits the
// gold SQL scores every query task; management tasks are skipped. The
// base-lite dumps hold schemas without rows, so the results compare empty:
// this holds the gold SQL passing the guard with its ROUND calls removed,
// while the BIRD oracle and TestSameResult hold the comparison of rows.
func TestEvalRunOracleLiveSQLBench(t *testing.T) {
	root := shareddata.Dir(t, "livesqlbench")
	ctx := context.Background()
	dir := t.TempDir()
	var lines []string
	data, err := os.ReadFile(filepath.Join(root, "questions", "lite_7db_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"selected_database": "solar"`) {
			lines = append(lines, line)
		}
	}
	questions := filepath.Join(dir, "solar.jsonl")
	os.WriteFile(questions, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	all, err := eval.LoadTasks(questions)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []eval.Task
	for _, task := range all {
		if !task.Management {
			tasks = append(tasks, task)
		}
	}
	admin := pgtest.Shared(t).NewDatabase(t)
	if code, _, stderr := run(t, "load", filepath.Join(root, "base-lite", "solar"), "--into", admin, "--add-missing-keys"); code != 0 {
		t.Fatalf("load: %s", stderr)
	}
	if code, _, stderr := run(t, "compile", filepath.Join(root, "base-lite", "solar"), "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	agentDSN := strings.Replace(admin, "postgres@", fmt.Sprintf("okf_eval_%d:agentpw@", os.Getpid()), 1)
	if _, err := sqlguard.PreparePostgres(ctx, admin, agentDSN, sqlguard.Options{}); err != nil {
		t.Fatal(err)
	}
	oracleScript(t, filepath.Join(dir, "oracle.jsonl"), tasks, func(int) bool { return false })
	yaml := "databases:\n  - name: solar\n    dsn: " + agentDSN + "\n    bundle: bundles/solar\n" +
		"agent:\n  models:\n    - {name: oracle, provider: script, script: oracle.jsonl}\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)
	code, stdout, stderr := run(t, "eval", "run", "--questions", questions)
	if code != 0 {
		t.Fatalf("eval run: %d\n%s", code, stderr)
	}
	want := fmt.Sprintf("| context | oracle | %d | %d | 100.0%% |", len(tasks), len(tasks))
	if len(tasks) != 10 || !strings.Contains(stdout, want) || !strings.Contains(stderr, "skipping 5 management tasks") {
		t.Errorf("%d tasks; report:\n%s\n%s", len(tasks), stdout, stderr)
	}
}

// TestEvalRunEndpointFailureIsNoAnswer: against an endpoint that refuses
// every call, okf eval run once scored 65 wrong answers and exited 0, and
// then asked every question anyway (65 requests, then one per question in
// flight) to fail each the same way. A rejected key (401 or 403) stops
// the eval at its first request, whatever the concurrency, with one error
// naming the endpoint, the key's variable and the status: one run
// recorded, none scored.
func TestEvalRunEndpointFailureIsNoAnswer(t *testing.T) {
	bird := shareddata.Dir(t, "bird")
	questions := filepath.Join(bird, "questions.jsonl")
	var requests, status atomic.Int64
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
	}))
	defer refusing.Close()
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", filepath.Join(bird, "superhero"), "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	yaml := "databases:\n  - name: superhero\n    dsn: sqlite:" + filepath.Join(bird, "superhero", "superhero.sqlite") + "\n    bundle: bundles/superhero\n" +
		"agent:\n  models:\n    - {name: mini, provider: openai, model: gpt-4.1-mini, base_url: " + refusing.URL + "/v1, api_key_env: OKF_TEST_KEY}\n"
	os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644)
	t.Chdir(dir)
	t.Setenv("OKF_TEST_KEY", "sk-wrong")
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		status.Store(int64(code))
		requests.Store(0)
		os.RemoveAll("runs")
		exit, _, stderr := run(t, "eval", "run", "--questions", questions, "--models", "mini", "--concurrency", "4")
		want := fmt.Sprintf("stopping the eval: model mini: %s/v1 rejected the API key in OKF_TEST_KEY (%d): Incorrect API key provided", refusing.URL, code)
		if exit != exitFail || !strings.Contains(stderr, want) || strings.Count(stderr, "Incorrect API key") != 1 || requests.Load() != 1 {
			t.Errorf("eval against an endpoint answering %d: exit %d after %d requests, want %q once after 1\n%.2000s", code, exit, requests.Load(), want, stderr)
		}
		if data, _ := os.ReadFile("runs/eval-results.jsonl"); len(data) != 0 {
			t.Errorf("failed runs were scored:\n%.500s", data)
		}
		if runs, err := trace.Load("runs"); err != nil || len(runs) != 1 || runs[0].StopReason != trace.Failed {
			t.Errorf("%d runs recorded (%v), want the one that asked", len(runs), err)
		}
	}
}
