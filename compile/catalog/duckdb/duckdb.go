// Package duckdb reads the compile model from a DuckDB file's catalog:
// tables and views, columns with their types and nullability, primary and
// foreign keys, COMMENT ON comments as meanings, enum labels, and for JSON
// columns the key paths found in a bounded sample of rows. Importing it
// registers the reader with package catalog for duckdb: DSNs (okf compile
// --from duckdb:PATH); it lives apart so that only the programs that
// import it link DuckDB.
//
// Types are spelled as duckdb_columns() spells them (VARCHAR,
// DECIMAL(10,2), INTEGER[]); an enum column's type is its enum type's
// name when the file defines one with the same labels.
package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	// The duckdb-go driver registers itself as "duckdb".
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/compile/catalog"
	"github.com/okf-tools/okf/internal/dsn"
	_ "github.com/okf-tools/okf/internal/duckdblink" // no exported symbols
)

func init() { catalog.RegisterFileReader(dsn.DuckDB, Read) }

// readOnly are the options the file is opened with: nothing is written,
// and nothing outside the file is read or loaded.
const readOnly = "?access_mode=READ_ONLY&enable_external_access=false&autoinstall_known_extensions=false&autoload_known_extensions=false"

// Read reads the tables and views of schema ("" for main) of the DuckDB
// file at path, opened read-only. The database is named after the file,
// without its extension.
func Read(ctx context.Context, path, schema string) (*compile.Database, error) {
	if schema == "" {
		schema = "main"
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such DuckDB file", path)
		}
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if strings.ContainsAny(path, "?#") {
		// The driver reads options after a '?'.
		return nil, fmt.Errorf("%s: a DuckDB path cannot hold '?' or '#'", path)
	}
	conn, err := sql.Open("duckdb", path+readOnly)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer conn.Close()
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	db := &compile.Database{Name: name, Engine: "duckdb"}
	r := &reader{conn: conn, schema: schema}
	for _, step := range []func(context.Context, *compile.Database) error{r.tables, r.columns, r.keys, r.enums, r.jsonFields} {
		if err := step(ctx, db); err != nil {
			return nil, fmt.Errorf("reading the catalog of %s: %w", path, err)
		}
	}
	if len(db.Tables) == 0 {
		return nil, fmt.Errorf("%s has no tables in schema %s", path, schema)
	}
	db.Sources = []compile.Source{{ID: "catalog", Resource: name + "/" + base, Title: name + " DuckDB catalog, schema " + schema}}
	db.Live = &compile.Live{DSN: "duckdb:" + path, Schema: schema, Resource: db.Sources[0].Resource}
	return db, nil
}

type reader struct {
	conn   *sql.DB
	schema string
	// enumTypes maps an enum's labels, joined, to its type's name.
	enumTypes map[string]string
}

