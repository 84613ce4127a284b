package compile

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/okf-tools/okf/internal/shareddata"
)

// yamlV3 encodes v as concept's yaml.v3 encoder does.
func yamlV3(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	return b.String()
}

// sameString checks yamlString against yaml.v3 for s as a block value and
// as a flow sequence item; it returns whether yamlString wrote s itself.
func sameString(t *testing.T, s string) bool {
	t.Helper()
	written := false
	got, ok := yamlString(s, false)
	if ok {
		written = true
		if want := yamlV3(t, struct {
			V string `yaml:"v"`
		}{s}); "v: "+got+"\n" != want {
			t.Errorf("%q as a value: wrote %q, yaml.v3 writes %q", s, "v: "+got+"\n", want)
		}
	}
	if got, ok := yamlString(s, true); ok {
		if want := yamlV3(t, struct {
			V []string `yaml:"v,flow"`
		}{[]string{s, s}}); "v: ["+got+", "+got+"]\n" != want {
			t.Errorf("%q in a flow list: wrote %q, yaml.v3 writes %q", s, got, want)
		}
	}
	return written
}

var yamlCases = []string{
	"", "a", "Business Rule", "solar", "4 columns, key a: b. Joins c.", "a: b", "a:b", "a:", ":a", ": a", "?a", "? a", "-a", "- a", "-",
	"#a", "a#b", "a #b", "a# b", ",a", "a,b", "[a]", "a[b]", "{a}", "&a", "*a", "!a", "|a", ">a", "'a", "a'b", "\"a", "a\"b", "%a", "@a", "`a",
	"--- a", "---", "...a", "..", " a", "a ", "a  b", "true", "True", "yes", "Yes", "no", "on", "off", "null", "~", "<<", "<a", "y", "n", "Nope", "tRUE",
	"1", "12 monkeys", "2026-11-29", "2026-11-29 10:00:00", "2026-11", "2026 was", "1e3", "+1", "-1 a", "+ a", ".5", ".5 a", ".inf", ".x", ".", "0x1F",
	"0b101 a", "0o17", "1_000", "1:20", "1:20 a", "okf/devel", "solar/solar_kb.jsonl", "kb", "a\tb", "a\nb", "é", "\x7f",
}

func TestYAMLStringsAsYAMLv3WritesThem(t *testing.T) {
	for _, s := range yamlCases {
		sameString(t, s)
	}
	r := rand.New(rand.NewPCG(17, 5))
	alphabet := " aZ09:#-?,[]{}&*!|>'\"%@`.~+<_/ytn"
	for range 30000 {
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		sameString(t, string(b))
	}
}

// TestYAMLStringsOnTheCorpora checks every line of the raw documentation,
// which is where titles and descriptions come from, and that most are
// written without yaml.v3.
func TestYAMLStringsOnTheCorpora(t *testing.T) {
	data := shareddata.Find()
	if data == "" {
		t.Skip("no shared corpora")
	}
	lines, written := 0, 0
	err := filepath.WalkDir(filepath.Join(data, "livesqlbench", "base-lite"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, part := range strings.Split(line, `"`) {
				lines++
				if sameString(t, part) {
					written++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if written < lines/2 {
		t.Errorf("wrote %d of %d strings without yaml.v3, expected most", written, lines)
	}
}

func TestRenderFrontAsYAMLv3(t *testing.T) {
	fronts := []any{
		tableFront{Type: "PostgreSQL Table", Title: "orders", Description: "4 columns, key id: a, b.", Tags: []string{"shop"},
			Grain: []string{"id", "line"}, Generated: generated{By: "okf/devel", At: "2026-11-29T10:00:00Z"},
			Sources: []source{{ID: "schema", Resource: "shop/schema.sql", Title: "shop schema"}, {Resource: "x.md"}}},
		tableFront{Type: "T", Title: "t", Description: "d", Generated: generated{By: "okf/devel"}},
		tableFront{Type: "DuckDB View", Title: "stg", Description: "d", Tags: []string{"shop"}, Layer: "staging", Generated: generated{By: "okf/devel"}},
		tableFront{Type: "Table", Title: "customers", Description: "d", Tags: []string{"shop"}, Layer: "mart", PersonalData: []string{"email", "custname"}, Generated: generated{By: "okf/devel"}},
		tableFront{Type: "DuckDB Table", Title: "orders", Description: "d", Aliases: []string{"purchases", "sales orders"}, Tags: []string{"shop"}, Generated: generated{By: "okf/devel"}},
		ruleFront{Type: "Calculation", Title: "Revenue", Description: "d", Aliases: []string{"turnover", "top line"}, Tags: []string{"shop"}, Generated: generated{By: "okf/devel"}},
		ruleFront{Type: "Business Rule", Title: "Active customer", Description: "A customer with an order: in 90 days.",
			Tags: []string{"a", "b"}, Generated: generated{By: "okf/devel"}, Sources: []source{{ID: "kb", Resource: "kb.jsonl", Title: "rule 1"}}},
	}
	for _, front := range fronts {
		got, ok := renderFront(front)
		if !ok {
			t.Errorf("%+v: not written", front)
			continue
		}
		if want := yamlV3(t, front); string(got) != want {
			t.Errorf("%+v:\nwrote\n%s\nyaml.v3 writes\n%s", front, got, want)
		}
	}
	for _, front := range []any{
		ruleFront{Type: "Business Rule", Title: "true", Tags: []string{"a"}},
		ruleFront{Type: "Business Rule", Title: "t", Description: "line\nbreak"},
		tableFront{Type: "T", Title: "t", Description: "d", Sources: []source{{Resource: ""}}},
	} {
		if _, ok := renderFront(front); ok {
			t.Errorf("%+v: written, though a value is yaml.v3's to write", front)
		}
	}
}

func FuzzYAMLString(f *testing.F) {
	for _, s := range yamlCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameString(t, s) })
}
