package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/internal/lazy"
)

// Layer names one of the independent defences a query passes through.
type Layer string

// The layers. Engine errors that are not a defence (a misspelt column, a
// division by zero) are reported with LayerDatabase.
const (
	LayerValidator    Layer = "validator"
	LayerReadOnlyTx   Layer = "read-only transaction"
	LayerPrivileges   Layer = "role privileges"
	LayerOneStatement Layer = "one statement per call"
	LayerRollback     Layer = "rollback"
	LayerSessionReset Layer = "session reset"
	LayerTimeout      Layer = "statement timeout"
	LayerDeadline     Layer = "deadline"
	LayerRowCap       Layer = "row cap"
	LayerReadOnlyFile Layer = "read-only file"
	LayerQueryOnly    Layer = "query_only"
	LayerLimits       Layer = "limits"
	LayerReadOnlyStmt Layer = "read-only statement"
	LayerAuthorizer   Layer = "authorizer"
	LayerProgram      Layer = "program check"
	LayerInterrupt    Layer = "interrupt"
	LayerDatabase     Layer = "database"
	// DuckDB's own: enable_external_access=false, no extension installed
	// or loaded on demand, lock_configuration=true, and the plan check.
	LayerExternalAccess Layer = "no external access"
	LayerExtensions     Layer = "no extensions"
	LayerLockedConfig   Layer = "locked configuration"
	LayerPlan           Layer = "plan check"
)

// Error is a query that was refused by a layer or failed in the database.
// Its text is written for a model to repair the query.
type Error struct {
	Layer    Layer  // the layer that stopped the query
	Refused  bool   // a defence refused it (as opposed to an ordinary SQL error)
	Code     string // validator rule, SQLSTATE or SQLite error code
	Message  string
	Detail   string
	Hint     string
	Position int // 1-based character position in the SQL, 0 when unknown
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Refused {
		fmt.Fprintf(&b, "refused by the %s: ", e.Layer)
	}
	b.WriteString(e.Message)
	if e.Position > 0 {
		fmt.Fprintf(&b, " (at character %d)", e.Position)
	}
	return b.String()
}

// Text renders the error for a model: the message, the line of SQL with a
// caret under the position, the detail and the hint.
func (e *Error) Text(sql string) string {
	var b strings.Builder
	b.WriteString("Error: ")
	b.WriteString(e.Error())
	if line, col, ok := caretLine(sql, e.Position); ok {
		fmt.Fprintf(&b, "\n  %s\n  %s^", line, strings.Repeat(" ", col))
	}
	if e.Detail != "" {
		b.WriteString("\nDetail: " + e.Detail)
	}
	if e.Hint != "" {
		b.WriteString("\nHint: " + e.Hint)
	}
	return b.String()
}

// caretLine finds the line holding the 1-based character position pos and
// the column of pos within it, cutting very long lines around it.
func caretLine(sql string, pos int) (string, int, bool) {
	if pos <= 0 || !utf8.ValidString(sql) {
		return "", 0, false
	}
	runes := []rune(sql)
	if pos > len(runes)+1 {
		return "", 0, false
	}
	i := pos - 1
	start, end := i, i
	for start > 0 && runes[start-1] != '\n' {
		start--
	}
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	const window = 60
	prefix, suffix := "", ""
	if i-start > window {
		start, prefix = i-window, "…"
	}
	if end-i > window {
		end, suffix = i+window, "…"
	}
	line := strings.ReplaceAll(string(runes[start:end]), "\t", " ")
	return prefix + line + suffix, utf8.RuneCountInString(prefix) + i - start, true
}

// Limits bound one query's execution.
type Limits struct {
	Timeout    time.Duration // statement timeout and deadline
	MaxRows    int           // rows kept in the result
	CountLimit int           // rows counted towards the total before the query is stopped
}

// poolWait bounds the wait for a free connection: long enough to queue
// behind queries that run to their timeout.
func poolWait(timeout time.Duration) time.Duration { return timeout + 5*time.Second }

