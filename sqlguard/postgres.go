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
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres runs queries on a PostgreSQL database through a connection
// pool. Each query runs inside BEGIN READ ONLY with SET LOCAL
// statement_timeout, over the extended protocol, and is rolled back.
type Postgres struct {
	pool *pgxpool.Pool
}

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
	return &Postgres{pool: pool}, nil
}

// redactDSN keeps a password in the DSN out of an error message.
func redactDSN(err error, dsn string) error {
	msg := err.Error()
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			msg = strings.ReplaceAll(msg, dsn[i+3:at], "xxxxx")
		}
	}
	return errors.New(msg)
}

// Close closes every connection of the pool.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// sessionCleanup ends every query, in one round trip.
const sessionCleanup = "ROLLBACK; SELECT pg_advisory_unlock_all(); RESET ALL"

// deadlineGrace is how long after statement_timeout the client-side
// deadline fires, so the server's own refusal normally comes first.
func deadlineGrace(timeout time.Duration) time.Duration {
	return timeout/4 + 250*time.Millisecond
}

// Run executes sql and returns up to lim.MaxRows rows.
func (p *Postgres) Run(ctx context.Context, sql string, lim Limits) (res *Result, err error) {
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
	setup := fmt.Sprintf("BEGIN READ ONLY; SET LOCAL statement_timeout = %d; SET LOCAL idle_in_transaction_session_timeout = %d",
		lim.Timeout.Milliseconds(), (lim.Timeout + rollbackTimeout).Milliseconds())
	if _, err := conn.Exec(ctx, setup); err != nil {
		discard = true
		return nil, contextError(ctx, lim.Timeout, fmt.Errorf("starting a read-only transaction: %w", err))
	}
	defer func() {
		rbCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer stop()
		// Rollback undoes every change, SET included; the reset drops what
		// outlives a transaction (session advisory locks, settings made
		// by set_config) before the connection serves anyone else.
		if _, rbErr := conn.Exec(rbCtx, sessionCleanup); rbErr != nil {
			discard = true
			if err == nil {
				res, err = nil, fmt.Errorf("rolling back: %w", rbErr)
			}
		}
	}()
	res, truncated, err := p.fetch(ctx, conn.Conn(), sql, lim)
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

// fetch reads the rows, keeping lim.MaxRows and counting up to
// lim.CountLimit; past that it cancels the query, so a runaway result
// stops on the server rather than being drained.
func (p *Postgres) fetch(ctx context.Context, conn *pgx.Conn, sql string, lim Limits) (*Result, bool, error) {
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	// QueryExecModeExec sends the text in one Parse message of the
	// extended protocol, which refuses more than one statement.
	rows, err := conn.Query(qctx, sql, pgx.QueryExecModeExec)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	res := &Result{TotalKnown: true}
	for _, fd := range rows.FieldDescriptions() {
		res.Columns = append(res.Columns, Column{Name: fd.Name, Type: typeName(conn, fd.DataTypeOID)})
	}
	truncated, kept := false, 0
	for rows.Next() {
		if res.Total == lim.CountLimit {
			truncated, res.TotalKnown = true, false
			stop()
			break
		}
		res.Total++
		if len(res.Rows) < lim.MaxRows && kept < MaxResultBytes {
			vals, err := rows.Values()
			if err != nil {
				return nil, false, err
			}
			for i := range vals {
				vals[i] = normalise(vals[i])
			}
			res.Rows = append(res.Rows, vals)
			kept += rowBytes(vals)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil && !truncated {
		return nil, false, err
	}
	return res, truncated, nil
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
