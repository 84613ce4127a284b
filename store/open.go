package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultFile is the name of the embedded store inside the data directory.
const DefaultFile = "okf.db"

// Backend opens a store from a data source name whose scheme it owns.
type Backend func(ctx context.Context, dsn string) (Store, error)

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// Register makes a backend available to Open under a scheme ("sqlite",
// "postgres"). Backends call it from init, the way database/sql drivers do,
// because they import this package for its types.
func Register(scheme string, open Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[scheme]; dup {
		panic("store: backend registered twice: " + scheme)
	}
	backends[scheme] = open
}

// Open opens the store a data source name points at:
//
//   - "" opens the default SQLite file, DefaultFile in DataDir;
//   - "sqlite:PATH" or a plain file path opens that SQLite file;
//   - "postgres://…" or "postgresql://…" opens a PostgreSQL database.
//
// The backend's package must be imported (store/sqlite, store/postgres).
func Open(ctx context.Context, dsn string) (Store, error) {
	scheme, target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	backendsMu.RLock()
	open := backends[scheme]
	backendsMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("store %s: no %s backend linked in (import github.com/okf-tools/okf/store/%s)", redact(dsn), scheme, scheme)
	}
	return open(ctx, target)
}

// parseDSN splits a data source name into the backend scheme and what that
// backend is given: a file path for sqlite, the whole URL for postgres.
func parseDSN(dsn string) (scheme, target string, err error) {
	switch {
	case dsn == "":
		p, err := DefaultPath()
		if err != nil {
			return "", "", err
		}
		return "sqlite", p, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn, nil
	case strings.HasPrefix(dsn, "sqlite:"):
		p := strings.TrimPrefix(dsn, "sqlite:")
		if p == "" {
			return "", "", Invalidf("store %q: no file path after sqlite:", dsn)
		}
		return "sqlite", p, nil
	case strings.Contains(dsn, "://"):
		return "", "", Invalidf("store %q: unknown scheme (want a file path, sqlite:PATH, postgres:// or postgresql://)", redact(dsn))
	}
	return "sqlite", dsn, nil
}

// redact hides the password of a URL-shaped DSN in error messages.
func redact(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	userinfo := dsn[scheme+3 : at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return dsn[:scheme+3] + user + ":xxxxx" + dsn[at:]
	}
	return dsn
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
