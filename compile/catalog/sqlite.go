package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	// The SQLite driver registers itself as "sqlite3".
	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// ReadSQLite reads the tables of the SQLite file at path, opened read-only.
// The database is named after the file, without its extension.
func ReadSQLite(ctx context.Context, path string) (*compile.Database, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such SQLite file", path)
		}
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	conn, err := sql.Open("sqlite3", "file:"+uriEscaper.Get().Replace(filepath.ToSlash(path))+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer conn.Close()
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	db := &compile.Database{Name: name, Engine: "sqlite"}
	tables, err := sqliteTables(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog of %s: %w", path, err)
	}
	for _, tn := range tables {
		t, err := sqliteTable(ctx, conn, tn)
		if err != nil {
			return nil, fmt.Errorf("reading the catalog of %s: table %s: %w", path, tn, err)
		}
		db.Tables = append(db.Tables, t)
	}
	if len(db.Tables) == 0 {
		return nil, fmt.Errorf("%s has no tables", path)
	}
	db.Sources = []compile.Source{{ID: "catalog", Resource: name + "/" + base, Title: name + " SQLite catalog"}}
	db.Live = &compile.Live{DSN: "sqlite://" + path, Resource: db.Sources[0].Resource}
	return db, nil
}

func sqliteTables(ctx context.Context, conn *sql.DB) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

func sqliteTable(ctx context.Context, conn *sql.DB, name string) (*compile.Table, error) {
	t := &compile.Table{Name: name}
	rows, err := conn.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, err
	}
	pk := map[int]string{}
	for rows.Next() {
		c := &compile.Column{}
		var key int
		if err := rows.Scan(&c.Name, &c.Type, &c.NotNull, &key); err != nil {
			rows.Close()
			return nil, err
		}
		if key > 0 {
			pk[key] = c.Name
		}
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 1; i <= len(pk); i++ {
		t.PrimaryKey = append(t.PrimaryKey, pk[i])
	}
	if err := sqliteForeignKeys(ctx, conn, t); err != nil {
		return nil, err
	}
	for _, c := range t.Columns {
		if !strings.Contains(strings.ToLower(c.Type), "json") {
			continue
		}
		seen := map[string]bool{}
		q := fmt.Sprintf(`SELECT %s FROM %s WHERE %s IS NOT NULL LIMIT %d`, sqliteQuote(c.Name), sqliteQuote(name), sqliteQuote(c.Name), SampleRows)
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("sampling %s: %w", c.Name, err)
		}
		for rows.Next() {
			var doc string
			if err := rows.Scan(&doc); err != nil {
				rows.Close()
				return nil, err
			}
			jsonPaths([]byte(doc), seen)
		}
		rows.Close()
		c.JSONFields = fields(seen)
	}
	return t, nil
}

// sqliteForeignKeys reads the foreign keys of t. A reference without
// target columns means the target's primary key.
func sqliteForeignKeys(ctx context.Context, conn *sql.DB, t *compile.Table) error {
	rows, err := conn.QueryContext(ctx, `SELECT id, seq, "table", "from", coalesce("to", '') FROM pragma_foreign_key_list(?) ORDER BY id, seq`, t.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	byID := map[int]*compile.ForeignKey{}
	var ids []int
	for rows.Next() {
		var id, seq int
		var ref, from, to string
		if err := rows.Scan(&id, &seq, &ref, &from, &to); err != nil {
			return err
		}
		fk := byID[id]
		if fk == nil {
			fk = &compile.ForeignKey{RefTable: ref}
			byID[id] = fk
			ids = append(ids, id)
		}
		fk.Columns = append(fk.Columns, from)
		fk.RefColumns = append(fk.RefColumns, to)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// pragma_foreign_key_list numbers keys from the last declared.
	sort.Sort(sort.Reverse(sort.IntSlice(ids)))
	for _, id := range ids {
		fk := byID[id]
		if fk.RefColumns[0] == "" {
			refPK, err := primaryKeyOf(ctx, conn, fk.RefTable)
			if err != nil {
				return err
			}
			if len(refPK) == len(fk.Columns) {
				fk.RefColumns = refPK
			}
		}
		t.ForeignKeys = append(t.ForeignKeys, *fk)
	}
	return nil
}

func primaryKeyOf(ctx context.Context, conn *sql.DB, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// uriEscaper escapes the characters that end or escape the path of an
// SQLite URI filename.
var uriEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
}}

func sqliteQuote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
