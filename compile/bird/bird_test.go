package bird_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/bird"
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
