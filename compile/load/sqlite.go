package load

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	// The SQLite driver registers itself as "sqlite3".
	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// sqliteType returns the declared SQLite type of a column and, for an enum
// with known labels, the CHECK that stands in for the type.
func sqliteType(t *compile.Table, c *compile.Column, enum *enumType, p *Plan) (typ, check string) {
	switch lower := strings.ToLower(strings.TrimSpace(c.Type)); {
	case lower == "user-defined":
		if enum == nil || len(enum.labels) == 0 {
			p.note("%s.%s: USER-DEFINED with no known labels, created as TEXT", t.Name, c.Name)
			return "TEXT", ""
		}
		labels := make([]string, len(enum.labels))
		for i, l := range enum.labels {
			labels[i] = quoteLiteral(l)
		}
		return "TEXT", fmt.Sprintf("CHECK (%s IN (%s))", quoteIdent(c.Name), strings.Join(labels, ", "))
	case lower == "array":
		p.note("%s.%s: ARRAY created as TEXT", t.Name, c.Name)
		return "TEXT", ""
	case lower == "json" || lower == "jsonb":
		// SQLite stores JSON as text; "jsonb" would get numeric affinity.
		return "TEXT", ""
	case lower == "":
		return "", ""
	default:
		return c.Type, ""
	}
}

// SQLiteDDL plans the statements that create db in an empty SQLite
// database. Foreign keys are declared inside CREATE TABLE, as SQLite
// requires; enum labels become CHECK constraints.
func SQLiteDDL(db *compile.Database, opt Options) (*Plan, error) {
	if err := db.Check(); err != nil {
		return nil, err
	}
	p := &Plan{Types: map[string]string{}}
	byColumn, _ := enums(db, opt)
	kp := planKeys(db, opt, p)
	for _, t := range db.Tables {
		lines := p.tableLines(t, kp, func(c *compile.Column) (string, string) {
			return sqliteType(t, c, byColumn[strings.ToLower(t.Name+"."+c.Name)], p)
		})
		for _, f := range kp.fks {
			if f.table != t.Name {
				continue
			}
			ref := db.Table(f.fk.RefTable)
			lines = append(lines, fmt.Sprintf("  FOREIGN KEY (%s) REFERENCES %s (%s)",
				quoteIdents(spelled(t, f.fk.Columns)), quoteIdent(ref.Name), quoteIdents(spelled(ref, f.fk.RefColumns))))
		}
		p.Statements = append(p.Statements, "CREATE TABLE "+quoteIdent(t.Name)+" (\n"+strings.Join(lines, ",\n")+"\n)")
	}
	return p, nil
}

// uriEscaper escapes the characters that end or escape the path of an
// SQLite URI filename.
var uriEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
}}

// SQLite creates db in a new SQLite file at path, in one transaction. It
// refuses to touch a file that already exists, and removes the file again
// if the load fails.
func SQLite(ctx context.Context, path string, db *compile.Database, opt Options) (p *Plan, err error) {
	p, err = SQLiteDDL(db, opt)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s already exists; load creates a new SQLite file", path)
	}
	conn, err := sql.Open("sqlite3", "file:"+uriEscaper.Get().Replace(filepath.ToSlash(path)))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer func() {
		if cerr := conn.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if err := runInTx(ctx, conn, p, db, path); err != nil {
		return nil, err
	}
	return p, nil
}
