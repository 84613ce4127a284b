// Package dsn reads okf's data source names: whether one names a
// PostgreSQL database, a SQLite file or a DuckDB file, and which file; and
// it keeps a
// DSN's password out of messages. Every place that takes a DSN (okf.yaml's
// dsn, a <database> argument, --db, load --into, compile --from, the store)
// reads it by these rules, in this order:
//
//   - "postgres://…" or "postgresql://…" is PostgreSQL, the URL as written;
//   - "sqlite:PATH" is the SQLite file PATH, and so is "sqlite://PATH" (so
//     "sqlite:///abs/x.db" is /abs/x.db); a relative PATH is relative to
//     the working folder, and an empty one is an error;
//   - "duckdb:PATH" and "duckdb://PATH" are the DuckDB file PATH, by the
//     same rules;
//   - any other "scheme://…" is an error;
//   - a string with "=" in it is a PostgreSQL keyword/value string
//     ("host=db dbname=solar user=okf");
//   - a path ending in .sqlite, .sqlite3 or .db (in any case) is that SQLite
//     file, and one ending in .duckdb that DuckDB file;
//   - anything else is no DSN, which each caller reads its own way: the
//     store takes it as its SQLite file, a <database> argument as a name.
package dsn

import (
	"fmt"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// Engine is the kind of database a DSN names.
type Engine string

// The engines a DSN names; None is a string that is no DSN.
const (
	None     Engine = ""
	Postgres Engine = "postgres"
	SQLite   Engine = "sqlite"
	DuckDB   Engine = "duckdb"
)

// Name is the engine as its makers spell it, for messages and prompts.
func (e Engine) Name() string {
	switch e {
	case Postgres:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	case DuckDB:
		return "DuckDB"
	}
	return "no database"
}

// A DSN is a data source name read by the rules of the package.
type DSN struct {
	Engine Engine
	// Path is the database file, for SQLite and DuckDB.
	Path string
}

// Parse reads s by the rules of the package. A string that is no DSN has
// Engine None and no error; an unknown scheme, or "sqlite:" or "duckdb:"
// without a path, is an error, with any password hidden.
func Parse(s string) (DSN, error) {
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return DSN{Engine: Postgres}, nil
	case strings.HasPrefix(lower, "sqlite:"):
		p := strings.TrimPrefix(s[len("sqlite:"):], "//")
		if p == "" {
			return DSN{}, fmt.Errorf("%q: no file path after sqlite:", s)
		}
		return DSN{Engine: SQLite, Path: p}, nil
	case strings.HasPrefix(lower, "duckdb:"):
		p := strings.TrimPrefix(s[len("duckdb:"):], "//")
		if p == "" {
			return DSN{}, fmt.Errorf("%q: no file path after duckdb:", s)
		}
		return DSN{Engine: DuckDB, Path: p}, nil
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return DSN{}, fmt.Errorf("%s: unknown scheme %q (want postgres://, postgresql://, sqlite: or duckdb:)", Redact(s, s), scheme)
	case strings.Contains(s, "="):
		return DSN{Engine: Postgres}, nil
	}
	for _, ext := range []string{".sqlite", ".sqlite3", ".db"} {
		if strings.HasSuffix(lower, ext) {
			return DSN{Engine: SQLite, Path: s}, nil
		}
	}
	if strings.HasSuffix(lower, ".duckdb") {
		return DSN{Engine: DuckDB, Path: s}, nil
	}
	return DSN{}, nil
}

// keywordPassword finds a password in a keyword/value string, quoted
// ('…', with \' and \\ escapes) or not.
var keywordPassword = lazy.Regexp{Expr: `(^|\s)password\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S+)`}

// Redact returns text with the password of dsn written xxxxx: text is dsn
// itself, or a message that may quote it. The password of a URL is hidden
// where it follows its user name, so a short one does not garble the rest
// of the text; any password= of a keyword/value string is hidden.
func Redact(text, dsn string) string {
	i := strings.Index(dsn, "://")
	if i < 0 {
		return keywordPassword.Get().ReplaceAllString(text, "${1}password=xxxxx")
	}
	if at := strings.LastIndex(dsn, "@"); at > i {
		if user, password, ok := strings.Cut(dsn[i+3:at], ":"); ok && password != "" {
			return strings.ReplaceAll(text, user+":"+password, user+":xxxxx")
		}
	}
	return text
}
