package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/okf-tools/okf/internal/dsn"
)

// DefaultFile is the name of the embedded store inside the data directory.
const DefaultFile = "okf.db"

// Backend opens a store from a data source name whose scheme it owns.
type Backend func(ctx context.Context, dsn string) (Store, error)

// The registered backends, one a scheme parseDSN yields: fixed slots
// rather than a map, so that registering allocates nothing at init.
var (
	backendsMu               sync.RWMutex
	sqliteOpen, postgresOpen Backend
)

// backendSlot returns the slot of a scheme, or nil for an unknown one.
func backendSlot(scheme string) *Backend {
	switch scheme {
	case "sqlite":
		return &sqliteOpen
	case "postgres":
		return &postgresOpen
	}
	return nil
}

// Register makes a backend available to Open under a scheme ("sqlite",
// "postgres"). Backends call it from init, the way database/sql drivers do,
// because they import this package for its types.
func Register(scheme string, open Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	slot := backendSlot(scheme)
	switch {
	case slot == nil:
		panic("store: no such backend scheme: " + scheme)
	case *slot != nil:
		panic("store: backend registered twice: " + scheme)
	}
	*slot = open
}

// Open opens the store a data source name points at, read by the rules of
// package dsn:
//
//   - "" opens the default SQLite file, DefaultFile in DataDir;
//   - "sqlite:PATH" opens that SQLite file, and so does a string that is
//     no DSN by those rules: the store takes it as a file path;
//   - "postgres://…", "postgresql://…" or a keyword/value string opens a
//     PostgreSQL database.
//
// The backend's package must be imported (store/sqlite, store/postgres).
func Open(ctx context.Context, source string) (Store, error) {
	scheme, target, err := parseDSN(source)
	if err != nil {
		return nil, err
	}
	backendsMu.RLock()
	open := *backendSlot(scheme)
	backendsMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("store %s: no %s backend linked in (import github.com/okf-tools/okf/store/%s)", dsn.Redact(source, source), scheme, scheme)
	}
	return open(ctx, target)
}

// OpenExisting opens a store as Open does, but refuses a SQLite file that
// does not exist rather than creating it: what reading commands open, so a
// mistyped path is an error naming it, not a new empty store.
func OpenExisting(ctx context.Context, source string) (Store, error) {
	scheme, target, err := parseDSN(source)
	if err != nil {
		return nil, err
	}
	if scheme == "sqlite" {
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no store at %s: import knowledge into it first (okf import), or name another with --data or --store: %w", target, ErrNoStore)
		}
	}
	return Open(ctx, source)
}

// ErrNoStore is OpenExisting's error for a store that does not exist.
var ErrNoStore = errors.New("no such store")

// parseDSN splits a data source name into the backend scheme and what that
// backend is given: a file path for sqlite, the DSN whole for postgres.
func parseDSN(s string) (scheme, target string, err error) {
	if s == "" {
		p, err := DefaultPath()
		if err != nil {
			return "", "", err
		}
		return "sqlite", p, nil
	}
	d, err := dsn.Parse(s)
	switch {
	case err != nil:
		return "", "", Invalidf("store %v", err)
	case d.Engine == dsn.Postgres:
		return "postgres", s, nil
	case d.Engine == dsn.SQLite:
		return "sqlite", d.Path, nil
	case d.Engine == dsn.DuckDB:
		return "", "", Invalidf("store %s: a DuckDB file cannot hold the store (want sqlite:PATH or postgres://…)", s)
	}
	return "sqlite", s, nil
}

// DataDir returns the directory okf keeps its data in: $OKF_DATA, else
// $XDG_DATA_HOME/okf (when absolute), else ~/.local/share/okf.
func DataDir() (string, error) {
	if d := os.Getenv("OKF_DATA"); d != "" {
		return d, nil
	}
	// The XDG spec says to ignore a relative XDG_DATA_HOME.
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "okf"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the data directory: %w (set OKF_DATA)", err)
	}
	if home == "" {
		return "", errors.New("finding the data directory: no home directory (set OKF_DATA)")
	}
	return filepath.Join(home, ".local", "share", "okf"), nil
}

// DefaultPath returns the default store file, DefaultFile in DataDir.
func DefaultPath() (string, error) {
	d, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, DefaultFile), nil
}
