package compile

import (
	"bytes"
	"testing"
)

func TestSeal(t *testing.T) {
	doc := []byte("---\ntype: Table\ngenerated:\n  by: okf/test\n  at: 2026-01-01T00:00:00Z\nsources:\n  - resource: x\n---\n# Schema\n\nRows.\n")
	sealed := seal(doc)
	if !bytes.Contains(sealed, []byte("  at: 2026-01-01T00:00:00Z\n  digest: ")) || !bytes.HasSuffix(sealed, []byte("---\n# Schema\n\nRows.\n")) {
		t.Fatalf("sealed:\n%s", sealed)
	}
	if s, ok := Sealed(sealed); !s || !ok {
		t.Errorf("a sealed document: sealed %v, intact %v", s, ok)
	}
	edited := bytes.Replace(sealed, []byte("Rows."), []byte("Rows, and a note."), 1)
	if s, ok := Sealed(edited); !s || ok {
		t.Errorf("an edited document: sealed %v, intact %v", s, ok)
	}
	if s, _ := Sealed(doc); s {
		t.Error("an unsealed document reads as sealed")
	}
	if s, _ := Sealed([]byte("# Notes\n\n  digest: 0011223344556677\n")); s {
		t.Error("a digest outside frontmatter counts")
	}
}
