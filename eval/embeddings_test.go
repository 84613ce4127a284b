package eval

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/embed/embedtest"
	"github.com/okf-tools/okf/search"
)

// TestRetrievalWithEmbeddings: an evaluation with an embeddings model
// embeds every concept once and each question once, however many
// strategies search for it; a question the endpoint fails to embed ranks
// by BM25 alone, as a served search does, and is counted.
func TestRetrievalWithEmbeddings(t *testing.T) {
	dir := writeBundle(t, "shop", map[string]string{
		"tables/orders.md": "---\ntype: PostgreSQL Table\ntitle: orders\n---\n# Schema\n\n| Column | Type | Key | Meaning |\n|---|---|---|---|\n" +
			"| `id` | integer | primary key | Order. |\n| `total` | numeric |  | Amount paid. |\n",
		"knowledge/big-order.md":   "---\ntype: Business Rule\ntitle: Big Order\nrule_id: 1\n---\n\n# Definition\n\nAn order whose total is over 1,000.\n",
		"knowledge/refund-days.md": "---\ntype: Business Rule\ntitle: Refund Window\nrule_id: 2\n---\n\n# Definition\n\nRefunds within thirty days of payment.\n",
	})
	qs := []Question{
		{ID: "shop_1", Database: "shop", Text: "Which orders are big?", SQL: []string{"SELECT id FROM orders WHERE total > 1000"}, Rules: []int{1}},
		{ID: "shop_2", Database: "shop", Text: "Which orders were refunded in time?", SQL: []string{"SELECT id FROM orders"}, Rules: []int{2}},
	}
	count := func(s string) int { return len(strings.Fields(s)) }
	plain, err := LoadCorpus(dir, "", search.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	bm25, _, err := Retrieval(plain, qs, Options{Count: count})
	if err != nil {
		t.Fatal(err)
	}

	srv := embedtest.New(t)
	client, err := embed.New(embed.Config{URL: srv.URL(), Model: "test-embed"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus(dir, "", search.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	em, err := c.Embed(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	if concepts := len(c.Snap.Concepts); srv.Texts() != concepts || !c.Index.HasVectors() {
		t.Fatalf("%d texts embedded for %d concepts; vectors set %v", srv.Texts(), concepts, c.Index.HasVectors())
	}
	before := srv.Texts()
	if _, _, err := Retrieval(c, qs, Options{Count: count, QueryVector: em.Vector}); err != nil {
		t.Fatal(err)
	}
	if asked := srv.Texts() - before; asked != len(qs) || em.Failed != 0 || em.Usage.Calls != srv.Calls() {
		t.Errorf("%d question texts embedded for %d questions, %d failed, usage %+v against %d calls", asked, len(qs), em.Failed, em.Usage, srv.Calls())
	}

	// The endpoint fails on the questions: with the concepts' vectors
	// still set, every question ranks as BM25 alone ranks it.
	srv.Fail(embedtest.Fault{Status: 400}, embedtest.Fault{Status: 400})
	em.vecs = map[string][]float32{}
	failed, _, err := Retrieval(c, qs, Options{Count: count, QueryVector: em.Vector})
	if err != nil {
		t.Fatal(err)
	}
	if em.Failed != len(qs) || em.Err == nil || !reflect.DeepEqual(failed, bm25) {
		t.Errorf("failing endpoint: %d failed (%v), outcomes equal to BM25's: %v", em.Failed, em.Err, reflect.DeepEqual(failed, bm25))
	}
}
