package tokens

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/okf-tools/okf/internal/shareddata"
)

// BenchmarkCountLiveSQLBench counts the concatenated documents of the
// eight LiveSQLBench bundles, about a megabyte of markdown.
func BenchmarkCountLiveSQLBench(b *testing.B) {
	data := shareddata.Dir(b, "livesqlbench/okf-sql-knowledge-bundles")
	var text []byte
	_ = filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".md" {
			raw, _ := os.ReadFile(p)
			text = append(text, raw...)
		}
		return nil
	})
	s := string(text)
	Count("")
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Count(s)
	}
}
