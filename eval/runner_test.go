package eval_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

// fakeDB answers the queries it knows and fails the others.
type fakeDB map[string]*sqlguard.Result

func (db fakeDB) Query(_ context.Context, _, sql string, _ ...any) (*sqlguard.Result, error) {
	if r, ok := db[sql]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("no such table in\n  %s", sql)
}

func rows(values ...any) *sqlguard.Result {
	r := &sqlguard.Result{TotalKnown: true, Total: len(values)}
	for _, v := range values {
		r.Rows = append(r.Rows, []any{v})
	}
	return r
}

var db = fakeDB{
	"SELECT name FROM hero":    rows("Batman", "Robin"),
	"SELECT ROUND(0.5)":        rows(1.0),
	"SELECT (power) FROM hero": rows(3.14159, 2.0),
	"SELECT id FROM crowd":     {Rows: [][]any{{int64(1)}}, Total: eval.RowCap + 1, TotalKnown: true},
}

var tasks = []eval.Task{
	{ID: "1", Database: "superhero", Text: "Who are the heroes?", Gold: "SELECT name FROM hero", Compare: eval.Comparison{BIRD: true}},
	{ID: "2", Database: "superhero", Text: "Who is missing?", Gold: "SELECT name FROM missing", Compare: eval.Comparison{BIRD: true}},
	{ID: "3", Database: "superhero", Text: "How strong?", Gold: "SELECT ROUND(power, 2) FROM hero", Compare: eval.Comparison{Decimal: 2}},
	{ID: "4", Database: "superhero", Text: "Who is in the crowd?", Gold: "SELECT id FROM crowd", Compare: eval.Comparison{BIRD: true}},
}

// fakeAsker plays the agent: the model "gold" submits each task's gold
// SQL, "wrong" a query with other rows (that fails without its ROUND
// call), and "down" fails before
// submitting anything. It keeps the records it made, as the run log does.
type fakeAsker struct {
	mu    sync.Mutex
	asked []string
	runs  []trace.Record
	// interrupt, when set, cancels the eval as the nth question is asked.
	interrupt int
	cancel    context.CancelFunc
}

func (f *fakeAsker) Ask(ctx context.Context, t eval.Task, strategy, model string) (eval.Attempt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, t.ID+" "+strategy+" "+model)
	if len(f.asked) == f.interrupt {
		f.cancel()
		return eval.Attempt{}, ctx.Err()
	}
	if model == "refused" {
		return eval.Attempt{}, errors.New("the key was rejected")
	}
	rec := trace.Record{ID: fmt.Sprintf("run%d", len(f.runs)+1), Database: t.Database, Strategy: strategy, Model: model,
		LLMCalls: 2, Usage: llm.Usage{Input: 1000, Output: 50}, StopReason: trace.Submitted}
	cost := 0.25
	rec.Cost = &cost
	switch model {
	case "gold":
		rec.Answer = &trace.Answer{SQL: t.Gold}
	case "wrong":
		rec.Answer = &trace.Answer{SQL: "SELECT ROUND(0.5)"}
		rec.SQLErrors = 1
	default:
		rec.StopReason, rec.Error, rec.Cost = trace.Failed, "the model is down", nil
	}
	a := eval.Attempt{Record: &rec, DB: db}
	if rec.Answer != nil {
		a.Rows, _ = db.Query(ctx, "agent", rec.Answer.SQL)
	}
	f.runs = append(f.runs, rec)
	return a, nil
}

