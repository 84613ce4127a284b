// Package bird reads BIRD-style column descriptions into the compile model.
//
// A BIRD database folder holds the database file and a
// database_description folder with one <table>.csv per table, whose
// header is original_column_name, column_name, column_description,
// data_format, value_description. The descriptions are layered on a
// database read from its catalog (package catalog): the catalog gives the
// tables, types and keys, the CSVs give the meanings.
package bird

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
)

// DescriptionDir is the folder of description CSVs inside a database folder.
const DescriptionDir = "database_description"

// IsDatabase reports whether dir is a BIRD database folder: a
// database_description folder beside a .sqlite file.
func IsDatabase(dir string) bool {
	if info, err := os.Stat(filepath.Join(dir, DescriptionDir)); err != nil || !info.IsDir() {
		return false
	}
	_, err := sqliteFile(dir)
	return err == nil
}

// sqliteFile returns the database file of a BIRD folder: <name>.sqlite, or
// the only .sqlite file there.
func sqliteFile(dir string) (string, error) {
	name := filepath.Base(filepath.Clean(dir))
	if p := filepath.Join(dir, name+".sqlite"); fileExists(p) {
		return p, nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
	if len(matches) == 1 {
		return matches[0], nil
	}
	return "", fmt.Errorf("%s: want %s.sqlite or a single .sqlite file, found %d", dir, name, len(matches))
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

// Read reads a BIRD database folder: the SQLite catalog, then the
// descriptions.
func Read(ctx context.Context, dir string) (*compile.Database, error) {
	file, err := sqliteFile(dir)
	if err != nil {
		return nil, err
	}
	db, err := catalog.ReadSQLite(ctx, file)
	if err != nil {
		return nil, err
	}
	if err := ApplyDescriptions(db, filepath.Join(dir, DescriptionDir)); err != nil {
		return nil, err
	}
	return db, nil
}

// ApplyDescriptions reads every <table>.csv of a description folder and
// sets the meanings of the columns they describe. A file or row for a
// table or column the database lacks is recorded in Database.Unmatched.
func ApplyDescriptions(db *compile.Database, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no .csv description files", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		if err := applyFile(db, f); err != nil {
			return err
		}
	}
	db.Sources = append(db.Sources, compile.Source{
		ID: "database_description", Resource: db.Name + "/" + DescriptionDir + "/",
		Title: db.Name + " column descriptions (BIRD)",
	})
	return nil
}

// columns of a description file, by header name.
const (
	colOriginal    = "original_column_name"
	colName        = "column_name"
	colDescription = "column_description"
	colValues      = "value_description"
)

func applyFile(db *compile.Database, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading descriptions: %w", err)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(raw) {
		// Some BIRD files are Latin-1; each byte is then its code point.
		raw = latin1(raw)
	}
	table := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	t := db.Table(table)
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s:1: reading the header: %w", path, err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, need := range []string{colOriginal, colDescription} {
		if _, ok := idx[need]; !ok {
			return fmt.Errorf("%s:1: the header has no %s column", path, need)
		}
	}
	if t == nil {
		db.Unmatched = append(db.Unmatched, table)
		return nil
	}
	field := func(rec []string, name string) string {
		i, ok := idx[name]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		name := field(rec, colOriginal)
		if name == "" {
			continue
		}
		c := t.Column(name)
		if c == nil {
			db.Unmatched = append(db.Unmatched, t.Name+"."+name)
			continue
		}
		c.Meaning = meaning(field(rec, colName), field(rec, colDescription), field(rec, colValues))
	}
	return nil
}

// meaning joins the parts of a description row: the expanded column name
// when it says more than the description, the description, and the value
// description.
func meaning(expanded, description, values string) string {
	var parts []string
	if expanded != "" && !strings.EqualFold(expanded, description) {
		parts = append(parts, expanded+":")
	}
	if description != "" {
		parts = append(parts, description)
	}
	if values != "" {
		if len(parts) > 0 && !strings.HasSuffix(description, ".") {
			parts[len(parts)-1] += "."
		}
		parts = append(parts, values)
	}
	return strings.Join(parts, " ")
}

func latin1(b []byte) []byte {
	out := make([]rune, len(b))
	for i, c := range b {
		out[i] = rune(c)
	}
	return []byte(string(out))
}
