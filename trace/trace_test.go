package trace_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/llm"
	"github.com/okf-tools/okf/trace"
)

func record(id, question string, cost *float64) *trace.Record {
	return &trace.Record{ID: id, StartedAt: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC), Question: question, Database: "shop",
		Strategy: "context", Model: "mini", StopReason: trace.Submitted, LLMCalls: 2, ToolCalls: map[string]int{"context": 1, "submit_answer": 1},
		Usage: llm.Usage{Input: 3000, Cached: 1000, Output: 30}, Cost: cost, Answer: &trace.Answer{SQL: "SELECT 1", Text: "one"}}
}

func TestAppendLoadFind(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	cost := 0.0009
	for _, r := range []*trace.Record{record("abc123", "first", &cost), record("abd456", "second", nil), record("ff0000", "third", nil), record("123456", "fourth", nil)} {
		if _, err := trace.Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := trace.Load(dir)
	if err != nil || len(runs) != 4 || *runs[0].Cost != cost || runs[1].Cost != nil || runs[2].Usage.Cached != 1000 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	for ref, want := range map[string]string{"abc": "first", "2": "second", "last": "fourth", "-4": "first", "ff": "third", "123456": "fourth", "12345": "fourth"} {
		r, err := trace.Find(runs, ref)
		if err != nil || r.Question != want {
			t.Errorf("Find(%q) = %v, %v; want %q", ref, r, err, want)
		}
	}
	for ref, want := range map[string]string{"ab": "ambiguous", "5": "there are 4", "zz": `no run with id "zz"`} {
		if _, err := trace.Find(runs, ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Find(%q) = %v, want %q", ref, err, want)
		}
	}
	if got := trace.List(runs, 2); !strings.HasPrefix(got, "#\tid") || strings.Count(got, "\n") != 3 || !strings.Contains(got, "3\tff0000") {
		t.Errorf("List from 2:\n%s", got)
	}
	// An auto run says which strategy it chose.
	runs[1].Strategy, runs[1].AutoStrategy = "auto", "raw"
	cmp := trace.Compare([]*trace.Record{&runs[0], &runs[1]})
	if !regexp.MustCompile(`(?m)^cost +\$0\.0009 +unknown$`).MatchString(cmp) || !regexp.MustCompile(`(?m)^question +first +second$`).MatchString(cmp) ||
		!regexp.MustCompile(`(?m)^strategy +\S+ +auto \(raw\)$`).MatchString(cmp) {
		t.Errorf("Compare:\n%s", cmp)
	}
	if show := trace.Show(&runs[1]); !strings.Contains(show, "strategy: auto (raw)") {
		t.Errorf("Show:\n%s", show)
	}
	// A crash cut the last line short: the next record starts its own
	// line, and reading skips only the torn one, saying so.
	os.WriteFile(filepath.Join(dir, trace.File), []byte("{\"id\":\"a\"}\n{broken\n{\"id\":\"b\",\"quest"), 0o644)
	if _, err := trace.Append(dir, record("c", "after the crash", nil)); err != nil {
		t.Fatal(err)
	}
	runs, broken, err := trace.LoadChecked(dir)
	if err != nil || len(runs) != 2 || runs[0].ID != "a" || runs[1].ID != "c" || !slices.Equal(broken, []int{2, 3}) {
		t.Errorf("torn log: %+v, broken %v, %v", runs, broken, err)
	}
	if w := trace.BrokenWarning(dir, broken); !strings.Contains(w, "runs.jsonl: skipped line 2, 3") {
		t.Errorf("warning %q", w)
	}
	if runs, err := trace.Load(t.TempDir()); err != nil || runs != nil {
		t.Errorf("missing log: %v, %v", runs, err)
	}
}

func TestCut(t *testing.T) {
	if got := trace.Cut("héllo", 2); got != "h\n… (5 more bytes)" {
		t.Errorf("Cut on a rune boundary = %q", got)
	}
	if got := trace.Cut("short", 10); got != "short" {
		t.Errorf("Cut = %q", got)
	}
}
