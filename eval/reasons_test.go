package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/sqlguard"
	"github.com/okf-tools/okf/trace"
)

func result(columns []string, rows ...[]any) *sqlguard.Result {
	r := &sqlguard.Result{Rows: rows, Total: len(rows), TotalKnown: true}
	for _, c := range columns {
		r.Columns = append(r.Columns, sqlguard.Column{Name: c})
	}
	return r
}

// TestClassify: each reason is decided from the two result sets, as BIRD
// and LiveSQLBench compare them.
func TestClassify(t *testing.T) {
	bird, lsb, ordered := Comparison{BIRD: true}, Comparison{Decimal: 2}, Comparison{Decimal: 2, Order: true}
	heroes := result([]string{"name", "power"}, []any{"Batman", int64(3)}, []any{"Robin", int64(2)})
	for _, c := range []struct {
		name string
		pred *sqlguard.Result
		c    Comparison
		want string
	}{
		{"same rows", result([]string{"n", "p"}, []any{"Robin", int64(2)}, []any{"Batman", 3.0}), bird, Correct},
		{"duplicates in a set", result([]string{"n", "p"}, []any{"Robin", int64(2)}, []any{"Batman", int64(3)}, []any{"Robin", int64(2)}), bird, Correct},
		{"a changed value", result([]string{"n", "p"}, []any{"Batman", int64(4)}, []any{"Robin", int64(2)}), bird, WrongValues},
		{"text for a number", result([]string{"n", "p"}, []any{"Batman", "3"}, []any{"Robin", "2"}), bird, WrongValues},
		{"another order where it counts", result([]string{"n", "p"}, []any{"Robin", int64(2)}, []any{"Batman", int64(3)}), ordered, WrongValues},
		{"a row short", result([]string{"n", "p"}, []any{"Robin", int64(2)}), bird, MissingRows},
		{"a duplicate short", result([]string{"n", "p"}, []any{"Robin", int64(2)}, []any{"Batman", int64(3)}, []any{"Batman", int64(3)}), lsb, ExtraRows},
		{"a row too many", result([]string{"n", "p"}, []any{"Robin", int64(2)}, []any{"Batman", int64(3)}, []any{"Alfred", nil}), bird, ExtraRows},
		{"a column short", result([]string{"n"}, []any{"Batman"}, []any{"Robin"}), bird, MissingColumns},
		{"a column too many", result([]string{"n", "p", "x"}, []any{"Batman", int64(3), 1}, []any{"Robin", int64(2), 1}), lsb, ExtraColumns},
		{"no rows", result([]string{"n", "p"}), bird, EmptyResult},
		{"no rows and no columns", result(nil), lsb, EmptyResult},
	} {
		if got := Classify(heroes, c.pred, c.c); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := Classify(result([]string{"n"}), result([]string{"n"}, []any{"x"}), bird); got != ExtraRows {
		t.Errorf("rows where the gold has none: %s", got)
	}
	if got := Classify(result([]string{"n"}), result([]string{"n"}), bird); got != Correct {
		t.Errorf("both empty: %s", got)
	}
}

type cannedDB map[string]*sqlguard.Result

func (q cannedDB) Query(_ context.Context, _, sql string, _ ...any) (*sqlguard.Result, error) {
	if r, ok := q[sql]; ok {
		return r, nil
	}
	return nil, errors.New("no such column: nope")
}

// TestScoreWithoutRows: a run with no answer is no_answer, unless the last
// query it ran failed (sql_error); the gold SQL is not run for either.
func TestScoreWithoutRows(t *testing.T) {
	task := Task{ID: "1", Gold: "SELECT 1", Compare: Comparison{BIRD: true}}
	failing := []trace.Step{{Calls: []trace.Call{{Tool: "run_sql"}, {Tool: "submit_answer", Error: true}}}, {Nudged: true}}
	repaired := []trace.Step{{Calls: []trace.Call{{Tool: "run_sql", Error: true}}}, {Calls: []trace.Call{{Tool: "run_sql"}, {Tool: "get", Error: true}}}}
	for _, c := range []struct {
		rec        trace.Record
		reason     string
		noteSuffix string
	}{
		{trace.Record{StopReason: trace.Declined, Answer: &trace.Answer{Text: "Not about the data."}}, NoAnswer, ""},
		{trace.Record{StopReason: trace.StepLimit, Steps: repaired}, NoAnswer, ""},
		{trace.Record{StopReason: trace.Truncated}, NoAnswer, ""},
		{trace.Record{StopReason: trace.StepLimit, Steps: failing}, SQLError, "(step_limit)"},
	} {
		reason, note := score(context.Background(), task, Attempt{Record: &c.rec, DB: cannedDB{}})
		if reason != c.reason || !strings.HasSuffix(note, c.noteSuffix) {
			t.Errorf("%s: %s (%s), want %s", c.rec.StopReason, reason, note, c.reason)
		}
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {10, 10, 0.7225, 1}, {5, 10, 0.2366, 0.7634}, {65, 65, 0.9442, 1}, {0, 0, 0, 1}} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = %.4f, %.4f; want %.4f, %.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestMcNemar(t *testing.T) {
	for _, c := range []struct {
		b, c int
		p    float64
	}{{0, 0, 1}, {3, 1, 0.625}, {1, 3, 0.625}, {5, 5, 1}, {32, 0, 2 * math.Pow(0.5, 32)}, {10, 2, 79.0 / 2048}, {700, 600, 0.0060157938610449525}} {
		if p := McNemar(c.b, c.c); math.Abs(p-c.p) > 1e-4*max(c.p, 1e-6) && math.Abs(p-c.p) > 1e-12 {
			t.Errorf("McNemar(%d, %d) = %.6g, want %.6g", c.b, c.c, p, c.p)
		}
	}
}

// TestCompare pairs each question's nth run of A with its nth run of B,
// leaves out runs without a partner and runs the endpoint failed, and
// totals the paired runs' tokens and cost.
func TestCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsFile)
	var lines []string
	var runs []trace.Record
	cost := 0.001
	add := func(task, strategy string, repeat int, correct bool, reason string, tokens int) {
		id := fmt.Sprintf("%s-%s-%d", task, strategy, repeat)
		lines = append(lines, fmt.Sprintf(`{"task":%q,"strategy":%q,"model":"m/x","repeat":%d,"run":%q,"correct":%v,"reason":%q,"stop_reason":"submitted"}`,
			task, strategy, repeat, id, correct, reason))
		runs = append(runs, trace.Record{ID: id, Usage: llm.Usage{Input: tokens, Output: 10}, Cost: &cost})
	}
	for q := range 6 {
		task := fmt.Sprint(q)
		for n := 1; n <= 2; n++ {
			add(task, "schema", n, q < 2, "", 100)
			add(task, "context", n, q < 5, "", 300)
		}
	}
	add("9", "context", 1, true, Correct, 300)
	lines = append(lines, `{"task":"9","strategy":"schema","model":"m/x","repeat":1,"run":"failed","reason":"model_error","stop_reason":"error"}`)
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	p, err := Compare(path, runs, Side{"schema", "m/x"}, Side{"context", "m/x"})
	if err != nil {
		t.Fatal(err)
	}
	want := Paired{A: "schema/m/x", B: "context/m/x", Pairs: 12, BothRight: 4, OnlyA: 0, OnlyB: 6, Neither: 2, UnpairedB: 1,
		TokensA: 12 * 110, TokensB: 12 * 310, TokensDifference: 12 * 200}
	p.PValue, p.CostA, p.CostB, p.CostDifference = 0, nil, nil, nil
	if p != want {
		t.Errorf("paired:\n got %+v\nwant %+v", p, want)
	}
	p, _ = Compare(path, runs, Side{"schema", "m/x"}, Side{"context", "m/x"})
	if math.Abs(p.PValue-0.03125) > 1e-9 || p.CostDifference == nil || math.Abs(*p.CostDifference) > 1e-12 {
		t.Errorf("p = %v, cost difference %v", p.PValue, p.CostDifference)
	}
	var b strings.Builder
	WriteComparison(&b, p)
	text := strings.Join(strings.Fields(b.String()), " ")
	for _, line := range []string{"B right B wrong A right 4 0 A wrong 6 2 both right 4, only A 0, only B 6, neither 2",
		"McNemar's exact test (two-sided, on the 6 discordant pairs): p = 0.0313", "tokens per run: A 110, B 310 (B - A: +200)",
		"Left out, having no run to pair with: 0 runs of A, 1 of B."} {
		if !strings.Contains(text, line) {
			t.Errorf("comparison lacks %q:\n%s", line, b.String())
		}
	}
	if _, err := Compare(path, runs, Side{"raw", "m/x"}, Side{"context", "m/x"}); err == nil || err.Error() != "no scored runs of raw/m/x; the results hold context/m/x, schema/m/x" {
		t.Errorf("unknown side: %v", err)
	}
	if s, err := ParseSide("context/openai/gpt-4.1-mini"); err != nil || s != (Side{"context", "openai/gpt-4.1-mini"}) {
		t.Errorf("ParseSide = %+v, %v", s, err)
	}
	for _, bad := range []string{"context", "/m", "context/"} {
		if _, err := ParseSide(bad); err == nil {
			t.Errorf("ParseSide(%q) took it", bad)
		}
	}
}