func readScores(t *testing.T, path string) []eval.Score {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []eval.Score
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s eval.Score
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// runEval runs an eval; wantFailed is how many runs are to fail (the
// model "down"), which Run reports as its error.
func runEval(t *testing.T, path string, a eval.Asker, models []string, wantFailed int) (*eval.Runner, string) {
	t.Helper()
	r, err := eval.NewRunner(path, a, []string{"context"}, models, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var progress strings.Builder
	err = r.Run(context.Background(), tasks, 2, &progress)
	switch {
	case wantFailed == 0 && err != nil:
		t.Fatal(err)
	case wantFailed > 0 && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d runs failed and were not scored (the first: the model is down)", wantFailed))):
		t.Fatalf("Run = %v, want %d failed runs", err, wantFailed)
	}
	return r, progress.String()
}

// Every run is scored by its result against the gold one, with the reason
// it missed; a run that cannot be compared is a gold_error with a note
// saying why. A run that failed (the endpoint, not the model's SQL) is no
// answer: recorded as model_error, not scored, and the eval fails.
func TestRunnerScores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	_, progress := runEval(t, path, &fakeAsker{}, []string{"gold", "wrong", "down"}, 4)
	if !strings.Contains(progress, " 1 context down: failed, not scored: the model is down\n") || !strings.Contains(progress, " 1 context wrong: submitted, wrong_values\n") {
		t.Errorf("progress:\n%s", progress)
	}
	type score struct {
		correct            bool
		reason, stop, note string
	}
	got := map[string]score{}
	for _, s := range readScores(t, path) {
		if s.Database != "superhero" || s.Strategy != "context" || s.Run == "" || s.Repeat != 1 {
			t.Errorf("score %+v: want database superhero, strategy context, repeat 1 and a run", s)
		}
		got[s.Task+" "+s.Model] = score{s.Correct, s.Reason, s.Stop, s.Note}
	}
	goldFailed := "gold SQL failed: no such table in SELECT name FROM missing"
	tooMany := fmt.Sprintf("the gold result has more than %d rows", eval.RowCap)
	want := map[string]score{
		"1 gold":  {true, eval.Correct, trace.Submitted, ""},
		"1 wrong": {false, eval.WrongValues, trace.Submitted, ""},
		"1 down":  {false, eval.ModelError, trace.Failed, "the model is down"},
		"2 gold":  {false, eval.GoldError, trace.Submitted, goldFailed},
		"2 wrong": {false, eval.GoldError, trace.Submitted, goldFailed},
		"2 down":  {false, eval.ModelError, trace.Failed, "the model is down"},
		"3 gold":  {true, eval.Correct, trace.Submitted, ""},
		"3 wrong": {false, eval.SQLError, trace.Submitted, "the submitted SQL fails without ROUND: no such table in SELECT (0.5)"},
		"3 down":  {false, eval.ModelError, trace.Failed, "the model is down"},
		"4 gold":  {false, eval.GoldError, trace.Submitted, tooMany},
		"4 wrong": {false, eval.GoldError, trace.Submitted, tooMany},
		"4 down":  {false, eval.ModelError, trace.Failed, "the model is down"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scores:\n got %v\nwant %v", got, want)
	}
}

// A run already in the results file is not asked again, and counts in
// the report with the run log's record of it. A failed run, and a score a
// crash cut short, are asked again.
func TestRunnerResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	earlier := `{"task":"1","database":"superhero","strategy":"context","model":"gold","run":"earlier","correct":true,"stop_reason":"submitted"}` + "\n" +
		`{"task":"1","database":"superhero","strategy":"context","model":"down","run":"old","correct":false,"stop_reason":"error"}` + "\n" +
		`{"task":"2","database":"superhero","strategy":"con`
	if err := os.WriteFile(path, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &fakeAsker{}
	_, progress := runEval(t, path, a, []string{"gold", "down"}, 4)
	if len(a.asked) != 7 || strings.Contains(strings.Join(a.asked, ","), "1 context gold") {
		t.Errorf("asked %v, want every run but 1 context gold", a.asked)
	}
	if !strings.HasPrefix(progress, "eval: 7 runs to do, 1 already scored\n") || !strings.Contains(progress, "/7] 3 context gold: submitted, correct\n") {
		t.Errorf("progress:\n%s", progress)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 10 || !strings.HasSuffix(lines[2], `"strategy":"con`) || !strings.HasPrefix(lines[3], `{"task":`) {
		t.Errorf("results file: the torn line and then 7 new outcomes on lines of their own:\n%s", data)
	}

	again := &fakeAsker{}
	r, progress := runEval(t, path, again, []string{"gold", "down"}, 4)
	if len(again.asked) != 4 || !strings.HasPrefix(progress, "eval: 4 runs to do, 4 already scored\n") {
		t.Errorf("the second eval asked %v, want the 4 failed runs again:\n%s", again.asked, progress)
	}
	cost := 0.25
	runs := append(a.runs, trace.Record{ID: "earlier", LLMCalls: 1, Usage: llm.Usage{Input: 500, Output: 10}, Cost: &cost})
	rep := r.Report(tasks, runs, nil)
	want := []eval.Totals{
		{Strategy: "context", Model: "gold", Scored: 4, Correct: 2, Reasons: map[string]int{eval.Correct: 2, eval.GoldError: 2},
			Calls: 7, In: 3500, Out: 160, Cost: 4 * cost, CostKnown: true},
		{Strategy: "context", Model: "down", Reasons: map[string]int{eval.ModelError: 4}, CostKnown: true},
	}
	if !reflect.DeepEqual(rep.Rows, want) {
		t.Errorf("totals:\n got %+v\nwant %+v", rep.Rows, want)
	}
	// The misses are in task order: each question's gold error, then its
	// model error, whose run is the latest failed one.
	var misses []string
	for _, m := range rep.Misses {
		misses = append(misses, m.Task+" "+m.Model+" "+m.Reason)
	}
	if got := strings.Join(misses, ", "); got != "1 down model_error, 2 gold gold_error, 2 down model_error, 3 down model_error, 4 gold gold_error, 4 down model_error" {
		t.Errorf("misses: %s", got)
	}
	if rates := rep.PassRates[0].Rates; rep.PassRates[0].Task != "1" || rates[0] != (eval.Rate{Correct: 1, Scored: 1}) || rates[1] != (eval.Rate{}) {
		t.Errorf("pass rates of task 1: %+v", rep.PassRates[0])
	}
}

// TestRunnerRepeatsResume: with --repeat, every task is asked once before
// any is asked again; an eval interrupted mid-way resumes with the runs it
// had not scored, so that over both every run is answered exactly once,
// repeats included.
func TestRunnerRepeatsResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &fakeAsker{interrupt: 5, cancel: cancel}
	r, err := eval.NewRunner(path, first, []string{"context", "raw"}, []string{"gold"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx, tasks[:2], 1, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	r.Close()
	if got := strings.Join(first.asked[:4], ","); got != "1 context gold,1 raw gold,2 context gold,2 raw gold" {
		t.Errorf("first asks %s: want each task once before repeating", got)
	}
	second := &fakeAsker{}
	r, progress := runRepeats(t, path, second)
	if !strings.HasPrefix(progress, "eval: 8 runs to do, 4 already scored\n") || !strings.Contains(progress, "] 1 context gold #2: submitted, correct\n") {
		t.Errorf("progress:\n%s", progress)
	}
	answered := map[string]int{}
	for _, s := range readScores(t, path) {
		answered[fmt.Sprintf("%s %s #%d", s.Task, s.Strategy, s.Repeat)]++
	}
	if len(answered) != 12 || len(first.runs)+len(second.runs) != 12 {
		t.Errorf("answered %v in %d+%d runs, want the 12 runs once each", answered, len(first.runs), len(second.runs))
	}
	for k, n := range answered {
		if n != 1 {
			t.Errorf("%s scored %d times", k, n)
		}
	}
	rep := r.Report(tasks[:2], append(first.runs, second.runs...), nil)
	if rep.Repeat != 3 || rep.Rows[0].Scored != 6 || rep.PassRates[0].Rates[0] != (eval.Rate{Correct: 3, Scored: 3}) || rep.PassRates[1].Rates[1] != (eval.Rate{Scored: 3}) {
		t.Errorf("report: %+v", rep)
	}
	third := &fakeAsker{}
	if _, progress := runRepeats(t, path, third); len(third.asked) != 0 || !strings.HasPrefix(progress, "eval: 0 runs to do, 12 already scored") {
		t.Errorf("a finished eval asked %v again", third.asked)
	}
}

func runRepeats(t *testing.T, path string, a eval.Asker) (*eval.Runner, string) {
	t.Helper()
	r, err := eval.NewRunner(path, a, []string{"context", "raw"}, []string{"gold"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var progress strings.Builder
	if err := r.Run(context.Background(), tasks[:2], 1, &progress); err != nil {
		t.Fatal(err)
	}
	return r, progress.String()
}

// An interrupted eval returns the context's error and leaves the run it
// was asking unscored, so that the next one asks it again.
func TestRunnerInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &fakeAsker{interrupt: 2, cancel: cancel}
	r, err := eval.NewRunner(path, a, []string{"context"}, []string{"gold"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var progress strings.Builder
	if err := r.Run(ctx, tasks, 1, &progress); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if s := readScores(t, path); len(a.asked) != 2 || len(s) != 1 || s[0].Task != "1" {
		t.Errorf("asked %v, scored %+v: want task 1 scored and task 2 not", a.asked, s)
	}
}

// cancellingDB cancels the eval when the scoring queries run, as Ctrl-C
// during a gold query does, and fails them as a cancelled query does.
type cancellingDB struct{ cancel context.CancelFunc }

func (db cancellingDB) Query(ctx context.Context, _, _ string, _ ...any) (*sqlguard.Result, error) {
	db.cancel()
	return nil, ctx.Err()
}

type cancelAsker struct{ db cancellingDB }

func (a cancelAsker) Ask(_ context.Context, t eval.Task, strategy, model string) (eval.Attempt, error) {
	rec := trace.Record{ID: "r" + t.ID, Database: t.Database, Strategy: strategy, Model: model, StopReason: trace.Submitted, Answer: &trace.Answer{SQL: t.Gold}}
	return eval.Attempt{Record: &rec, Rows: rows("x"), DB: a.db}, nil
}

// Interrupted while the gold SQL runs, a run is left unscored, never
// scored wrong because its query was cancelled.
func TestRunnerInterruptedWhileScoring(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := eval.NewRunner(path, cancelAsker{cancellingDB{cancel}}, []string{"context"}, []string{"gold"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var progress strings.Builder
	if err := r.Run(ctx, tasks[:1], 1, &progress); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("scored while interrupted: %s", data)
	}
}

// TestRunnerStopsAtAnAskerError: an error from the asker (a rejected key,
// a failed audit log) stops the eval at once, with that error: no further
// question is asked, nothing is scored, and the next run asks them all.
func TestRunnerStopsAtAnAskerError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval-results.jsonl")
	f := &fakeAsker{}
	r, err := eval.NewRunner(path, f, []string{"context"}, []string{"refused"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), tasks, 1, io.Discard); err == nil || err.Error() != "the key was rejected" {
		t.Errorf("Run = %v", err)
	}
	if len(f.asked) != 1 || len(readScores(t, path)) != 0 {
		t.Errorf("asked %v; scored %d", f.asked, len(readScores(t, path)))
	}
}
