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
