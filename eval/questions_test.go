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
	}}
	got, err := q.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"customers", "orders", "payments", "returns"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tables %v, want %v", got, want)
	}
	bad := Question{ID: "bad", SQL: []string{"SELEC 1"}}
	if _, err := bad.Tables(); err == nil || !strings.Contains(err.Error(), "question bad") {
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
		{Database: "d", turns: []turn{{[]item{{"manifest", 100}}}, {[]item{{"get:a", 10}}}}},
		{Database: "d", turns: []turn{{[]item{{"manifest", 100}}}, {[]item{{"get:a", 10}, {"get:b", 20}}}}},
	}
	billed, calls := session(outcomes)
	// q1: read 100; read 10 (+10 cached); answer (+11 cached).
	// q2: read 20 (+11 cached); answer (+13 cached).
	want := 100 + (10 + 10) + 11 + (20 + 11) + 13
	if billed != want || calls != 5 {
		t.Errorf("billed %d in %d calls, want %d in 5", billed, calls, want)
	}
}
