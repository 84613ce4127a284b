package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/llm/llmtest"
	"github.com/okf-tools/okf/trace"
)

// birdTasks are the questions of bird/superhero, and their file.
func birdTasks(t *testing.T) (string, []eval.Task) {
	t.Helper()
	questions := filepath.Join(shareddata.Dir(t, "bird"), "questions.jsonl")
	tasks, err := eval.LoadTasks(questions)
	if err != nil {
		t.Fatal(err)
	}
	return questions, tasks
}

// birdProject compiles bird/superhero into a project folder whose okf.yaml
// names the database and the models (YAML lines under agent.models), and
// works in it.
func birdProject(t *testing.T, models string) {
	t.Helper()
	bird := shareddata.Dir(t, "bird")
	dir := t.TempDir()
	if code, _, stderr := run(t, "compile", filepath.Join(bird, "superhero"), "--out", filepath.Join(dir, "bundles")); code != 0 {
		t.Fatalf("compile: %s", stderr)
	}
	yaml := "databases:\n  - name: superhero\n    dsn: sqlite:" + filepath.Join(bird, "superhero", "superhero.sqlite") + "\n    bundle: bundles/superhero\n" +
		"agent:\n  models:\n" + models
	if err := os.WriteFile(filepath.Join(dir, "okf.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
}

// birdModel is a model server in the OpenAI wire format that answers each
// request by the question it asks and the model it names: answer gives
// the turn for a task.
func birdModel(t *testing.T, tasks []eval.Task, answer func(model string, task eval.Task) llmtest.Turn) *llmtest.Server {
	byText := map[string]eval.Task{}
	for _, task := range tasks {
		if _, dup := byText[task.Text]; dup {
			t.Fatalf("two questions read %q: the model cannot tell them apart", task.Text)
		}
		byText[task.Text] = task
	}
	return llmtest.NewReplier(t, func(req map[string]any) llmtest.Turn {
		task, ok := byText[llmtest.UserText(req)]
		if !ok {
			t.Errorf("a request asks no question of the set: %.200q", llmtest.UserText(req))
			return llmtest.Turn{Status: 400}
		}
		model, _ := req["model"].(string)
		return answer(model, task)
	})
}

func submit(sql string) llmtest.Turn {
	args, _ := json.Marshal(map[string]string{"sql": sql, "answer": "see the rows"})
	return llmtest.Turn{Calls: []llmtest.Call{{Name: "submit_answer", Arguments: string(args)}}, Input: 1000, Output: 50}
}

// modelLine is an okf.yaml model entry on the scripted server, which is
// on this machine and so needs no key.
func modelLine(name string, srv *llmtest.Server) string {
	return fmt.Sprintf("    - {name: %s, provider: openai, model: %s, base_url: %s}\n", name, name, srv.OpenAIURL())
}

func resultLines(t *testing.T) []eval.Score {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("runs", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []eval.Score
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s eval.Score
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, s)
	}
	return out
}

// TestEvalRunEveryStrategyRepeated: a model that submits each question's
// gold SQL scores 100% with every strategy, each question asked three
// times, on bird/superhero's real rows; every outcome's reason is correct,
// and okf eval compare pairs two strategies run for run.
func TestEvalRunEveryStrategyRepeated(t *testing.T) {
	questions, tasks := birdTasks(t)
	srv := birdModel(t, tasks, func(_ string, task eval.Task) llmtest.Turn { return submit(task.Gold) })
	birdProject(t, modelLine("oracle", srv))
	strategies := []string{"schema", "raw", "browse", "engine", "context", "auto"}
	code, stdout, stderr := run(t, "eval", "run", "--questions", questions, "--models", "oracle", "--strategies", strings.Join(strategies, ","),
		"--repeat", "3", "--concurrency", "2")
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%.3000s", code, stderr)
	}
	runs := len(tasks) * 3
	for _, s := range strategies {
		want := fmt.Sprintf("| %s | oracle | %d | %d | 100.0%% | 98.1–100.0%% |", s, runs, runs)
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(stdout, "65 questions, each asked 3 times") || !strings.Contains(stdout, "| 717 | 3/3 | 3/3 | 3/3 | 3/3 | 3/3 | 3/3 |") ||
		!strings.Contains(stdout, "## Misses\n\nNone.\n") {
		t.Errorf("report:\n%.3000s", stdout)
	}
	lines := resultLines(t)
	seen := map[string]bool{}
	for _, s := range lines {
		key := fmt.Sprintf("%s %s #%d", s.Task, s.Strategy, s.Repeat)
		if s.Reason != eval.Correct || !s.Correct || seen[key] {
			t.Errorf("outcome %+v (seen before: %v)", s, seen[key])
		}
		seen[key] = true
	}
	if len(lines) != len(strategies)*runs {
		t.Errorf("%d outcomes, want %d", len(lines), len(strategies)*runs)
	}
	// The strategies differ only in knowledge: schema's run read every
	// table's schema, auto chose for a session of the 65 questions.
	records, err := trace.Load("runs")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if r.Strategy == "schema" && len(r.ConceptsRead) != 10 || r.Strategy == "auto" && r.AutoStrategy != "raw" || r.Strategy != "auto" && r.AutoStrategy != "" {
			t.Fatalf("run %s: strategy %s (auto %q) read %d concepts", r.ID, r.Strategy, r.AutoStrategy, len(r.ConceptsRead))
		}
	}

	code, out, stderr := run(t, "eval", "compare", "--a", "schema/oracle", "--b", "auto/oracle")
	if code != 0 || !strings.Contains(out, "195 pairs") || !strings.Contains(out, "both right 195, only A 0, only B 0, neither 0") ||
		!strings.Contains(out, "p = 1\n") {
		t.Errorf("compare: exit %d\n%s%s", code, out, stderr)
	}
}