// tables reads the tables, then the views, each by name.
func (r *reader) tables(ctx context.Context, db *compile.Database) error {
	for _, q := range []struct {
		sql  string
		view bool
	}{
		{`SELECT table_name, coalesce(comment, '') FROM duckdb_tables()
			WHERE database_name = current_database() AND schema_name = ? AND NOT temporary ORDER BY table_name`, false},
		{`SELECT view_name, coalesce(comment, '') FROM duckdb_views()
			WHERE database_name = current_database() AND schema_name = ? AND NOT internal AND NOT temporary ORDER BY view_name`, true},
	} {
		err := r.each(ctx, q.sql, func(rows *sql.Rows) error {
			t := &compile.Table{View: q.view}
			if err := rows.Scan(&t.Name, &t.Meaning); err != nil {
				return err
			}
			db.Tables = append(db.Tables, t)
			return nil
		}, r.schema)
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) columns(ctx context.Context, db *compile.Database) error {
	return r.each(ctx, `SELECT table_name, column_name, data_type, NOT is_nullable, coalesce(comment, '')
		FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ?
		ORDER BY table_name, column_index`, func(rows *sql.Rows) error {
		var table string
		c := &compile.Column{}
		if err := rows.Scan(&table, &c.Name, &c.Type, &c.NotNull, &c.Meaning); err != nil {
			return err
		}
		if t := db.Table(table); t != nil {
			t.Columns = append(t.Columns, c)
		}
		return nil
	}, r.schema)
}

// keys reads primary and foreign keys, in the order they were declared.
func (r *reader) keys(ctx context.Context, db *compile.Database) error {
	return r.each(ctx, `SELECT table_name, constraint_type, constraint_column_names, coalesce(referenced_table, ''), referenced_column_names
		FROM duckdb_constraints() WHERE database_name = current_database() AND schema_name = ?
			AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')
		ORDER BY table_name, constraint_index`, func(rows *sql.Rows) error {
		var table, kind, refTable string
		var cols, refCols any
		if err := rows.Scan(&table, &kind, &cols, &refTable, &refCols); err != nil {
			return err
		}
		t := db.Table(table)
		if t == nil {
			return nil
		}
		if kind == "PRIMARY KEY" {
			t.PrimaryKey = texts(cols)
		} else {
			t.ForeignKeys = append(t.ForeignKeys, compile.ForeignKey{Columns: texts(cols), RefTable: refTable, RefColumns: texts(refCols)})
		}
		return nil
	}, r.schema)
}

// texts reads a list of text as the driver scans it.
func texts(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// enums gives each enum column its labels, read from the type DuckDB
// spells for it (ENUM('a', 'b')), and its type's name when the file
// defines an enum type of those labels.
func (r *reader) enums(ctx context.Context, db *compile.Database) error {
	r.enumTypes = map[string]string{}
	err := r.each(ctx, `SELECT type_name, labels FROM duckdb_types()
		WHERE database_name = current_database() AND logical_type = 'ENUM' AND NOT internal ORDER BY schema_name, type_name`, func(rows *sql.Rows) error {
		var name string
		var labels any
		if err := rows.Scan(&name, &labels); err != nil {
			return err
		}
		if key := strings.Join(texts(labels), "\x00"); r.enumTypes[key] == "" {
			r.enumTypes[key] = name
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			labels, ok := enumLabels(c.Type)
			if !ok {
				continue
			}
			c.Enum = labels
			if name := r.enumTypes[strings.Join(labels, "\x00")]; name != "" {
				c.Type, c.EnumType = name, name
			}
		}
	}
	return nil
}

// enumLabels reads the labels of a type spelled ENUM('a', 'b'), a quote
// in a label doubled.
func enumLabels(typ string) ([]string, bool) {
	rest, ok := strings.CutPrefix(typ, "ENUM(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return nil, false
	}
	rest = strings.TrimSuffix(rest, ")")
	var labels []string
	for rest != "" {
		rest = strings.TrimLeft(rest, ", ")
		if !strings.HasPrefix(rest, "'") {
			return nil, false
		}
		var b strings.Builder
		i := 1
		for ; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			b.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return nil, false
		}
		labels = append(labels, b.String())
		rest = rest[i+1:]
	}
	return labels, len(labels) > 0
}

// jsonFields samples each JSON column of a table for its key paths,
// reading the first catalog.SampleRows non-null values in primary key
// order.
func (r *reader) jsonFields(ctx context.Context, db *compile.Database) error {
	for _, t := range db.Tables {
		if t.View {
			continue // its query may cost anything
		}
		for _, c := range t.Columns {
			if !strings.EqualFold(c.Type, "json") {
				continue
			}
			order := ""
			if len(t.PrimaryKey) > 0 {
				keys := make([]string, len(t.PrimaryKey))
				for i, k := range t.PrimaryKey {
					keys[i] = quote(k)
				}
				order = " ORDER BY " + strings.Join(keys, ", ")
			}
			q := fmt.Sprintf("SELECT CAST(%s AS VARCHAR) FROM %s.%s WHERE %s IS NOT NULL%s LIMIT %d",
				quote(c.Name), quote(r.schema), quote(t.Name), quote(c.Name), order, catalog.SampleRows)
			var docs [][]byte
			if err := r.each(ctx, q, func(rows *sql.Rows) error {
				var doc string
				if err := rows.Scan(&doc); err != nil {
					return err
				}
				docs = append(docs, []byte(doc))
				return nil
			}); err != nil {
				return fmt.Errorf("sampling %s.%s: %w", t.Name, c.Name, err)
			}
			c.JSONFields = catalog.JSONFields(docs)
		}
	}
	return nil
}

func (r *reader) each(ctx context.Context, q string, f func(*sql.Rows) error, args ...any) error {
	rows, err := r.conn.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
