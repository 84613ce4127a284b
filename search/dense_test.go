package search

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/okf-tools/okf/embed/embedtest"
	"github.com/okf-tools/okf/internal/tokens"
)

// TestSearchWithoutBothVectorsIsUnchanged: an index with vectors asked
// without a query vector, and one without vectors asked with one, answer
// exactly as BM25 alone, hits and packs, on every train question.
func TestSearchWithoutBothVectorsIsUnchanged(t *testing.T) {
	s := sharedTenant(t)
	plain, withVecs := Build(s), Build(s)
	vecs := make([][]float32, len(s.Concepts))
	for i := range s.Concepts {
		vecs[i] = embedtest.Vector(s.Concepts[i].Title, embedtest.DefaultDim)
	}
	withVecs.SetVectors(vecs)
	if !withVecs.HasVectors() || plain.HasVectors() {
		t.Fatal("HasVectors")
	}
	qs := trainQuestions(t)
	if len(qs) < 50 {
		t.Fatalf("%d train questions", len(qs))
	}
	moved := 0
	for _, q := range qs {
		qv := embedtest.Vector(q.Text, embedtest.DefaultDim)
		want := plain.Search(q.Text, Options{K: 10})
		if !reflect.DeepEqual(withVecs.Search(q.Text, Options{K: 10, QueryVector: qv}), want) {
			moved++
		}
		for name, got := range map[string][]Hit{
			"vectors, no query vector": withVecs.Search(q.Text, Options{K: 10}),
			"query vector, no vectors": plain.Search(q.Text, Options{K: 10, QueryVector: qv}),
		} {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q, %s: hits %v, want %v", q.Text, name, ids(got), ids(want))
			}
		}
		if got, want := withVecs.Context(q.Text, PackOptions{Count: tokens.Count}), plain.Context(q.Text, PackOptions{Count: tokens.Count, QueryVector: qv}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: packs differ:\n%s\n---\n%s", q.Text, got.Text, want.Text)
		}
	}
	// With both, the vectors count: else the comparisons above prove
	// nothing.
	if moved == 0 {
		t.Error("vectors and a query vector changed no search")
	}
	t.Logf("%d of %d searches moved with both", moved, len(qs))
}

func TestDenseFusion(t *testing.T) {
	s := snap(t, shop)
	plain := Build(s)
	ix := Build(s)
	at := func(ref string) int {
		for i := range s.Concepts {
			if s.Concepts[i].Bundle+"/"+s.Concepts[i].ID == ref {
				return i
			}
		}
		t.Fatalf("no %s", ref)
		return -1
	}
	// The query vector is the first axis; each concept's cosine with it is
	// its first coordinate.
	along := func(cos float64) []float32 { return []float32{float32(cos), float32(math.Sqrt(1 - cos*cos)), 0} }
	vecs := make([][]float32, len(s.Concepts))
	for i := range vecs {
		vecs[i] = along(0)
	}
	half := (1 + DenseFloor) / 2
	vecs[at("shop/tables/payments")] = along(1)
	vecs[at("shop/knowledge/churn")] = along(half)
	vecs[at("shop/tables/orders")] = along(DenseFloor - 0.05)
	vecs[at("other/tables/customers")] = along(1)
	vecs[at("shop/knowledge/active")] = nil
	ix.SetVectors(vecs)
	q := []float32{1, 0, 0}

	const query = "customer who"
	base := plain.Search(query, Options{K: 10, NoExpand: true, Bundle: "shop"})
	if len(base) == 0 || slices.Contains(ids(base), "shop/tables/payments") {
		t.Fatalf("BM25 alone: %v; want hits, payments not among them", ids(base))
	}
	top := base[0].Score
	want := map[string]float64{}
	for _, h := range base {
		want[h.Concept.Bundle+"/"+h.Concept.ID] = h.Score
	}
	want["shop/tables/payments"] += DenseWeight * top
	want["shop/knowledge/churn"] += DenseWeight * top * 0.5
	got := ix.Search(query, Options{K: 10, NoExpand: true, Bundle: "shop", QueryVector: q})
	if len(got) != len(want) {
		t.Fatalf("fused hits %v, want %d", ids(got), len(want))
	}
	for i, h := range got {
		ref := h.Concept.Bundle + "/" + h.Concept.ID
		if math.Abs(h.Score-want[ref]) > 1e-6*top {
			t.Errorf("%s: score %.6f, want %.6f", ref, h.Score, want[ref])
		}
		if i > 0 && got[i-1].Score < h.Score {
			t.Errorf("hits out of order: %v", ids(got))
		}
	}
	// Only the bundle searched is fused: the other bundle's customers,
	// as similar as payments, enters a search of every bundle alone.
	if all := ids(ix.Search(query, Options{K: 20, NoExpand: true, QueryVector: q})); !slices.Contains(all, "other/tables/customers") {
		t.Errorf("a search of every bundle: %v, want other/tables/customers", all)
	}

	// A query vector of another dimension, or of no length, changes
	// nothing; nor does a query BM25 finds nothing for.
	for _, bad := range [][]float32{{1, 0}, {0, 0, 0}, {float32(math.NaN()), 0, 0}} {
		if got := ix.Search(query, Options{K: 10, NoExpand: true, Bundle: "shop", QueryVector: bad}); !reflect.DeepEqual(got, base) {
			t.Errorf("query vector %v: %v, want %v", bad, ids(got), ids(base))
		}
	}
	if got := ix.Search("zzzz", Options{QueryVector: q}); got != nil {
		t.Errorf("a query of unknown words: %v", ids(got))
	}
}

// TestPackTakesTheQueryVector: a rule BM25 misses but the question's
// vector is near enters the pack.
func TestPackTakesTheQueryVector(t *testing.T) {
	s := snap(t, compiled)
	ix := Build(s)
	vecs := make([][]float32, len(s.Concepts))
	for i := range s.Concepts {
		vecs[i] = []float32{0, 1}
		if s.Concepts[i].ID == "knowledge/big-team" {
			vecs[i] = []float32{1, 0}
		}
	}
	ix.SetVectors(vecs)
	const question = "hub utilisation in percent"
	o := PackOptions{Budget: 1000, Count: countWords}
	if p := ix.Context(question, o); slices.Contains(p.Rules, "hub/knowledge/big-team") {
		t.Fatalf("without the question's vector the pack holds %v", p.Rules)
	}
	o.QueryVector = []float32{1, 0}
	if p := ix.Context(question, o); !slices.Contains(p.Rules, "hub/knowledge/big-team") {
		t.Errorf("with it: rules %v, want hub/knowledge/big-team among them", p.Rules)
	}
}

func TestSetVectorsKeepsOneDimension(t *testing.T) {
	s := snap(t, shop)
	ix := Build(s)
	vecs := make([][]float32, len(s.Concepts))
	vecs[1] = []float32{1, 0}
	vecs[2] = []float32{1, 0, 0} // another dimension: left out
	vecs[3] = []float32{0, 0}    // no direction: left out
	ix.SetVectors(vecs)
	if ix.dense.dim != 2 || ix.dense.vecs[2] != nil || ix.dense.vecs[3] != nil || ix.dense.vecs[1] == nil {
		t.Errorf("dense index: dim %d, vectors %v", ix.dense.dim, ix.dense.vecs)
	}
	ix.SetVectors(make([][]float32, len(s.Concepts)))
	if ix.HasVectors() {
		t.Error("no vectors, yet HasVectors")
	}
	defer func() {
		if recover() == nil {
			t.Error("vectors for too few concepts taken")
		}
	}()
	ix.SetVectors(vecs[:1])
}
