package eval

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/search"
)

// compileLiveSQLBench compiles every reconstructed LiveSQLBench database
// into a folder of bundles.
func compileLiveSQLBench(t *testing.T) (bundles, raw string) {
	t.Helper()
	raw = shareddata.Dir(t, "livesqlbench", "base-lite")
	var out []*compile.Bundle
	for _, dir := range shareddata.LiveSQLBenchDatabases(t) {
		db, err := livesqlbench.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	bundles = t.TempDir()
	if err := compile.Write(bundles, out...); err != nil {
		t.Fatal(err)
	}
	return bundles, raw
}

// TestRetrievalTargets holds the engine to the figures the project
// promises on the LiveSQLBench questions: search finds at least 90% of the
// gold rules in its rows, and a context pack comes within 5 points of that
// at under half the tokens.
func TestRetrievalTargets(t *testing.T) {
	bundles, raw := compileLiveSQLBench(t)
	qdir := shareddata.Dir(t, "livesqlbench", "questions")
	qs, err := LoadQuestions(filepath.Join(qdir, "lite_7db_train.jsonl"), filepath.Join(qdir, "lite_3db_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 75 {
		t.Fatalf("%d distinct questions, want 75 (the 3-db set repeats the 7-db one)", len(qs))
	}
	corpus, err := LoadCorpus(bundles, raw, searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	outcomes, skipped, err := Retrieval(corpus, qs, Options{Count: tokens.Count, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Errorf("questions without a bundle: %v", skipped)
	}
	all := map[string]Summary{}
	for _, s := range Summarize(outcomes) {
		if s.Database == "all" {
			all[s.Strategy] = s
		}
	}
	var table strings.Builder
	if err := WriteTable(&table, Summarize(outcomes)); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	search, context := all["search"], all["context"]
	if search.N != 75 || search.Recall < 0.90 {
		t.Errorf("search rule recall %.3f over %d questions, want at least 0.90", search.Recall, search.N)
	}
	if context.Recall < search.Recall-0.05 {
		t.Errorf("context rule recall %.3f, more than 5 points under search's %.3f", context.Recall, search.Recall)
	}
	if context.Tokens >= search.Tokens/2 {
		t.Errorf("context packs read %.0f tokens a question, not under half of search's %.0f", context.Tokens, search.Tokens)
	}
	for _, s := range []string{"raw", "navigator", "manifest"} {
		if all[s].Recall != 1 || all[s].N != 75 {
			t.Errorf("%s: recall %.3f over %d questions; it reads every needed concept by construction", s, all[s].Recall, all[s].N)
		}
	}
	if all["raw"].Tokens <= all["manifest"].Tokens || all["manifest"].Tokens <= context.Tokens {
		t.Errorf("tokens a question: raw %.0f, manifest %.0f, context %.0f: expected raw > manifest > context",
			all["raw"].Tokens, all["manifest"].Tokens, context.Tokens)
	}
}

func TestMissingRules(t *testing.T) {
	c := &Corpus{RuleConcept: map[string]map[int]string{"shop": {1: "knowledge/paid-order", 2: "knowledge/active-customer"}}}
	q := Question{Rules: []int{1, 2, 7}}
	got := c.MissingRules("shop", q, search.Pack{Rules: []string{"shop/knowledge/paid-order"}})
	want := []string{"knowledge/active-customer", "rule 7 (not in the bundle)"}
	if !slices.Equal(got, want) {
		t.Errorf("missing = %q, want %q", got, want)
	}
}
