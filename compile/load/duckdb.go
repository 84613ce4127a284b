package load

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// duckdbTypes are the type names, as a catalog dump writes them, that
// DuckDB accepts as they are.
var duckdbTypes = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"bigint": true, "int8": true, "boolean": true, "bool": true, "blob": true, "bytea": true,
		"character varying": true, "varchar": true, "character": true, "char": true, "bpchar": true,
		"text": true, "date": true, "double precision": true, "double": true, "float": true,
		"float4": true, "float8": true, "real": true, "integer": true, "int": true, "int4": true,
		"int2": true, "smallint": true, "tinyint": true, "hugeint": true, "numeric": true,
		"decimal": true, "interval": true, "json": true, "time": true, "time without time zone": true,
		"time with time zone": true, "timetz": true, "timestamp": true,
		"timestamp without time zone": true, "timestamp with time zone": true, "timestamptz": true,
		"uuid": true, "bit": true, "bit varying": true, "varbit": true,
	}
}}

// duckdbRenamed are PostgreSQL types DuckDB knows under another name.
var duckdbRenamed = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"jsonb": "JSON", "serial": "INTEGER", "bigserial": "BIGINT", "smallserial": "SMALLINT",
		"money": "DECIMAL(18,2)",
	}
}}

// duckdbType returns the executable DuckDB type of a column.
func duckdbType(t *compile.Table, c *compile.Column, enum *enumType, p *Plan) string {
	typ := strings.TrimSpace(c.Type)
	lower := strings.ToLower(typ)
	switch {
	case lower == "user-defined":
		if enum != nil {
			return quoteIdent(enum.name)
		}
		p.note("%s.%s: USER-DEFINED with no known labels, created as VARCHAR", t.Name, c.Name)
		return "VARCHAR"
	case lower == "array":
		p.note("%s.%s: ARRAY with no element type, created as VARCHAR[]", t.Name, c.Name)
		return "VARCHAR[]"
	case lower == "":
		p.note("%s.%s: no type, created as VARCHAR", t.Name, c.Name)
		return "VARCHAR"
	}
	array := strings.HasSuffix(lower, "[]")
	base := strings.TrimSpace(strings.TrimSuffix(typeArgsRe.Get().ReplaceAllString(lower, ""), "[]"))
	if renamed, ok := duckdbRenamed.Get()[base]; ok {
		if array {
			renamed += "[]"
		}
		p.note("%s.%s: %s created as %s", t.Name, c.Name, typ, renamed)
		return renamed
	}
	if !duckdbTypes.Get()[base] {
		p.note("%s.%s: type %q is not a DuckDB type, created as VARCHAR", t.Name, c.Name, typ)
		if array {
			return "VARCHAR[]"
		}
		return "VARCHAR"
	}
	return typ
}

// DuckDBDDL plans the statements that create db in an empty DuckDB
// database: enum types (an alias of VARCHAR where the labels are unknown,
// so that casts to the type still bind), then the tables, each after the
// tables it references, since DuckDB declares foreign keys only inside
// CREATE TABLE. A foreign key within a cycle of tables is left out.
func DuckDBDDL(db *compile.Database, opt Options) (*Plan, error) {
	if err := db.Check(); err != nil {
		return nil, err
	}
	p := &Plan{Types: map[string]string{}}
	byColumn, order := enums(db, opt)
	p.addEnumTypes(order, "CREATE TYPE %s AS VARCHAR", "an alias of VARCHAR")
	kp := planKeys(db, opt, p)
	created := map[string]bool{}
	for _, t := range referencedFirst(db.Tables, kp.fks) {
		lines := p.tableLines(t, kp, func(c *compile.Column) (string, string) {
			return duckdbType(t, c, byColumn[strings.ToLower(t.Name+"."+c.Name)], p), ""
		})
		self := strings.ToLower(t.Name)
		for _, f := range kp.fks {
			if f.table != t.Name {
				continue
			}
			ref := db.Table(f.fk.RefTable)
			if key := strings.ToLower(ref.Name); key == self || !created[key] {
				p.note("foreign key %s(%s) → %s left out: DuckDB creates a foreign key only to a table created before it",
					t.Name, strings.Join(f.fk.Columns, ", "), ref.Name)
				continue
			}
			lines = append(lines, fmt.Sprintf("  FOREIGN KEY (%s) REFERENCES %s (%s)",
				quoteIdents(spelled(t, f.fk.Columns)), quoteIdent(ref.Name), quoteIdents(spelled(ref, f.fk.RefColumns))))
		}
		p.Statements = append(p.Statements, "CREATE TABLE "+quoteIdent(t.Name)+" (\n"+strings.Join(lines, ",\n")+"\n)")
		created[self] = true
	}
	return p, nil
}

// referencedFirst orders tables so that each comes after the tables its
// foreign keys reference, keeping the documented order where the keys
// allow; the tables of a cycle keep their documented order.
func referencedFirst(tables []*compile.Table, fks []fkPlan) []*compile.Table {
	refs := map[string][]string{}
	for _, f := range fks {
		from := strings.ToLower(f.table)
		refs[from] = append(refs[from], strings.ToLower(f.fk.RefTable))
	}
	out := make([]*compile.Table, 0, len(tables))
	state := map[string]int{} // 1 while visiting, 2 once placed
	byName := map[string]*compile.Table{}
	for _, t := range tables {
		byName[strings.ToLower(t.Name)] = t
	}
	var visit func(name string)
	visit = func(name string) {
		if state[name] != 0 {
			return
		}
		state[name] = 1
		for _, r := range refs[name] {
			if _, ok := byName[r]; ok {
				visit(r)
			}
		}
		state[name] = 2
		out = append(out, byName[name])
	}
	for _, t := range tables {
		visit(strings.ToLower(t.Name))
	}
	return slices.Clip(out)
}

// DuckDB creates db in a new DuckDB file at path, in one transaction. It
// refuses to touch a file that already exists, and removes the file (and
// its write-ahead log) again if the load fails. The DuckDB driver must be
// linked into the program (okf links it; a program that does not gets an
// error saying so).
func DuckDB(ctx context.Context, path string, db *compile.Database, opt Options) (p *Plan, err error) {
	p, err = DuckDBDDL(db, opt)
	if err != nil {
		return nil, err
	}
	for _, f := range []string{path, path + ".wal"} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s already exists; load creates a new DuckDB file", f)
		}
	}
	if strings.Contains(path, "?") {
		// The driver reads what follows a ? as settings.
		return nil, fmt.Errorf("%s: a DuckDB path cannot hold a ?", path)
	}
	if !slices.Contains(sql.Drivers(), "duckdb") {
		return nil, errors.New("DuckDB is not linked into this program")
	}
	conn, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer func() {
		if cerr := conn.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
			os.Remove(path + ".wal")
		}
	}()
	if err := runInTx(ctx, conn, p, db, path); err != nil {
		return nil, err
	}
	return p, nil
}
