package eval

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/internal/tokens"
	"github.com/okf-tools/okf/queries"
)

// TestPromotedExamples measures worked examples on the LiveSQLBench train
// questions (issue 16): the gold SQL of half of each database's questions
// is promoted to query concepts (marked stable, as a reviewer would), and
// the packs of the other half are scored with and without examples: how
// often a pack holds an example reading exactly the gold SQL's tables, at
// what token cost, and that rules, tables and columns do not suffer.
func TestPromotedExamples(t *testing.T) {
	bundles, raw := compileLiveSQLBench(t)
	qdir := shareddata.Dir(t, "livesqlbench", "questions")
	qs, err := LoadQuestions(filepath.Join(qdir, "lite_7db_train.jsonl"), filepath.Join(qdir, "lite_3db_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	byDB := map[string][]Question{}
	for _, q := range qs {
		byDB[q.Database] = append(byDB[q.Database], q)
	}
	var held, asked []Question
	promoted := 0
	for db, list := range byDB {
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
		for i, q := range list {
			if i%2 == 1 {
				held = append(held, q)
				continue
			}
			asked = append(asked, q)
			d, err := queries.Promote(queries.Promotion{Question: q.Text, SQL: q.SQL[0], Bundle: db, Run: q.ID})
			if err != nil {
				t.Fatal(err)
			}
			d.Text = []byte(strings.Replace(string(d.Text), "status: draft\n", "status: stable\n", 1))
			if _, err := queries.WriteDraft(bundles, db, d); err != nil {
				t.Fatal(err)
			}
			promoted++
		}
	}
	sort.Slice(held, func(i, j int) bool { return held[i].ID < held[j].ID })
	sort.Slice(asked, func(i, j int) bool { return asked[i].ID < asked[j].ID })
	corpus, err := LoadCorpus(bundles, raw, searchWeights())
	if err != nil {
		t.Fatal(err)
	}
	// How many held-out questions have a promoted query on exactly their
	// tables at all: no matcher can do better.
	ceiling := 0
	for _, q := range held {
		g, _ := corpus.goldOf(q)
		for i := range corpus.Snap.Concepts {
			if c := &corpus.Snap.Concepts[i]; c.IsQuery() && c.Bundle == q.Database && corpus.readsTables(c.Bundle+"/"+c.ID, g.tables) {
				ceiling++
				break
			}
		}
	}
	served := 0
	for i := range corpus.Snap.Concepts {
		if corpus.Snap.Concepts[i].IsQuery() {
			served++
		}
	}
	opt := Options{Count: tokens.Count, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
	with, _, err := Retrieval(corpus, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := Retrieval(corpus, asked, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Pack.Examples = -1
	without, _, err := Retrieval(corpus, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	w, wo, a := all(t, with)["context"], all(t, without)["context"], all(t, again)["context"]
	t.Logf("%d questions promoted (%d served as examples), %d held out; %d of these have a promoted query on their exact tables", promoted, served, len(held), ceiling)
	t.Logf("promoted questions asked again: pack holds an example %.1f%%, one on the gold tables %.1f%%", 100*a.Examples, 100*a.ExampleOnTables)
	t.Logf("with examples: pack holds one %.1f%%, one on the gold tables %.1f%%; rules %.1f%%, tables %.1f%%, columns %.1f%%, complete %.1f%%, %.0f tokens",
		100*w.Examples, 100*w.ExampleOnTables, 100*w.Recall, 100*w.TRecall, 100*w.CRecall, 100*w.Complete, w.Tokens)
	t.Logf("without:       rules %.1f%%, tables %.1f%%, columns %.1f%%, complete %.1f%%, %.0f tokens",
		100*wo.Recall, 100*wo.TRecall, 100*wo.CRecall, 100*wo.Complete, wo.Tokens)
	if served != promoted {
		t.Errorf("%d of %d promoted queries are served; each promoted gold SQL should make a valid query concept", served, promoted)
	}
	// Asked again, a promoted question finds its own query unless its SQL
	// is longer than the budget leaves.
	if w.ExampleOnTables < 0.05 || wo.Examples != 0 || a.ExampleOnTables < 0.8 {
		t.Errorf("examples on the gold tables in %.3f of held-out packs (want at least 0.05) and %.3f of promoted questions' (want 0.8); %.3f without examples",
			w.ExampleOnTables, a.ExampleOnTables, wo.Examples)
	}
	if w.Recall < wo.Recall-0.02 || w.Complete < wo.Complete-0.05 {
		t.Errorf("examples cost recall: rules %.3f vs %.3f, complete %.3f vs %.3f", w.Recall, wo.Recall, w.Complete, wo.Complete)
	}
}
