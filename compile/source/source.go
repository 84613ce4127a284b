// Package source finds the databases a folder documents, in every form
// okf compiles (LiveSQLBench files, BIRD description CSVs, dbt projects),
// and reads a live catalog with documentation layered on top: what okf
// compile reads before it builds bundles.
package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/bird"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/compile/dbt"
	"github.com/okf-tools/okf/compile/livesqlbench"
	"github.com/okf-tools/okf/internal/dsn"
)

// Read reads dir as one database, or else every database folder directly
// inside it.
func Read(ctx context.Context, dir string) ([]*compile.Database, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	if db, ok, err := readOne(ctx, dir); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return []*compile.Database{db}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var dbs []*compile.Database
	for _, en := range entries {
		if !en.IsDir() || strings.HasPrefix(en.Name(), ".") {
			continue
		}
		db, ok, err := readOne(ctx, filepath.Join(dir, en.Name()))
		if err != nil {
			return nil, err
		}
		if ok {
			dbs = append(dbs, db)
		}
	}
	if len(dbs) == 0 {
		return nil, fmt.Errorf("%s: no database found (want <db>/<db>_schema.txt, <db>/<db>.sqlite with database_description/, or a dbt project's dbt_project.yml), in it or in its folders", dir)
	}
	return dbs, nil
}

// readOne reads dir if it is a database folder of a known kind.
func readOne(ctx context.Context, dir string) (*compile.Database, bool, error) {
	var (
		db  *compile.Database
		err error
	)
	switch {
	case dbt.IsProject(dir):
		db, err = dbt.Read(dir)
	case livesqlbench.IsDatabase(dir):
		db, err = livesqlbench.Read(dir)
	case bird.IsDatabase(dir):
		db, err = bird.Read(ctx, dir)
	default:
		return nil, false, nil
	}
	if err == nil {
		err = compile.ReadQueries(db, dir)
	}
	return db, true, err
}

// ReadCatalog reads a database from its live catalog, then layers the
// documentation in dir, if any, on top.
func ReadCatalog(ctx context.Context, from, schema, dir string) (*compile.Database, error) {
	source, err := dsn.Parse(from)
	if err != nil {
		return nil, fmt.Errorf("the catalog: %w", err)
	}
	var db *compile.Database
	switch source.Engine {
	case dsn.Postgres:
		db, err = catalog.ReadPostgres(ctx, from, catalog.PostgresOptions{Schema: schema})
	case dsn.SQLite:
		db, err = catalog.ReadSQLite(ctx, source.Path)
	case dsn.DuckDB:
		db, err = catalog.ReadFile(ctx, dsn.DuckDB, source.Path, schema)
	default:
		return nil, fmt.Errorf("the catalog %q: want postgres://..., sqlite:<path> or duckdb:<path>", from)
	}
	if err != nil || dir == "" {
		return db, err
	}
	if err := compile.ReadQueries(db, dir); err != nil {
		return nil, err
	}
	if dbt.IsProject(dir) {
		return db, dbt.Apply(db, dir)
	}
	if descriptions := filepath.Join(dir, bird.DescriptionDir); isDir(descriptions) {
		return db, bird.ApplyDescriptions(db, descriptions)
	}
	found, err := livesqlbench.ApplyDocs(db, dir)
	if err == nil && !found {
		err = fmt.Errorf("%s: no documentation to layer on the catalog (want %s, %s/, or <db>%s / <db>%s named after the folder)",
			dir, dbt.ProjectFile, bird.DescriptionDir, livesqlbench.MeaningsSuffix, livesqlbench.RulesSuffix)
	}
	return db, err
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
