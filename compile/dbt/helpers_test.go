package dbt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/dbt"
	"github.com/okf-tools/okf/internal/shareddata"
)

// exampleDir is the dbt project with a semantic layer that okf ships.
var exampleDir = filepath.Join("..", "..", "examples", "dbt-semantic")

func jaffleDir(t *testing.T) string {
	t.Helper()
	return shareddata.Dir(t, "dbt", "jaffle_shop_duckdb")
}

// testProject copies the dbt project testdata/name into a folder named
// shop, as a team's checkout would be, and returns that folder.
func testProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, dir string) *compile.Database {
	t.Helper()
	db, err := dbt.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func build(t *testing.T, db *compile.Database) *compile.Bundle {
	t.Helper()
	b, err := compile.Build(db, compile.Options{Generator: "okf/test"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
