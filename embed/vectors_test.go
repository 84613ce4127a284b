package embed

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/okf-tools/okf/embed/embedtest"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store/sqlite"
)

var shop = map[string]string{
	"tables/orders.md":    "---\ntype: Table\ntitle: Orders\ndescription: One row per order.\n---\n# Schema\n| ordid | grossamt |\n",
	"tables/customers.md": "---\ntype: Table\ntitle: Customers\ndescription: One row per customer.\n---\n# Schema\n| custid | region |\n",
	"knowledge/active.md": "---\ntype: Business Rule\ntitle: Active Customer\ndescription: A customer who bought recently.\n---\n# Definition\nA customer with a paid order in the last 90 days.\n",
}

func build(t *testing.T, docs map[string]string) *readmodel.Snapshot {
	t.Helper()
	var in []readmodel.Doc
	for p, c := range docs {
		in = append(in, readmodel.Doc{Bundle: "shop", Path: p, Content: []byte(c)})
	}
	s, st := readmodel.Build("t", in)
	for _, d := range st.Diagnostics {
		if !strings.Contains(d.Message, "not valid UTF-8") {
			t.Fatalf("diagnostic: %v", d)
		}
	}
	return s
}

func with(docs map[string]string, path, content string) map[string]string {
	out := map[string]string{}
	for p, c := range docs {
		out[p] = c
	}
	out[path] = content
	return out
}

func concept(t *testing.T, s *readmodel.Snapshot, id string) *readmodel.Concept {
	t.Helper()
	for i := range s.Concepts {
		if s.Concepts[i].ID == id {
			return &s.Concepts[i]
		}
	}
	t.Fatalf("no concept %s", id)
	return nil
}

func TestText(t *testing.T) {
	s := build(t, shop)
	got := Text(s, concept(t, s, "tables/orders"))
	if want := "Orders\nOne row per order.\n\n# Schema\n| ordid | grossamt |"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	long := build(t, with(shop, "tables/orders.md", "---\ntype: Table\ntitle: Orders\n---\n# Schema\n"+strings.Repeat("é word ", 3000)+"\xff"))
	text := Text(long, concept(t, long, "tables/orders"))
	if n := utf8.RuneCountInString(text); n != MaxTextRunes || !utf8.ValidString(text) || !strings.HasPrefix(text, "Orders\n") || !strings.Contains(text, "\n\n# Schema\né word é word") {
		t.Errorf("a long concept's text: %d runes, valid %v, starting %.30q", n, utf8.ValidString(text), text)
	}
	// The same concept gives the same key in another snapshot; a changed
	// one another key.
	again := build(t, with(shop, "knowledge/new.md", "---\ntype: Business Rule\ntitle: New\n---\nNew.\n"))
	if Key(Text(s, concept(t, s, "tables/orders"))) != Key(Text(again, concept(t, again, "tables/orders"))) {
		t.Error("an unchanged concept changed key")
	}
	if Key(Text(s, concept(t, s, "tables/orders"))) == Key(text) {
		t.Error("a changed concept kept its key")
	}
}

func TestFillEmbedsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL()})
	cache := NewMemory()
	s := build(t, shop)
	vecs, u, err := Fill(ctx, c, s, cache)
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{Calls: 1, Tokens: u.Tokens, Texts: 3}) || u.Tokens == 0 || srv.Texts() != 3 || cache.Len(c.Name()) != 3 {
		t.Fatalf("first fill: usage %+v, server got %d texts, cache holds %d; want 3 texts in one call", u, srv.Texts(), cache.Len(c.Name()))
	}
	for i := range s.Concepts {
		if want := embedtest.Vector(Text(s, &s.Concepts[i]), embedtest.DefaultDim); !near(vecs[i], want) {
			t.Errorf("concept %s: not its text's vector", s.Concepts[i].ID)
		}
	}
	// Unchanged: nothing is asked.
	again, u, err := Fill(ctx, c, s, cache)
	if err != nil || u != (Usage{Reused: 3}) || srv.Calls() != 1 {
		t.Fatalf("unchanged: usage %+v, %v, %d calls; want 3 reused and no call", u, err, srv.Calls())
	}
	for i := range vecs {
		if !near(again[i], vecs[i]) {
			t.Errorf("concept %d: another vector from the cache", i)
		}
	}
	// One concept changed: it alone is embedded.
	changed := build(t, with(shop, "tables/orders.md", "---\ntype: Table\ntitle: Orders\ndescription: One row per order line.\n---\n# Schema\n| ordid |\n"))
	_, u, err = Fill(ctx, c, changed, cache)
	if err != nil || u.Calls != 1 || u.Texts != 1 || u.Reused != 2 {
		t.Fatalf("one changed: usage %+v, %v; want 1 text embedded, 2 reused", u, err)
	}
	if last := srv.Requests()[srv.Calls()-1]; len(last.Input) != 1 || last.Input[0] != Text(changed, concept(t, changed, "tables/orders")) {
		t.Errorf("embedded %q, want the changed concept's text", last.Input)
	}
}

