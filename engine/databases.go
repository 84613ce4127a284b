package engine

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/sqlguard"
)

// Database is one database a tenant may query through the guard.
type Database struct {
	Name   string
	Tenant string
	DSN    string // never shown to a client
	Bundle string // the bundle documenting it, "" if none
	Guard  sqlguard.Options
}

// Engine names the database's engine: "sqlite", "duckdb" or "postgres".
func (d Database) Engine() string {
	if p, _ := dsn.Parse(d.DSN); p.Engine == dsn.SQLite || p.Engine == dsn.DuckDB {
		return string(p.Engine)
	}
	return "postgres"
}

// Databases opens the guarded databases on first use and keeps them open.
// A tenant sees only its own: asking for another tenant's database reads
// exactly as asking for one that does not exist. It is safe for concurrent
// use.
type Databases struct {
	list  []Database
	audit *sqlguard.AuditLog
	log   io.Writer // where a database's failure to open is written in full

	mu   sync.Mutex
	open map[string]*sqlguard.DB
}

// NewDatabases serves the given databases, writing every statement to
// audit (nil for none) and failures to open a database to log.
func NewDatabases(list []Database, audit *sqlguard.AuditLog, log io.Writer) *Databases {
	list = append([]Database(nil), list...)
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return &Databases{list: list, audit: audit, log: log, open: map[string]*sqlguard.DB{}}
}

// For returns the databases of a tenant, sorted by name.
func (d *Databases) For(tenant string) []Database {
	if d == nil {
		return nil
	}
	var out []Database
	for _, db := range d.list {
		if db.Tenant == tenant {
			out = append(out, db)
		}
	}
	return out
}

// Visible returns the databases of a tenant the caller of ctx may use
// (WithCaller), sorted by name.
func (d *Databases) Visible(ctx context.Context, tenant string) []Database {
	p := callerFrom(ctx).Policy
	var out []Database
	for _, db := range d.For(tenant) {
		if p.Allows(db.Name) {
			out = append(out, db)
		}
	}
	return out
}

// Query runs one statement of a tenant's through the guard, with its
// parameters' values, and returns the result with the number of rows to
// show a model. Refusals and SQL errors
// are *sqlguard.Error.
func (d *Databases) Query(ctx context.Context, tenant, caller, name, sql string, args ...any) (*sqlguard.Result, int, error) {
	db, err := d.DB(ctx, tenant, name)
	if err != nil {
		return nil, 0, err
	}
	res, err := db.Query(guardContext(ctx), caller, sql, args...)
	return res, db.Options().ShownRows, err
}

// DB returns a tenant's guarded database, as the caller of ctx may use
// it, opening it now if it is not open yet, so that a command fails before
// it starts work on a database it cannot reach; a database the tenant
// lacks, or the caller may not use, is a bad request naming those it may.
// A nil Databases has none. Whoever queries it passes the caller's values
// on with guardContext.
func (d *Databases) DB(ctx context.Context, tenant, name string) (*sqlguard.DB, error) {
	var names []string
	for _, db := range d.Visible(ctx, tenant) {
		if db.Name == name {
			return d.handle(ctx, db, callerFrom(ctx).Policy)
		}
		names = append(names, db.Name)
	}
	if len(names) == 0 {
		return nil, BadRequest("no database %q: this tenant has no databases", name)
	}
	return nil, BadRequest("no database %q: this tenant's databases are %s", name, strings.Join(names, ", "))
}

// handle returns the open guarded database, opening it on first use. The
// cause of a failure goes to the log, not to the client, since it may name
// hosts and users.
//
// A policy's callers get a handle of their own, with the policy's options:
// the guard's validator is built from them.
func (d *Databases) handle(ctx context.Context, target Database, p *Policy) (*sqlguard.DB, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := target.Name + "\x00" + p.name()
	if db := d.open[key]; db != nil {
		return db, nil
	}
	db, err := sqlguard.Open(ctx, target.Name, target.DSN, p.Options(target.Guard), d.audit)
	if err != nil {
		fmt.Fprintf(d.log, "okf: %v\n", err)
		return nil, fmt.Errorf("database %s is unavailable (the log says why)", target.Name)
	}
	d.open[key] = db
	return db, nil
}

// guardContext passes the caller's values of ctx on to the guard, whose
// row filters read them.
func guardContext(ctx context.Context) context.Context {
	if v := callerFrom(ctx).Values; v != nil {
		return sqlguard.WithCaller(ctx, v)
	}
	return ctx
}

// Close closes every database opened.
func (d *Databases) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	for name, db := range d.open {
		if err := db.Close(); err != nil && first == nil {
			first = fmt.Errorf("closing database %s: %w", name, err)
		}
		delete(d.open, name)
	}
	return first
}

// databasesText lists a tenant's databases for a model: name, engine,
// documenting bundle and allowed tables.
func databasesText(dbs []Database) string {
	if len(dbs) == 0 {
		return "No databases are configured for this tenant."
	}
	var b strings.Builder
	b.WriteString("name\tengine\tbundle\ttables\n")
	for _, db := range dbs {
		tables := "all"
		if len(db.Guard.Tables) > 0 {
			tables = strings.Join(db.Guard.Tables, " ")
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", db.Name, db.Engine(), dash(db.Bundle), tables)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
