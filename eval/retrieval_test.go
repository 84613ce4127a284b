package eval

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
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
	if err := compile.Write(bundles, compile.WriteOptions{}, out...); err != nil {
		t.Fatal(err)
	}
	return bundles, raw
}

// compileBIRD compiles BIRD superhero into bundles beside the LiveSQLBench
// ones.
func compileBIRD(t *testing.T, bundles string) {
	t.Helper()
	if err := compile.Write(bundles, compile.WriteOptions{}, compiletest.Shared(t, "bird")...); err != nil {
		t.Fatal(err)
	}
}

// all returns the "all" summary of each strategy.
func all(t *testing.T, outcomes []Outcome) map[string]Summary {
	t.Helper()
	out := map[string]Summary{}
	for _, s := range Summarize(outcomes) {
		if s.Database == "all" {
			out[s.Strategy] = s
		}
	}
	var table strings.Builder
	if err := WriteTable(&table, Summarize(outcomes)); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	return out
}

// TestParaphraseTargets holds the engine to the figures of issue 26 on the
// train questions asked without the rules' names, in the asker's words:
// search finds nearly every gold rule in its first 8 and ranks them well,
// and a context pack, hedging over the few best rules, holds nearly every
// one, under 1,500 tokens on average; on one tenant of every bundle too.
func TestParaphraseTargets(t *testing.T) {
	bundles, raw := compileLiveSQLBench(t)
	qs, err := LoadQuestions(filepath.Join(shareddata.Dir(t, "livesqlbench", "questions"), "lite_paraphrase_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := LoadCorpus(bundles, raw, searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	for _, mixed := range []bool{false, true} {
		outcomes, _, err := Retrieval(corpus, qs, Options{Count: tokens.Count, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Mixed: mixed})
		if err != nil {
			t.Fatal(err)
		}
		one := all(t, outcomes)
		search, context := one["search"], one["context"]
		if search.N != 75 || search.Recall < 0.965 || search.MRR < 0.78 {
			t.Errorf("mixed %v: search rule recall %.3f, MRR %.2f over %d questions; want at least 0.965 and 0.78", mixed, search.Recall, search.MRR, search.N)
		}
		if context.Recall < 0.965 || context.Complete < 0.85 || context.Tokens > 1500 || deref(context.LRecall) < 0.97 {
			t.Errorf("mixed %v: context rule recall %.3f, complete %.3f, literal recall %.3f, %.0f tokens; want 0.965, 0.85, 0.97 and at most 1,500",
				mixed, context.Recall, context.Complete, deref(context.LRecall), context.Tokens)
		}
	}
}

// TestRetrievalTargets holds the engine to the figures the project
// promises on the train questions of ../shared/data (issue 13): search
// finds the gold rules and ranks them high; a context pack holds every
// gold rule and nearly every gold table and column, most packs all of
// them, under 2,000 tokens; the same questions asked of one tenant of every
// bundle, without naming theirs, do within 5 points as well; and on BIRD,
// with no rules at all, packs hold the tables and columns, with and
// without BIRD's evidence.
func TestRetrievalTargets(t *testing.T) {
	bundles, raw := compileLiveSQLBench(t)
	compileBIRD(t, bundles)
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
	opt := Options{Count: tokens.Count, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
	outcomes, skipped, err := Retrieval(corpus, qs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Errorf("skipped: %v", skipped)
	}
	one := all(t, outcomes)
	search, context := one["search"], one["context"]
	if search.N != 75 || search.Recall < 0.97 || search.MRR < 0.8 {
		t.Errorf("search: rule recall %.3f, MRR %.2f over %d questions; want at least 0.97 and 0.8", search.Recall, search.MRR, search.N)
	}
	if context.Recall != 1 || context.TRecall < 0.98 || context.CRecall < 0.97 || context.Complete < 0.92 || context.Tokens > 1500 || deref(context.LRecall) < 0.97 {
		t.Errorf("context: rule recall %.3f, table %.3f, column %.3f, literal %.3f, complete %.3f, %.0f tokens; want 1, 0.98, 0.97, 0.97, 0.92 and at most 1,500",
			context.Recall, context.TRecall, context.CRecall, deref(context.LRecall), context.Complete, context.Tokens)
	}
	for _, s := range []string{"raw", "navigator", "manifest", "auto"} {
		if one[s].Recall != 1 || one[s].Complete != 1 || one[s].N != 75 {
			t.Errorf("%s: recall %.3f, complete %.3f over %d questions; it reads everything needed by construction", s, one[s].Recall, one[s].Complete, one[s].N)
		}
	}
	if one["schema"].Recall != 0 || one["schema"].CRecall != 1 {
		t.Errorf("schema: rule recall %.3f, column recall %.3f; it has every column and no rule", one["schema"].Recall, one["schema"].CRecall)
	}
	if one["raw"].Tokens <= one["manifest"].Tokens || one["manifest"].Tokens <= context.Tokens {
		t.Errorf("tokens a question: raw %.0f, manifest %.0f, context %.0f: expected raw > manifest > context",
			one["raw"].Tokens, one["manifest"].Tokens, context.Tokens)
	}

	opt.Mixed = true
	mixed, _, err := Retrieval(corpus, qs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if m := all(t, mixed)["context"]; m.Complete < context.Complete-0.05 || m.CRecall < context.CRecall-0.05 || m.Recall < context.Recall-0.05 {
		t.Errorf("one tenant of every bundle: complete %.3f, column recall %.3f, rule recall %.3f; more than 5 points under %.3f, %.3f, %.3f",
			m.Complete, m.CRecall, m.Recall, context.Complete, context.CRecall, context.Recall)
	}

	bird, err := LoadQuestions(shareddata.Dir(t, "bird", "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, evidence := range []bool{false, true} {
		out, skipped, err := Retrieval(corpus, bird, Options{Count: tokens.Count, Now: opt.Now, Evidence: evidence})
		if err != nil || len(skipped) != 0 {
			t.Fatalf("BIRD: %v, skipped %v", err, skipped)
		}
		if c := all(t, out)["context"]; c.N != 65 || c.TRecall < 0.95 || c.CRecall < 0.90 || c.LRecall == nil || *c.LRecall < 0.95 || c.Tokens > 700 {
			t.Errorf("BIRD superhero (evidence %v): table recall %.3f, column recall %.3f, literal recall %v, %.0f tokens over %d questions; want 0.95, 0.90, 0.95 and at most 700",
				evidence, c.TRecall, c.CRecall, deref(c.LRecall), c.Tokens, c.N)
		}
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

// writeBundle writes docs (path → content) as the one bundle of a fresh
// folder of bundles, and returns that folder.
func writeBundle(t *testing.T, bundle string, docs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range docs {
		p = filepath.Join(dir, bundle, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPackMissesRankedBySearch holds what eval retrieval says of a gold
// rule a context pack missed (issue 26): the rank a search for the question
// gives it, 0 when search does not find it (as for a rule the bundle
// lacks), and the section the text report gives them. The question
// names Big Order; Big Spender outscores Loyal Customer, which only the
// word "orders" reaches, by far more than a pack takes a rule for.
func TestPackMissesRankedBySearch(t *testing.T) {
	rule := func(id, title, body string) string {
		return "---\ntype: Business Rule\ntitle: " + title + "\nrule_id: " + id + "\n---\n\n# Definition\n\n" + body + "\n"
	}
	dir := writeBundle(t, "shop", map[string]string{
		"tables/orders.md": "---\ntype: PostgreSQL Table\ntitle: orders\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
			"| `id` | integer | primary key | Order. |\n| `total` | numeric |  | Amount paid. |\n",
		"knowledge/big-order.md":      rule("1", "Big Order", "An order whose total is over 1,000."),
		"knowledge/big-spender.md":    rule("2", "Big Spender", "A customer whose big orders have the largest total, over 5,000 a year."),
		"knowledge/loyal-customer.md": rule("3", "Loyal Customer", "A customer with more than ten orders."),
		"knowledge/refund-window.md":  rule("4", "Refund Window", "Refunds are accepted within thirty days of payment."),
	})
	c, err := LoadCorpus(dir, "", searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	q := Question{ID: "shop_1", Database: "shop", Text: "Which big orders have the largest total?",
		SQL: []string{"SELECT id FROM orders WHERE total > 1000"}, Rules: []int{1, 3, 4, 9}}
	outcomes, _, err := Retrieval(c, []Question{q}, Options{Count: func(s string) int { return len(strings.Fields(s)) }})
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, h := range c.Index.Search(q.Text, search.Options{K: MissDepth, Bundle: "shop", NoExpand: true}) {
		hits = append(hits, h.Concept.ID)
	}
	want := []MissedRule{{"shop/knowledge/loyal-customer", 4}, {"shop/knowledge/refund-window", 0}, {"shop/missing-rule-9", 0}}
	for _, o := range outcomes {
		if o.Strategy == "context" && !slices.Equal(o.MissedRules, want) {
			t.Errorf("context missed %+v, want %+v (search ranks %q)", o.MissedRules, want, hits)
		}
		if o.Strategy != "context" && o.MissedRules != nil {
			t.Errorf("%s, with no pack, has missed rules %+v", o.Strategy, o.MissedRules)
		}
	}
	var text strings.Builder
	if err := WriteMisses(&text, outcomes); err != nil {
		t.Fatal(err)
	}
	const report = "\nGold rules a context pack missed, and their rank in a search of their bundle for the question (top 50, no link expansion):\n" +
		"  shop_1: shop/knowledge/loyal-customer (search rank 4), shop/knowledge/refund-window (not found by search), shop/missing-rule-9 (not found by search)\n"
	if text.String() != report {
		t.Errorf("text report:\n%s\nwant\n%s", text.String(), report)
	}
}

// TestLiteralRecall holds literal recall (issue 27) on a bundle whose hero
// table documents the values of gender and not those of publisher: every
// strategy that shows the table shows 'Female' and none shows
// 'Marvel Comics'; 'Human', spelled in the question, and the number do not
// count, and a question comparing no string counts toward no set's
// literals.
func TestLiteralRecall(t *testing.T) {
	dir := writeBundle(t, "comics", map[string]string{
		"tables/hero.md": "---\ntype: PostgreSQL Table\ntitle: hero\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
			"| `id` | integer | primary key | Hero. |\n| `gender` | text |  | Gender of the hero: 'Female' or 'Male'. |\n" +
			"| `race` | text |  | Race of the hero. |\n| `publisher` | text |  | Publisher of the hero's comics. |\n| `height_cm` | integer |  | Height in cm. |\n",
	})
	c, err := LoadCorpus(dir, "", searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	qs := []Question{
		{ID: "comics_1", Database: "comics", Text: "How many female Human heroes does Marvel publish, of what gender?",
			SQL: []string{"SELECT count(*) FROM hero WHERE gender = 'Female' AND publisher = 'Marvel Comics' AND race = 'Human' AND height_cm > 200"}},
		{ID: "comics_2", Database: "comics", Text: "How tall is the tallest hero?", SQL: []string{"SELECT max(height_cm) FROM hero"}},
	}
	outcomes, _, err := Retrieval(c, qs, Options{Count: func(s string) int { return len(strings.Fields(s)) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		want := Outcome{Literals: 2, LiteralsFound: 1, MissingLiterals: []string{"Marvel Comics"}}
		if o.Question == "comics_2" {
			want = Outcome{}
		}
		if o.Literals != want.Literals || o.LiteralsFound != want.LiteralsFound || !slices.Equal(o.MissingLiterals, want.MissingLiterals) {
			t.Errorf("%s %s: %d literals, %d found, missing %q; want %d, %d, %q",
				o.Question, o.Strategy, o.Literals, o.LiteralsFound, o.MissingLiterals, want.Literals, want.LiteralsFound, want.MissingLiterals)
		}
	}
	sums := Summarize(outcomes)
	for _, s := range sums {
		if s.Literals != 2 || s.LiteralsFound != 1 || s.LRecall == nil || *s.LRecall != 0.5 {
			t.Errorf("%s %s: %d literals, %d found, recall %v; want 2, 1, 0.5", s.Database, s.Strategy, s.Literals, s.LiteralsFound, s.LRecall)
		}
	}
	// The second question alone has no literal: "-", not 0% or 100%.
	second := slices.DeleteFunc(slices.Clone(outcomes), func(o Outcome) bool { return o.Question != "comics_2" })
	var text strings.Builder
	if err := WriteTable(&text, append(Summarize(outcomes)[:1], Summarize(second)[0])); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	const head = "database strategy questions rule recall table recall column recall literal recall complete MRR tokens/question session billed session calls"
	if strings.Join(strings.Fields(lines[0]), " ") != head || len(lines) != 4 || strings.Fields(lines[1])[6] != "50.0%" || strings.Fields(lines[2])[6] != "-" {
		t.Errorf("table:\n%s\nwant the header\n%s\nand literal recall 50.0%% then -", text.String(), head)
	}
}

// deref is a summary's recall that may be unset (no literals), as 0.
func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
