package okf_test

import (
	"path/filepath"
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/shareddata"
)

// BenchmarkValidateOKFSamples loads (reads and parses) and validates every
// bundle of ../shared/data/okf-samples: 116 files, about 0.4 MB.
func BenchmarkValidateOKFSamples(b *testing.B) {
	data := shareddata.Dir(b, "okf-samples")
	dirs, _ := filepath.Glob(filepath.Join(data, "knowledge-catalog/okf/bundles/*"))
	dirs = append(dirs,
		filepath.Join(data, "okf-skills/examples/sample-bundle"),
		filepath.Join(data, "okf-skills/.okf"),
		filepath.Join(data, "okf-skills/tests/fixtures/non-conformant"),
	)
	files := 0
	for b.Loop() {
		files = 0
		for _, dir := range dirs {
			bundle, err := okf.Load(dir)
			if err != nil {
				b.Fatal(err)
			}
			rep := okf.Validate(bundle, okf.Options{Now: sampleDay})
			files += rep.Counts.Concepts + rep.Counts.Indexes + rep.Counts.Logs
		}
	}
	b.ReportMetric(float64(files), "files/op")
}

// BenchmarkParseLiveSQLBench parses every document of the eight LiveSQLBench
// bundles (527 files) from memory, without touching the disk in the loop.
func BenchmarkParseLiveSQLBench(b *testing.B) {
	data := shareddata.Dir(b, "livesqlbench/okf-sql-knowledge-bundles")
	dirs, _ := filepath.Glob(filepath.Join(data, "*"))
	var docs []*okf.Document
	for _, dir := range dirs {
		bundle, err := okf.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, bundle.Docs...)
	}
	size := 0
	for _, d := range docs {
		size += len(d.Raw)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, d := range docs {
			okf.Parse(d.Path, d.Raw)
		}
	}
	b.ReportMetric(float64(len(docs)), "files/op")
}
