package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// SQLite runs queries on a SQLite file opened read-only, with
// PRAGMA query_only, no attached databases, an authorizer and an interrupt
// at the deadline. Connections are pooled; each serves one query at a time.
type SQLite struct {
	uri     string
	opts    Options
	tables  map[string]bool     // readable tables, lower case
	denied  map[string][]string // column → tables it is hidden in ("" for all)
	allow   allowList
	schema  *sqliteSchema
	slots   chan struct{} // one token per open connection
	idle    chan *sqliteConn
	mu      sync.Mutex
	closed  bool
	openNow int
	dials   int // connections opened in all, for tests
}

type sqliteConn struct {
	conn *sqlite3.Conn
	// refusal is why the authorizer last said no, for the error text.
	refusal string
}

// OpenSQLite opens the SQLite file at path read-only. The file must exist.
func OpenSQLite(path string, opts Options) (*SQLite, error) {
	opts = opts.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("SQLite file %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("SQLite file: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("SQLite file %s is not a regular file", path)
	}
	s := &SQLite{
		uri:    (&url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}).String(),
		opts:   opts,
		denied: map[string][]string{},
		slots:  make(chan struct{}, opts.MaxConns),
		idle:   make(chan *sqliteConn, opts.MaxConns),
	}
	v, err := NewValidator(DialectSQLite, opts, nil)
	if err != nil {
		return nil, err
	}
	s.denied, s.allow = v.deniedColumns, v.allow
	if err := s.loadTables(opts.Tables); err != nil {
		return nil, fmt.Errorf("SQLite file %s: %w", path, err)
	}
	return s, nil
}

// Catalog returns the tables and columns of the file.
func (s *SQLite) Catalog() *Catalog { return s.schema.catalog }

// loadTables reads the file's schema and the readable tables and views,
// keeping the allowlist's if one is given.
func (s *SQLite) loadTables(allow []string) error {
	sc, err := s.dial()
	if err != nil {
		return err
	}
	if err := s.readTables(sc, allow); err != nil {
		sc.conn.Close()
		return err
	}
	// The connection that read the schema, its authorizer now set, is the
	// first idle one: a command that runs one query opens one.
	s.slots <- struct{}{}
	s.mu.Lock()
	s.openNow++
	s.mu.Unlock()
	s.idle <- sc
	return nil
}

// readTables reads the schema through sc, decides the readable tables and
// sets sc's authorizer, which reads them.
func (s *SQLite) readTables(sc *sqliteConn, allow []string) error {
	var err error
	if s.schema, err = loadSQLiteSchema(sc.conn); err != nil {
		return err
	}
	present := map[string]bool{}
	for key := range s.schema.catalog.Tables {
		present[strings.TrimPrefix(key, "main.")] = true
	}
	s.tables = present
	if len(allow) > 0 {
		s.tables = map[string]bool{}
		for _, t := range allow {
			t = strings.ToLower(t)
			t = strings.TrimPrefix(t, "main.")
			if !present[t] {
				return fmt.Errorf("allowed table %q does not exist", t)
			}
			s.tables[t] = true
		}
	}
	return sc.conn.SetAuthorizer(sc.authorize(s))
}

// open makes a connection with every layer in place. The order matters:
// query_only is set before the authorizer, which would refuse the pragma.
func (s *SQLite) open() (*sqliteConn, error) {
	sc, err := s.dial()
	if err != nil {
		return nil, err
	}
	if err := sc.conn.SetAuthorizer(sc.authorize(s)); err != nil {
		sc.conn.Close()
		return nil, fmt.Errorf("setting up %s: %w", s.uri, err)
	}
	return sc, nil
}

// dial opens a connection with every layer in place but the authorizer.
func (s *SQLite) dial() (*sqliteConn, error) {
	c, err := sqlite3.OpenFlags(s.uri, sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", s.uri, err)
	}
	s.mu.Lock()
	s.dials++
	s.mu.Unlock()
	sc := &sqliteConn{conn: c}
	// Temporary storage stays in memory, under the heap limit, so a huge
	// sort fails fast instead of filling the disk.
	c.HardHeapLimit(MaxSQLiteHeapBytes)
	err = errors.Join(
		c.Exec("PRAGMA query_only = 1"),
		c.Exec("PRAGMA temp_store = MEMORY"),
		configFalse(c, sqlite3.DBCONFIG_TRUSTED_SCHEMA),
		configFalse(c, sqlite3.DBCONFIG_ENABLE_LOAD_EXTENSION),
		configTrue(c, sqlite3.DBCONFIG_DEFENSIVE),
	)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("setting up %s: %w", s.uri, err)
	}
	c.Limit(sqlite3.LIMIT_ATTACHED, 0)
	c.Limit(sqlite3.LIMIT_SQL_LENGTH, s.opts.MaxSQLBytes)
	c.Limit(sqlite3.LIMIT_LENGTH, MaxValueBytes)
	return sc, nil
}

