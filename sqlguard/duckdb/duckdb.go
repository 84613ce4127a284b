// Package duckdb is the SQL guard's DuckDB engine: it opens a DuckDB file
// read-only and runs the queries package sqlguard validated through
// DuckDB's own layers. Importing it registers the engine for duckdb: DSNs
// (sqlguard.Open); it lives apart from package sqlguard so that only the
// programs that import it link DuckDB.
//
// The layers, each set before any query runs and fixed by
// lock_configuration:
//
//   - the file is opened with access_mode=READ_ONLY, and the guard opens
//     no file of its own (no temporary directory, no WAL);
//   - enable_external_access=false: no file, URL or other database outside
//     the file is read or written (read_csv, COPY, ATTACH, INSTALL);
//   - no extension is installed or loaded on demand;
//   - lock_configuration=true: no SET, RESET or PRAGMA changes a setting;
//   - max_memory and threads bound what a query takes;
//   - each query gets a fresh connection (session reset): no temporary
//     object, variable or USE outlives it;
//   - one statement, of type SELECT, prepared alone;
//   - the plan check: the physical plan (EXPLAIN) scans only readable
//     tables and no hidden column, and calls only allowed table functions
//     (sqlguard.Validator.CheckDuckDBPlan);
//   - the statement timeout interrupts the query, and the row cap stops a
//     streaming result.
//
// It calls DuckDB's C API through the bindings the duckdb-go driver is
// built on: the driver materialises every result before the first row and
// interrupts nothing while rows are read, and the guard needs both.
package duckdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	bindings "github.com/duckdb/duckdb-go-bindings"

	"github.com/okf-tools/okf/internal/dsn"
	_ "github.com/okf-tools/okf/internal/duckdblink" // no exported symbols
	"github.com/okf-tools/okf/sqlguard"
)

func init() { sqlguard.RegisterEngine(dsn.DuckDB, open) }

func open(_ context.Context, d dsn.DSN, opts sqlguard.Options) (sqlguard.Engine, error) {
	return Open(d.Path, opts)
}

// MaxMemoryBytes bounds the memory DuckDB's buffer manager gives one
// database's queries together; with no temporary directory a query that
// needs more fails.
const MaxMemoryBytes = 512 << 20

// maxThreads bounds the threads one database's queries run on.
const maxThreads = 4

// DB is one DuckDB file opened read-only. It is safe for concurrent use;
// each query runs on a connection of its own.
type DB struct {
	path      string
	db        bindings.Database
	name      string // the database's name in DuckDB's catalog, which qualifies its tables in plans
	catalog   *sqlguard.Catalog
	validator *sqlguard.Validator // for the plan check
	slots     chan struct{}       // one token per running query

	mu      sync.Mutex
	closed  bool
	running int
	idle    *sync.Cond // signalled when running drops to zero
}

// settings are the DuckDB options the guard opens every file with, in
// the order they are set: temp_directory before enable_external_access,
// which forbids changing it, and lock_configuration last.
func settings(threads int) [][2]string {
	return [][2]string{
		{"access_mode", "READ_ONLY"},
		{"temp_directory", ""},
		{"threads", strconv.Itoa(threads)},
		{"max_memory", fmt.Sprintf("%dMiB", MaxMemoryBytes>>20)},
		{"autoinstall_known_extensions", "false"},
		{"autoload_known_extensions", "false"},
		{"allow_community_extensions", "false"},
		{"allow_unsigned_extensions", "false"},
		{"allow_persistent_secrets", "false"},
		// Some filters and aggregates are answered from a column's
		// statistics with no scan, which the plan check would not see.
		{"disabled_optimizers", "statistics_propagation"},
		{"errors_as_json", "true"},
		{"enable_external_access", "false"},
		{"lock_configuration", "true"},
	}
}

