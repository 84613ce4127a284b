// Package livesqlbench reads the raw documentation of a LiveSQLBench
// database into the compile model.
//
// A database folder <dir>/<db> holds three files:
//
//   - <db>_schema.txt: a catalog dump of CREATE TABLE blocks, not executable
//     DDL (types such as USER-DEFINED and ARRAY appear), optionally followed
//     by sample rows, which are skipped; plain DDL reads too;
//   - <db>_column_meaning_base.json: an object keyed "<db>|<table>|<column>"
//     whose values are a meaning, or for a JSON column an object with
//     "column_meaning" and nested "fields_meaning";
//   - <db>_kb.jsonl: one business rule per line, whose children_knowledge
//     is a list of rule ids or -1.
//
// Names match without regard to case. Every error names the file and line.
package livesqlbench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/okf-tools/okf/compile"
)

// File name suffixes of the three raw files.
const (
	SchemaSuffix   = "_schema.txt"
	MeaningsSuffix = "_column_meaning_base.json"
	RulesSuffix    = "_kb.jsonl"
)

// IsDatabase reports whether dir holds a LiveSQLBench schema named after
// the folder.
func IsDatabase(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.Base(dir)+SchemaSuffix))
	return err == nil
}

// Read reads the database in dir, named after the folder, from its three
// files; all three must exist.
func Read(dir string) (*compile.Database, error) {
	name := filepath.Base(filepath.Clean(dir))
	tables, err := ReadSchema(filepath.Join(dir, name+SchemaSuffix))
	if err != nil {
		return nil, err
	}
	db := &compile.Database{Name: name, Engine: "postgres", Tables: tables}
	db.Sources = append(db.Sources, compile.Source{
		ID: "schema", Resource: sourceName(filepath.Join(dir, name+SchemaSuffix)), Title: name + " schema (LiveSQLBench)",
	})
	if err := ApplyMeanings(db, filepath.Join(dir, name+MeaningsSuffix)); err != nil {
		return nil, err
	}
	if err := ApplyRules(db, filepath.Join(dir, name+RulesSuffix)); err != nil {
		return nil, err
	}
	return db, nil
}

// ApplyDocs layers whichever of the meanings and rules files exist in dir
// on a database read from elsewhere, such as a live catalog. It reports
// whether it found any.
func ApplyDocs(db *compile.Database, dir string) (bool, error) {
	name := filepath.Base(filepath.Clean(dir))
	found := false
	for _, f := range []struct {
		suffix string
		apply  func(*compile.Database, string) error
	}{{MeaningsSuffix, ApplyMeanings}, {RulesSuffix, ApplyRules}} {
		p := filepath.Join(dir, name+f.suffix)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		found = true
		if err := f.apply(db, p); err != nil {
			return found, err
		}
	}
	return found, nil
}

// sourceName is how a source file is cited: "<folder>/<file>", which does
// not depend on where the data lives on this machine.
func sourceName(path string) string {
	return filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
}

// lineError is an error at a line of a file.
func lineError(path string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
}
