package eval_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/okf-tools/okf/eval"
	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/trace"
)

// reportTotals has a model whose price is unknown and names that HTML
// must escape.
var reportTotals = []eval.Totals{
	{Strategy: "context", Model: "haiku", Scored: 65, Correct: 52, Stops: map[string]int{trace.Submitted: 63, trace.Declined: 1, trace.StepLimit: 1},
		Calls: 231, In: 812345, Out: 20456, SQLErrors: 17, Cost: 0.92371, CostKnown: true},
	{Strategy: "engine", Model: "haiku", Scored: 65, Correct: 47, Stops: map[string]int{trace.Submitted: 60, trace.Failed: 5},
		Calls: 402, In: 1543210, Out: 30987, SQLErrors: 41, Cost: 1.70125, CostKnown: true},
	{Strategy: "engine", Model: `script/<run & "rerun">.jsonl`, Scored: 65, Correct: 33, Stops: map[string]int{trace.Submitted: 65},
		Calls: 65, In: 65000, Out: 3250},
}

// The reports are the golden files byte for byte, and the page is
// self-contained: no script, nothing fetched.
func TestReportGolden(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(io.Writer, int, []eval.Totals) error
	}{{"report.md", eval.WriteMarkdown}, {"report.html", eval.WriteHTML}} {
		name := c.name
		var got bytes.Buffer
		if err := c.write(&got, 65, reportTotals); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name, got.Bytes())
		if bytes.Contains(got.Bytes(), []byte("<script")) || bytes.Contains(got.Bytes(), []byte("://")) {
			t.Errorf("%s has a script or an address", name)
		}
	}
}
