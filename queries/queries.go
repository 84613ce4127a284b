// Package queries works on query concepts (type: SQL Query, see
// docs/queries.md) beyond their format. It checks their SQL the way it
// will run: its placeholders bound as the driver's parameters and the
// statement passed through the SQL guard's validator for the bundle's
// dialect (okf validate runs it beside the format's own checks; it lives
// apart from the format because the guard brings the PostgreSQL parser
// with it). And it makes draft query concepts of the SQL an agent's run
// submitted, for a person to review (okf runs promote).
package queries

import (
	"fmt"
	"strings"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/sqlguard"
)

// Dialect is the SQL dialect of a bundle: SQLite or DuckDB when its tables
// say so, else PostgreSQL.
func Dialect(b *okf.Bundle) sqlguard.Dialect {
	for _, d := range b.Docs {
		switch t := strings.ToLower(d.Type()); {
		case strings.HasPrefix(t, "sqlite"):
			return sqlguard.DialectSQLite
		case strings.HasPrefix(t, "duckdb"):
			return sqlguard.DialectDuckDB
		}
	}
	return sqlguard.DialectPostgres
}

// Bind rewrites a query's :name placeholders as the dialect's driver
// parameters ($1, $2, ... or ?), returning the names in parameter order.
func Bind(sql string, d sqlguard.Dialect) (string, []string) {
	return okf.RewritePlaceholders(sql, func(_ string, n int) string {
		if d == sqlguard.DialectSQLite {
			return "?"
		}
		return fmt.Sprintf("$%d", n)
	})
}

// CheckSQL reports the query concepts whose SQL does not parse for the
// bundle's dialect or that the guard refuses (writes, two statements,
// functions off the allowlist), as query-sql-invalid.
func CheckSQL(b *okf.Bundle) []okf.Finding {
	dialect := Dialect(b)
	v, err := sqlguard.NewValidator(dialect, sqlguard.Options{}, nil)
	if err != nil {
		return nil
	}
	var out []okf.Finding
	for _, d := range b.Docs {
		if !okf.IsQuery(d) {
			continue
		}
		q, _ := okf.ParseQuery(d)
		if strings.TrimSpace(q.SQL) == "" {
			continue
		}
		sql, _ := Bind(q.SQL, dialect)
		if err := v.Validate(sql); err != nil {
			msg := err.Error()
			if ge, ok := sqlguard.AsError(err); ok {
				msg = ge.Error()
			}
			out = append(out, okf.NewFinding("query-sql-invalid", d.Path, q.SQLLine, "the SQL guard refuses this query: %s", strings.Join(strings.Fields(msg), " ")))
		}
	}
	return out
}
