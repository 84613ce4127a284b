package search

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/okf-tools/okf/readmodel"
)

func TestTokens(t *testing.T) {
	cases := map[string][]string{
		"order_id":                {"order", "id"},
		"Order ID":                {"order", "id"},
		"Operações São Paulo":     {"operacoes", "sao", "paulo"},
		"Operac\u0327o\u0303es":   {"operacoes"},
		"Straße Æsir":             {"strasse", "aesir"},
		"tables/posts_questions":  {"tables", "posts", "questions"},
		"RUR > 5 (RUR)":           {"rur", "5", "rur"},
		"知识 规则":                   {"知识", "规则"},
		"ΔT = 25°C":               {"δt", "25", "c"},
		"  --  ":                  nil,
		"hubutilpct/storecapm3⁠x": {"hubutilpct", "storecapm3", "x"},
	}
	for in, want := range cases {
		if got := Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func snap(t *testing.T, docs map[string]string) *readmodel.Snapshot {
	t.Helper()
	var in []readmodel.Doc
	for p, c := range docs {
		bundle, path, _ := strings.Cut(p, ":")
		in = append(in, readmodel.Doc{Bundle: bundle, Path: path, Content: []byte(c)})
	}
	s, _ := readmodel.Build("t", in)
	return s
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		id := h.Concept.Bundle + "/" + h.Concept.ID
		if h.Expanded() {
			id += "+"
		}
		out = append(out, id)
	}
	return out
}

var shop = map[string]string{
	"shop:tables/orders.md":     "---\ntype: Table\ntitle: Orders\ndescription: One row per order.\n---\n# Schema\n| ordid | grossamt |\n\nJoins [customers](customers.md).\n",
	"shop:tables/customers.md":  "---\ntype: Table\ntitle: Customers\ndescription: One row per customer.\n---\n# Schema\n| custid | region |\n",
	"shop:tables/payments.md":   "---\ntype: Table\ntitle: Payments\ndescription: Payment attempts.\n---\n# Schema\nPaid orders settle here. [orders](orders.md)\n",
	"shop:knowledge/active.md":  "---\ntype: Business Rule\ntitle: Active Customer\ndescription: A customer who bought recently.\n---\n# Definition\nA customer with a paid order in the last 90 days.\n\n[customers](../tables/customers.md) [orders](../tables/orders.md) [payments](../tables/payments.md)\n",
	"shop:knowledge/churn.md":   "---\ntype: Business Rule\ntitle: Churned Customer\ndescription: A customer who stopped buying.\n---\n# Definition\nNot an active customer any more.\n\n[active](active.md) [customers](../tables/customers.md)\n",
	"other:tables/customers.md": "---\ntype: Table\ntitle: Customers\ndescription: Another bundle's customers.\n---\n# Schema\n",
}

func TestNamingQueryLandsOnTheConcept(t *testing.T) {
	ix := Build(snap(t, shop))
	hits := ix.Search("churned customer", Options{K: 1, NoExpand: true})
	if got := ids(hits); !reflect.DeepEqual(got, []string{"shop/knowledge/churn"}) {
		t.Errorf("got %v", got)
	}
	hits = ix.Search("active customer", Options{K: 2, NoExpand: true})
	if got := ids(hits); got[0] != "shop/knowledge/active" {
		t.Errorf("got %v", got)
	}
	if len(hits) != 2 || hits[0].Score <= hits[1].Score || hits[1].Score <= 0 {
		t.Errorf("scores must be positive and descending: %v, %v", hits[0].Score, hits[1].Score)
	}
}

func TestExpansionIsCappedAndRankedByPointers(t *testing.T) {
	ix := Build(snap(t, shop))
	hits := ix.Search("customer who", Options{K: 2})
	// Both rules hit (the shorter one first); both link to tables/customers
	// (2 pointers), the active rule also to orders and payments (1 each),
	// and the cap of 2 keeps orders, the earlier concept, of those two.
	want := []string{"shop/knowledge/churn", "shop/knowledge/active", "shop/tables/customers+", "shop/tables/orders+"}
	if got := ids(hits); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if hits[2].Via != 2 || hits[3].Via != 1 || hits[2].Pos != -1 || hits[2].Score != 0 {
		t.Errorf("expanded hits: %+v %+v", hits[2], hits[3])
	}
}

func TestBundleFilterAndPosition(t *testing.T) {
	ix := Build(snap(t, shop))
	hits := ix.Search("customers", Options{Bundle: "other", NoExpand: true})
	if got := ids(hits); !reflect.DeepEqual(got, []string{"other/tables/customers"}) {
		t.Errorf("bundle filter: %v", got)
	}
	hits = ix.Search("paid order 90 days", Options{K: 1, NoExpand: true})
	body := string(ix.Snapshot().Body(hits[0].Concept))
	if hits[0].Pos < 0 || !strings.HasPrefix(body[hits[0].Pos:], "A customer with a paid order") {
		t.Errorf("pos %d does not start the matching line: %q", hits[0].Pos, body)
	}
	if ix.Search("zzzz", Options{}) != nil || ix.Search("", Options{}) != nil {
		t.Error("a query with no known term must return nothing")
	}
}

func TestSearchIsDeterministic(t *testing.T) {
	a := ids(Build(snap(t, shop)).Search("customer table", Options{K: 3}))
	for range 5 {
		if b := ids(Build(snap(t, shop)).Search("customer table", Options{K: 3})); !reflect.DeepEqual(a, b) {
			t.Fatalf("%v then %v", a, b)
		}
	}
}

func TestShardedBuildMatchesOneShard(t *testing.T) {
	s := synthSnapshot(t, 2000)
	ix := Build(s)
	for _, q := range benchQueries {
		hits := ix.Search(q, Options{})
		if len(hits) == 0 {
			t.Fatalf("no hits for %q", q)
		}
	}
	// Recompute one score by hand from the postings of a single term.
	id := ix.terms["refunds"]
	var n int
	for _, p := range ix.postings[id] {
		if !strings.Contains(strings.ToLower(s.Concepts[p.doc].ID+s.Concepts[p.doc].Title+string(s.Body(&s.Concepts[p.doc]))+s.Concepts[p.doc].Summary), "refunds") {
			t.Fatalf("posting for %s lacks the term", s.Concepts[p.doc].ID)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no postings for refunds")
	}
	for i := 1; i < len(ix.postings[id]); i++ {
		if ix.postings[id][i-1].doc >= ix.postings[id][i].doc {
			t.Fatal("postings out of concept order")
		}
	}
}

func TestSearchSharedBundles(t *testing.T) {
	s := loadShared(t, "okf-samples/knowledge-catalog/okf/bundles/stackoverflow")
	ix := Build(s)
	hits := ix.Search("accepted answer rate", Options{K: 3})
	if len(hits) == 0 || hits[0].Concept.ID != "references/metrics/accepted_answer_rate" {
		t.Errorf("got %v", ids(hits))
	}
	direct := 0
	for _, h := range hits {
		if !h.Expanded() {
			direct++
		}
	}
	if direct != 3 || len(hits) > 6 {
		t.Errorf("k=3 gave %d direct hits and %d rows", direct, len(hits))
	}
}

func TestQuestionAboutSomethingElseFindsNothing(t *testing.T) {
	ix := Build(snap(t, shop))
	if hits := ix.Search("what is the weather in zanzibar today", Options{}); hits != nil {
		t.Errorf("an out-of-scope question matched on its framing words: %v", ids(hits))
	}
	if pack := ix.Context("what is the weather in zanzibar today", PackOptions{Count: countWords}); len(pack.Rules)+len(pack.Tables)+len(pack.Candidates) != 0 {
		t.Errorf("an out-of-scope question got a pack: %+v", pack)
	}
	// Framing words alone still search, and count beside known words.
	if hits := ix.Search("who are they", Options{NoExpand: true}); len(hits) == 0 {
		t.Error("a query of framing words only found nothing")
	}
	with := ix.Search("what is an active customer", Options{K: 2, NoExpand: true})
	without := ix.Search("active customer", Options{K: 2, NoExpand: true})
	if len(with) != 2 || with[0].Concept != without[0].Concept && with[0].Concept != without[1].Concept {
		t.Errorf("framing words changed what is found: %v against %v", ids(with), ids(without))
	}
	if with[0].Score >= without[0].Score+1 {
		t.Errorf("framing words weigh too much: %.2f against %.2f", with[0].Score, without[0].Score)
	}
}

func TestHitJSONIsSnakeCase(t *testing.T) {
	hits := Build(snap(t, shop)).Search("churned customer", Options{K: 1, NoExpand: true})
	js, err := json.Marshal(hits[0])
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(js, &keys)
	for _, k := range []string{"concept", "score", "pos", "via"} {
		if keys[k] == nil {
			t.Errorf("hit JSON lacks %q: %s", k, js)
		}
	}
}
