package readmodel

import (
	"testing"

	"github.com/okf-tools/okf/internal/synth"
)

// BenchmarkBuild5000 compiles a synthetic catalogue of 5,000 concepts.
func BenchmarkBuild5000(b *testing.B) {
	var docs []Doc
	for _, d := range synth.Generate(5000, 1) {
		docs = append(docs, Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
	}
	b.ReportAllocs()
	for b.Loop() {
		Build("bench", docs)
	}
}

// BenchmarkDecode5000 reads back the snapshot of a synthetic catalogue of
// 5,000 concepts, as every reading command does first.
func BenchmarkDecode5000(b *testing.B) {
	var docs []Doc
	for _, d := range synth.Generate(5000, 1) {
		docs = append(docs, Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
	}
	snap, _ := Build("bench", docs)
	enc := snap.Encode()
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
