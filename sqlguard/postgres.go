package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/okf-tools/okf/internal/dsn"
	"github.com/okf-tools/okf/internal/lazy"
)

// Postgres runs queries on a PostgreSQL database through a connection
// pool. Each query runs inside BEGIN READ ONLY with SET LOCAL
// statement_timeout, over the extended protocol, and is rolled back.
type Postgres struct {
	pool       *pgxpool.Pool
	catalog    *Catalog
	searchPath string // SET LOCAL search_path to the readable schemas, as the validator resolves names
	// signer signs each transaction's caller document where okf prepare
	// installed row-level security for the role; nil elsewhere.
	signer *callerSigner
}

// freshConnKey marks, in a connection's custom data, a database with
// extensions that keep state DISCARD ALL does not clear (dblink's and
// postgres_fdw's connections): its connections serve one query each.
const freshConnKey = "okf.fresh_connection"

// rollbackTimeout bounds the cleanup after a query, which must run even
// when the caller's context is done.
const rollbackTimeout = 5 * time.Second

// OpenPostgres opens a pool of at most opts.MaxConns connections to dsn
// and checks that one connection works.
func OpenPostgres(ctx context.Context, dsn string, opts Options) (*Postgres, error) {
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parsing the PostgreSQL DSN: %w", redactDSN(err, dsn))
	}
	cfg.MaxConns = int32(opts.MaxConns)
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = time.Minute
	cfg.ConnConfig.RuntimeParams["application_name"] = "okf-sqlguard"
	// No statement is prepared by name or cached, so DISCARD ALL after a
	// query leaves the driver nothing stale.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.MaxConnLifetime = 30 * time.Minute
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		var n int
		err := c.QueryRow(ctx, "SELECT count(*) FROM pg_extension WHERE extname IN ('dblink', 'postgres_fdw')").Scan(&n)
		c.PgConn().CustomData()[freshConnKey] = err != nil || n > 0
		return nil
	}
	// A cancelled context sends a cancel request instead of cutting the
	// socket, so the server stops the query promptly.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	// A row bigger than MaxValueBytes fails instead of being read into
	// memory.
	cfg.ConnConfig.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		f := pgproto3.NewFrontend(r, w)
		f.SetMaxBodyLen(MaxValueBytes)
		return f
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL at %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	schemas := opts.Schemas
	if len(schemas) == 0 {
		schemas = []string{"public"}
	}
	p := &Postgres{pool: pool, searchPath: strings.Join(quoteEach(schemas), ", ")}
	if p.catalog, err = loadPostgresCatalog(ctx, pool, schemas); err != nil {
		pool.Close()
		return nil, err
	}
	var secured bool
	var role string
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_policy p WHERE obj_description(p.oid, 'pg_policy') = $1 || session_user), session_user`,
		roleMark).Scan(&secured, &role); err != nil {
		pool.Close()
		return nil, fmt.Errorf("looking for okf's row-level security: %w", err)
	}
	if secured {
		p.signer = &callerSigner{key: rowSecurityKey(role, cfg.ConnConfig.Password), policy: opts.Policy}
	}
	return p, nil
}

func quoteEach(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = pgx.Identifier{n}.Sanitize()
	}
	return out
}

// loadPostgresCatalog reads the columns of every table, view and foreign
// table of schemas, as the agent's role sees them.
func loadPostgresCatalog(ctx context.Context, pool *pgxpool.Pool, schemas []string) (*Catalog, error) {
	rows, err := pool.Query(ctx, `SELECT n.nspname, c.relname, a.attname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
		ORDER BY n.nspname, c.relname, a.attnum`, schemas)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	cat := &Catalog{Tables: map[string][]string{}}
	var schema, table, col string
	_, err = pgx.ForEachRow(rows, []any{&schema, &table, &col}, func() error {
		key := strings.ToLower(schema) + "." + table
		cat.Tables[key] = append(cat.Tables[key], col)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	return cat, nil
}

// Catalog returns the tables and columns the agent's role can see.
func (p *Postgres) Catalog() *Catalog { return p.catalog }

// redactDSN keeps a password in the DSN out of an error message.
func redactDSN(err error, conn string) error {
	return errors.New(dsn.Redact(err.Error(), conn))
}

// Close closes every connection of the pool.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// deadlineGrace is how long after statement_timeout the client-side
// deadline fires, so the server's own refusal normally comes first.
func deadlineGrace(timeout time.Duration) time.Duration {
	return timeout/4 + 250*time.Millisecond
}

// Run executes sql and returns up to lim.MaxRows rows.
func (p *Postgres) Run(ctx context.Context, sql string, args []any, lim Limits) (res *Result, err error) {
	start := time.Now()
	// Waiting for a free connection has its own bound, so a busy pool
	// does not eat into the query's time.
	acquireCtx, stopAcquire := context.WithTimeout(ctx, poolWait(lim.Timeout))
	conn, err := p.pool.Acquire(acquireCtx)
	stopAcquire()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Layer: LayerDatabase, Code: "pool_busy",
				Message: fmt.Sprintf("every connection stayed busy for %s; try again", poolWait(lim.Timeout))}
		}
		return nil, contextError(ctx, lim.Timeout, fmt.Errorf("acquiring a PostgreSQL connection: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout+deadlineGrace(lim.Timeout))
	defer cancel()
	// A connection that was cancelled or could not be rolled back is
	// closed, not returned: a late cancel request must not hit the next
	// query, and the pool destroys connections left in a transaction.
	discard := false
	defer func() {
		if discard {
			closeCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			conn.Conn().Close(closeCtx)
			stop()
		}
		conn.Release()
	}()
	setup := fmt.Sprintf("BEGIN READ ONLY; SET LOCAL statement_timeout = %d; SET LOCAL idle_in_transaction_session_timeout = %d; SET LOCAL search_path = %s",
		lim.Timeout.Milliseconds(), (lim.Timeout + rollbackTimeout).Milliseconds(), p.searchPath)
	if p.signer != nil {
		setup += "; SELECT " + txBinding
	}
	started, err := conn.Conn().PgConn().Exec(ctx, setup).ReadAll()
	if err != nil {
		discard = true
		return nil, contextError(ctx, lim.Timeout, fmt.Errorf("starting a read-only transaction: %w", err))
	}
	defer func() {
		rbCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer stop()
		// Rollback undoes every change, SET included; DISCARD ALL drops
		// what outlives a transaction (session advisory locks, settings,
		// prepared statements, cursors, temporary tables, LISTEN) before
		// the connection serves anyone else. State it does not reach
		// (dblink's connections) goes with the connection.
		_, rbErr := conn.Exec(rbCtx, "ROLLBACK")
		if rbErr == nil {
			_, rbErr = conn.Exec(rbCtx, "DISCARD ALL")
		}
		if rbErr != nil {
			discard = true
			if err == nil {
				res, err = nil, fmt.Errorf("rolling back: %w", rbErr)
			}
		}
		if fresh, _ := conn.Conn().PgConn().CustomData()[freshConnKey].(bool); fresh {
			discard = true
		}
	}()
	if p.signer != nil {
		if err := p.signCaller(ctx, conn.Conn(), started); err != nil {
			discard = true
			return nil, contextError(ctx, lim.Timeout, err)
		}
	}
	res, truncated, err := p.fetch(ctx, conn.Conn(), sql, args, lim)
	var pe *pgconn.PgError
	if truncated || ctx.Err() != nil || err != nil && !errors.As(err, &pe) {
		discard = true
	}
	if err != nil {
		return nil, pgError(ctx, lim.Timeout, err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// signCaller gives the transaction the caller's document, signed for it:
// started are the results of its setup, the last of which is the binding.
// Both values go in as parameters.
func (p *Postgres) signCaller(ctx context.Context, conn *pgx.Conn, started []*pgconn.Result) error {
	last := started[len(started)-1]
	if len(last.Rows) != 1 || len(last.Rows[0]) != 1 {
		return errors.New("reading the transaction's binding: no value")
	}
	doc, mac := p.signer.sign(string(last.Rows[0][0]), callerValues(ctx))
	if _, err := conn.Exec(ctx, "SELECT set_config('"+callerSetting+"', $1, true), set_config('"+callerMACSetting+"', $2, true)", doc, mac); err != nil {
		return fmt.Errorf("setting the caller: %w", err)
	}
	return nil
}

// fetch reads the rows, keeping lim.MaxRows and counting up to
// lim.CountLimit; past that it cancels the query, so a runaway result
// stops on the server rather than being drained.
func (p *Postgres) fetch(ctx context.Context, conn *pgx.Conn, sql string, args []any, lim Limits) (*Result, bool, error) {
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	// QueryExecModeExec sends the text in one Parse message of the
	// extended protocol, which refuses more than one statement, and the
	// values as text of no declared type.
	exec := []any{pgx.QueryExecModeExec}
	for _, a := range args {
		exec = append(exec, argText(a))
	}
	rows, err := conn.Query(qctx, sql, exec...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	sink := newRowSink(lim)
	res := sink.res
	fds := rows.FieldDescriptions()
	for _, fd := range fds {
		res.Columns = append(res.Columns, Column{Name: fd.Name, Type: typeName(conn, fd.DataTypeOID)})
	}
	truncated := false
	for rows.Next() {
		keep, more := sink.admit()
		if !more {
			truncated = true
			stop()
			break
		}
		if !keep {
			continue
		}
		raw := rows.RawValues()
		row := make([]any, len(raw))
		for i, b := range raw {
			row[i] = pgValue(conn.TypeMap(), sink, fds[i], b)
		}
		sink.add(row)
	}
	rows.Close()
	if err := rows.Err(); err != nil && !truncated {
		return nil, false, err
	}
	return res, truncated, nil
}

// textOIDs are the types whose values arrive as text in either format
// (jsonb's binary form is a version byte and the text).
var textOIDs = lazy.Value[map[uint32]bool]{New: func() map[uint32]bool {
	return map[uint32]bool{
		pgtype.TextOID: true, pgtype.VarcharOID: true, pgtype.BPCharOID: true, pgtype.NameOID: true,
		pgtype.JSONOID: true, pgtype.JSONBOID: true, pgtype.XMLOID: true, pgtype.UnknownOID: true,
	}
}}

// pgValue decodes one value as the driver sent it. Text is cut to the
// sink's budget before it is copied, so a huge value never lands in
// memory twice; xml stays text.
func pgValue(m *pgtype.Map, sink *rowSink, fd pgconn.FieldDescription, raw []byte) any {
	if raw == nil {
		return nil
	}
	oid := fd.DataTypeOID
	dt, known := m.TypeForOID(oid)
	switch {
	case textOIDs.Get()[oid] || !known:
		if oid == pgtype.JSONBOID && fd.Format == pgx.BinaryFormatCode && len(raw) > 0 {
			raw = raw[1:]
		}
		return sink.text(raw)
	case oid == pgtype.ByteaOID && fd.Format == pgx.BinaryFormatCode:
		return sink.blob(raw)
	case len(raw) > sink.budget():
		return sink.text([]byte(fmt.Sprintf("(a %s value of %d bytes, too long to keep)", dt.Name, len(raw))))
	}
	v, err := dt.Codec.DecodeValue(m, oid, fd.Format, raw)
	if err != nil {
		return sink.text([]byte(fmt.Sprintf("(a %s value okf cannot decode: %v)", dt.Name, err)))
	}
	sink.kept += len(raw)
	return normalise(v)
}

func typeName(conn *pgx.Conn, oid uint32) string {
	if t, ok := conn.TypeMap().TypeForOID(oid); ok {
		return t.Name
	}
	return ""
}

// contextError reports a done context as the deadline layer, else err.
func contextError(ctx context.Context, timeout time.Duration, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Layer: LayerDeadline, Refused: true, Code: "deadline",
			Message: fmt.Sprintf("the query ran longer than %s and was stopped", timeout),
			Hint:    "Filter earlier, join on keys, or aggregate before joining."}
	case errors.Is(ctx.Err(), context.Canceled):
		return &Error{Layer: LayerDeadline, Code: "cancelled", Message: "the query was cancelled"}
	}
	return err
}

// pgError turns a PostgreSQL error into an *Error naming the layer.
func pgError(ctx context.Context, timeout time.Duration, err error) error {
	var pe *pgconn.PgError
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) {
		return &Error{Layer: LayerLimits, Refused: true, Code: "row_too_big",
			Message: fmt.Sprintf("a row of the result is larger than %d MiB", MaxValueBytes>>20),
			Hint:    "Select fewer or shorter columns (substring, length) instead of whole large values."}
	}
	if !errors.As(err, &pe) {
		return contextError(ctx, timeout, err)
	}
	e := &Error{Layer: LayerDatabase, Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint, Position: int(pe.Position)}
	switch {
	case pe.Code == "25006":
		e.Layer, e.Refused = LayerReadOnlyTx, true
	case pe.Code == "42501":
		e.Layer, e.Refused = LayerPrivileges, true
	case pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout"):
		e.Layer, e.Refused = LayerTimeout, true
		e.Message = fmt.Sprintf("the query ran longer than %s and was stopped (%s)", timeout, pe.Message)
		e.Hint = "Filter earlier, join on keys, or aggregate before joining."
	case pe.Code == "57014":
		if ce := contextError(ctx, timeout, nil); ce != nil {
			return ce
		}
	case pe.Code == "42601" && strings.Contains(pe.Message, "multiple commands"):
		e.Layer, e.Refused = LayerOneStatement, true
	}
	return e
}
