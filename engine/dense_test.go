package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/okf-tools/okf/embed"
	"github.com/okf-tools/okf/embed/embedtest"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store"
	"github.com/okf-tools/okf/store/sqlite"
)

var denseDocs = map[string]string{
	"tables/orders.md":    "---\ntype: Table\ntitle: Orders\ndescription: One row per order.\n---\n# Schema\n| ordid | grossamt |\n",
	"tables/customers.md": "---\ntype: Table\ntitle: Customers\ndescription: One row per customer.\n---\n# Schema\n| custid | region |\n",
	"knowledge/active.md": "---\ntype: Business Rule\ntitle: Active Customer\ndescription: A customer who bought recently.\n---\n# Definition\nA customer with a paid order in the last 90 days.\n",
}

// logBuffer is a log the library may write from any goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func embeddings(t *testing.T, srv *embedtest.Server, log *logBuffer) *Embeddings {
	t.Helper()
	concepts, err := embed.New(embed.Config{URL: srv.URL(), Model: "test-embed"})
	if err != nil {
		t.Fatal(err)
	}
	questions, err := embed.New(embed.Config{URL: srv.URL(), Model: "test-embed", Timeout: QuestionTimeout, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEmbeddings(concepts, questions, log)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func storeWith(t *testing.T, docs map[string]string) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "okf.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := map[string][]byte{}
	for p, c := range docs {
		b[p] = []byte(c)
	}
	if _, err := st.Sync(context.Background(), "acme", map[string]map[string][]byte{"shop": b}, "import"); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStoreLibraryEmbeds: a store library's view embeds the concepts the
// tenant's cache lacks, once; each question once; and ranks by both.
func TestStoreLibraryEmbeds(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	log := &logBuffer{}
	st := storeWith(t, denseDocs)
	lib := NewStoreLibrary(st, WithEmbeddings(embeddings(t, srv, log)))
	v, err := lib.View(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Texts() != 3 || !v.Index().HasVectors() || !strings.Contains(log.String(), "tenant acme: 1 calls") {
		t.Fatalf("after the first view: %d texts embedded, vectors %v, log %q", srv.Texts(), v.Index().HasVectors(), log.String())
	}
	plain, err := NewStoreLibrary(st).View(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	const q = "customer who bought"
	hits, err := Search(ctx, v, SearchRequest{Query: q, NoExpand: true})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 2 || srv.Requests()[1].Input[0] != q {
		t.Fatalf("the search asked %d calls, the last %q; want the question embedded once", srv.Calls(), srv.Requests()[srv.Calls()-1].Input)
	}
	want, _ := Search(ctx, plain, SearchRequest{Query: q, NoExpand: true})
	if reflect.DeepEqual(hits, want) || len(hits) < len(want) {
		t.Errorf("ranked %v with vectors, as BM25 alone; want the similarity added", hits)
	}
	// The same question again, and its context pack: no call.
	if _, err := Search(ctx, v, SearchRequest{Query: q}); err != nil {
		t.Fatal(err)
	}
	if _, err := Context(ctx, v, ContextRequest{Question: q}); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 2 {
		t.Errorf("%d calls after asking the same question again; want none more", srv.Calls())
	}
	// Another process on the same store embeds no concept again.
	v2, err := NewStoreLibrary(st, WithEmbeddings(embeddings(t, srv, log))).View(ctx, "acme")
	if err != nil || !v2.Index().HasVectors() || srv.Texts() != 4 {
		t.Fatalf("another library: %v, vectors %v, %d texts embedded in all; want 4 (3 concepts, 1 question)", err, v2.Index().HasVectors(), srv.Texts())
	}
	// A write embeds the concept it changed, alone.
	if _, _, err := lib.Write(ctx, "acme", "shop", "tables/orders.md", []byte("---\ntype: Table\ntitle: Orders\n---\nOrder lines.\n"), store.Unconditional); err != nil {
		t.Fatal(err)
	}
	if last := srv.Requests()[srv.Calls()-1]; srv.Texts() != 5 || len(last.Input) != 1 || !strings.HasPrefix(last.Input[0], "Orders\n") {
		t.Errorf("after a write: %d texts in all, the last request %q; want the changed concept alone", srv.Texts(), last.Input)
	}
}

// TestQuestionFallsBackToBM25: a question the endpoint fails to embed
// ranks by BM25 alone, the log saying so; the tool does not fail.
func TestQuestionFallsBackToBM25(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	log := &logBuffer{}
	st := storeWith(t, denseDocs)
	v, err := NewStoreLibrary(st, WithEmbeddings(embeddings(t, srv, log))).View(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := NewStoreLibrary(st).View(ctx, "acme")
	srv.Fail(embedtest.Fault{Status: 503}, embedtest.Fault{Raw: "{not json"})
	for _, q := range []string{"customer region", "orders gross amount"} {
		hits, err := Search(ctx, v, SearchRequest{Query: q})
		want, _ := Search(ctx, plain, SearchRequest{Query: q})
		if err != nil || !reflect.DeepEqual(hits, want) {
			t.Errorf("%q with a failing endpoint: %v, %v; want BM25's %v", q, hits, err, want)
		}
	}
	if n := strings.Count(log.String(), "this question ranks by BM25 alone"); n != 2 || !strings.Contains(log.String(), "HTTP 503") || !strings.Contains(log.String(), "malformed reply") {
		t.Errorf("log %q: want both failures said", log.String())
	}
	// A tool call answers all the same.
	srv.Fail(embedtest.Fault{Status: 500})
	tb := &Toolbox{Current: Fixed(v), Tenant: "acme"}
	r, err := tb.Call(ctx, "test", ToolSearch, []byte(`{"query":"active customer"}`))
	if err != nil || r.IsError || !strings.Contains(r.Text, "knowledge/active") {
		t.Errorf("search tool with a failing endpoint: %+v, %v", r, err)
	}
}

// TestConceptsFallBackToBM25: when the endpoint fails while a view is
// compiled, the concepts the cache had keep their vectors, the others
// rank by BM25, and the view serves.
func TestConceptsFallBackToBM25(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.New(t)
	log := &logBuffer{}
	st := storeWith(t, denseDocs)
	srv.Fail(embedtest.Fault{Status: 401})
	v, err := NewStoreLibrary(st, WithEmbeddings(embeddings(t, srv, log))).View(ctx, "acme")
	if err != nil || v.Index().HasVectors() || !strings.Contains(log.String(), "0 of 3 concepts have vectors") {
		t.Fatalf("a view with a failing endpoint: %v, vectors %v, log %q", err, v != nil && v.Index().HasVectors(), log.String())
	}
	if hits, err := Search(ctx, v, SearchRequest{Query: "orders"}); err != nil || len(hits) == 0 || srv.Calls() != 1 {
		t.Errorf("searching it: %v, %v, %d calls; want BM25's hits and no question embedded", hits, err, srv.Calls())
	}
}

// TestFolderLibraryEmbedsChangesOnly: a folder's reload embeds only the
// concepts that changed.
func TestFolderLibraryEmbedsChangesOnly(t *testing.T) {
	srv := embedtest.New(t)
	var docs []readmodel.Doc
	for p, c := range denseDocs {
		docs = append(docs, readmodel.Doc{Bundle: "shop", Path: p, Content: []byte(c)})
	}
	lib, _ := NewFolderLibrary("acme", docs, WithEmbeddings(embeddings(t, srv, &logBuffer{})))
	if srv.Texts() != 3 {
		t.Fatalf("%d texts embedded, want 3", srv.Texts())
	}
	docs = append(docs, readmodel.Doc{Bundle: "shop", Path: "knowledge/churn.md", Content: []byte("---\ntype: Business Rule\ntitle: Churned\n---\nGone.\n")})
	lib.Reload(docs)
	v, _ := lib.View(context.Background(), "acme")
	if srv.Texts() != 4 || !v.Index().HasVectors() {
		t.Errorf("after adding a concept: %d texts embedded in all, want 4", srv.Texts())
	}
}

func TestRecentQuestionsAreBounded(t *testing.T) {
	srv := embedtest.New(t)
	e := embeddings(t, srv, &logBuffer{})
	ctx := context.Background()
	for i := range RecentQuestions + 1 {
		e.question(ctx, "question "+strings.Repeat("x", i))
	}
	if len(e.recent) != RecentQuestions || e.order.Len() != RecentQuestions {
		t.Fatalf("%d recent questions kept, want %d", len(e.recent), RecentQuestions)
	}
	calls := srv.Calls()
	e.question(ctx, "question "+strings.Repeat("x", RecentQuestions)) // the newest: kept
	e.question(ctx, "question ")                                      // the oldest: dropped
	if srv.Calls() != calls+1 {
		t.Errorf("%d calls for the newest and the oldest question, want 1", srv.Calls()-calls)
	}
}