// Engine runs SQL that has passed the validator on one database, with the
// engine's own layers, and always leaves the database as it found it.
type Engine interface {
	// Run executes one query with its parameters' values (see Args).
	// Errors are *Error.
	Run(ctx context.Context, sql string, args []any, lim Limits) (*Result, error)
	// Catalog lists the tables and columns queries may name.
	Catalog() *Catalog
	// Close releases every connection.
	Close() error
}

// Options configure a guarded database.
type Options struct {
	Tables        []string // table allowlist ("table" or "schema.table"); empty allows every table of Schemas
	DeniedColumns []string // "table.column" or "column" never to be read
	// MaskedColumns ("table.column" or "column") may be filtered, joined,
	// grouped on and counted, but every result cell derived from one
	// shows Mask instead of its value (masking.go).
	MaskedColumns []string
	// RowFilters are, by table, the condition each row a query reads
	// must meet, with the caller's values (WithCaller) as :caller.NAME
	// (rowfilter.go).
	RowFilters map[string]string
	// Policy names the okf.yaml policy these options hold callers to, ""
	// for the database's own guard. On PostgreSQL the guard signs it into
	// each transaction, and the row-level security okf prepare installs
	// applies that policy's filters (rowsecurity.go).
	Policy         string
	AllowFunctions []string      // functions beyond the built-in allowlist ("f" or "schema.f")
	Schemas        []string      // schemas the query may name; default public (PostgreSQL) or main (SQLite, DuckDB)
	Timeout        time.Duration // default 10s
	MaxRows        int           // rows kept; default 1000
	ShownRows      int           // rows in the text for a model; default 20
	CountLimit     int           // rows counted for the total; default 10000
	MaxSQLBytes    int           // longest SQL accepted; default 64 KiB
	MaxConns       int           // connections per database; default 4
	// ConnectionLimit is the PostgreSQL connection limit okf prepare sets
	// on the agent's role; default DefaultConnectionLimit.
	ConnectionLimit int
	// AllowedDirectories are absolute folders whose files DuckDB views
	// (over CSV, Parquet or JSON files) may read; none by default. The
	// query itself still names no file: only views in the database do.
	AllowedDirectories []string
}

// Memory bounds. A query holds at most one row as read from the database
// (MaxValueBytes: a larger PostgreSQL row, or a larger SQLite value, fails
// the query) and the rows its result keeps (MaxResultBytes, each value cut
// to MaxCellBytes; later rows are still counted). The text handed to a
// model is at most MaxTextBytes. A SQLite connection's heap is capped at
// MaxSQLiteHeapBytes. docs/security.md turns these into a bound for a
// whole process.
const (
	MaxValueBytes      = 16 << 20
	MaxCellBytes       = 256 << 10
	MaxResultBytes     = 8 << 20
	MaxTextBytes       = 16 << 10
	MaxSQLiteHeapBytes = 256 << 20
	// QueryMemoryBytes bounds what one running query holds in okf: the
	// row being read, the rows kept, and their copy on the way out.
	QueryMemoryBytes = MaxValueBytes + 3*MaxResultBytes
)

// Defaults used when Options leave a field zero.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxRows     = 1000
	DefaultShownRows   = 20
	DefaultCountLimit  = 10000
	DefaultMaxSQLBytes = 64 << 10
	// MaxSQLBytesLimit is the longest SQL any configuration may accept:
	// the validator's time and memory grow with the text.
	MaxSQLBytesLimit = 256 << 10
	// MaxValidatingBytes bounds the SQL a process validates at once: the
	// parse tree of a long IN list takes about 300 bytes of memory per
	// byte of SQL, so this holds the validator's memory near 150 MB.
	MaxValidatingBytes = 512 << 10
	DefaultMaxConns    = 4
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.ShownRows <= 0 {
		o.ShownRows = DefaultShownRows
	}
	if o.CountLimit <= 0 {
		o.CountLimit = DefaultCountLimit
	}
	o.CountLimit = max(o.CountLimit, o.MaxRows)
	if o.MaxSQLBytes <= 0 {
		o.MaxSQLBytes = DefaultMaxSQLBytes
	}
	o.MaxSQLBytes = min(o.MaxSQLBytes, MaxSQLBytesLimit)
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	return o
}

