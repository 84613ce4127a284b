package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/okf-tools/okf/internal/golden"
	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/trace"
)

// The viewer's data block is the golden file byte for byte, the page
// carries it unchanged, and recorded text cannot break out of it.
func TestViewerGolden(t *testing.T) {
	cost := 0.0021
	r := record("35c86cf9a8", "How many active customers does the shop have?", &cost)
	r.Snapshot = "74cd113e73c9"
	r.ConceptsRead = []string{"shop/knowledge/active-customer", "shop/tables/orders"}
	r.SQLAttempts, r.SQLErrors = 2, 1
	r.Steps = []trace.Step{
		{N: 1, ModelMS: 900, Usage: llm.Usage{Input: 1200, Output: 20}, Calls: []trace.Call{
			{Tool: "context", Arguments: `{"question":"active customers"}`, Result: "# Knowledge for: active customers", Bytes: 3499, Concepts: r.ConceptsRead}}},
		{N: 2, ModelMS: 700, WaitMS: 2000, Retries: 1, Text: "Checking the count.", Usage: llm.Usage{Input: 2600, Cached: 1200, Output: 60}, Calls: []trace.Call{
			{Tool: "run_sql", Arguments: `{"sql":"SELECT count(*) FROM ordres"}`, Result: "Error: no such table: ordres </script><script>alert(1)</script>", Bytes: 60, Error: true}}},
		{N: 3, ModelMS: 500, Usage: llm.Usage{Input: 2800, Cached: 2600, Output: 70}, Calls: []trace.Call{
			{Tool: "submit_answer", Arguments: `{"sql":"SELECT 1","answer":"one"}`, Result: "Answer received.", Bytes: 16}}},
	}
	other := record("00aa11bb22", "second", nil)
	got, err := trace.ViewerJSON([]*trace.Record{r, other})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "viewer.json", got)
	var page bytes.Buffer
	if err := trace.WriteHTML(&page, "okf runs", []*trace.Record{r, other}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if !strings.Contains(html, `<script type="application/json" id="okf-runs">`+string(got)+`</script>`) {
		t.Error("the page does not carry the data block verbatim")
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("a recorded result closed the data block's script element")
	}
	if strings.Contains(html, "https://") || strings.Contains(html, "http://") {
		t.Error("the page reaches for the network")
	}
	if empty, err := trace.ViewerJSON(nil); err != nil || string(empty) != "[]\n" {
		t.Errorf("no runs: %q, %v", empty, err)
	}
}