// Open opens the DuckDB file at path read-only and reads its catalog. The
// file must exist: nothing is created.
func Open(path string, opts sqlguard.Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("DuckDB file %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("DuckDB file: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("DuckDB file %s is not a regular file", path)
	}
	var config bindings.Config
	if bindings.CreateConfig(&config) == bindings.StateError {
		return nil, errors.New("DuckDB: cannot create a configuration")
	}
	defer bindings.DestroyConfig(&config)
	allowed, err := allowedDirectories(opts.AllowedDirectories)
	if err != nil {
		return nil, err
	}
	// allowed_directories takes a list, which the C API's configuration
	// cannot set; SET can, before external access is turned off, so then
	// the last two settings follow it as statements, before any query.
	var late []string
	for _, s := range settings(min(runtime.NumCPU(), maxThreads)) {
		if allowed != "" && (s[0] == "enable_external_access" || s[0] == "lock_configuration") {
			late = append(late, fmt.Sprintf("SET GLOBAL %s = %s", s[0], s[1]))
			continue
		}
		if bindings.SetConfig(config, s[0], s[1]) == bindings.StateError {
			return nil, fmt.Errorf("DuckDB: cannot set %s to %q", s[0], s[1])
		}
	}
	if allowed != "" {
		late = append([]string{"SET GLOBAL allowed_directories = " + allowed}, late...)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = sqlguard.DefaultMaxConns
	}
	d := &DB{path: abs, slots: make(chan struct{}, opts.MaxConns)}
	d.idle = sync.NewCond(&d.mu)
	var msg string
	if bindings.OpenExt(abs, &d.db, config, &msg) == bindings.StateError {
		bindings.Close(&d.db)
		return nil, fmt.Errorf("opening DuckDB file %s: %s", path, plainMessage(msg))
	}
	if err := d.setLate(late); err != nil {
		bindings.Close(&d.db)
		return nil, fmt.Errorf("DuckDB file %s: %w", path, err)
	}
	if err := d.readCatalog(opts); err != nil {
		bindings.Close(&d.db)
		return nil, fmt.Errorf("DuckDB file %s: %w", path, err)
	}
	if d.validator, err = sqlguard.NewValidator(sqlguard.DialectDuckDB, opts, d.catalog); err != nil {
		bindings.Close(&d.db)
		return nil, err
	}
	return d, nil
}

// allowedDirectories checks the operator's folders and writes them as
// DuckDB's allowed_directories reads them: a list whose entries end in the
// separator, so that /data allows /data/x.csv and not /database.
func allowedDirectories(dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "", nil
	}
	quoted := make([]string, len(dirs))
	for i, dir := range dirs {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("allowed_directories: %q is not an absolute path", dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("allowed_directories: %q is not a folder", dir)
		}
		dir = filepath.Clean(dir)
		if !strings.HasSuffix(dir, string(filepath.Separator)) {
			dir += string(filepath.Separator)
		}
		quoted[i] = "'" + strings.ReplaceAll(dir, "'", "''") + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]", nil
}

// setLate runs the settings that must be statements, in order.
func (d *DB) setLate(stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	conn, err := d.connect()
	if err != nil {
		return err
	}
	defer bindings.Disconnect(&conn)
	for _, stmt := range stmts {
		if _, err := query(conn, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// readCatalog reads the tables and views of the readable schemas and
// their columns, lower case (DuckDB ignores case), and checks the table
// allowlist against them.
func (d *DB) readCatalog(opts sqlguard.Options) error {
	conn, err := d.connect()
	if err != nil {
		return err
	}
	defer bindings.Disconnect(&conn)
	rows, err := query(conn, "SELECT current_database()")
	if err != nil {
		return err
	}
	d.name, _ = rows[0][0].(string)
	schemas := opts.Schemas
	if len(schemas) == 0 {
		schemas = []string{"main"}
	}
	rows, err = query(conn, `SELECT lower(schema_name), lower(table_name), lower(column_name)
		FROM duckdb_columns() WHERE database_name = current_database() AND NOT internal
		ORDER BY schema_name, table_name, column_index`)
	if err != nil {
		return err
	}
	readable := map[string]bool{}
	for _, s := range schemas {
		readable[strings.ToLower(s)] = true
	}
	d.catalog = &sqlguard.Catalog{Tables: map[string][]string{}}
	for _, r := range rows {
		schema, table, col := r[0].(string), r[1].(string), r[2].(string)
		if readable[schema] {
			key := schema + "." + table
			d.catalog.Tables[key] = append(d.catalog.Tables[key], col)
		}
	}
	for _, t := range opts.Tables {
		t = strings.ToLower(strings.TrimSpace(t))
		found := false
		for key := range d.catalog.Tables {
			if key == t || strings.HasSuffix(key, "."+t) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("allowed table %q does not exist", t)
		}
	}
	return nil
}

// query runs trusted SQL and returns its rows; for the catalog.
func query(conn bindings.Connection, sql string) ([][]any, error) {
	var res bindings.Result
	defer bindings.DestroyResult(&res)
	if bindings.Query(conn, sql, &res) == bindings.StateError {
		return nil, errors.New(plainMessage(bindings.ResultError(&res)))
	}
	cols, err := resultColumns(&res)
	if err != nil {
		return nil, err
	}
	sink := sqlguard.NewRowSink(sqlguard.Limits{MaxRows: 1 << 30, CountLimit: 1 << 30})
	if err := fetch(context.Background(), res, cols, sink); err != nil {
		return nil, err
	}
	return sink.Result().Rows, nil
}

// Catalog returns the tables and views of the readable schemas.
func (d *DB) Catalog() *sqlguard.Catalog { return d.catalog }

// Close closes the database once the running queries end.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for d.running > 0 {
		d.idle.Wait()
	}
	bindings.Close(&d.db)
	return nil
}

// connect opens a fresh connection: nothing a query leaves in its session
// reaches the next.
func (d *DB) connect() (bindings.Connection, error) {
	var conn bindings.Connection
	if bindings.Connect(d.db, &conn) == bindings.StateError {
		bindings.Disconnect(&conn)
		return conn, fmt.Errorf("connecting to DuckDB file %s", d.path)
	}
	return conn, nil
}

// begin counts a running query; false once the database is closed.
func (d *DB) begin() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.running++
	return true
}

