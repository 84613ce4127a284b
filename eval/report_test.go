package eval_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/golden"
)

// reportOf has a model whose price is unknown, names that HTML and
// markdown must escape, a run the endpoint failed, a miss from before
// reasons were recorded, and a skipped question.
var reportOf = eval.Report{
	Questions: 3, Repeat: 2,
	Rows: []eval.Totals{
		{Strategy: "schema", Model: "haiku", Scored: 6, Correct: 2, Reasons: map[string]int{eval.Correct: 2, eval.WrongValues: 2, eval.ExtraRows: 1, eval.ModelError: 1, eval.SQLError: 1},
			Calls: 18, In: 81234, Out: 2045, SQLErrors: 3, Cost: 0.092371, CostKnown: true},
		{Strategy: "context", Model: "haiku", Scored: 6, Correct: 6, Reasons: map[string]int{eval.Correct: 6},
			Calls: 20, In: 154321, Out: 3098, SQLErrors: 1, Cost: 0.170125, CostKnown: true},
		{Strategy: "context", Model: `script/<run | "rerun">.jsonl`, Scored: 6, Correct: 0, Reasons: map[string]int{eval.NoAnswer: 5},
			Calls: 6, In: 6000, Out: 300},
	},
	PassRates: []eval.PassRates{
		{Task: "717", Rates: []eval.Rate{{1, 2}, {2, 2}, {0, 2}}},
		{Task: "719", Rates: []eval.Rate{{1, 1}, {2, 2}, {0, 2}}},
		{Task: "721", Rates: []eval.Rate{{0, 2}, {2, 2}, {0, 2}}},
	},
	Misses: []eval.Score{
		{Task: "717", Strategy: "schema", Model: "haiku", Repeat: 2, Run: "a1b2c3d4e5", Reason: eval.WrongValues, Stop: "submitted"},
		{Task: "719", Strategy: "schema", Model: "haiku", Repeat: 2, Run: "b1b2c3d4e5", Reason: eval.ModelError, Stop: "error", Note: "model haiku: the provider failed (500)"},
		{Task: "721", Strategy: "schema", Model: "haiku", Repeat: 1, Run: "c1b2c3d4e5", Reason: eval.SQLError, Stop: "submitted", Note: "the submitted SQL fails without ROUND: a | b"},
		{Task: "721", Strategy: "context", Model: `script/<run | "rerun">.jsonl`, Repeat: 1, Run: "d1b2c3d4e5", Stop: "submitted"},
	},
	Skipped: []eval.Skip{{Question: "solar_M_1", Reason: eval.ManagementSkip}},
}

// The reports are the golden files byte for byte, and the page is
// self-contained: no script, nothing fetched.
func TestReportGolden(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(io.Writer, eval.Report) error
	}{{"report.md", eval.WriteMarkdown}, {"report.html", eval.WriteHTML}} {
		name := c.name
		var got bytes.Buffer
		if err := c.write(&got, reportOf); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name, got.Bytes())
		if bytes.Contains(got.Bytes(), []byte("<script")) || bytes.Contains(got.Bytes(), []byte("://")) {
			t.Errorf("%s has a script or an address", name)
		}
	}
}