// DB is one guarded database: the validator, an engine and the audit log.
// It is safe for concurrent use.
type DB struct {
	name      string
	engine    Engine
	validator *Validator
	opts      Options
	audit     *AuditLog
}

// EngineOpener opens the engine of a database whose driver lives outside
// this package: the file d.Path, with opts' defaults filled in.
type EngineOpener func(ctx context.Context, d dsn.DSN, opts Options) (Engine, error)

// registered holds the engines other packages register.
var registered dsn.Registry[EngineOpener]

// RegisterEngine makes Open use open for DSNs of kind e. Package
// sqlguard/duckdb registers DuckDB: a program that does not import it
// links no DuckDB, and Open says so for a duckdb: DSN.
func RegisterEngine(e dsn.Engine, open EngineOpener) { registered.Register(e, open) }

func registeredOpener(e dsn.Engine) EngineOpener {
	open, _ := registered.Lookup(e)
	return open
}

// Open connects to the database named name at conn, a DSN read by the
// rules of package dsn: a SQLite or DuckDB file or a PostgreSQL database.
// audit may be nil.
func Open(ctx context.Context, name, conn string, opts Options, audit *AuditLog) (*DB, error) {
	opts = opts.withDefaults()
	d, err := dsn.Parse(conn)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", name, err)
	}
	if len(opts.AllowedDirectories) > 0 && d.Engine != dsn.DuckDB {
		return nil, fmt.Errorf("opening database %s: allowed_directories is for DuckDB files only", name)
	}
	var (
		engine  Engine
		dialect Dialect
	)
	switch d.Engine {
	case dsn.SQLite:
		dialect = DialectSQLite
		engine, err = OpenSQLite(d.Path, opts)
	case dsn.Postgres:
		dialect = DialectPostgres
		engine, err = OpenPostgres(ctx, conn, opts)
	case dsn.DuckDB:
		dialect = DialectDuckDB
		if open := registeredOpener(dsn.DuckDB); open != nil {
			engine, err = open(ctx, d, opts)
		} else {
			err = errors.New("this program was built without DuckDB (import github.com/okf-tools/okf/sqlguard/duckdb)")
		}
	default:
		err = fmt.Errorf("%q is no DSN (want postgres://…, host=… dbname=…, sqlite:PATH or duckdb:PATH)", conn)
	}
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", name, err)
	}
	v, err := NewValidator(dialect, opts, engine.Catalog())
	if err != nil {
		engine.Close()
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	return &DB{name: name, engine: engine, validator: v, opts: opts, audit: audit}, nil
}

// Options returns the options in force, defaults filled in.
func (d *DB) Options() Options { return d.opts }

// Hides reports whether the options keep a column of a table (of the
// first readable schema) from every query: the column is denied, or the
// table is outside the allowlist. okf compile asks before it reads a
// column's values, so that it never sends what the guard would refuse.
func (d *DB) Hides(table, column string) bool {
	v := d.validator
	t := strings.ToLower(table)
	if len(v.tables) > 0 && !v.tables[t] && !v.tables[v.schemas[0]+"."+t] {
		return true
	}
	return v.hidden(table, column)
}

// Readable is what a query through the guard can read of a database.
type Readable struct {
	Tables        int      // tables and views a query may name
	Columns       int      // their columns a query may read
	HiddenColumns int      // their columns no query reads (denied)
	MaskedColumns int      // their columns shown only as Mask
	Files         []string // folders a DuckDB view's files may come from
}

// Readable counts what queries can read: the readable schemas' tables in
// the allowlist, and their columns by what the options do to them.
func (d *DB) Readable() Readable {
	r := Readable{Files: d.opts.AllowedDirectories}
	for key, cols := range d.engine.Catalog().Tables {
		_, table, _ := strings.Cut(key, ".")
		if len(d.validator.tables) > 0 && !d.validator.tables[strings.ToLower(table)] && !d.validator.tables[strings.ToLower(key)] {
			continue
		}
		r.Tables++
		for _, c := range cols {
			switch {
			case d.validator.hidden(table, c):
				r.HiddenColumns++
			case d.validator.masks(table, c):
				r.MaskedColumns++
				r.Columns++
			default:
				r.Columns++
			}
		}
	}
	return r
}

