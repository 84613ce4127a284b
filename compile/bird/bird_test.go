package bird_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/bird"
	"github.com/okf-tools/okf/compile/compiletest"
	_ "github.com/okf-tools/okf/internal/golden" // -update, which go test ./... -update passes to every package
	"github.com/okf-tools/okf/internal/shareddata"
)

func TestSuperheroCompilesFromItsCatalogAndCSVs(t *testing.T) {
	dir := shareddata.Dir(t, "bird", "superhero")
	if !bird.IsDatabase(dir) {
		t.Fatalf("%s is not recognised as a BIRD database", dir)
	}
	db, err := bird.Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Tables != 10 || b.Gaps.Count() != 0 {
		t.Errorf("%d tables, gaps %+v", b.Tables, b.Gaps)
	}
	if m := db.Table("hero_power").Column("power_id").Meaning; !strings.HasPrefix(m, "power id: the id of the power\nMaps to superpower(id). commonsense evidence:") {
		t.Errorf("hero_power.power_id meaning %q", m)
	}
	out := t.TempDir()
	if err := compile.Write(out, compile.WriteOptions{}, b); err != nil {
		t.Fatal(err)
	}
	loaded, err := okf.Load(filepath.Join(out, "superhero"))
	if err != nil {
		t.Fatal(err)
	}
	rep := okf.Validate(loaded, okf.Options{Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)})
	if !rep.Passed(0) {
		t.Errorf("strict validation: %v", rep.Findings)
	}
	if typ := loaded.Concept("tables/superhero").Type(); typ != "SQLite Table" {
		t.Errorf("type %q", typ)
	}
}

func TestDescriptionFileWithoutItsHeader(t *testing.T) {
	src := shareddata.Dir(t, "bird", "superhero")
	dir := filepath.Join(t.TempDir(), "superhero")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, bird.DescriptionDir, "colour.csv")
	if err := os.WriteFile(bad, []byte("name,text\nid,the id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := bird.Read(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "colour.csv:1:") || !strings.Contains(err.Error(), "original_column_name") {
		t.Fatalf("got %v, want an error naming colour.csv:1 and the missing header", err)
	}
}

// Compiled from its folder, superhero lists the values of its lookup
// tables, read from superhero.sqlite, where an agent reads each table; the
// names of its heroes and powers, nearly all unique, get none. A recompile
// gives the same bytes.
func TestSuperheroListsItsValues(t *testing.T) {
	dir := shareddata.Dir(t, "bird", "superhero")
	b := compiletest.Folder(t, dir)[0]
	compiletest.ValidateStrictly(t, b)
	for file, want := range map[string]string{
		"tables/gender.md":    "\n# Values\n\n* `gender`: 'Female', 'Male', 'N/A'\n",
		"tables/publisher.md": "'Marvel Comics', 'Microsoft', ",
		"tables/colour.md":    "'Blue', ",
		"tables/attribute.md": "* `attribute_name`: 'Combat', 'Durability', 'Intelligence', 'Power', 'Speed', 'Strength'\n",
		"tables/race.md":      "'Alien', ",
	} {
		if got := string(b.Files[file]); !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", file, want, got)
		}
	}
	for _, file := range []string{"tables/gender.md", "tables/race.md"} {
		if got := string(b.Files[file]); !strings.Contains(got, "  - id: values\n    resource: superhero/superhero.sqlite\n    title: values read from the database\n") {
			t.Errorf("%s does not cite the database for its values:\n%s", file, got)
		}
	}
	// superpower is a lookup table: its 167 unique names are values.
	if got := string(b.Files["tables/superpower.md"]); !strings.Contains(got, "'Wind Control'") {
		t.Errorf("superpower lacks 'Wind Control':\n%s", got)
	}
	for _, file := range []string{"tables/superhero.md", "tables/hero_power.md"} {
		if got := string(b.Files[file]); strings.Contains(got, "# Values") || strings.Contains(got, "id: values") {
			t.Errorf("%s lists values:\n%s", file, got)
		}
	}
	if !strings.Contains(string(b.Files["tables/race.md"]), "'Vampire'") {
		t.Errorf("race lacks 'Vampire'")
	}
	again := compiletest.Folder(t, dir)[0]
	for _, p := range b.Paths() {
		if !bytes.Equal(b.Files[p], again.Files[p]) {
			t.Errorf("%s differs on a recompile", p)
		}
	}
}
