package search

import (
	"testing"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/internal/shareddata"
	"github.com/okf-tools/okf/readmodel"
)

// loadShared compiles one bundle of ../shared/data.
func loadShared(t *testing.T, rel string) *readmodel.Snapshot {
	t.Helper()
	b, err := okf.Load(shareddata.Dir(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var docs []readmodel.Doc
	for _, d := range b.Docs {
		docs = append(docs, readmodel.Doc{Bundle: "b", Path: d.Path, Content: d.Raw})
	}
	s, _ := readmodel.Build("t", docs)
	return s
}
