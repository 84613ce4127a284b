package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/readmodel"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestStrategy checks the sentence that tells an agent whether to read
// the manifest whole or search first, on a small and a large tenant.
func TestStrategy(t *testing.T) {
	small, _ := readmodel.Build("t", []readmodel.Doc{{Bundle: "b", Path: "a.md", Content: []byte("---\ntype: Note\ndescription: Alpha.\n---\nbody\n")}})
	s := Measure(newView("t", small, 0, nil), testNow)
	if s.SearchFirst || s.Concepts != 1 || !strings.Contains(s.Sentence(), "read it whole once") {
		t.Errorf("small tenant: %+v %q", s, s.Sentence())
	}
	var docs []readmodel.Doc
	for i := range 400 {
		docs = append(docs, readmodel.Doc{Bundle: "b", Path: fmt.Sprintf("c%03d.md", i),
			Content: fmt.Appendf(nil, "---\ntype: Table\ndescription: Table number %d of the warehouse, with a summary long enough to cost tokens.\n---\nbody\n", i)})
	}
	large, _ := readmodel.Build("t", docs)
	s = Measure(newView("t", large, 0, nil), testNow)
	if !s.SearchFirst || s.ManifestTokens <= SearchFirstRatio*s.SearchTokens || !strings.Contains(s.Sentence(), "search first") {
		t.Errorf("large tenant: %+v %q", s, s.Sentence())
	}
	empty, _ := readmodel.Build("t", nil)
	if s := Measure(newView("t", empty, 0, nil), testNow); s.SearchFirst || s.Sentence() != "This knowledge base is empty for now." {
		t.Errorf("empty tenant: %+v", s)
	}
}

func TestAutoPastesRaw(t *testing.T) {
	// 10,000 raw tokens against packs of 2,000: a session of five
	// questions breaks even, six paste the raw documents.
	if AutoPastesRaw(10000, 2000, 4) || !AutoPastesRaw(10000, 2000, 5) || !AutoPastesRaw(10000, 2000, 6) {
		t.Error("the crossover is at raw/pack questions")
	}
}