func configFalse(c *sqlite3.Conn, op sqlite3.DBConfig) error {
	_, err := c.Config(op, false)
	return err
}

func configTrue(c *sqlite3.Conn, op sqlite3.DBConfig) error {
	_, err := c.Config(op, true)
	return err
}

// hidden reports whether the options hide column col of table.
func (s *SQLite) hidden(table, col string) bool {
	for _, t := range s.denied[strings.ToLower(col)] {
		if t == "" || t == strings.ToLower(table) {
			return true
		}
	}
	return false
}

// authorize allows reading allowed tables and columns, safe functions,
// SELECT and recursive CTEs, and nothing else.
func (sc *sqliteConn) authorize(s *SQLite) func(sqlite3.AuthorizerActionCode, string, string, string, string) sqlite3.AuthorizerReturnCode {
	return func(action sqlite3.AuthorizerActionCode, name3, name4, schema, _ string) sqlite3.AuthorizerReturnCode {
		switch action {
		case sqlite3.AUTH_SELECT, sqlite3.AUTH_RECURSIVE:
			return sqlite3.AUTH_OK
		case sqlite3.AUTH_READ:
			table, col := strings.ToLower(name3), strings.ToLower(name4)
			if sqliteTableFunctions.Has(table) {
				return sqlite3.AUTH_OK
			}
			// A read with no column and no schema is a count over a CTE or
			// a subquery when no table of the file has that name.
			if col == "" && schema == "" && s.schema.columns[table] == nil && !strings.HasPrefix(table, "sqlite_") {
				return sqlite3.AUTH_OK
			}
			// SQLite passes no schema for some reads (count(*) over a join).
			if schema != "main" && schema != "" || !s.tables[table] {
				sc.refusal = fmt.Sprintf("table %s.%s is not readable", schema, name3)
				return sqlite3.AUTH_DENY
			}
			if s.hidden(table, col) {
				sc.refusal = fmt.Sprintf("column %s.%s is hidden", name3, name4)
				return sqlite3.AUTH_DENY
			}
			return sqlite3.AUTH_OK
		case sqlite3.AUTH_FUNCTION:
			if s.allow.allows([]string{name4}) {
				return sqlite3.AUTH_OK
			}
			sc.refusal = fmt.Sprintf("function %s is not allowed", name4)
			return sqlite3.AUTH_DENY
		}
		sc.refusal = fmt.Sprintf("%s is not allowed", authActionName(action, name3))
		return sqlite3.AUTH_DENY
	}
}

func authActionName(a sqlite3.AuthorizerActionCode, name string) string {
	names := map[sqlite3.AuthorizerActionCode]string{
		sqlite3.AUTH_INSERT: "INSERT", sqlite3.AUTH_UPDATE: "UPDATE", sqlite3.AUTH_DELETE: "DELETE",
		sqlite3.AUTH_PRAGMA: "PRAGMA", sqlite3.AUTH_ATTACH: "ATTACH", sqlite3.AUTH_DETACH: "DETACH",
		sqlite3.AUTH_TRANSACTION: "a transaction command", sqlite3.AUTH_SAVEPOINT: "SAVEPOINT",
		sqlite3.AUTH_CREATE_TABLE: "CREATE TABLE", sqlite3.AUTH_CREATE_TEMP_TABLE: "CREATE TEMP TABLE",
		sqlite3.AUTH_DROP_TABLE: "DROP TABLE", sqlite3.AUTH_ALTER_TABLE: "ALTER TABLE",
		sqlite3.AUTH_CREATE_VIEW: "CREATE VIEW", sqlite3.AUTH_CREATE_TEMP_VIEW: "CREATE TEMP VIEW",
		sqlite3.AUTH_CREATE_INDEX: "CREATE INDEX", sqlite3.AUTH_CREATE_TRIGGER: "CREATE TRIGGER",
		sqlite3.AUTH_ANALYZE: "ANALYZE", sqlite3.AUTH_REINDEX: "REINDEX", sqlite3.AUTH_CREATE_VTABLE: "CREATE VIRTUAL TABLE",
	}
	if n, ok := names[a]; ok {
		if name != "" {
			return n + " " + name
		}
		return n
	}
	return fmt.Sprintf("action %d", a)
}

