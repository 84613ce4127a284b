// Package catalog reads the compile model from a live database: tables,
// columns with their types and nullability, primary and foreign keys,
// comments as meanings, enum labels, and for JSON columns the key paths
// found in a bounded sample of rows.
//
// PostgreSQL types are spelled as information_schema.columns.data_type
// spells them ("character varying", "USER-DEFINED", "ARRAY"), the same
// vocabulary as a LiveSQLBench schema dump, so a database compiled from
// its catalog and from its dump read alike. SQLite types are the declared
// ones, and DuckDB's as duckdb_columns() spells them (compile/catalog/duckdb
// reads DuckDB files and registers itself with RegisterFileReader).
package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/dsn"
)

// FileReader reads the catalog of the database file at path (its tables
// in schema, "" for the default) for an engine whose driver lives outside
// this package.
type FileReader func(ctx context.Context, path, schema string) (*compile.Database, error)

// fileReaders holds the readers other packages register.
var fileReaders dsn.Registry[FileReader]

// RegisterFileReader makes ReadFile use r for engine e. Package
// compile/catalog/duckdb registers DuckDB, so that only the programs that
// import it (okf does) link DuckDB, and this package's tests do not.
func RegisterFileReader(e dsn.Engine, r FileReader) { fileReaders.Register(e, r) }

// ReadFile reads the catalog of a database file of engine e through the
// reader registered for it.
func ReadFile(ctx context.Context, e dsn.Engine, path, schema string) (*compile.Database, error) {
	r, ok := fileReaders.Lookup(e)
	if !ok || r == nil {
		return nil, fmt.Errorf("%s: this program was built without %s's catalog reader", path, e.Name())
	}
	return r(ctx, path, schema)
}

// SampleRows bounds how many rows of a JSON column are read for key paths.
const SampleRows = 200

// jsonPaths adds to seen the dotted key paths of a JSON document: every
// key of every nested object. Arrays are not entered; their own path is
// kept.
func jsonPaths(raw []byte, seen map[string]bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		obj, ok := v.(map[string]any)
		if !ok {
			if prefix != "" {
				seen[prefix] = true
			}
			return
		}
		for k, child := range obj {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, child)
		}
	}
	walk("", v)
}

// JSONFields are the key paths of a JSON column's sampled documents,
// sorted, as this package's readers find them: for the readers of other
// packages.
func JSONFields(docs [][]byte) []compile.JSONField {
	seen := map[string]bool{}
	for _, d := range docs {
		jsonPaths(d, seen)
	}
	return fields(seen)
}

// fields turns the paths seen into sorted JSON fields without meanings.
func fields(seen map[string]bool) []compile.JSONField {
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := make([]compile.JSONField, len(paths))
	for i, p := range paths {
		out[i] = compile.JSONField{Path: p}
	}
	return out
}

// isJSON reports whether a type holds JSON documents.
func isJSON(typ string) bool {
	t := strings.ToLower(typ)
	return t == "json" || t == "jsonb"
}
