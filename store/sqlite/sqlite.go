// Package sqlite is the embedded store backend: one SQLite file, opened in
// WAL mode so that readers never wait for the single writer. It is what
// store.Open uses for a file path, "sqlite:PATH" or an empty DSN, and it
// registers itself with store.Open when imported.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	// The pure-Go (WebAssembly) SQLite build: no cgo.
	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/okf-tools/okf/store"
	"github.com/okf-tools/okf/store/internal/sqlstore"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, path string) (store.Store, error) { return Open(ctx, path) })
}

// BusyTimeout is how long, in milliseconds, a writer waits for another
// process's write transaction before giving up.
const BusyTimeout = 10000

var dialect = sqlstore.Dialect{
	Name:            "sqlite",
	BlobType:        "BLOB",
	ReadTx:          sql.TxOptions{ReadOnly: true},
	SerializeWrites: true,
}

// Open opens (creating if needed) the SQLite store file at path, and its
// folder.
func Open(ctx context.Context, path string) (store.Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store %s: creating its folder: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout))
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "foreign_keys(on)")
	q.Add("_pragma", "cache_size(-32768)")
	// In WAL mode NORMAL loses at most the last commits on power loss,
	// never consistency.
	q.Add("_pragma", "synchronous(normal)")
	// Write transactions take the write lock up front (BEGIN IMMEDIATE),
	// so they wait on busy_timeout instead of failing on upgrade.
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
