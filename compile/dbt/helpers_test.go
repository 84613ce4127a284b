package dbt_test

import (
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
