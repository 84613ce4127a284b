package okf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/shareddata"
)

// yamlV3Mapping is what simpleYAML must equal: yaml.v3's tree of src when
// it is a mapping.
func yamlV3Mapping(src []byte) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	if m := doc.Content[0]; m.Kind == yaml.MappingNode {
		return m, true
	}
	return nil, false
}

// sameAsYAMLV3 fails t when simpleYAML reads src and yaml.v3 reads it
// otherwise; it reports whether simpleYAML read it.
func sameAsYAMLV3(t *testing.T, src []byte) bool {
	t.Helper()
	got, ok := simpleYAML(src)
	if !ok {
		return false
	}
	want, wok := yamlV3Mapping(src)
	if !wok {
		t.Fatalf("simpleYAML read a frontmatter yaml.v3 refuses or reads as no mapping:\n%s", src)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := yaml.Marshal(got)
		t.Fatalf("simpleYAML and yaml.v3 differ on\n%s\nsimpleYAML: %s\n%s", src, g, nodeDump(got, want))
	}
	return true
}

// nodeDump names the first node where two trees differ.
func nodeDump(a, b *yaml.Node) string {
	if a == nil || b == nil {
		return "one tree is nil"
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style || a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return "simpleYAML " + nodeLine(a) + "\nyaml.v3    " + nodeLine(b)
	}
	for i := range a.Content {
		if d := nodeDump(a.Content[i], b.Content[i]); d != "" {
			return d
		}
	}
	if !reflect.DeepEqual(a, b) {
		return "simpleYAML " + nodeLine(a) + "\nyaml.v3    " + nodeLine(b) + " (another field)"
	}
	return ""
}

func nodeLine(n *yaml.Node) string {
	return fmt.Sprintf("kind %d tag %s value %q style %d line %d column %d content %d",
		n.Kind, n.Tag, n.Value, n.Style, n.Line, n.Column, len(n.Content))
}

// manyKeys is a mapping of n keys.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "key_%d: value\n", i)
	}
	return b.String()
}

func TestSimpleYAMLCases(t *testing.T) {
	for _, tc := range []struct {
		src  string
		read bool
	}{
		{"type: Table\ntitle: orders\n", true},
		{"type: Table\ntags: [a, b c, 'd, e', \"f\"]\n", true},
		{"tags: []\n", true},
		{"tags:\n- a\n- b\nnext: x\n", true},
		{"tags:\n  - a\n  - b\n", true},
		{"sources:\n- id: a\n  resource: https://x.org/y?z=1\n- id: b\n", true},
		{"generated:\n  by: okf/1\n  at: '2026-10-03T00:27:11+05:30'\n", true},
		{"description: 'it''s ''quoted'''\n", true},
		{"description: \"plain, with: colon\"\n", true},
		{"title: Café — naïve\ndescription: 10 columns and more\n", true},
		{"a:    spaced   out  \n\n\nb: c\n", true},
		{"  indented: all\n  the: way\n", true},
		{"- a\n", false},                                // not a mapping
		{"a: 1\n", false},                               // a number
		{"a: true\n", false},                            // a boolean
		{"a:\n", false},                                 // a null
		{"a: b # note\n", false},                        // a comment
		{"a: &x b\nc: *x\n", false},                     // an anchor
		{"a: \"x\\ty\"\n", false},                       // an escape
		{"a: b\n  c\n", false},                          // a multi-line scalar
		{"a: b\na: c\n", false},                         // a repeated key
		{"a: b: c\n", false},                            // refused by yaml.v3
		{"a:\tb\n", false},                              // a tab
		{"a: b\r\n", false},                             // a carriage return
		{"a: [b, [c]]\n", false},                        // a nested flow list
		{"a: {b: c}\n", false},                          // a flow mapping
		{"a:\n  - b\n - c\n", false},                    // an indent between levels
		{"a: 2026-10-03\n", false},                      // a time
		{"a: 'unclosed\n", false},                       // refused by yaml.v3
		{"a: |\n  text\n", false},                       // a literal block
		{"a: x\u2028y\n", false},                        // a line separator
		{"\"a\": b\n", false},                           // a quoted key
		{"a:\n- - b\n", false},                          // a nested block list
		{"a: [b,]\n", false},                            // a trailing comma
		{"a: b\n- c\n", false},                          // a list beside keys
		{strings.Repeat("a:\n ", 40) + "b: c\n", false}, // deeper than maxSimpleDepth
		{manyKeys(maxSimpleKeys), true},
		{manyKeys(maxSimpleKeys + 1), false}, // wider than maxSimpleKeys: no quadratic scan
	} {
		got := sameAsYAMLV3(t, []byte(tc.src))
		if got != tc.read {
			t.Errorf("simpleYAML(%q) read = %v, want %v", tc.src, got, tc.read)
		}
	}
}

// TestSimpleYAMLOnTheCorpora reads every frontmatter of the shared corpora
// and the example shop both ways: where simpleYAML reads one, the trees are
// equal, and it reads most of them.
func TestSimpleYAMLOnTheCorpora(t *testing.T) {
	data := shareddata.Dir(t, "")
	read, total := 0, 0
	for _, root := range []string{data, "examples"} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
				return nil
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			doc := Parse("x.md", raw)
			if !doc.Frontmatter.Present {
				return nil
			}
			total++
			if sameAsYAMLV3(t, raw[doc.Frontmatter.Start:doc.Frontmatter.End]) {
				read++
			} else if testing.Verbose() {
				t.Logf("not read: %s", path)
			}
			return nil
		})
	}
	t.Logf("simpleYAML read %d of %d frontmatters", read, total)
	if total < 500 || read*100 < total*85 {
		t.Errorf("simpleYAML read %d of %d frontmatters, want 85%% of 500 or more", read, total)
	}
}

func FuzzSimpleYAML(f *testing.F) {
	for _, seed := range []string{
		"type: Table\ntags: [a, 'b']\n",
		"sources:\n- id: a\n  title: \"x\"\n",
		"a:\n  b:\n  - c\n",
		"a: b\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if bytes.Count(src, []byte("\n")) > 200 {
			return
		}
		sameAsYAMLV3(t, src)
	})
}
