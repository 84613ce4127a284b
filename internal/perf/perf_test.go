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