// wrongSQL is, for each reason, a query made of a question's gold SQL that
// gives that reason, and the reason it gives for a gold result of rows
// distinct rows and width columns (a query that cannot miss that way on
// this question gives another reason, or none).
var wrongSQL = map[string]func(gold string, width, rows int) (string, string){
	eval.Correct: func(gold string, _, _ int) (string, string) { return gold, eval.Correct },
	eval.WrongValues: func(gold string, width, rows int) (string, string) {
		cols := columns(width)
		cols[0] = "'wrong:' || COALESCE(c1, '')"
		return cte(gold, width) + "SELECT " + strings.Join(cols, ", ") + " FROM g", unless(rows == 0, eval.WrongValues)
	},
	eval.MissingRows: func(gold string, width, rows int) (string, string) {
		sql := cte(gold, width) + "SELECT * FROM g EXCEPT SELECT * FROM (SELECT * FROM g LIMIT 1)"
		switch rows {
		case 0:
			return sql, eval.Correct
		case 1:
			return sql, eval.EmptyResult
		}
		return sql, eval.MissingRows
	},
	eval.ExtraRows: func(gold string, width, _ int) (string, string) {
		extra := append([]string{"'okf-extra'"}, slices.Repeat([]string{"NULL"}, width-1)...)
		return cte(gold, width) + "SELECT * FROM g UNION ALL SELECT " + strings.Join(extra, ", "), eval.ExtraRows
	},
	eval.EmptyResult: func(gold string, width, rows int) (string, string) {
		return cte(gold, width) + "SELECT * FROM g WHERE 0", unless(rows == 0, eval.EmptyResult)
	},
	eval.MissingColumns: func(gold string, width, rows int) (string, string) {
		if width == 1 {
			return gold, eval.Correct
		}
		return cte(gold, width) + "SELECT " + strings.Join(columns(width-1), ", ") + " FROM g", unless(rows == 0, eval.MissingColumns)
	},
	eval.ExtraColumns: func(gold string, width, rows int) (string, string) {
		return cte(gold, width) + "SELECT " + strings.Join(columns(width), ", ") + ", 'extra' FROM g", unless(rows == 0, eval.ExtraColumns)
	},
}

// unless is Correct when cond holds (an empty gold result matches an empty
// answer whatever its columns), else reason.
func unless(cond bool, reason string) string {
	if cond {
		return eval.Correct
	}
	return reason
}

