// Package catalog reads the compile model from a live database: tables,
// columns with their types and nullability, primary and foreign keys,
// comments as meanings, enum labels, and for JSON columns the key paths
// found in a bounded sample of rows.
//
// PostgreSQL types are spelled as information_schema.columns.data_type
// spells them ("character varying", "USER-DEFINED", "ARRAY"), the same
// vocabulary as a LiveSQLBench schema dump, so a database compiled from
// its catalog and from its dump read alike. SQLite types are the declared
// ones.
package catalog

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/okf-tools/okf/compile"
)

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
