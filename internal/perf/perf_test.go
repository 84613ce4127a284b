package perf

import (
	"testing"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
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