func columns(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// cte names the gold query's columns c1, c2, …, whatever it calls them.
func cte(gold string, width int) string {
	return "WITH g(" + strings.Join(columns(width), ", ") + ") AS (" + gold + ") "
}

// TestEvalRunReasons: one model a reason, each answering every question:
// the oracle with the gold SQL, the others with a query made of it that
// misses one way (rows, columns, values, nothing), SQL that fails until
// the step limit, a declined answer, or an endpoint that fails. Each
// outcome's reason is the one the gold result says it must be, so every
// reason appears where it should and nowhere else; the report counts
// them per model and links each miss to its run; model errors are not
// scored, and fail the eval after the report.
func TestEvalRunReasons(t *testing.T) {
	questions, tasks := birdTasks(t)
	bird := shareddata.Dir(t, "bird")
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(bird, "superhero", "superhero.sqlite")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// want[model][task] is the reason each answer must get.
	want := map[string]map[string]string{}
	answers := map[string]map[string]string{}
	for _, task := range tasks {
		rows, err := db.Query(task.Gold)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		rows.Close()
		var distinct int
		if err := db.QueryRow("SELECT COUNT(*) FROM (SELECT DISTINCT * FROM (" + task.Gold + "))").Scan(&distinct); err != nil {
			t.Fatal(err)
		}
		for reason, make := range wrongSQL {
			if want[reason] == nil {
				want[reason], answers[reason] = map[string]string{}, map[string]string{}
			}
			answers[reason][task.ID], want[reason][task.ID] = make(task.Gold, len(cols), distinct)
		}
		for _, reason := range []string{eval.SQLError, eval.NoAnswer, eval.ModelError} {
			if want[reason] == nil {
				want[reason] = map[string]string{}
			}
			want[reason][task.ID] = reason
		}
	}
	srv := birdModel(t, tasks, func(model string, task eval.Task) llmtest.Turn {
		switch model {
		case eval.SQLError:
			return submit("SELECT no_such_column FROM superhero")
		case eval.NoAnswer:
			return submit("")
		case eval.ModelError:
			return llmtest.Turn{Status: 500, Header: map[string]string{"x-should-retry": "false"}}
		}
		return submit(answers[model][task.ID])
	})
	models := slices.Sorted(func(yield func(string) bool) {
		for m := range want {
			if !yield(m) {
				return
			}
		}
	})
	var yaml strings.Builder
	for _, m := range models {
		yaml.WriteString(modelLine(m, srv))
	}
	birdProject(t, yaml.String())
	code, stdout, stderr := run(t, "eval", "run", "--questions", questions, "--models", strings.Join(models, ","), "--max-steps", "2", "--concurrency", "2")
	if code != exitFail || !strings.Contains(stderr, "65 runs failed and were not scored (the first: model model_error:") {
		t.Fatalf("eval run: exit %d, want 1 for the model errors\n%.3000s", code, stderr)
	}
	got := map[string]map[string]string{}
	lines := resultLines(t)
	for _, s := range lines {
		if got[s.Model] == nil {
			got[s.Model] = map[string]string{}
		}
		got[s.Model][s.Task] = s.Reason
		if s.Correct != (s.Reason == eval.Correct) || (s.Reason == eval.ModelError) != (s.Stop == trace.Failed) {
			t.Errorf("outcome %+v: correct and stop reason disagree with the reason", s)
		}
	}
	if len(lines) != len(models)*len(tasks) {
		t.Errorf("%d outcomes, want %d", len(lines), len(models)*len(tasks))
	}
	records, err := trace.Load("runs")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range records {
		ids[r.ID] = true
	}
	for _, reason := range append([]string{eval.Correct}, eval.MissReasons...) {
		if reason == eval.GoldError {
			continue // every gold query of the set runs: TestRunnerScores holds this one
		}
		t.Run(reason, func(t *testing.T) {
			// The model named after the reason gets it at least once.
			where := 0
			for task, w := range want[reason] {
				if w == reason {
					where++
				}
				if got[reason][task] != w {
					t.Errorf("model %s, question %s: %s, want %s (%s)", reason, task, got[reason][task], w, answers[reason][task])
				}
			}
			if where == 0 {
				t.Errorf("no question gives %s", reason)
			}
			// Nowhere else: no other answer gets it unless it must.
			for model, byTask := range got {
				for task, r := range byTask {
					if r == reason && want[model][task] != reason {
						t.Errorf("%s on question %s by model %s", reason, task, model)
					}
				}
			}
			// The report counts it in its column, and links each miss.
			if reason != eval.Correct {
				column := slices.Index(eval.MissReasons, reason)
				row := reportRow(stdout, "| context | "+reason+" |")
				if len(row) != len(eval.MissReasons) || row[column] != fmt.Sprint(where) {
					t.Errorf("the reasons row of %s is %v", reason, row)
				}
				for _, s := range lines {
					if s.Reason == reason && (!ids[s.Run] || !strings.Contains(stdout, fmt.Sprintf("| %s | context | %s | 1 | %s | %s | %s |", s.Task, s.Model, reason, s.Stop, s.Run))) {
						t.Errorf("miss %+v is not listed with its run", s)
					}
				}
			}
		})
	}
	// Model errors are not scored: the model has no scored run at all.
	if !strings.Contains(stdout, "| context | model_error | 0 | 0 | - | - |") || !strings.Contains(stdout, "A model_error run is not scored") {
		t.Errorf("model errors in the report:\n%.2000s", stdout)
	}
	code, out, stderr := run(t, "eval", "compare", "--a", "context/correct", "--b", "context/wrong_values")
	empty := countOf(want[eval.WrongValues], eval.Correct)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("both right %d, only A %d, only B 0, neither 0", empty, len(tasks)-empty)) ||
		!strings.Contains(out, "McNemar's exact test (two-sided, on the") || !strings.Contains(out, "p = ") {
		t.Errorf("compare: exit %d\n%s%s", code, out, stderr)
	}
	// The runs the endpoint failed are asked again, and fail again.
	code, _, stderr = run(t, "eval", "run", "--questions", questions, "--models", strings.Join(models, ","), "--max-steps", "2")
	if code != exitFail || !strings.Contains(stderr, fmt.Sprintf("eval: 65 runs to do, %d already scored", (len(models)-1)*len(tasks))) {
		t.Errorf("resume: exit %d\n%.500s", code, stderr)
	}
}