func (d *DB) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running--; d.running == 0 {
		d.idle.Broadcast()
	}
}

// poolWait bounds the wait for a free slot, as the other engines do.
func poolWait(timeout time.Duration) time.Duration { return timeout + 5*time.Second }

// Run executes sql, which the validator passed, with its parameters'
// values, and returns up to lim.MaxRows rows.
func (d *DB) Run(ctx context.Context, sql string, args []any, lim sqlguard.Limits) (*sqlguard.Result, error) {
	start := time.Now()
	wait, stopWait := context.WithTimeout(ctx, poolWait(lim.Timeout))
	select {
	case d.slots <- struct{}{}:
		stopWait()
	case <-wait.Done():
		stopWait()
		if ctx.Err() != nil {
			return nil, contextError(ctx, lim.Timeout)
		}
		return nil, &sqlguard.Error{Layer: sqlguard.LayerDatabase, Code: "pool_busy",
			Message: fmt.Sprintf("every connection stayed busy for %s; try again", poolWait(lim.Timeout))}
	}
	defer func() { <-d.slots }()
	if !d.begin() {
		return nil, errors.New("the DuckDB database is closed")
	}
	defer d.end()
	conn, err := d.connect()
	if err != nil {
		return nil, err
	}
	defer bindings.Disconnect(&conn)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	stop := interruptOnDone(ctx, conn)
	res, err := d.run(ctx, conn, sql, args, lim)
	stop()
	if err != nil {
		if ge, ok := sqlguard.AsError(err); ok && ge.Layer == sqlguard.LayerInterrupt {
			switch {
			case errors.Is(ctx.Err(), context.Canceled):
				return nil, &sqlguard.Error{Layer: sqlguard.LayerDeadline, Code: "cancelled", Message: "the query was cancelled"}
			case ctx.Err() != nil:
				ge.Message = fmt.Sprintf("the query ran longer than %s and was stopped", lim.Timeout)
			}
		}
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// interruptOnDone interrupts conn's query once ctx is done, again until
// stop is called: DuckDB clears an interrupt it receives between two
// steps of a query. stop returns once no interrupt can follow, so the
// connection may be closed.
func interruptOnDone(ctx context.Context, conn bindings.Connection) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			bindings.Interrupt(conn)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// explainPrefix is put before a query to read its plan.
const explainPrefix = "EXPLAIN (FORMAT JSON) "

func (d *DB) run(ctx context.Context, conn bindings.Connection, sql string, args []any, lim sqlguard.Limits) (*sqlguard.Result, error) {
	stmt, err := prepareOne(conn, sql, 0)
	if err != nil {
		return nil, err
	}
	defer bindings.DestroyPrepare(&stmt)
	if t := bindings.PreparedStatementType(stmt); t != bindings.StatementTypeSelect {
		return nil, &sqlguard.Error{Layer: sqlguard.LayerReadOnlyStmt, Refused: true, Code: "not_read_only",
			Message: fmt.Sprintf("the statement is a %s; only a SELECT may run", statementName(t))}
	}
	if err := bind(stmt, args); err != nil {
		return nil, err
	}
	if err := d.checkPlan(ctx, conn, sql, args); err != nil {
		return nil, err
	}
	var pending bindings.PendingResult
	defer bindings.DestroyPending(&pending)
	if bindings.PendingPreparedStreaming(stmt, &pending) == bindings.StateError {
		return nil, duckdbError(bindings.PendingError(pending), sql, 0)
	}
	var res bindings.Result
	defer bindings.DestroyResult(&res)
	if bindings.ExecutePending(pending, &res) == bindings.StateError {
		return nil, duckdbError(bindings.ResultError(&res), sql, 0)
	}
	cols, err := resultColumns(&res)
	if err != nil {
		return nil, err
	}
	sink := sqlguard.NewRowSink(lim)
	out := sink.Result()
	for i, c := range cols {
		out.Columns = append(out.Columns, sqlguard.Column{Name: bindings.ColumnName(&res, bindings.IdxT(i)), Type: c.name})
	}
	if err := fetch(ctx, res, cols, sink); err != nil {
		if ge, ok := sqlguard.AsError(err); ok {
			return nil, ge
		}
		return nil, duckdbError(err.Error(), sql, 0)
	}
	return out, nil
}

// prepareOne prepares text, which must hold exactly one statement. shift is
// the length of a prefix the guard put before the query, for positions.
func prepareOne(conn bindings.Connection, text string, shift int) (bindings.PreparedStatement, error) {
	var stmt bindings.PreparedStatement
	var extracted bindings.ExtractedStatements
	defer bindings.DestroyExtracted(&extracted)
	n := bindings.ExtractStatements(conn, text, &extracted)
	switch {
	case n == 0:
		return stmt, duckdbError(bindings.ExtractStatementsError(extracted), text, shift)
	case n > 1:
		return stmt, &sqlguard.Error{Layer: sqlguard.LayerOneStatement, Refused: true, Code: "one_statement",
			Message: fmt.Sprintf("found %d statements; send exactly one", n)}
	}
	if bindings.PrepareExtractedStatement(conn, extracted, 0, &stmt) == bindings.StateError {
		err := duckdbError(bindings.PrepareError(stmt), text, shift)
		bindings.DestroyPrepare(&stmt)
		return stmt, err
	}
	return stmt, nil
}

// bind binds the parameters' values ($1, $2, … or ?), which must be as
// many as the statement has.
func bind(stmt bindings.PreparedStatement, args []any) error {
	if n := int(bindings.NParams(stmt)); n != len(args) {
		return &sqlguard.Error{Layer: sqlguard.LayerDatabase, Code: "parameters",
			Message: fmt.Sprintf("the statement has %d parameters and %d values were given", n, len(args))}
	}
	for i, a := range args {
		idx := bindings.IdxT(i + 1)
		var state bindings.State
		switch v := a.(type) {
		case nil:
			state = bindings.BindNull(stmt, idx)
		case int64:
			state = bindings.BindInt64(stmt, idx, v)
		case float64:
			state = bindings.BindDouble(stmt, idx, v)
		case bool:
			state = bindings.BindBoolean(stmt, idx, v)
		case string:
			state = bindings.BindVarchar(stmt, idx, v)
		default:
			return fmt.Errorf("parameter %d is a %T", i+1, a)
		}
		if state == bindings.StateError {
			return &sqlguard.Error{Layer: sqlguard.LayerDatabase, Code: "parameters",
				Message: fmt.Sprintf("parameter %d cannot be bound: %s", i+1, plainMessage(bindings.PrepareError(stmt)))}
		}
	}
	return nil
}

// checkPlan has DuckDB plan the query and checks the plan (the plan
// check layer).
func (d *DB) checkPlan(ctx context.Context, conn bindings.Connection, sql string, args []any) error {
	stmt, err := prepareOne(conn, explainPrefix+sql, len(explainPrefix))
	if err != nil {
		return err
	}
	defer bindings.DestroyPrepare(&stmt)
	if bindings.PreparedStatementType(stmt) != bindings.StatementTypeExplain {
		return &sqlguard.Error{Layer: sqlguard.LayerPlan, Refused: true, Code: "unreadable_plan", Message: "the query's plan cannot be read"}
	}
	if err := bind(stmt, args); err != nil {
		return err
	}
	var res bindings.Result
	defer bindings.DestroyResult(&res)
	if bindings.ExecutePrepared(stmt, &res) == bindings.StateError {
		return duckdbError(bindings.ResultError(&res), explainPrefix+sql, len(explainPrefix))
	}
	cols, err := resultColumns(&res)
	if err != nil {
		return err
	}
	if len(cols) != 2 || cols[0].typ != bindings.TypeVarchar || cols[1].typ != bindings.TypeVarchar {
		return &sqlguard.Error{Layer: sqlguard.LayerPlan, Refused: true, Code: "unreadable_plan", Message: "the query's plan cannot be read"}
	}
	// The plan is read whole: it can be longer than a value a result keeps.
	var plan string
	if err := fetchRaw(ctx, res, func(key, value string) {
		if key == "physical_plan" {
			plan = value
		}
	}); err != nil {
		return err
	}
	return d.validator.CheckDuckDBPlan(plan, d.name)
}

// resultColumns reads a result's column types.
func resultColumns(res *bindings.Result) ([]*column, error) {
	n := int(bindings.ColumnCount(res))
	cols := make([]*column, n)
	for i := range n {
		lt := bindings.ColumnLogicalType(res, bindings.IdxT(i))
		c, err := newColumn(lt)
		bindings.DestroyLogicalType(&lt)
		if err != nil {
			return nil, &sqlguard.Error{Layer: sqlguard.LayerDatabase, Code: "unsupported_type",
				Message: fmt.Sprintf("column %d has a type okf cannot read (%v)", i+1, err),
				Hint:    "Cast the column to VARCHAR."}
		}
		cols[i] = c
	}
	return cols, nil
}

// fetch reads a result's rows into sink, chunk by chunk, until the sink
// has counted enough. A streaming result that is not read to its end
// stops when it is destroyed.
func fetch(ctx context.Context, res bindings.Result, cols []*column, sink *sqlguard.RowSink) error {
	for {
		chunk := bindings.FetchChunk(res)
		if chunk.Ptr == nil {
			if msg := bindings.ResultError(&res); msg != "" {
				return errors.New(msg)
			}
			return nil
		}
		more, err := readChunk(chunk, cols, sink)
		bindings.DestroyDataChunk(&chunk)
		if err != nil || !more {
			return err
		}
		if ctx.Err() != nil {
			// The interrupt reaches DuckDB's own work; between chunks the
			// guard stops itself.
			return &sqlguard.Error{Layer: sqlguard.LayerInterrupt, Refused: true, Code: "interrupt"}
		}
	}
}

func readChunk(chunk bindings.DataChunk, cols []*column, sink *sqlguard.RowSink) (more bool, err error) {
	n := uint64(bindings.DataChunkGetSize(chunk))
	vecs := make([]vector, len(cols))
	for i, c := range cols {
		vecs[i] = newVector(c, bindings.DataChunkGetVector(chunk, bindings.IdxT(i)))
	}
	for row := range n {
		keep, more := sink.Admit()
		if !more {
			return false, nil
		}
		if !keep {
			continue
		}
		values := make([]any, len(cols))
		for i, c := range cols {
			if values[i], err = c.value(&vecs[i], row, sink); err != nil {
				return false, err
			}
		}
		sink.Add(values)
	}
	return true, nil
}

// fetchRaw reads a result of two VARCHAR columns whole, for the plan.
func fetchRaw(ctx context.Context, res bindings.Result, row func(a, b string)) error {
	for {
		chunk := bindings.FetchChunk(res)
		if chunk.Ptr == nil {
			if msg := bindings.ResultError(&res); msg != "" {
				return duckdbError(msg, "", 0)
			}
			return nil
		}
		n := uint64(bindings.DataChunkGetSize(chunk))
		a := vector{data: bindings.VectorGetData(bindings.DataChunkGetVector(chunk, 0))}
		b := vector{data: bindings.VectorGetData(bindings.DataChunkGetVector(chunk, 1))}
		for i := range n {
			row(string(stringAt(&a, i)), string(stringAt(&b, i)))
		}
		bindings.DestroyDataChunk(&chunk)
		if ctx.Err() != nil {
			return &sqlguard.Error{Layer: sqlguard.LayerInterrupt, Refused: true, Code: "interrupt"}
		}
	}
}

// statementName names a statement type for the refusal.
func statementName(t bindings.StatementType) string {
	switch t {
	case bindings.StatementTypeInsert:
		return "INSERT"
	case bindings.StatementTypeUpdate:
		return "UPDATE"
	case bindings.StatementTypeDelete:
		return "DELETE"
	case bindings.StatementTypeCreate:
		return "CREATE"
	case bindings.StatementTypeDrop:
		return "DROP"
	case bindings.StatementTypeAlter:
		return "ALTER"
	case bindings.StatementTypeCopy:
		return "COPY"
	case bindings.StatementTypeExplain:
		return "EXPLAIN"
	case bindings.StatementTypePragma:
		return "PRAGMA"
	case bindings.StatementTypeSet, bindings.StatementTypeVariableSet:
		return "SET"
	case bindings.StatementTypeCall:
		return "CALL"
	case bindings.StatementTypeLoad:
		return "LOAD or INSTALL"
	case bindings.StatementTypeAttach:
		return "ATTACH"
	case bindings.StatementTypeDetach:
		return "DETACH"
	case bindings.StatementTypeExport:
		return "EXPORT"
	case bindings.StatementTypeTransaction:
		return "transaction command"
	case bindings.StatementTypeVacuum:
		return "VACUUM"
	case bindings.StatementTypeAnalyze:
		return "ANALYZE"
	case bindings.StatementTypePrepare, bindings.StatementTypeExecute:
		return "PREPARE or EXECUTE"
	}
	return fmt.Sprintf("statement of type %d", t)
}

// jsonError is an error DuckDB writes as JSON (errors_as_json).
type jsonError struct {
	Type     string `json:"exception_type"`
	Message  string `json:"exception_message"`
	Position string `json:"position"`
}

// readError reads DuckDB's JSON error, alone or after a prefix such as
// "Parser Error: ".
func readError(msg string) (jsonError, bool) {
	var je jsonError
	if i := strings.IndexByte(msg, '{'); i >= 0 && json.Unmarshal([]byte(msg[i:]), &je) == nil && je.Message != "" {
		return je, true
	}
	return jsonError{Message: msg}, false
}

// plainMessage is an error's message without its JSON.
func plainMessage(msg string) string {
	if je, ok := readError(msg); ok {
		return je.Type + " Error: " + je.Message
	}
	return msg
}

// duckdbError turns DuckDB's message for text (the query, after a prefix
// of shift bytes the guard added) into an *Error naming the layer that
// stopped it.
func duckdbError(msg, text string, shift int) error {
	je, _ := readError(msg)
	e := &sqlguard.Error{Layer: sqlguard.LayerDatabase, Code: je.Type, Message: je.Message}
	if je.Type != "" {
		e.Message = je.Type + " Error: " + je.Message
	}
	if p, err := strconv.Atoi(je.Position); err == nil && p >= shift && p <= len(text) {
		e.Position = charPos(text[shift:], p-shift)
	}
	lower := strings.ToLower(je.Message)
	switch {
	case je.Type == "Interrupt" || strings.Contains(lower, "interrupted"):
		e.Layer, e.Refused, e.Code = sqlguard.LayerInterrupt, true, "interrupt"
		e.Hint = "Filter earlier, join on keys, or aggregate before joining."
	case strings.Contains(lower, "configuration has been locked"):
		e.Layer, e.Refused = sqlguard.LayerLockedConfig, true
	case strings.Contains(lower, "read-only mode") || strings.Contains(lower, "read only mode") || strings.Contains(lower, "read-only database"):
		e.Layer, e.Refused = sqlguard.LayerReadOnlyFile, true
	case je.Type == "Permission" || strings.Contains(lower, "disabled by configuration") || strings.Contains(lower, "disabled through configuration"):
		e.Layer, e.Refused = sqlguard.LayerExternalAccess, true
	case strings.Contains(lower, "auto-load") || strings.Contains(lower, "autoload") || strings.Contains(lower, "exists in the") && strings.Contains(lower, "extension"):
		e.Layer, e.Refused = sqlguard.LayerExtensions, true
	case je.Type == "Out of Memory" || strings.Contains(lower, "out of memory"):
		e.Layer, e.Refused, e.Code = sqlguard.LayerLimits, true, "out_of_memory"
		e.Hint = "Aggregate or filter before sorting or grouping large values."
	}
	return e
}

// charPos is the 1-based character position of byte offset in text.
func charPos(text string, offset int) int {
	if offset < 0 || offset > len(text) {
		return 0
	}
	return len([]rune(text[:offset])) + 1
}

// contextError is the error of a query whose context ended before it ran.
func contextError(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &sqlguard.Error{Layer: sqlguard.LayerDeadline, Refused: true, Code: "deadline",
			Message: fmt.Sprintf("the query waited longer than %s and was stopped", timeout)}
	}
	return &sqlguard.Error{Layer: sqlguard.LayerDeadline, Code: "cancelled", Message: "the query was cancelled"}
}
