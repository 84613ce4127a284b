package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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

// TestDigestReadsAsText seals documents until one's digest is all digits,
// which YAML reads as a number unless quoted (every twentieth hundred or
// so): the digest must read back as the same text, and the seal hold.
func TestDigestReadsAsText(t *testing.T) {
	numeric := 0
	for i := 0; i < 20000 && numeric < 2; i++ {
		doc := []byte(fmt.Sprintf("---\ntype: Table\ngenerated:\n  by: okf/test\nsources:\n  - resource: x\n---\n# Schema\n\nRow %d.\n", i))
		sum := sha256.Sum256(doc)
		if strings.Trim(hex.EncodeToString(sum[:8]), "0123456789") != "" {
			continue
		}
		numeric++
		sealed := seal(doc)
		var fm struct {
			Generated struct {
				Digest yaml.Node `yaml:"digest"`
			} `yaml:"generated"`
		}
		fmEnd := bytes.Index(sealed[4:], []byte("\n---\n"))
		if err := yaml.Unmarshal(sealed[4:4+fmEnd], &fm); err != nil {
			t.Fatal(err)
		}
		if d := fm.Generated.Digest; d.Tag != "!!str" || d.Value != hex.EncodeToString(sum[:8]) {
			t.Errorf("digest %s reads back as %s %q:\n%s", hex.EncodeToString(sum[:8]), d.Tag, d.Value, sealed)
		}
		if s, ok := Sealed(sealed); !s || !ok {
			t.Errorf("a sealed document with digest %s: sealed %v, intact %v", hex.EncodeToString(sum[:8]), s, ok)
		}
	}
	if numeric < 2 {
		t.Fatalf("found %d all-digit digests in 20,000 documents", numeric)
	}
}
