package catalog

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/okf-tools/okf/compile"
)

// PostgresOptions tune ReadPostgres.
type PostgresOptions struct {
	// Schema is the schema to read; "" means public.
	Schema string
}

// ReadPostgres reads the tables of one schema of the PostgreSQL database
// at dsn. The database is named after the one connected to.
func ReadPostgres(ctx context.Context, dsn string, opt PostgresOptions) (*compile.Database, error) {
	schema := opt.Schema
	if schema == "" {
		schema = "public"
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	r := &pgReader{conn: conn, schema: schema}
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		return nil, fmt.Errorf("reading the database name: %w", err)
	}
	db := &compile.Database{Name: name, Engine: "postgres"}
	steps := []func(context.Context, *compile.Database) error{r.tables, r.columns, r.keys, r.enums, r.jsonFields}
	for _, step := range steps {
		if err := step(ctx, db); err != nil {
			return nil, fmt.Errorf("reading the catalog of %s: %w", name, err)
		}
	}
	if len(db.Tables) == 0 {
		return nil, fmt.Errorf("database %s has no tables in schema %s", name, schema)
	}
	db.Sources = []compile.Source{{ID: "catalog", Resource: redact(dsn), Title: name + " PostgreSQL catalog, schema " + schema}}
	db.Live = &compile.Live{DSN: dsn, Schema: schema, Resource: db.Sources[0].Resource}
	return db, nil
}

// redact drops the password and query of a connection URL so it can be
// written into a bundle.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "postgres catalog"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	u.RawQuery = ""
	return u.String()
}

type pgReader struct {
	conn   *pgx.Conn
	schema string
}

func (r *pgReader) tables(ctx context.Context, db *compile.Database) error {
	rows, err := r.conn.Query(ctx, `
SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname COLLATE "C"`, r.schema)
	if err != nil {
		return err
	}
	return forEach(rows, func() error {
		t := &compile.Table{}
		if err := rows.Scan(&t.Name, &t.Meaning); err != nil {
			return err
		}
		db.Tables = append(db.Tables, t)
		return nil
	})
}

func (r *pgReader) columns(ctx context.Context, db *compile.Database) error {
	rows, err := r.conn.Query(ctx, `
SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO', c.udt_name,
       coalesce(col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position::int), '')
FROM information_schema.columns c
WHERE c.table_schema = $1
ORDER BY c.table_name COLLATE "C", c.ordinal_position`, r.schema)
	if err != nil {
		return err
	}
	return forEach(rows, func() error {
		var table, udt string
		c := &compile.Column{}
		if err := rows.Scan(&table, &c.Name, &c.Type, &c.NotNull, &udt, &c.Meaning); err != nil {
			return err
		}
		if c.Type == "USER-DEFINED" {
			c.EnumType = udt
		}
		if t := db.Table(table); t != nil {
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
}

func (r *pgReader) keys(ctx context.Context, db *compile.Database) error {
	rows, err := r.conn.Query(ctx, `
SELECT t.relname, con.contype::text,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
       coalesce(rt.relname::text, ''),
       array(SELECT a.attname::text FROM unnest(coalesce(con.confkey, '{}')) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con
JOIN pg_class t ON t.oid = con.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
LEFT JOIN pg_class rt ON rt.oid = con.confrelid
WHERE n.nspname = $1 AND con.contype IN ('p', 'f')
ORDER BY t.relname COLLATE "C", con.contype, con.oid`, r.schema)
	if err != nil {
		return err
	}
	return forEach(rows, func() error {
		var table, kind, refTable string
		var cols, refCols []string
		if err := rows.Scan(&table, &kind, &cols, &refTable, &refCols); err != nil {
			return err
		}
		t := db.Table(table)
		if t == nil {
			return nil
		}
		if kind == "p" {
			t.PrimaryKey = cols
		} else {
			t.ForeignKeys = append(t.ForeignKeys, compile.ForeignKey{Columns: cols, RefTable: refTable, RefColumns: refCols})
		}
		return nil
	})
}

func (r *pgReader) enums(ctx context.Context, db *compile.Database) error {
	rows, err := r.conn.Query(ctx, `
SELECT t.typname::text, e.enumlabel::text
FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
ORDER BY t.typname, e.enumsortorder`)
	if err != nil {
		return err
	}
	labels := map[string][]string{}
	if err := forEach(rows, func() error {
		var typ, label string
		if err := rows.Scan(&typ, &label); err != nil {
			return err
		}
		labels[typ] = append(labels[typ], label)
		return nil
	}); err != nil {
		return err
	}
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if c.EnumType != "" {
				c.Enum = labels[c.EnumType]
			}
		}
	}
	return nil
}

// jsonFields samples each JSON column for its key paths, reading the first
// SampleRows non-null values in primary key order.
func (r *pgReader) jsonFields(ctx context.Context, db *compile.Database) error {
	for _, t := range db.Tables {
		for _, c := range t.Columns {
			if !isJSON(c.Type) {
				continue
			}
			order := ""
			if len(t.PrimaryKey) > 0 {
				order = " ORDER BY " + strings.Join(quoteAll(t.PrimaryKey), ", ")
			}
			q := fmt.Sprintf("SELECT %s::text FROM %s.%s WHERE %s IS NOT NULL%s LIMIT %d",
				quote(c.Name), quote(r.schema), quote(t.Name), quote(c.Name), order, SampleRows)
			rows, err := r.conn.Query(ctx, q)
			if err != nil {
				return fmt.Errorf("sampling %s.%s: %w", t.Name, c.Name, err)
			}
			seen := map[string]bool{}
			if err := forEach(rows, func() error {
				var doc string
				if err := rows.Scan(&doc); err != nil {
					return err
				}
				jsonPaths([]byte(doc), seen)
				return nil
			}); err != nil {
				return fmt.Errorf("sampling %s.%s: %w", t.Name, c.Name, err)
			}
			c.JSONFields = fields(seen)
		}
	}
	return nil
}

func forEach(rows pgx.Rows, f func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(); err != nil {
			return err
		}
	}
	return rows.Err()
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quote(n)
	}
	return out
}
