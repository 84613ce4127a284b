package perf

import (
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/synth"
	"github.com/okf-tools/okf/readmodel"
)

func TestRunMeasuresEverything(t *testing.T) {
	r, err := Run(600, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Concepts != 600 || r.CorpusBytes < 600*1500 || r.SnapshotBytes < r.CorpusBytes/2 {
		t.Errorf("sizes: %+v", r)
	}
	if r.ManifestTokens <= r.BundleTokens || r.BundleTokens == 0 || r.RowTokens < 20 {
		t.Errorf("tokens: manifest %d, one bundle %d, per row %.1f", r.ManifestTokens, r.BundleTokens, r.RowTokens)
	}
	if r.CompileMS <= 0 || r.IndexBuildMS <= 0 || r.QueryP50MS <= 0 || r.QueryP99MS < r.QueryP50MS {
		t.Errorf("timings: %+v", r)
	}
}

func TestRunTenantTimesEveryQuestion(t *testing.T) {
	var docs []readmodel.Doc
	for _, d := range synth.Generate(600, 1) {
		docs = append(docs, readmodel.Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
	}
	r, err := RunTenant(docs, Queries[:3], 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Concepts != 600 || r.Bundles != 2 || r.Questions != 3 || r.ContextTokens <= 0 {
		t.Errorf("counts: %+v", r)
	}
	if r.ContextP50MS <= 0 || r.ContextP99MS < r.ContextP50MS || r.SearchP99MS < r.SearchP50MS {
		t.Errorf("timings: %+v", r)
	}
	if _, err := RunTenant(docs, nil, 1); err == nil {
		t.Error("no questions: no error")
	}
}

func TestRunWithEmbeddingsCountsTheCost(t *testing.T) {
	r, err := RunWith(600, 2, Options{Embeddings: true, EmbedDims: 32})
	if err != nil {
		t.Fatal(err)
	}
	e := r.Embeddings
	if e == nil {
		t.Fatal("no embeddings measured")
	}
	// Every concept's text is its own, embedded once, 64 a call; the
	// second fill reuses them all.
	if e.Dims != 32 || e.Texts != 600 || e.Calls != 10 || e.Reused != 600 || e.Tokens < 600*50 {
		t.Errorf("embeddings: %+v; want 600 texts in 10 calls, all reused again", e)
	}
	if want := 600 * 32 * 4.0 / (1 << 20); e.VectorsMB != want {
		t.Errorf("vectors %.3f MB, want %.3f", e.VectorsMB, want)
	}
	if plain, err := Run(600, 1); err != nil || plain.Embeddings != nil {
		t.Errorf("without embeddings: %+v, %v", plain.Embeddings, err)
	}
}
