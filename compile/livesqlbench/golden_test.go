package livesqlbench_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/compiletest"
	"github.com/okf-tools/okf/internal/golden"
)

var update = golden.Update

// TestGoldenShop compiles the small crafted database in testdata/shop and
// checks the bundle and gap report byte for byte against testdata/golden.
// The shop exercises every kind of link and gap: JSON paths, an enum, a
// composite key, a join to a table the schema lacks, a column name two
// tables share, documented former column names (as written and in prose),
// an abbreviation a meaning introduces, a rule reached through another
// rule's abbreviation, illustrations of a column (by name and by a
// CamelCase abbreviation), and rules nothing links. Run with -update to
// rewrite the golden files.
func TestGoldenShop(t *testing.T) {
	opt := compile.Options{
		Generator:   "okf/test",
		GeneratedAt: time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC),
		SourceBase:  "https://example.com/shop-docs",
	}
	b := compileDir(t, filepath.Join("testdata", "shop"), opt)
	compiletest.ValidateStrictly(t, b)
	got := map[string][]byte{}
	for p, data := range b.Files {
		got[filepath.Join("bundle", filepath.FromSlash(p))] = data
	}
	var text bytes.Buffer
	if err := b.Gaps.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	got["gaps.txt"] = text.Bytes()
	js, err := json.MarshalIndent(b.Gaps, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got["gaps.json"] = append(js, '\n')

	golden := filepath.Join("testdata", "golden")
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		for p, data := range got {
			full := filepath.Join(golden, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var want []string
	err = filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(golden, p)
		want = append(want, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if g, ok := got[rel]; !ok {
			t.Errorf("%s: in the golden files but not compiled", rel)
		} else if !bytes.Equal(g, data) {
			t.Errorf("%s differs from the golden file (run go test -update to accept):\n--- got ---\n%s\n--- want ---\n%s", rel, g, data)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading golden files: %v (run go test -update to create them)", err)
	}
	for p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("%s: compiled but not in the golden files (run go test -update)", p)
		}
	}
}