func (s *SQLite) acquire(ctx context.Context) (*sqliteConn, error) {
	select {
	case c := <-s.idle:
		return c, nil
	default:
	}
	select {
	case c := <-s.idle:
		return c, nil
	case s.slots <- struct{}{}:
		s.mu.Lock()
		closed := s.closed
		if !closed {
			s.openNow++
		}
		s.mu.Unlock()
		if closed {
			<-s.slots
			return nil, errors.New("the SQLite database is closed")
		}
		c, err := s.open()
		if err != nil {
			s.drop()
		}
		return c, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *SQLite) drop() {
	s.mu.Lock()
	s.openNow--
	s.mu.Unlock()
	<-s.slots
}

// discard closes a connection that may be in a bad state.
func (s *SQLite) discard(c *sqliteConn) {
	func() {
		// Closing a sandbox that ran out of memory may panic again; the
		// connection is dropped either way.
		defer func() { recover() }()
		c.conn.Close()
	}()
	s.drop()
}

func (s *SQLite) release(c *sqliteConn) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		c.conn.Close()
		s.drop()
		return
	}
	s.idle <- c
}

// Close closes the idle connections; busy ones close when their query ends.
func (s *SQLite) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var errs []error
	for {
		select {
		case c := <-s.idle:
			errs = append(errs, c.conn.Close())
			s.drop()
		default:
			return errors.Join(errs...)
		}
	}
}

// OpenConns reports how many connections are open, for tests.
func (s *SQLite) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openNow
}

// Run executes sql and returns up to lim.MaxRows rows.
func (s *SQLite) Run(ctx context.Context, sql string, args []any, lim Limits) (*Result, error) {
	start := time.Now()
	acquireCtx, stopAcquire := context.WithTimeout(ctx, poolWait(lim.Timeout))
	sc, err := s.acquire(acquireCtx)
	stopAcquire()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Layer: LayerDatabase, Code: "pool_busy",
				Message: fmt.Sprintf("every connection stayed busy for %s; try again", poolWait(lim.Timeout))}
		}
		return nil, contextError(ctx, lim.Timeout, fmt.Errorf("acquiring a SQLite connection: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	sc.refusal = ""
	sc.conn.SetInterrupt(ctx)
	res, err, broken := s.runRecovering(sc, sql, args, lim)
	if err != nil {
		err = s.sqliteError(ctx, sc, sql, lim.Timeout, err)
	}
	// Done with sc before another query may take it.
	if broken {
		s.discard(sc)
	} else {
		sc.conn.SetInterrupt(context.Background())
		s.release(sc)
	}
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// outOfMemory is the message of the panic go-sqlite3 raises when SQLite
// runs out of memory inside its sandbox.
const outOfMemory = "sqlite3: out of memory"

// runRecovering runs the query, turning an out-of-memory panic (a query
// can allocate far more than any value limit, in a sort for instance)
// into a refusal; the connection is then broken and must be discarded.
func (s *SQLite) runRecovering(sc *sqliteConn, sql string, args []any, lim Limits) (res *Result, err error, broken bool) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); !ok || e.Error() != outOfMemory {
				panic(r)
			}
			res, broken = nil, true
			err = &Error{Layer: LayerLimits, Refused: true, Code: "out_of_memory",
				Message: "the query needed more memory than SQLite may use",
				Hint:    "Aggregate or filter before sorting or grouping large values."}
		}
	}()
	res, err = s.run(sc, sql, args, lim)
	return res, err, false
}