func countOf(m map[string]string, v string) int {
	n := 0
	for _, x := range m {
		if x == v {
			n++
		}
	}
	return n
}

// reportRow is the cells after the first two of the report's line that
// starts with prefix, in the section "Why runs missed".
func reportRow(report, prefix string) []string {
	_, section, _ := strings.Cut(report, "## Why runs missed")
	for _, line := range strings.Split(section, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			var cells []string
			for _, c := range strings.Split(strings.TrimSuffix(rest, " |"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			return cells
		}
	}
	return nil
}

// TestEvalUsage: bad input to okf eval compare, and a --repeat or a
// strategy okf eval run cannot take, is a usage error (exit 2) that says
// what is wrong.
func TestEvalUsage(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("q.jsonl", []byte(`{"question_id": 1, "db_id": "d", "question": "q", "SQL": "SELECT 1"}`+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--a", "context/m"}, "eval compare needs --a and --b"},
		{[]string{"compare", "--a", "context", "--b", "raw/m"}, `--a: "context" is not strategy/model`},
		{[]string{"compare", "--a", "context/m", "--b", "raw/m"}, "runs/eval-results.jsonl does not exist"},
		{[]string{"run", "--questions", "q.jsonl", "--repeat", "0"}, "--repeat must be at least 1"},
		{[]string{"run", "--questions", "q.jsonl", "--strategies", "schema,magic", "--model", "script/x.jsonl"}, `unknown strategy "magic" (one of schema, raw, browse, engine, context, auto)`},
	} {
		code, _, stderr := run(t, append([]string{"eval"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
	os.MkdirAll("runs", 0o755)
	os.WriteFile(filepath.Join("runs", eval.ResultsFile), []byte(`{"task":"1","strategy":"context","model":"m","repeat":1,"run":"r","correct":true,"reason":"correct","stop_reason":"submitted"}`+"\n"), 0o644)
	code, _, stderr := run(t, "eval", "compare", "--a", "context/m", "--b", "raw/m")
	if code != exitUsage || !strings.Contains(stderr, "no scored runs of raw/m; the results hold context/m") {
		t.Errorf("unknown side: exit %d, %s", code, stderr)
	}
}

// TestEvalRunFourWay: the four-way table of docs/eval.md, the seed's
// experiment on the example shop (schema only, every document pasted,
// the bundle browsed, search over it), is what one okf eval run prints
// with the scripted model of examples/shop/fourway.jsonl; so is the
// comparison of two of its strategies.
func TestEvalRunFourWay(t *testing.T) {
	script, _ := filepath.Abs("../../examples/shop/fourway.jsonl")
	questions, _ := filepath.Abs("../../examples/shop/shop_questions.jsonl")
	doc, err := os.ReadFile("../../docs/eval.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if code, _, stderr := run(t, "demo", "--dir", ".demo"); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	f, err := os.OpenFile(".demo/okf.yaml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "agent:\n  models:\n    - name: replay\n      provider: script\n      script: %s\n      price: {input: 0.20, output: 0.60}\n", script)
	f.Close()
	code, stdout, stderr := run(t, "eval", "run", "--config", ".demo/okf.yaml", "--runs", ".demo/fourway", "--questions", questions,
		"--strategies", "schema,raw,browse,engine", "--model", "replay", "--today", "2026-07-01")
	if code != 0 {
		t.Fatalf("eval run: exit %d\n%s", code, stderr)
	}
	_, reasons, _ := strings.Cut(stdout, "## Why runs missed")
	for name, table := range map[string]string{"accuracy": firstTable(stdout), "reasons": firstTable(reasons)} {
		if table == "" || !strings.Contains(string(doc), table) {
			t.Errorf("docs/eval.md lacks the %s table okf eval run prints:\n%s", name, table)
		}
	}
	code, out, stderr := run(t, "eval", "compare", "--runs", ".demo/fourway", "--a", "schema/replay", "--b", "raw/replay")
	if code != 0 || !strings.Contains(string(doc), "```\n$ okf eval compare --runs .demo/fourway --a schema/replay --b raw/replay\n"+out+"```\n") {
		t.Errorf("docs/eval.md lacks the comparison (exit %d, %s):\n%s", code, stderr, out)
	}
}

// firstTable is the first markdown table of a text.
func firstTable(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "|") {
			b.WriteString(line)
		} else if b.Len() > 0 {
			break
		}
	}
	return b.String()
}
