// Package shop is the example database okf demo runs on, written for okf:
// a small online shop's documentation in the LiveSQLBench shapes (schema
// dump, column meanings, business rules), shop.sql that creates and fills a
// SQLite database with a few thousand rows drawn from a fixed seed, and a
// question set with gold SQL and the ids of the rules each question needs.
// The files are embedded, so the okf binary carries the demo with it.
package shop

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	// The SQLite driver registers itself as "sqlite3".
	_ "github.com/ncruces/go-sqlite3/driver"
)

//go:generate go run ./gen -docs . -out shop.sql

// Name is the database's name, and its bundle's.
const Name = "shop"

// The files of the example.
const (
	SchemaFile    = "shop_schema.txt"
	MeaningsFile  = "shop_column_meaning_base.json"
	RulesFile     = "shop_kb.jsonl"
	SQLFile       = "shop.sql"
	QuestionsFile = "shop_questions.jsonl"
)

// Docs are the documentation files, as okf compile reads them.
var Docs = []string{SchemaFile, MeaningsFile, RulesFile}

//go:embed shop_schema.txt shop_column_meaning_base.json shop_kb.jsonl shop.sql shop_questions.jsonl queries/*.md
var files embed.FS

// QueriesDir holds the shop's verified queries, query concepts okf compile
// copies into the bundle.
const QueriesDir = "queries"

// Files returns the example's files.
func Files() fs.FS { return files }

// WriteDocs writes the documentation files into dir/shop, the folder okf
// compile reads, and returns that folder.
func WriteDocs(dir string) (string, error) {
	out := filepath.Join(dir, Name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", out, err)
	}
	queries, err := fs.Glob(files, QueriesDir+"/*.md")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(out, QueriesDir), 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", out, err)
	}
	for _, name := range slices.Concat(Docs, []string{QuestionsFile}, queries) {
		data, err := files.ReadFile(name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.FromSlash(name)), data, 0o644); err != nil {
			return "", fmt.Errorf("writing the example: %w", err)
		}
	}
	return out, nil
}

// Create makes a new SQLite database at path by running shop.sql. It
// refuses to overwrite an existing file.
func Create(ctx context.Context, path string) error {
	script, err := files.ReadFile(SQLFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(path))
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, string(script)); err != nil {
		return fmt.Errorf("running %s into %s: %w", SQLFile, path, err)
	}
	return db.Close()
}
