package search

import (
	"fmt"
	"testing"

	"github.com/okf-tools/okf/internal/synth"
	"github.com/okf-tools/okf/readmodel"
)

func synthSnapshot(tb testing.TB, n int) *readmodel.Snapshot {
	tb.Helper()
	var docs []readmodel.Doc
	for _, d := range synth.Generate(n, 1) {
		docs = append(docs, readmodel.Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
	}
	s, _ := readmodel.Build("bench", docs)
	return s
}

var benchQueries = []string{
	"sales orders status by region",
	"refunds amount currency",
	"which table has the customer segment",
	"late arriving events deduplicated nightly batch",
	"warehouses suppliers join",
	"subscription churn tier",
	"invoice due date closed",
	"support tickets priority",
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{500, 5000, 20000} {
		s := synthSnapshot(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Build(s)
			}
		})
	}
}

func BenchmarkQuery(b *testing.B) {
	for _, n := range []int{500, 5000, 20000} {
		ix := Build(synthSnapshot(b, n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				ix.Search(benchQueries[i%len(benchQueries)], Options{})
				i++
			}
		})
	}
}

// BenchmarkBuildShared builds the index of the shared tenant (every
// database of ../shared/data, 539 concepts) with the default weights and
// without the vocabulary of issue 26 (rules indexed under their columns'
// meanings, titles covered): the synthetic catalogue, one table a concept,
// does not exercise it.
func BenchmarkBuildShared(b *testing.B) {
	s := sharedTenant(b)
	plain := DefaultWeights
	plain.Uses, plain.Cover = 0, 0
	for _, w := range []struct {
		name string
		w    Weights
	}{{"plain", plain}, {"vocabulary", DefaultWeights}} {
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				BuildWeighted(s, w.w)
			}
		})
	}
}
