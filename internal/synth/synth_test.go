package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
)

func TestGenerateIsDeterministicAndConformant(t *testing.T) {
	a, b := Generate(1200, 1), Generate(1200, 1)
	if len(a) != 1200+3 { // three bundles, an index each
		t.Fatalf("%d documents, want 1,203", len(a))
	}
	size := 0
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Content, b[i].Content) {
			t.Fatalf("document %d differs between two runs with one seed", i)
		}
		size += len(a[i].Content)
	}
	if per := size / 1200; per < 1500 || per > 2600 {
		t.Errorf("%d bytes a concept, want about 2 KB", per)
	}
	if bytes.Equal(Generate(10, 2)[0].Content, a[0].Content) {
		t.Error("another seed gave the same document")
	}
	var docs []*okf.Document
	for _, d := range a {
		if d.Bundle == "b001" {
			docs = append(docs, okf.Parse(d.Path, d.Content))
		}
	}
	rep := okf.Validate(okf.NewBundle(docs), okf.Options{})
	if !rep.Conformant() || rep.Counts.Concepts != BundleSize {
		t.Errorf("bundle b001: %d concepts, %d errors", rep.Counts.Concepts, rep.Count(okf.Error))
	}
	b1 := okf.NewBundle(docs)
	if out := b1.Outbound(b1.Concepts()[0].ID()); len(out) == 0 {
		t.Error("a generated table links to no other table")
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	docs := Generate(BundleSize+3, 1)
	if err := Write(dir, docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Doc{docs[0], docs[len(docs)-1]} {
		got, err := os.ReadFile(filepath.Join(dir, d.Bundle, d.Path))
		if err != nil || !bytes.Equal(got, d.Content) {
			t.Errorf("%s/%s: %v", d.Bundle, d.Path, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b001", "index.md")); err != nil {
		t.Errorf("the second bundle has no index: %v", err)
	}
	if err := Write(dir, docs); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("writing into a folder with files: %v", err)
	}
}
