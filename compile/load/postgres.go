package load

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/compile"
	"github.com/okf-tools/okf/internal/lazy"
)

// pgTypes are the type names PostgreSQL accepts as written by a catalog
// dump (information_schema data_type), without length or precision.
var pgTypes = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"bigint": true, "bigserial": true, "bit varying": true, "boolean": true, "bool": true,
		"box": true, "bytea": true, "character varying": true, "varchar": true, "character": true,
		"char": true, "bpchar": true, "cidr": true, "circle": true, "date": true, "double precision": true,
		"float4": true, "float8": true, "inet": true, "int": true, "int2": true, "int4": true, "int8": true,
		"integer": true, "interval": true, "json": true, "jsonb": true, "line": true, "lseg": true,
		"macaddr": true, "macaddr8": true, "money": true, "numeric": true, "decimal": true, "path": true,
		"point": true, "polygon": true, "real": true, "smallint": true, "smallserial": true, "serial": true,
		"text": true, "time": true, "time without time zone": true, "time with time zone": true,
		"timetz": true, "timestamp": true, "timestamp without time zone": true,
		"timestamp with time zone": true, "timestamptz": true, "tsquery": true, "tsvector": true,
		"uuid": true, "xml": true, "varbit": true,
	}
}}

var typeArgsRe = lazy.Regexp{Expr: `\s*\([^)]*\)`}

// pgType returns the executable PostgreSQL type of a column.
func pgType(t *compile.Table, c *compile.Column, enum *enumType, p *Plan) string {
	typ := strings.TrimSpace(c.Type)
	lower := strings.ToLower(typ)
	switch {
	case lower == "user-defined":
		if enum != nil {
			return quoteIdent(enum.name)
		}
		p.note("%s.%s: USER-DEFINED with no known labels, created as text", t.Name, c.Name)
		return "text"
	case lower == "array":
		p.note("%s.%s: ARRAY with no element type, created as text[]", t.Name, c.Name)
		return "text[]"
	case lower == "character" || lower == "char":
		// A catalog prints char(n) as "character", which alone means
		// char(1); bpchar keeps the type without the length limit.
		return "bpchar"
	case lower == "bit":
		return "varbit"
	}
	base := strings.TrimSpace(strings.TrimSuffix(typeArgsRe.Get().ReplaceAllString(lower, ""), "[]"))
	if !pgTypes.Get()[base] {
		p.note("%s.%s: type %q is not a PostgreSQL built-in type, created as text", t.Name, c.Name, typ)
		return "text"
	}
	return typ
}

// PostgresDDL plans the statements that create db in an empty PostgreSQL
// database: enum types, tables with their primary keys, unique constraints
// the foreign keys need, then the foreign keys.
func PostgresDDL(db *compile.Database, opt Options) (*Plan, error) {
	if err := db.Check(); err != nil {
		return nil, err
	}
	p := &Plan{Types: map[string]string{}}
	byColumn, order := enums(db, opt)
	p.addEnumTypes(order, "CREATE DOMAIN %s AS text", "a domain over text")
	kp := planKeys(db, opt, p)
	for _, t := range db.Tables {
		lines := p.tableLines(t, kp, func(c *compile.Column) (string, string) {
			return pgType(t, c, byColumn[strings.ToLower(t.Name+"."+c.Name)], p), ""
		})
		p.Statements = append(p.Statements, "CREATE TABLE "+quoteIdent(t.Name)+" (\n"+strings.Join(lines, ",\n")+"\n)")
	}
	for _, f := range kp.fks {
		t, ref := db.Table(f.table), db.Table(f.fk.RefTable)
		p.Statements = append(p.Statements, fmt.Sprintf("ALTER TABLE %s ADD FOREIGN KEY (%s) REFERENCES %s (%s)",
			quoteIdent(t.Name), quoteIdents(spelled(t, f.fk.Columns)), quoteIdent(ref.Name), quoteIdents(spelled(ref, f.fk.RefColumns))))
	}
	return p, nil
}

// Postgres creates db in the PostgreSQL database at dsn, in one
// transaction: either every statement of the plan runs or none does.
func Postgres(ctx context.Context, dsn string, db *compile.Database, opt Options) (*Plan, error) {
	p, err := PostgresDDL(db, opt)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the load of %s: %w", db.Name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, s := range p.Statements {
		if _, err := tx.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("loading %s: %w\n%s", db.Name, err, s)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("committing the load of %s: %w", db.Name, err)
	}
	return p, nil
}

// quoteIdent quotes an identifier unless it is a plain lower-case name, so
// the DDL reads like what a person would write.
func quoteIdent(s string) string {
	if plainIdentRe.Get().MatchString(s) && !reserved.Get()[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func quoteIdents(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return strings.Join(out, ", ")
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

var plainIdentRe = lazy.Regexp{Expr: `^[a-z_][a-z0-9_]*$`}

// reserved are the SQL key words that cannot be bare identifiers in
// PostgreSQL or SQLite and plausibly name a table or column.
var reserved = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"all": true, "and": true, "any": true, "array": true, "as": true, "asc": true, "both": true,
		"case": true, "cast": true, "check": true, "collate": true, "column": true, "constraint": true,
		"create": true, "current_date": true, "current_time": true, "current_timestamp": true,
		"current_user": true, "default": true, "desc": true, "distinct": true, "do": true, "else": true,
		"end": true, "except": true, "false": true, "for": true, "foreign": true, "from": true,
		"group": true, "having": true, "in": true, "index": true, "into": true, "is": true, "join": true,
		"key": true, "limit": true, "not": true, "null": true, "offset": true, "on": true, "only": true,
		"or": true, "order": true, "primary": true, "references": true, "select": true, "table": true,
		"then": true, "to": true, "true": true, "union": true, "unique": true, "user": true,
		"using": true, "when": true, "where": true, "window": true, "with": true,
	}
}}