func TestFillEmbedsATextOnce(t *testing.T) {
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL()})
	same := "---\ntype: Table\ntitle: Copy\n---\nThe same.\n"
	s := build(t, map[string]string{"a/copy.md": same, "b/copy.md": same})
	v := NewVectors(c.Name(), s)
	u, err := v.Fill(context.Background(), c, s, NewMemory())
	if err != nil || u.Texts != 1 || v.Count() != 2 || !near(v.Vecs[0], v.Vecs[1]) || v.Dim != embedtest.DefaultDim {
		t.Fatalf("two concepts of one text: usage %+v, %v, %d vectors of %d dimensions", u, err, v.Count(), v.Dim)
	}
}

// TestFillThroughTheStore keeps the vectors in a store's cache: a second
// process reuses them, byte for byte.
func TestFillThroughTheStore(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL(), Dimensions: 32})
	path := filepath.Join(t.TempDir(), "okf.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s := build(t, shop)
	first, u, err := Fill(ctx, c, s, StoreCache(st, "acme"))
	if err != nil || u.Texts != 3 {
		t.Fatalf("first fill: %+v, %v", u, err)
	}
	st.Close()
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	second, u, err := Fill(ctx, c, s, StoreCache(st, "acme"))
	if err != nil || u != (Usage{Reused: 3}) || srv.Calls() != 1 {
		t.Fatalf("second fill: %+v, %v, %d calls", u, err, srv.Calls())
	}
	for i := range first {
		if string(EncodeVector(first[i])) != string(EncodeVector(second[i])) || len(second[i]) != 32 {
			t.Errorf("concept %d: the store gave back another vector", i)
		}
	}
	// Another tenant's cache is its own.
	if _, u, err := Fill(ctx, c, s, StoreCache(st, "other")); err != nil || u.Texts != 3 {
		t.Errorf("another tenant: %+v, %v; want every text embedded", u, err)
	}
}

// TestFillReplacesVectorsOfAnotherDimension: a cache holding vectors of
// the model's name with another dimension held another model's.
func TestFillReplacesVectorsOfAnotherDimension(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL()})
	s := build(t, shop)
	cache := NewMemory()
	old := map[string][]float32{}
	for i := range s.Concepts[:2] {
		old[Key(Text(s, &s.Concepts[i]))] = []float32{1, 0, 0}
	}
	cache.Put(ctx, c.Name(), old)
	vecs, u, err := Fill(ctx, c, s, cache)
	if err != nil || u.Texts != 3 || u.Reused != 0 {
		t.Fatalf("usage %+v, %v; want all three embedded", u, err)
	}
	for i, v := range vecs {
		if len(v) != embedtest.DefaultDim {
			t.Errorf("concept %d: %d dimensions", i, len(v))
		}
	}
	if got, _ := cache.Get(ctx, c.Name(), []string{Key(Text(s, &s.Concepts[0]))}); len(got[Key(Text(s, &s.Concepts[0]))]) != embedtest.DefaultDim {
		t.Error("the cache kept the old vector")
	}
}

// TestFillKeepsWhatItHasOnFailure: when the endpoint fails, the concepts
// the cache had vectors for keep them.
func TestFillKeepsWhatItHasOnFailure(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	c, _ := client(t, Config{URL: srv.URL()})
	cache := NewMemory()
	if _, _, err := Fill(ctx, c, build(t, shop), cache); err != nil {
		t.Fatal(err)
	}
	changed := build(t, with(shop, "tables/orders.md", "---\ntype: Table\ntitle: Orders\n---\nChanged.\n"))
	srv.Fail(embedtest.Fault{Status: 400})
	vecs, u, err := Fill(ctx, c, changed, cache)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("a failing endpoint: %v", err)
	}
	for i := range changed.Concepts {
		if has := vecs[i] != nil; has == (changed.Concepts[i].ID == "tables/orders") {
			t.Errorf("concept %s: vector %v after the failure", changed.Concepts[i].ID, has)
		}
	}
	if u.Reused != 2 || u.Calls != 0 {
		t.Errorf("usage %+v, want 2 reused, no call answered", u)
	}
}
