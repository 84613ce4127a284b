package eval

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/okf-tools/okf/search"
)

func searchWeights() search.Weights { return search.DefaultWeights }

func TestGoldTables(t *testing.T) {
	q := Question{ID: "x", SQL: []string{
		"WITH recent AS (SELECT * FROM public.Orders o JOIN customers c ON o.custref = c.custid) SELECT count(*) FROM recent, payments",
		"SELECT 1 FROM returns",
		"CREATE MATERIALIZED VIEW big AS SELECT * FROM refunds; CREATE INDEX ON ledger (amount); UPDATE ledger SET amount = 0",
	}}
	got, ddl, err := q.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"customers", "ledger", "orders", "payments", "refunds", "returns"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tables %v, want %v", got, want)
	}
	if want := []string{"big"}; !reflect.DeepEqual(ddl, want) {
		t.Errorf("tables named only in DDL %v, want %v", ddl, want)
	}
	bad := Question{ID: "bad", SQL: []string{"SELEC 1"}}
	if _, _, err := bad.Tables(); err == nil || !strings.Contains(err.Error(), "question bad") {
		t.Errorf("unparsable gold SQL: %v", err)
	}
}

func TestLoadQuestionsNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	good := `{"instance_id": "a_1", "selected_database": "a", "query": "q?", "sol_sql": ["SELECT 1"], "external_knowledge": [1, 2]}`
	p := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(p, []byte(good+"\n\n"+good+"\n{\"instance_id\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadQuestions(p)
	if err == nil || !strings.Contains(err.Error(), "q.jsonl:4:") {
		t.Fatalf("error %v should name q.jsonl:4", err)
	}
	if err := os.WriteFile(p, []byte(good+"\n"+good+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQuestions(p, p)
	if err != nil || len(qs) != 1 || !reflect.DeepEqual(qs[0].Rules, []int{1, 2}) {
		t.Errorf("repeated questions are read once: %+v %v", qs, err)
	}
}

func TestSessionBilling(t *testing.T) {
	// Two questions of one database: the manifest (100) is read once; the
	// second question's get repeats a concept already read.
	outcomes := []Outcome{
		{Database: "d", turns: []turn{{[]item{{key: "manifest", tokens: 100}}}, {[]item{{key: "get:a", tokens: 10}}}}},
		{Database: "d", turns: []turn{{[]item{{key: "manifest", tokens: 100}}}, {[]item{{key: "get:a", tokens: 10}, {key: "get:b", tokens: 20}}}}},
	}
	billed, calls := session(outcomes)
	// q1: read 100; read 10 (+10 cached); answer (+11 cached).
	// q2: read 20 (+11 cached); answer (+13 cached).
	want := 100 + (10 + 10) + 11 + (20 + 11) + 13
	if billed != want || calls != 5 {
		t.Errorf("billed %d in %d calls, want %d in 5", billed, calls, want)
	}
}

func TestLoadBIRDQuestions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bird.jsonl")
	lines := `{"question_id": 717, "db_id": "superhero", "question": "Please list all the superpowers of 3-D Man.", "evidence": "superpowers refers to power_name", "SQL": "SELECT 1", "difficulty": "simple"}
{"question_id": 9, "db_id": "superhero", "evidence": "", "SQL": "SELECT 1"}
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadQuestions(p); err == nil || !strings.Contains(err.Error(), "bird.jsonl:2:") {
		t.Fatalf("a BIRD question without its text: %v", err)
	}
	if err := os.WriteFile(p, []byte(strings.SplitAfter(lines, "\n")[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQuestions(p)
	want := Question{ID: "superhero_717", Database: "superhero", Text: "Please list all the superpowers of 3-D Man.",
		Evidence: "superpowers refers to power_name", SQL: []string{"SELECT 1"}, Category: "Query"}
	if err != nil || len(qs) != 1 || !reflect.DeepEqual(qs[0], want) {
		t.Errorf("read %+v, %v; want %+v", qs, err, want)
	}
}

// TestRetrievalSkipsBrokenGold checks that a question whose gold SQL does
// not parse is reported and left out, not the end of the run, and that a
// table the gold SQL creates is not counted as needed.
func TestRetrievalSkipsBrokenGold(t *testing.T) {
	dir := writeBundle(t, "shop", map[string]string{
		"tables/orders.md": "---\ntype: PostgreSQL Table\ntitle: orders\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n| `id` | integer | primary key | Order. |\n| `total` | numeric |  | Total. |\n",
	})
	c, err := LoadCorpus(dir, "", searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	qs := []Question{
		{ID: "bad", Database: "shop", Text: "totals", SQL: []string{"SELECT id, FROM orders"}},
		{ID: "good", Database: "shop", Text: "order totals", SQL: []string{"CREATE TABLE big AS SELECT id, total FROM orders WHERE total > 10"}},
	}
	outcomes, skipped, err := Retrieval(c, qs, Options{Count: func(s string) int { return len(strings.Fields(s)) }})
	if err != nil || len(skipped) != 1 || skipped[0].Question != "bad" || !strings.Contains(skipped[0].Reason, "does not parse") {
		t.Fatalf("skipped %+v, %v", skipped, err)
	}
	for _, o := range outcomes {
		if o.Question != "good" || o.GoldTables != 1 || o.GoldColumns != 2 {
			t.Errorf("%s/%s: %d gold tables, %d gold columns; want orders and its two columns", o.Question, o.Strategy, o.GoldTables, o.GoldColumns)
		}
	}
}