func (s *SQLite) run(sc *sqliteConn, sql string, args []any, lim Limits) (*Result, error) {
	stmt, tail, err := sc.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if stmt == nil {
		return nil, &Error{Layer: LayerDatabase, Code: "empty", Message: "the SQL holds no statement"}
	}
	defer stmt.Close()
	if rest := strings.TrimSpace(tail); rest != "" && rest != ";" {
		return nil, &Error{Layer: LayerOneStatement, Refused: true, Code: "one_statement",
			Message:  "more than one statement; send exactly one",
			Position: charPos(sql, len(sql)-len(tail))}
	}
	if !stmt.ReadOnly() {
		return nil, &Error{Layer: LayerReadOnlyStmt, Refused: true, Code: "not_read_only",
			Message: "the statement would write to the database"}
	}
	if err := s.checkProgram(sc.conn, stmt.SQL()); err != nil {
		return nil, err
	}
	if err := bindSQLite(stmt, args); err != nil {
		return nil, err
	}
	sink := newRowSink(lim)
	res := sink.res
	n := stmt.ColumnCount()
	for i := range n {
		res.Columns = append(res.Columns, Column{Name: stmt.ColumnName(i), Type: strings.ToLower(stmt.ColumnDeclType(i))})
	}
	for stmt.Step() {
		keep, more := sink.admit()
		if !more {
			break
		}
		if keep {
			row := make([]any, n)
			for i := range n {
				row[i] = sqliteValue(stmt, sink, i)
			}
			sink.add(row)
		}
	}
	if res.TotalKnown {
		if err := stmt.Err(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// bindSQLite binds the parameters' values to a statement holding exactly
// as many parameters, each ? numbered in order.
func bindSQLite(stmt *sqlite3.Stmt, args []any) error {
	if n := stmt.BindCount(); n != len(args) {
		return &Error{Layer: LayerDatabase, Code: "parameters",
			Message: fmt.Sprintf("the statement has %d parameters and %d values were given", n, len(args))}
	}
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = stmt.BindNull(i + 1)
		case int64:
			err = stmt.BindInt64(i+1, v)
		case float64:
			err = stmt.BindFloat(i+1, v)
		case bool:
			err = stmt.BindBool(i+1, v)
		case string:
			err = stmt.BindText(i+1, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sqliteValue reads column i of the current row; text and blobs are cut
// to the sink's budget before they leave SQLite's memory.
func sqliteValue(stmt *sqlite3.Stmt, sink *rowSink, i int) any {
	switch stmt.ColumnType(i) {
	case sqlite3.INTEGER:
		return stmt.ColumnInt64(i)
	case sqlite3.FLOAT:
		return stmt.ColumnFloat(i)
	case sqlite3.TEXT:
		return sink.text(stmt.ColumnRawText(i))
	case sqlite3.BLOB:
		return sink.blob(stmt.ColumnRawBlob(i))
	}
	return nil
}

// sqliteError turns a SQLite error into an *Error naming the layer.
func (s *SQLite) sqliteError(ctx context.Context, sc *sqliteConn, sql string, timeout time.Duration, err error) error {
	if ge, ok := AsError(err); ok {
		return ge
	}
	e := &Error{Layer: LayerDatabase, Message: strings.TrimPrefix(err.Error(), "sqlite3: ")}
	var se *sqlite3.Error
	if errors.As(err, &se) {
		e.Code = se.Code().Error()
		if rest := se.SQL(); rest != "" && len(rest) <= len(sql) {
			e.Position = charPos(sql, len(sql)-len(rest))
		}
	}
	switch {
	case errors.Is(err, sqlite3.AUTH):
		e.Layer, e.Refused = LayerAuthorizer, true
		if sc.refusal != "" {
			e.Message = "not authorized: " + sc.refusal
		}
	case errors.Is(err, sqlite3.READONLY):
		e.Layer, e.Refused = LayerReadOnlyFile, true
	case errors.Is(err, sqlite3.INTERRUPT):
		e.Layer, e.Refused, e.Code = LayerInterrupt, true, "interrupt"
		e.Message = fmt.Sprintf("the query ran longer than %s and was stopped", timeout)
		e.Hint = "Filter earlier, join on keys, or aggregate before joining."
		if errors.Is(ctx.Err(), context.Canceled) {
			return &Error{Layer: LayerDeadline, Code: "cancelled", Message: "the query was cancelled"}
		}
	case errors.Is(err, sqlite3.TOOBIG) || strings.Contains(e.Message, "too many attached databases"):
		e.Layer, e.Refused = LayerLimits, true
	case se == nil:
		return contextError(ctx, timeout, err)
	}
	return e
}
