// Package postgres is the shared store backend: a PostgreSQL database that
// many okf servers read and write at once. Tables are created on open when
// absent; every write is one transaction that first locks its tenant's row,
// so concurrent writers to a tenant take turns and writers to different
// tenants do not wait for each other. store.Open uses it for postgres:// and
// postgresql:// DSNs once the package is imported.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/okf-tools/okf/store"
	"github.com/okf-tools/okf/store/internal/sqlstore"
)

func init() {
	store.Register("postgres", Open)
}

// lockSchema takes the advisory lock held while creating tables, so that
// servers starting together do not race on CREATE TABLE IF NOT EXISTS. Its
// key is 0x6f6b66, "okf".
const lockSchema = `SELECT pg_advisory_xact_lock(7301990)`

var dialect = sqlstore.Dialect{
	Name:         "postgres",
	BlobType:     "BYTEA",
	BeforeSchema: lockSchema,
	Rebind:       sqlstore.Rebind,
	// Repeatable read gives a multi-statement read one snapshot.
	ReadTx:  sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
	LockRow: ` FOR UPDATE`,
}

// Open connects to the PostgreSQL database at dsn (a postgres:// URL) and
// creates the store's tables if absent.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres store %s@%s/%s: %w", cfg.User, cfg.Host, cfg.Database, err)
	}
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", cfg.Host, cfg.Database, err)
	}
	return s, nil
}