// Masks reports whether the options mask a column of a table: its values
// are never shown, so okf compile lists none and the values tool refuses
// it.
func (d *DB) Masks(table, column string) bool { return d.validator.masks(table, column) }

// Query validates sql and runs it. caller names who asked, for the audit
// log. args are the values of the statement's parameters ($1, $2, … on
// PostgreSQL, ? on SQLite), sent beside the SQL and never into its text;
// each is an int64, float64, bool, string or nil. Refusals and SQL errors
// are returned as *Error.
func (d *DB) Query(ctx context.Context, caller, sql string, args ...any) (*Result, error) {
	start := time.Now()
	res, err := d.query(ctx, sql, args)
	d.audit.record(auditEntry(ctx, start, caller, d.name, sql, args, res, err))
	return res, err
}

// query validates sql and runs it; the validation counts against the
// statement timeout.
func (d *DB) query(ctx context.Context, sql string, args []any) (*Result, error) {
	start := time.Now()
	if err := checkArgs(args, d.opts.MaxSQLBytes); err != nil {
		return nil, err
	}
	weight := int64(min(len(sql), MaxValidatingBytes))
	if err := validating.Get().Acquire(ctx, weight); err != nil {
		return nil, contextError(ctx, d.opts.Timeout, err)
	}
	found, err := d.validator.check(sql)
	validating.Get().Release(weight)
	if err != nil {
		return nil, err
	}
	if sql, args, err = d.validator.rewrite(sql, found.edits, args, callerValues(ctx)); err != nil {
		return nil, err
	}
	left := d.opts.Timeout - time.Since(start)
	if left < time.Millisecond {
		return nil, &Error{Layer: LayerTimeout, Refused: true, Code: "timeout",
			Message: fmt.Sprintf("checking the query took longer than %s", d.opts.Timeout),
			Hint:    "Write a shorter query."}
	}
	res, err := d.engine.Run(ctx, sql, args, Limits{Timeout: left, MaxRows: d.opts.MaxRows, CountLimit: d.opts.CountLimit})
	// A result that comes with an error is masked too.
	if merr := mask(res, found.cols); merr != nil {
		return nil, merr
	}
	if err != nil && found.readsMasked {
		err = withheld(err)
	}
	return res, err
}

// checkArgs refuses parameter values of a type the engines do not bind,
// and values longer together than the longest SQL accepted.
func checkArgs(args []any, limit int) error {
	size := 0
	for i, a := range args {
		switch v := a.(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &Error{Layer: LayerValidator, Refused: true, Code: "argument_type",
					Message: fmt.Sprintf("parameter %d is %v; numbers are finite", i+1, v)}
			}
			size += 8
		case nil, int64, bool:
			size += 8
		case string:
			size += len(v)
		default:
			return &Error{Layer: LayerValidator, Refused: true, Code: "argument_type",
				Message: fmt.Sprintf("parameter %d is a %T; values are integers, numbers, booleans, text or null", i+1, a)}
		}
	}
	if size > limit {
		return &Error{Layer: LayerLimits, Refused: true, Code: "arguments_too_long",
			Message: fmt.Sprintf("the parameters' values hold %d bytes; at most %d are accepted", size, limit)}
	}
	return nil
}

// argText is a parameter's value as the text PostgreSQL reads it in,
// typed by the statement: sent with no type of its own, the server gives
// it the type its place in the query needs.
func argText(a any) any {
	switch v := a.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return a
}

// validating holds MaxValidatingBytes across every guarded database of the
// process.
var validating = lazy.Value[*semaphore.Weighted]{New: func() *semaphore.Weighted {
	return semaphore.NewWeighted(MaxValidatingBytes)
}}

// Close closes the engine's connections.
func (d *DB) Close() error { return d.engine.Close() }

// Dialect is the database's SQL dialect.
func (d *DB) Dialect() Dialect { return d.validator.dialect }

// Catalog is what the database holds that a query may name.
func (d *DB) Catalog() *Catalog { return d.engine.Catalog() }

// AsError returns err as an *Error if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
