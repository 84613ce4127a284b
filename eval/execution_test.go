package eval

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestRemoveRound(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT ROUND(a / b, 2) AS r FROM t":                     "SELECT (a / b) AS r FROM t",
		"select round(avg(x)::numeric, 2), round (y) from t":     "select (avg(x)::numeric), (y) from t",
		"SELECT ROUND(ROUND(x, 1) * 100, 2)":                     "SELECT ((x) * 100)",
		"SELECT 'ROUND(1, 2)', myround(x, 2), t.round(x) FROM t": "SELECT 'ROUND(1, 2)', myround(x, 2), t.round(x) FROM t",
		"SELECT ROUND(f(a, b), 3) FROM t WHERE s = 'it''s'":      "SELECT (f(a, b)) FROM t WHERE s = 'it''s'",
		"SELECT ROUND(x": "SELECT ROUND(x",
	} {
		if got := RemoveRound(in); got != want {
			t.Errorf("RemoveRound(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameResult(t *testing.T) {
	lsb := Comparison{Decimal: 2}
	cases := []struct {
		gold, pred [][]any
		c          Comparison
		want       bool
	}{
		{[][]any{{int64(1)}, {int64(2)}}, [][]any{{int64(2)}, {int64(1)}}, lsb, true},
		{[][]any{{int64(1)}, {int64(2)}}, [][]any{{int64(2)}, {int64(1)}}, Comparison{Decimal: 2, Order: true}, false},
		{[][]any{{3.14159}}, [][]any{{"3.14"}}, lsb, true},
		{[][]any{{3.14159}}, [][]any{{3.15}}, lsb, false},
		{[][]any{{"a"}, {"a"}}, [][]any{{"a"}}, lsb, false},
		{[][]any{{"a"}, {"a"}}, [][]any{{"a"}}, Comparison{Distinct: true}, true},
		{[][]any{{int64(1)}, {int64(1)}}, [][]any{{1.0}}, Comparison{BIRD: true}, true},
		{[][]any{{"1"}}, [][]any{{int64(1)}}, Comparison{BIRD: true}, false},
		{[][]any{{nil}}, [][]any{{"null"}}, lsb, false},
	}
	for i, tc := range cases {
		if got := SameResult(tc.gold, tc.pred, tc.c); got != tc.want {
			t.Errorf("case %d: SameResult(%v, %v, %+v) = %v", i, tc.gold, tc.pred, tc.c, got)
		}
	}
}

func TestLoadTasks(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/q.jsonl"
	os.WriteFile(path, []byte(`{"instance_id": "solar_1", "selected_database": "solar", "query": "q1", "sol_sql": ["SELECT 1"], "category": "Query", "conditions": {"decimal": [3], "order": true, "distinct": false}}
{"instance_id": "solar_2", "selected_database": "solar", "query": "q2", "sol_sql": ["UPDATE t SET x = 1"], "category": "Management", "conditions": {}}

{"question_id": 717, "db_id": "superhero", "question": "q3", "SQL": "SELECT 2", "evidence": "e"}
`), 0o644)
	tasks, err := LoadTasks(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{
		{ID: "solar_1", Database: "solar", Text: "q1", Gold: "SELECT 1", Compare: Comparison{Decimal: 3, Order: true}},
		{ID: "solar_2", Database: "solar", Text: "q2", Gold: "UPDATE t SET x = 1", Compare: Comparison{Decimal: 2}, Management: true},
		{ID: "717", Database: "superhero", Text: "q3", Gold: "SELECT 2", Compare: Comparison{BIRD: true}},
	}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("tasks = %+v\nwant %+v", tasks, want)
	}
	for body, msg := range map[string]string{
		"{\"instance_id\": \"a\", \"query\": \"q\", \"sol_sql\": []}\n": "q.jsonl:1: a has no gold SQL",
		"\n{\"foo\": 1}\n": "q.jsonl:2: neither a LiveSQLBench task",
		"{broken\n":        "q.jsonl:1:",
	} {
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := LoadTasks(path); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", body, err, msg)
		}
	}
}
